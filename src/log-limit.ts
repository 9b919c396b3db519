import type { Logger } from 'pino';

export interface LogLimitOptions {
  /** lines one key may write per interval */
  perKey: number;
  /** lines all keys together may write per interval (default: no limit beyond `perKey`) */
  total?: number;
  intervalMs: number;
  /** keys remembered; past it the key seen least recently is forgotten (default 10,000) */
  capacity?: number;
  now?: () => number;
}

interface Window {
  start: number;
  lines: number;
  /** lines refused since this key last wrote one */
  suppressed: number;
}

/**
 * How many log lines a key (a charger, a remote address, an error message) may write: at most
 * `perKey` per interval, and at most `total` for all keys together, so that a hostile client
 * cannot flood the log whatever ids or addresses it makes up (docs/OPERATIONS.md "Signals").
 * A line that is let through says how many of its key's lines were dropped before it; the
 * drops of a key that never writes again are not reported. Memory is bounded by `capacity`.
 */
export class LogLimit {
  private readonly windows = new Map<string, Window>();
  private readonly capacity: number;
  private readonly now: () => number;
  private totalStart = 0;
  private totalLines = 0;

  constructor(private readonly opts: LogLimitOptions) {
    this.capacity = opts.capacity ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  /**
   * Whether `key` may write a line now: -1 if not (the drop is counted), else the number of the
   * key's lines dropped since its last one (to be logged as `suppressed`).
   */
  admit(key: string): number {
    const now = this.now();
    let w = this.windows.get(key);
    if (!w) {
      w = { start: now, lines: 0, suppressed: 0 };
      this.windows.set(key, w);
      if (this.windows.size > this.capacity) {
        const oldest = this.windows.keys().next();
        if (!oldest.done) this.windows.delete(oldest.value);
      }
    } else if (now - w.start >= this.opts.intervalMs) {
      w.start = now;
      w.lines = 0;
    }
    if (now - this.totalStart >= this.opts.intervalMs) {
      this.totalStart = now;
      this.totalLines = 0;
    }
    if (w.lines >= this.opts.perKey || (this.opts.total !== undefined && this.totalLines >= this.opts.total)) {
      w.suppressed += 1;
      return -1;
    }
    w.lines += 1;
    this.totalLines += 1;
    const suppressed = w.suppressed;
    w.suppressed = 0;
    return suppressed;
  }
}

/**
 * The `error` listener of an ioredis connection. ioredis emits one error per failed reconnect
 * (every 50 ms to 2 s while Redis is down, per connection): the same message is logged once,
 * then at most once per `intervalMs` with the count of repeats in between.
 */
export function redisErrorListener(log: Logger, msg: string, intervalMs = 30_000): (err: Error) => void {
  return repeatedErrorLog(log, msg, intervalMs);
}

/**
 * A failure that repeats while its cause lasts (a periodic sweep while the database is away, every
 * few seconds): one warn line per message and `intervalMs`, with the message and code, not the
 * stack, and how many repeats were left out (`repeated`). A sweep wrote a line with its stack at
 * every try: 19 of each sweep in a 90 s outage.
 */
export function repeatedErrorLog(log: Logger, msg: string, intervalMs = 60_000): (err: unknown) => void {
  const limit = new LogLimit({ perKey: 1, intervalMs, capacity: 100 });
  return (thrown) => {
    const err = thrown instanceof Error ? thrown : new Error(String(thrown));
    const suppressed = limit.admit(err.message);
    if (suppressed < 0) return;
    const code = 'code' in err && typeof err.code === 'string' ? err.code : undefined;
    log.warn({ err: err.message, ...(code ? { code } : {}), ...(suppressed > 0 ? { repeated: suppressed } : {}) }, msg);
  };
}
