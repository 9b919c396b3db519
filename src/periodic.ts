import type { Logger } from './logger.js';

/**
 * A pass run every `intervalMs` (0: never by itself), the first `firstAfterMs` after `start` when
 * given, never two at once: a pass asked for while
 * one runs gets the running one's answer. A failed pass is logged as `what failed` and answers
 * `idle`; the next interval tries again. The timer does not keep the process alive, and `stop`
 * waits for the pass running.
 */
export class Periodic<T> {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<T> | undefined;

  constructor(
    private readonly pass: () => Promise<T>,
    private readonly opts: { intervalMs: number; log: Logger; what: string; idle: T; firstAfterMs?: number },
  ) {}

  start(): void {
    if (this.opts.intervalMs <= 0 || this.timer) return;
    const first = this.opts.firstAfterMs;
    if (first === undefined) {
      this.timer = setInterval(() => void this.run(), this.opts.intervalMs);
    } else {
      // a process restarted more often than the interval still runs a pass
      this.timer = setTimeout(() => {
        this.timer = setInterval(() => void this.run(), this.opts.intervalMs);
        this.timer.unref();
        void this.run();
      }, first);
    }
    this.timer.unref();
  }

  async stop(): Promise<void> {
    // clearInterval clears either kind of timer
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  run(): Promise<T> {
    this.running ??= this.pass()
      .catch((err: unknown) => {
        this.opts.log.warn({ err }, `${this.opts.what} failed`);
        return this.opts.idle;
      })
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }
}
