import type BetterSqlite3 from 'better-sqlite3';

export type Row = Record<string, unknown>;

/** The databases the platform runs on. */
export type Dialect = 'sqlite' | 'postgresql';

/**
 * Statements on one connection (or, outside a transaction, on any). SQL is written once with `?`
 * placeholders; values are always bound, never written into the text.
 */
export interface SqlRunner {
  /** the rows a statement returns (SELECT, or RETURNING); [] for one that returns none */
  query(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /** the number of rows a statement changed */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
  /** same as `query`; the name a turn's write step already knows from MikroORM's EntityManager */
  execute(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

/** One connection inside a transaction. */
export interface SqlTx extends SqlRunner {
  /** Runs `fn` under a savepoint: its statements roll back alone when it throws. */
  savepoint<T>(fn: () => Promise<T>): Promise<T>;
  /** the database the transaction runs on (a read that locks its rows is PostgreSQL's `FOR UPDATE`) */
  readonly dialect?: Dialect;
}

/** A statement and its values, to run later (a pipeline's). */
export interface SqlStatement {
  sql: string;
  params: readonly unknown[];
}

/** What a statement of `SqlExecutor.pipelinedTransaction` answered. */
export interface StatementResult {
  rows: Row[];
  rowCount: number;
}

/**
 * The drivers under the runtime's per-turn path: prepared statements, bound parameters, no ORM.
 * SQLite runs on better-sqlite3's prepared statements, PostgreSQL on `pg` named statements.
 */
export interface SqlExecutor extends SqlRunner {
  readonly dialect: Dialect;
  /** BEGIN, `fn` with the connection, COMMIT (ROLLBACK when `fn` throws). */
  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T>;
  /**
   * Where the driver can send several statements at once (PostgreSQL): BEGIN and `first` in one
   * round trip, `fn` with their results, COMMIT. Rejects with a failing statement's error, the
   * transaction rolled back.
   */
  pipelinedTransaction?<T>(
    first: readonly SqlStatement[],
    fn: (results: StatementResult[], tx: SqlTx) => Promise<T>,
  ): Promise<T>;
  /**
   * Where the driver can send several statements at once (PostgreSQL): BEGIN, `statements` and
   * COMMIT in one round trip, resolving with the statements' results once committed. Rejects with
   * a failing statement's error, nothing of it committed.
   */
  pipelinedCommit?(statements: readonly SqlStatement[]): Promise<StatementResult[]>;
  /**
   * Where the database has locks that span processes (PostgreSQL's advisory locks): runs `fn`
   * while holding the lock named `name` on a connection of its own, waiting for any other process
   * that holds it (`onWait` is called once when it must wait). The lock goes with the connection.
   */
  exclusively?<T>(name: string, fn: () => Promise<T>, onWait: () => void): Promise<T>;
  /** Whether the database answers, where the driver can ask apart from the statements' connections. */
  ping?(): Promise<boolean>;
  close(): Promise<void>;
}

/** How the SQLite executor reaches its connection (see `SqliteExecutor`). */
export interface SqliteConnectionSource {
  acquire(): Promise<BetterSqlite3.Database>;
  release(conn: BetterSqlite3.Database): void;
}

/**
 * SQL texts kept prepared per connection. The platform has a few dozen fixed statements; texts
 * built per request (an IN list per length, optional filters) beyond this run unprepared.
 */
export const MAX_CACHED_STATEMENTS = 512;

/**
 * SQLite on the process's one connection (`SqliteConnectionLock`), borrowed for each statement or
 * transaction and handed back after; MikroORM's knex, when loaded, borrows it the same way. Why not
 * a connection each: two connections writing one file from one process can deadlock the event
 * loop. better-sqlite3 is synchronous, so a writer that meets the other connection's lock
 * busy-waits (busy_timeout) on the event loop, while the transaction holding the lock needs the
 * event loop to finish. Borrowing turns that into an ordinary asynchronous wait: while a MikroORM
 * transaction holds the connection across awaits, our turn waits in the queue, and while ours holds
 * it, MikroORM waits. A `:memory:` database has only that connection anyway. The lock also keeps us
 * from beginning inside someone else's transaction; `inTransaction` is checked as a guard.
 */
export class SqliteExecutor implements SqlExecutor {
  readonly dialect = 'sqlite' as const;
  /** prepared once per SQL text, per connection (the pool may replace a broken one) */
  private readonly statements = new WeakMap<BetterSqlite3.Database, Map<string, BetterSqlite3.Statement>>();

  constructor(
    private readonly source: SqliteConnectionSource,
    private readonly onClose: () => Promise<void> | void = () => undefined,
  ) {}

  private prepare(conn: BetterSqlite3.Database, sql: string): BetterSqlite3.Statement {
    let cache = this.statements.get(conn);
    if (!cache) {
      cache = new Map();
      this.statements.set(conn, cache);
    }
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = conn.prepare(sql);
      // statements with a variable shape (an IN list per length) must not grow the cache forever
      if (cache.size < MAX_CACHED_STATEMENTS) cache.set(sql, stmt);
    }
    return stmt;
  }

  private queryOn(conn: BetterSqlite3.Database, sql: string, params: readonly unknown[]): Row[] {
    const stmt = this.prepare(conn, sql);
    if (!stmt.reader) {
      stmt.run(...params);
      return [];
    }
    // better-sqlite3 returns each row as a plain object of column -> value
    return stmt.all(...params) as Row[];
  }

  private runOn(conn: BetterSqlite3.Database, sql: string, params: readonly unknown[]): number {
    const stmt = this.prepare(conn, sql);
    return stmt.reader ? stmt.all(...params).length : stmt.run(...params).changes;
  }

  private async borrow<T>(fn: (conn: BetterSqlite3.Database) => T): Promise<T> {
    const conn = await this.source.acquire();
    try {
      return fn(conn);
    } finally {
      this.source.release(conn);
    }
  }

  query(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.borrow((conn) => this.queryOn(conn, sql, params));
  }

  run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return this.borrow((conn) => this.runOn(conn, sql, params));
  }

  execute(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.query(sql, params);
  }

  async transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T> {
    const conn = await this.source.acquire();
    try {
      if (conn.inTransaction) throw new Error('the shared SQLite connection is already inside a transaction');
      this.prepare(conn, 'BEGIN').run();
      try {
        const result = await fn(this.txOn(conn));
        this.prepare(conn, 'COMMIT').run();
        return result;
      } catch (err) {
        if (conn.inTransaction) this.prepare(conn, 'ROLLBACK').run();
        throw err;
      }
    } finally {
      this.source.release(conn);
    }
  }

  private txOn(conn: BetterSqlite3.Database): SqlTx {
    const query = (sql: string, params: readonly unknown[] = []): Promise<Row[]> =>
      Promise.resolve(this.queryOn(conn, sql, params));
    return {
      dialect: 'sqlite',
      query,
      execute: query,
      run: (sql, params = []) => Promise.resolve(this.runOn(conn, sql, params)),
      savepoint: (fn) => {
        // after an error that made SQLite roll the whole transaction back, statements would
        // autocommit one by one: refuse instead
        if (!conn.inTransaction) return Promise.reject(new TransactionLostError('no transaction is open'));
        return withSavepoint((sql) => this.prepare(conn, sql).run(), fn, true);
      },
    };
  }

  async close(): Promise<void> {
    await this.onClose();
  }
}

/**
 * SAVEPOINT, then `fn`; on a throw ROLLBACK TO the savepoint and rethrow. How a savepoint that held
 * ends depends on the database (`release`):
 * - SQLite releases it at once: a statement is a function call there, not a round trip, and every
 *   savepoint left open makes each later write copy the pages it touches into one more level of
 *   the statement journal (a turn of one UPDATE cost 8 us with 36 stacked, 3.2 us released);
 * - PostgreSQL leaves it: the next turn's SAVEPOINT of the same name stacks over it (both roll
 *   back to the most recent of a name), the COMMIT ends them all, and each turn saves the round
 *   trip a RELEASE would cost. `GroupCommit` caps how many stack up in one transaction.
 */
export async function withSavepoint<T>(
  exec: (sql: string) => unknown,
  fn: () => Promise<T>,
  release: boolean,
): Promise<T> {
  await exec('SAVEPOINT turn');
  let result: T;
  try {
    result = await fn();
  } catch (err) {
    try {
      await exec('ROLLBACK TO SAVEPOINT turn');
      if (release) await exec('RELEASE SAVEPOINT turn');
    } catch (lost) {
      // the transaction itself is gone (SQLite rolls all back on some errors, a connection
      // breaks): nothing after this may run as if inside it
      throw new TransactionLostError(lost);
    }
    throw err;
  }
  if (release) await exec('RELEASE SAVEPOINT turn');
  return result;
}

/** A savepoint could not be rolled back to: the enclosing transaction is lost as a whole. */
export class TransactionLostError extends Error {
  override readonly name = 'TransactionLostError';
  constructor(cause: unknown) {
    super(`transaction lost: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}
