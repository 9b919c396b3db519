import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';

export interface DependencyState {
  database: boolean;
  /** null in embedded mode, where there is no Redis */
  redis: boolean | null;
  /** when the state was last measured (ms since the epoch) */
  checkedAt: number;
}

export interface DependencyHealthOptions {
  db: Database;
  redis: Redis | undefined;
  log: Logger;
  /** how often the dependencies are probed */
  intervalMs?: number;
  /** a probe that takes longer than this counts as a failure */
  probeTimeoutMs?: number;
}

/**
 * Whether PostgreSQL/SQLite and Redis answer, probed in the background so that readiness and
 * the OCPP endpoint can ask without waiting on a dependency that is down. An unreachable
 * dependency puts the process in degraded mode: `/readyz` answers 503 at once and new OCPP
 * upgrades are refused with 503 and `Retry-After`, while connected chargers stay connected.
 */
export class DependencyHealth {
  private current: DependencyState;
  private timer: NodeJS.Timeout | undefined;
  private probing = false;
  /** probes in a row that found the database unreachable */
  private databaseMisses = 0;
  private readonly intervalMs: number;
  private readonly probeTimeoutMs: number;
  private readonly watchers = new Set<(degradedBy: 'database' | 'redis' | undefined) => void>();

  constructor(private readonly opts: DependencyHealthOptions) {
    this.intervalMs = opts.intervalMs ?? 1000;
    this.probeTimeoutMs = opts.probeTimeoutMs ?? 1000;
    this.current = { database: true, redis: opts.redis ? true : null, checkedAt: 0 };
  }

  start(): void {
    if (this.timer) return;
    void this.probe();
    this.timer = setInterval(() => void this.probe(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  state(): DependencyState {
    return this.current;
  }

  /**
   * Whether requests that need the database are answered 503 at once (`DependencyDegradedError`)
   * rather than sent to a pool whose connections may all wait on a server that answers nothing:
   * after two probes in a row found it unreachable (one slow probe is no outage), until one finds
   * it again. Each request waited up to DATABASE_QUERY_TIMEOUT_MS, and behind a pool held by such
   * waits, a multiple of it (docs/OPERATIONS.md "A database that stops answering").
   */
  shedsDatabaseWork(): boolean {
    return this.databaseMisses >= 2;
  }

  /** the name of the first unreachable dependency, or undefined when all answer */
  degradedBy(): 'database' | 'redis' | undefined {
    if (!this.current.database) return 'database';
    if (this.current.redis === false) return 'redis';
    return undefined;
  }

  /**
   * `fn` after each probe that changed `degradedBy()`, with its new value (the console's event
   * stream says so at once: no other event tells a view that Redis went or came back). Returns the
   * unsubscribe.
   */
  onChange(fn: (degradedBy: 'database' | 'redis' | undefined) => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  /**
   * The state for readiness: the last probe's while it found a dependency unreachable (the
   * background probe goes on every interval: a probe per request would make each answer wait out
   * the probe timeout), else measured now, so that an outage shows on the first request after it.
   */
  async readiness(): Promise<DependencyState> {
    return this.degradedBy() ? this.current : this.probe();
  }

  /** Measures now (bounded by the probe timeout) and returns the new state. */
  async probe(): Promise<DependencyState> {
    if (this.probing) return this.current;
    this.probing = true;
    try {
      const { db, redis } = this.opts;
      const [database, redisOk] = await Promise.all([
        this.bounded(db.ping()),
        redis ? this.bounded(redis.ping().then(() => true)) : Promise.resolve(null),
      ]);
      const next: DependencyState = { database, redis: redisOk, checkedAt: Date.now() };
      this.databaseMisses = database ? 0 : this.databaseMisses + 1;
      const before = this.degradedBy();
      this.current = next;
      const after = this.degradedBy();
      if (before !== after) {
        if (after) this.opts.log.warn({ dependency: after }, 'degraded: a dependency is unreachable');
        else this.opts.log.info('dependencies reachable again');
        for (const fn of this.watchers) {
          try {
            fn(after);
          } catch (err) {
            this.opts.log.error({ err }, 'a dependency health watcher failed');
          }
        }
      }
      return next;
    } finally {
      this.probing = false;
    }
  }

  private bounded(p: Promise<boolean>): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), this.probeTimeoutMs);
      p.then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        () => {
          clearTimeout(timer);
          resolve(false);
        },
      );
    });
  }
}

/** A request that needs the database, refused at once while it is unreachable (`shedsDatabaseWork`). */
export class DependencyDegradedError extends Error {
  override readonly name = 'DependencyDegradedError';
}

/**
 * ioredis: a command given up while the connection is down, or aborted when it closed; a request
 * refused while the database is unreachable
 */
const OUTAGE_ERROR_NAMES = new Set(['MaxRetriesPerRequestError', 'AbortError', 'DependencyDegradedError']);
/** node sockets, and the PostgreSQL connection-exception class 08 and admin shutdown (57P01..03) */
const OUTAGE_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '08000',
  '08001',
  '08003',
  '08006',
  '57P01',
  '57P02',
  '57P03',
  // query_canceled: a statement ran past DATABASE_QUERY_TIMEOUT_MS (statement_timeout), a server
  // too busy or too blocked to answer in time, as one that cannot be reached
  '57014',
]);
/**
 * ioredis "Connection is closed.", ioredis without an offline queue, knex's pool while the
 * database is away, and node-postgres giving up on a connection that was taken and never answered
 * (its `connectionTimeoutMillis`: "timeout expired"; the pool's own: "timeout exceeded when trying
 * to connect"; a statement on a connection that stopped answering: "Query read timeout"), a server
 * or network that hangs rather than refuses
 */
const OUTAGE_MESSAGES =
  /^Connection is closed\.?$|Stream isn't writeable|Timeout acquiring a connection|Connection terminated|^timeout expired$|timeout exceeded when trying to connect|^Query read timeout$/;

/**
 * Whether an error says that the database or Redis could not be reached, rather than that a
 * request was wrong or our code is: such a request may succeed on a retry, so it is answered
 * 503 with Retry-After, never 500 ("Degraded mode" in docs/ARCHITECTURE.md). Looks one `cause`
 * deep, and at the original name and code of an error another process sent back.
 */
export function isDependencyOutage(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 2; e = e.cause, depth++) {
    // an error rebuilt from another process keeps the original name and code beside its own
    const names = [e.name, 'remoteName' in e ? e.remoteName : undefined];
    const codes = ['code' in e ? e.code : undefined, 'remoteCode' in e ? e.remoteCode : undefined];
    if (names.some((n) => typeof n === 'string' && OUTAGE_ERROR_NAMES.has(n))) return true;
    if (codes.some((c) => typeof c === 'string' && OUTAGE_ERROR_CODES.has(c))) return true;
    if (OUTAGE_MESSAGES.test(e.message)) return true;
  }
  return false;
}
