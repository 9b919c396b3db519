import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { progress } from './console.js';
import type { ChargerSpec, FloodOrder, FloodReport, FromGenerator, GeneratorReport, ToGenerator } from './protocol.js';
import { emptyHistogram, merge } from './stats.js';

/** The totals of one flood over every generator. */
export interface FloodTotals {
  messages: number;
  errors: number;
  lastError: string | undefined;
  histogram: number[];
  seconds: number;
}

/** The generator processes of one comparison workload (compare.ts), driven step by step. */
export class BenchFleet {
  private readonly gens: ChildProcess[] = [];
  private readonly latest = new Map<ChildProcess, GeneratorReport>();
  private floods: FloodReport[] = [];
  private onFlood: (() => void) | undefined;

  constructor(specs: ChargerSpec[], generators: number, maxConnecting: number, openTransaction: boolean) {
    for (let g = 0; g < generators; g++) {
      const child = fork(join(import.meta.dirname, 'generator.js'), [], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      child.on('message', (m: FromGenerator) => this.received(child, m));
      child.send({
        type: 'plan',
        chargers: specs.filter((_, i) => i % generators === g),
        connectRate: 0,
        maxConnecting,
        heartbeatS: 3600,
        meterEveryS: 3600,
        transactionS: 0,
        idle: false,
        bench: { openTransaction },
      } satisfies ToGenerator);
      this.gens.push(child);
    }
  }

  private received(child: ChildProcess, m: FromGenerator): void {
    if (m.type === 'report') this.latest.set(child, m);
    else {
      this.floods.push(m);
      this.onFlood?.();
    }
  }

  sum(k: 'connected' | 'ready' | 'errors' | 'retries'): number {
    return [...this.latest.values()].reduce((a, r) => a + r[k], 0);
  }

  lastError(): string | undefined {
    return [...this.latest.values()].map((r) => r.lastError).find((e) => e !== undefined);
  }

  /** Milliseconds from `since` until `n` chargers are ready (checked every 50 ms), or undefined at `deadline`. */
  async waitReady(label: string, n: number, since: number, deadline: number): Promise<number | undefined> {
    let printed = 0;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      if (this.sum('ready') >= n) return this.readyAfterMs() ?? Date.now() - since;
      if (Date.now() - printed >= 1000) {
        printed = Date.now();
        const s = ((printed - since) / 1000).toFixed(0);
        progress(
          `${label} ${s}s connected=${this.sum('connected')} ready=${this.sum('ready')} errors=${this.sum('errors')}`,
        );
      }
    }
    return undefined;
  }

  /**
   * The slowest generator's own time from its plan to its last charger ready: without the fork of
   * the generators and the up to one second a periodic report waits.
   */
  private readyAfterMs(): number | undefined {
    const times = [...this.latest.values()].map((r) => r.readyAfterMs);
    if (times.length < this.gens.length || times.some((t) => t === undefined)) return undefined;
    return Math.max(...times.map((t) => t ?? 0));
  }

  /** Sends a flood order, `inFlight` split over the generators, and sums their answers. */
  async flood(action: FloodOrder['action'], inFlight: number, seconds: number): Promise<FloodTotals> {
    this.floods = [];
    const done = new Promise<void>((resolve) => {
      this.onFlood = () => {
        if (this.floods.length === this.gens.length) resolve();
      };
    });
    this.gens.forEach((g, i) => {
      const share = Math.floor(inFlight / this.gens.length) + (i < inFlight % this.gens.length ? 1 : 0);
      g.send({ type: 'flood', action, inFlight: share, seconds } satisfies ToGenerator);
    });
    await done;
    const totals: FloodTotals = {
      messages: 0,
      errors: 0,
      lastError: undefined,
      histogram: emptyHistogram(),
      seconds: 0,
    };
    for (const f of this.floods) {
      totals.messages += f.messages;
      totals.errors += f.errors;
      totals.lastError ??= f.lastError;
      merge(totals.histogram, f.histogram);
      totals.seconds = Math.max(totals.seconds, f.seconds);
    }
    return totals;
  }

  async stop(): Promise<void> {
    await stopGenerators(this.gens);
  }
}

/** Tells each generator process to stop and waits until every one has exited. */
export async function stopGenerators(gens: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    gens.map(
      (g) =>
        new Promise<void>((resolve) => {
          g.once('exit', () => resolve());
          g.send({ type: 'stop' } satisfies ToGenerator);
        }),
    ),
  );
}
