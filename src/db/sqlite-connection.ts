import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteConnectionSource } from './sql.js';

/**
 * The process's one SQLite connection, lent to one holder at a time: a statement, a transaction
 * of the executor, or (when it is loaded) a MikroORM transaction through knex. Holders that find
 * it lent wait in a queue, in order. Why one connection: see `SqliteExecutor`.
 */
export class SqliteConnectionLock implements SqliteConnectionSource {
  private lent = false;
  private closed = false;
  private readonly waiting: Array<{
    resolve: (conn: BetterSqlite3.Database) => void;
    reject: (err: Error) => void;
  }> = [];

  constructor(private readonly conn: BetterSqlite3.Database) {}

  acquire(): Promise<BetterSqlite3.Database> {
    if (this.closed) return Promise.reject(new Error('the SQLite connection is closed'));
    if (!this.lent) {
      this.lent = true;
      return Promise.resolve(this.conn);
    }
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  release(conn: BetterSqlite3.Database): void {
    if (conn !== this.conn || !this.lent) throw new Error('released a SQLite connection that was not lent');
    const next = this.waiting.shift();
    if (next) next.resolve(this.conn);
    else this.lent = false;
  }

  /** Refuses the waiting and later holders, then closes the file. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.reject(new Error('the SQLite connection is closed'));
    this.conn.close();
  }
}

/** Opens the file with the settings every holder relies on. */
export async function openSqlite(file: string): Promise<BetterSqlite3.Database> {
  const { default: Sqlite } = await import('better-sqlite3');
  const conn = new Sqlite(file);
  // WAL lets readers proceed during a write; busy_timeout rides out a checkpoint
  conn.pragma('journal_mode = WAL');
  conn.pragma('busy_timeout = 5000');
  conn.pragma('synchronous = NORMAL');
  conn.pragma('foreign_keys = ON');
  return conn;
}
