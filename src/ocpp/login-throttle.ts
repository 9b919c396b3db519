export interface LoginThrottleOptions {
  /** failed logins a key may have before further attempts are refused (OCPP_LOGIN_FAILURES) */
  maxFailures: number;
  /** the first refusal lasts this long; each further failure doubles it (default 1 s) */
  baseBackoffMs?: number;
  /** longest refusal (default 5 min) */
  maxBackoffMs?: number;
  /** a key whose last failure is older than this starts afresh (default 15 min) */
  forgetAfterMs?: number;
  /** most keys remembered; past it the key that failed least recently is forgotten (default 10,000) */
  capacity?: number;
  now?: () => number;
}

interface Failures {
  count: number;
  last: number;
  /** attempts are refused until then (0: not refused) */
  blockedUntil: number;
}

/** A key that has just started a refusal period, for the warning log. */
export interface LoginBlock {
  key: string;
  failures: number;
  backoffMs: number;
}

/**
 * Failed charger logins per key (the endpoint uses one key per identity and one per remote
 * address). After `maxFailures` failures a key is refused for a back-off that doubles with every
 * further failure; attempts refused during a back-off are not checked and do not count. Memory
 * is bounded: at most `capacity` keys, the least recently failed forgotten first, so a flood of
 * random identities or addresses cannot grow the table (it can only push older keys out).
 */
export class LoginThrottle {
  private readonly entries = new Map<string, Failures>();
  private readonly baseBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly forgetAfterMs: number;
  private readonly capacity: number;
  private readonly now: () => number;

  constructor(private readonly opts: LoginThrottleOptions) {
    if (!Number.isInteger(opts.maxFailures) || opts.maxFailures < 1)
      throw new Error('maxFailures must be a positive integer');
    this.baseBackoffMs = opts.baseBackoffMs ?? 1000;
    this.maxBackoffMs = opts.maxBackoffMs ?? 300_000;
    this.forgetAfterMs = opts.forgetAfterMs ?? 900_000;
    this.capacity = opts.capacity ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  /** How long the caller must still wait before any of these keys may try again (0: go ahead). */
  retryAfterMs(keys: readonly string[]): number {
    const now = this.now();
    let wait = 0;
    for (const key of keys) {
      const e = this.current(key, now);
      if (e && e.blockedUntil > now) wait = Math.max(wait, e.blockedUntil - now);
    }
    return wait;
  }

  /** Records a failed login for each key; returns the keys that are refused from now on. */
  failed(keys: readonly string[]): LoginBlock[] {
    const now = this.now();
    const blocks: LoginBlock[] = [];
    for (const key of keys) {
      const e = this.current(key, now) ?? { count: 0, last: now, blockedUntil: 0 };
      e.count += 1;
      e.last = now;
      if (e.count >= this.opts.maxFailures) {
        const backoffMs = Math.min(
          this.maxBackoffMs,
          this.baseBackoffMs * 2 ** Math.min(30, Math.floor(e.count - this.opts.maxFailures)),
        );
        e.blockedUntil = now + backoffMs;
        blocks.push({ key, failures: e.count, backoffMs });
      }
      // re-inserted so that Map order is the order of last failure: the first key is the stalest
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    while (this.entries.size > this.capacity) {
      const stalest = this.entries.keys().next();
      if (stalest.done) break;
      this.entries.delete(stalest.value);
    }
    return blocks;
  }

  /** Failures remembered for the key (0 once forgotten). */
  failures(key: string): number {
    return this.current(key, this.now())?.count ?? 0;
  }

  /**
   * A success of the key takes `amount` of a failure off its count (none left: the key is
   * forgotten); a refusal running stays. The HTTP surfaces use it: there one real credential
   * cleared every failure a guesser had made with other ones.
   */
  forgive(key: string, amount: number): void {
    const e = this.entries.get(key);
    if (!e) return;
    e.count -= amount;
    if (e.count <= 0 && e.blockedUntil <= this.now()) this.entries.delete(key);
  }

  /** A successful login clears the failures of its key. */
  succeeded(key: string): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  private current(key: string, now: number): Failures | undefined {
    const e = this.entries.get(key);
    if (e && e.blockedUntil <= now && now - e.last > this.forgetAfterMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }
}
