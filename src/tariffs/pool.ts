import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { PriceOutcome, PricingCdr, PricingTariff } from './types.js';
import { BulkPace } from './bulk-pace.js';
import type { ThreadPolicy } from './worker.js';
import { decodeResults, encodeBatch, type WireResults } from './wire.js';

/**
 * The pricing threads (docs/TARIFFS.md "Where pricing runs"): CDRs are priced in Piscina worker
 * threads so that a batch of 100,000 never holds up the event loop that serves chargers. Tasks
 * go in batches (one thread hop per batch, not per CDR), as numbers (wire.ts); the queue is
 * bounded and a caller beyond it waits for room rather than piling up memory; the event loop gets
 * a turn between two batches, and the threads run at a lower priority (worker.ts).
 */

export interface PricingTask {
  tariff: PricingTariff;
  cdr: PricingCdr;
  time_zone: string;
  /** with the per-period breakdown (default false: totals only) */
  breakdown?: boolean;
}

/** What `each` hands each batch's outcomes to: `offset` is the index of the batch's first task. */
export type OnBatch = (outcomes: PriceOutcome[], offset: number) => void | Promise<void>;

export interface PricingPoolOptions {
  /** threads; 0 = one per core */
  threads: number;
  idleTimeoutMs: number;
  /** batches waiting for a thread before callers wait */
  maxQueue: number;
  /** CDRs per batch (default 256; fewer while the process serves: bulk-pace.ts) */
  batchSize?: number;
  /** how the threads yield the CPU on Linux (PRICING_THREAD_POLICY; worker.ts); default 'nice' */
  threadPolicy?: ThreadPolicy;
  /**
   * of the event loop's time, what a job of several batches may spend on pricing while the
   * process serves (PRICING_BULK_SHARE_PERCENT / 100; bulk-pace.ts); default 1, no limit
   */
  bulkShare?: number;
  /** a count that grows with every frame or request the process handles: what "serves" means */
  served?: () => number;
}

/**
 * CDRs per batch when the process serves nothing else (bulk-pace.ts makes them smaller while it
 * does). Each batch costs a thread hop, its tariff's lookup and a message each way: 256 priced
 * 50,769-53,155 CDRs a second on the benchmark's machine where 64 priced 49,498-51,614, and took
 * 8-9 us of the event loop per CDR instead of 10 (docs/PERFORMANCE.md, pricing's "Eleventh
 * sitting").
 */
const FULL_BATCH = 256;

export class PricingPool {
  private readonly pool: Piscina;
  private readonly batchSize: number;
  private readonly limit: number;
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly pace: BulkPace;

  constructor(options: PricingPoolOptions) {
    const threads = options.threads > 0 ? options.threads : availableParallelism();
    this.pool = new Piscina({
      filename: new URL('./worker.js', import.meta.url).href,
      minThreads: 0,
      maxThreads: threads,
      idleTimeout: options.idleTimeoutMs,
      maxQueue: options.maxQueue,
      workerData: { threadPolicy: options.threadPolicy ?? 'nice' },
      // a pricing thread makes short-lived garbage only (a batch's CDRs and outcomes): a larger
      // young generation than V8's default (3 x 16 MB) means fewer scavenges; 500,000 CDRs took
      // 480 of them and 0.74 s instead of 830 and 1.19 s (docs/PERFORMANCE.md)
      resourceLimits: { maxYoungGenerationSizeMb: 64 },
    });
    this.batchSize = options.batchSize ?? FULL_BATCH;
    // what may be handed to Piscina at once: every thread busy and its queue full
    this.limit = threads + options.maxQueue;
    this.pace = new BulkPace({ share: options.bulkShare ?? 1, served: options.served });
  }

  /**
   * Prices `tasks`, in order, and hands each batch's outcomes to `onBatch` as it comes back
   * (`offset` is the index of its first task), in order. For a bulk caller that stores or sends
   * the outcomes and lets them go: memory stays bounded by the queue, whatever the count of tasks,
   * and the event loop's collector does not copy outcomes held to the end. Resolves once every
   * batch was handed over; a rejection from `onBatch` stops handing out and is the result.
   */
  async each(tasks: readonly PricingTask[], onBatch: OnBatch): Promise<void> {
    // batches handed to threads and not yet handed to the caller, oldest first
    const pending: { offset: number; outcomes: Promise<PriceOutcome[]> }[] = [];
    const handOver = async (): Promise<void> => {
      const next = pending.shift();
      if (!next) return;
      const outcomes = await next.outcomes;
      const t0 = performance.now();
      const handed = onBatch(outcomes, next.offset);
      this.pace.spent(performance.now() - t0);
      await handed;
    };
    for (let i = 0; i < tasks.length;) {
      await this.slot();
      // smaller batches while the process serves (bulk-pace.ts)
      const size = this.pace.batchSize(this.batchSize);
      const outcomes = this.run(tasks.slice(i, i + size));
      // awaited in order below; a batch failing while an earlier one is awaited, or left behind
      // when `onBatch` throws, must not count as an unhandled rejection
      outcomes.catch(() => undefined);
      pending.push({ offset: i, outcomes });
      i += size;
      // the oldest batches that are back go to the caller now, not at the end
      while (pending.length > this.limit) await handOver();
      // a turn of the event loop between batches, chargers' messages served in between, and a
      // pause while the process serves if pricing took more than its share (bulk-pace.ts)
      if (i < tasks.length) await this.pace.turn();
    }
    while (pending.length > 0) await handOver();
  }

  /** Prices `tasks`, in order; each outcome is a priced CDR or why it could not be priced. */
  async price(tasks: readonly PricingTask[]): Promise<PriceOutcome[]> {
    const all: PriceOutcome[] = [];
    await this.each(tasks, (outcomes) => {
      for (const o of outcomes) all.push(o);
    });
    return all;
  }

  async priceOne(task: PricingTask): Promise<PriceOutcome> {
    const [outcome] = await this.price([task]);
    if (!outcome) throw new Error('the pricing pool answered nothing');
    return outcome;
  }

  /** Batches handed to threads and not answered yet, and callers waiting for room. */
  stats(): { in_flight: number; waiting: number; threads: number } {
    return { in_flight: this.inFlight, waiting: this.waiting.length, threads: this.pool.threads.length };
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }

  private async slot(): Promise<void> {
    while (this.inFlight >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight++;
  }

  private release(): void {
    this.inFlight--;
    this.waiting.shift()?.();
  }

  private async run(tasks: PricingTask[]): Promise<PriceOutcome[]> {
    try {
      const t0 = performance.now();
      const batch = encodeBatch(tasks);
      const running = this.pool.run(batch, { transferList: [batch.numbers.buffer as ArrayBuffer] });
      this.pace.spent(performance.now() - t0);
      const results = (await running) as WireResults;
      const t1 = performance.now();
      const outcomes = decodeResults(tasks, results);
      this.pace.spent(performance.now() - t1);
      return outcomes;
    } finally {
      this.release();
    }
  }
}
