import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteConnectionSource } from './sql.js';

/** How long a holder may wait for the connection before its acquire fails (knex's pool: 60 s). */
const ACQUIRE_TIMEOUT_MS = 60_000;

interface Waiter {
  resolve(conn: BetterSqlite3.Database): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * The process's one SQLite connection, lent to one holder at a time: a statement, a transaction
 * of the executor, or (when it is loaded) a MikroORM transaction through knex. Holders that find
 * it lent wait in a queue, in order, for at most ACQUIRE_TIMEOUT_MS. Why one connection: see
 * `SqliteExecutor`.
 */
export class SqliteConnectionLock implements SqliteConnectionSource {
  private lent = false;
  private closing: { done: Promise<void>; finish(): void } | undefined;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly conn: BetterSqlite3.Database) {}

  acquire(): Promise<BetterSqlite3.Database> {
    if (this.closing) return Promise.reject(new Error('the SQLite connection is closed'));
    if (!this.lent) {
      this.lent = true;
      return Promise.resolve(this.conn);
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = this.waiting.indexOf(waiter);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(new Error(`the SQLite connection stayed busy for ${ACQUIRE_TIMEOUT_MS} ms`));
        }, ACQUIRE_TIMEOUT_MS),
      };
      waiter.timer.unref();
      this.waiting.push(waiter);
    });
  }

  release(conn: BetterSqlite3.Database): void {
    if (conn !== this.conn || !this.lent) throw new Error('released a SQLite connection that was not lent');
    const next = this.waiting.shift();
    if (next) {
      clearTimeout(next.timer);
      next.resolve(this.conn);
      return;
    }
    this.lent = false;
    this.closing?.finish();
  }

  /**
   * Refuses new and waiting holders, then closes the file once the current holder (a transaction
   * in flight) hands the connection back, or after `graceMs` whatever it is doing.
   */
  close(graceMs = 5000): Promise<void> {
    if (!this.closing) {
      let finish = (): void => undefined;
      const done = new Promise<void>((resolve) => {
        finish = () => {
          if (this.conn.open) this.conn.close();
          resolve();
        };
      });
      this.closing = { done, finish };
      for (const w of this.waiting.splice(0)) {
        clearTimeout(w.timer);
        w.reject(new Error('the SQLite connection is closed'));
      }
      if (!this.lent) finish();
      else setTimeout(finish, graceMs).unref();
    }
    return this.closing.done;
  }
}

/**
 * Opens the file with the settings every holder relies on. `exclusive` (SQLITE_LOCKING, the
 * default) sets the locking mode before the first access, so that WAL mode runs without its
 * shared-memory index: the connection takes the file's lock once and keeps it until it closes,
 * instead of taking and dropping locks around every transaction and read (about a fifth of a
 * statement's time in a storm of connecting chargers, docs/PERFORMANCE.md). No other process
 * can open the file meanwhile; a second platform on it fails to start instead of running beside
 * the first.
 */
export async function openSqlite(file: string, opts: { exclusive?: boolean } = {}): Promise<BetterSqlite3.Database> {
  const { default: Sqlite } = await import('better-sqlite3');
  const conn = new Sqlite(file);
  try {
    if (opts.exclusive) conn.pragma('locking_mode = EXCLUSIVE');
    conn.pragma('busy_timeout = 5000');
    // WAL lets readers proceed during a write; busy_timeout rides out a checkpoint
    conn.pragma('journal_mode = WAL');
    conn.pragma('synchronous = NORMAL');
    conn.pragma('foreign_keys = ON');
    // the first access takes an exclusive mode's lock: fail here, not at the first turn
    if (opts.exclusive) conn.prepare('SELECT count(*) FROM sqlite_schema').get();
  } catch (err) {
    conn.close();
    if ((err as { code?: unknown }).code === 'SQLITE_BUSY') {
      throw new Error(
        `the SQLite file ${file} is locked by another process (a platform on it holds it until it stops, unless it runs with SQLITE_LOCKING=normal)`,
        { cause: err },
      );
    }
    throw err;
  }
  return conn;
}
