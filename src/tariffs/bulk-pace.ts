/**
 * How a bulk pricing job yields to the rest of the process (docs/TARIFFS.md "Bulk jobs yield to
 * chargers"). Every CDR through the pricing threads still costs the event loop a few microseconds
 * (encoding it, reading its totals) and the cores the threads' work; a job of 100,000 CDRs at
 * full speed keeps the event loop about half busy, and a charger's frame that arrives meanwhile
 * waits. So while the process serves (a frame or request handled in the last window), the pricing
 * work on the event loop is kept to `share` of the time by a pause between two batches of a job,
 * and the batches are smaller, so that no single stretch of it holds a frame up for long; a
 * process that serves nothing prices at full speed.
 */

/** How often whether the process is serving is looked at again. */
const WINDOW_MS = 100;
/** The longest pause between two batches (a job is slowed, never held). */
const MAX_PAUSE_MS = 250;
/**
 * CDRs per batch while the process serves. Encoding a batch of 64 holds the event loop ~0.4 ms on
 * the benchmark's machine, and a charger's frame that arrives then waits for it; 16 bound that to
 * ~0.1 ms. Outside that, full batches (pool.ts FULL_BATCH): each batch costs a thread hop, and 16
 * a batch priced 59,000 CDRs a second against 74,000 for 64 (docs/PERFORMANCE.md, "Tenth sitting").
 */
const SERVING_BATCH = 16;

const immediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface BulkPaceOptions {
  /** of the event loop's time, what pricing may take while the process serves (1: no limit) */
  share: number;
  /** a count that grows with every frame or request the process handles (none: never paced) */
  served?: () => number;
}

export class BulkPace {
  private readonly share: number;
  private readonly served: () => number;
  /** whether the job is paced at all: a share below 1 and a count to watch */
  private readonly paced: boolean;
  /** start of the current window (performance.now()) */
  private from = performance.now();
  /** the served count at `from` */
  private servedAt: number;
  /** milliseconds of pricing work on the event loop in the current window */
  private own = 0;
  /** whether the process served anything in the window that ended last */
  private serving = false;

  constructor(options: BulkPaceOptions) {
    this.share = options.share;
    this.served = options.served ?? (() => 0);
    this.paced = options.share < 1 && options.served !== undefined;
    this.servedAt = this.served();
  }

  /** `ms` of pricing work done on the event loop (encoding a batch, reading its outcomes, the caller's onBatch). */
  spent(ms: number): void {
    this.own += ms;
  }

  /** How many CDRs the next batch of a job takes: `full`, or fewer while the process serves. */
  batchSize(full: number): number {
    if (!this.paced) return full;
    this.look(performance.now());
    return this.serving ? Math.min(SERVING_BATCH, full) : full;
  }

  /**
   * Awaited between two batches of a job: a turn of the event loop (frames that wait are served
   * first) and, while the process serves, as long a pause as keeps pricing's share of the event
   * loop within `share` since the window began.
   */
  turn(): Promise<void> {
    if (!this.paced) return immediate();
    const now = performance.now();
    if (this.look(now)) return immediate();
    const wait = this.serving ? Math.min(MAX_PAUSE_MS, this.own / this.share - (now - this.from)) : 0;
    return wait >= 1 ? pause(wait) : immediate();
  }

  /** Starts a new window once the current one is over; true when it did. */
  private look(now: number): boolean {
    if (now - this.from < WINDOW_MS) return false;
    const served = this.served();
    this.serving = served !== this.servedAt;
    this.servedAt = served;
    this.from = now;
    this.own = 0;
    return true;
  }
}
