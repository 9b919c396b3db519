import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { MikroORM, type EntitySchema, type Options } from '@mikro-orm/core';
import type { SqlEntityManager, AbstractSqlDriver } from '@mikro-orm/knex';
import type BetterSqlite3 from 'better-sqlite3';
import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import { migrationNames } from './migrations/names.js';
import { coreEntities } from './entities/index.js';
import { GroupCommit } from './group-commit.js';
import { SqliteExecutor, type Dialect, type Row, type SqlExecutor } from './sql.js';

export type { Dialect, Row };

/**
 * The one handle on persistence a process holds. Entities and migrations are shared by both
 * dialects. The actor runtime's per-turn path runs on the drivers through `sql` (src/db/sql.ts:
 * prepared statements, bound values); `execute` goes through MikroORM/knex (values are written
 * into the SQL text, a fresh prepare each time) and serves the paths off the per-message one.
 */
export class Database {
  private executor: SqlExecutor | undefined;
  private grouped: GroupCommit | undefined;

  private constructor(
    readonly orm: MikroORM<AbstractSqlDriver>,
    readonly dialect: Dialect,
    private readonly makeExecutor: (db: Database) => SqlExecutor,
    private readonly commitWindowMs: number,
  ) {}

  /**
   * The drivers directly (prepared statements, bound values): the runtime's per-turn path and
   * every `execute` without an EntityManager. Made on first use. On PostgreSQL it is a pool of its
   * own beside MikroORM's, which now serves only migrations and turns that touch `ctx.em` (its
   * pool has no minimum and lets idle connections go), so a busy process may hold up to
   * DATABASE_POOL_MAX of each.
   */
  get sql(): SqlExecutor {
    this.executor ??= this.makeExecutor(this);
    return this.executor;
  }

  /**
   * The process's group commit on `sql` (COMMIT_WINDOW_MS): the writes of actor turns, of
   * chargers' connects and of partners' OCPI objects that come together share a transaction.
   */
  get group(): GroupCommit {
    this.grouped ??= new GroupCommit(this.sql, this.commitWindowMs);
    return this.grouped;
  }

  static async open(
    database: Config['database'],
    opts: {
      log: Logger;
      poolMax?: number;
      entities?: EntitySchema[];
      idleInTransactionMs?: number;
      commitWindowMs?: number;
    },
  ): Promise<Database> {
    const entities = [...coreEntities, ...(opts.entities ?? [])];
    const common: Partial<Options<AbstractSqlDriver>> = {
      entities,
      discovery: { warnWhenNoEntities: false },
      allowGlobalContext: false,
      debug: false,
      forceUtcTimezone: true,
      logger: (message) => opts.log.debug({ orm: true }, message),
    };
    if (database.kind === 'sqlite') {
      if (database.file !== ':memory:') mkdirSync(dirname(resolve(database.file)), { recursive: true });
      // each dialect's driver is loaded only by the processes that use it (cold start)
      const { BetterSqliteDriver } = await import('@mikro-orm/better-sqlite');
      const orm = await MikroORM.init<AbstractSqlDriver>({
        ...common,
        driver: BetterSqliteDriver,
        dbName: database.file,
        pool: {
          min: 1,
          max: 1,
          afterCreate(conn: { pragma(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) {
            // WAL lets readers proceed during a write; busy_timeout rides out a checkpoint.
            conn.pragma('journal_mode = WAL');
            conn.pragma('busy_timeout = 5000');
            conn.pragma('synchronous = NORMAL');
            done(null, conn);
          },
        },
      } as Options<AbstractSqlDriver>);
      return new Database(orm, 'sqlite', sqliteExecutor, opts.commitWindowMs ?? 0);
    }
    const pgParts = await openPostgres(database, opts, common);
    return new Database(pgParts.orm, 'postgresql', pgParts.makeExecutor, opts.commitWindowMs ?? 0);
  }

  /** A fresh EntityManager, one per request or per actor turn. */
  fork(): SqlEntityManager {
    return this.orm.em.fork() as SqlEntityManager;
  }

  /**
   * One statement: inside `em`'s transaction when given (through MikroORM), otherwise on the
   * drivers directly (`sql`: prepared, values bound), on a connection of its own.
   */
  async execute(sql: string, params: unknown[] = [], em?: SqlEntityManager): Promise<Row[]> {
    if (em) return em.execute<Row[]>(sql, params, 'all');
    return this.sql.query(sql, params);
  }

  /**
   * The migrations this database has not applied, read with one query on the drivers: a process
   * that finds none never loads MikroORM's migrator (cold start).
   */
  async pendingMigrations(): Promise<string[]> {
    let applied: Set<string>;
    try {
      const rows = await this.sql.query('SELECT name FROM mikro_orm_migrations');
      applied = new Set(rows.map((r) => String(r.name)));
    } catch (err) {
      // no table yet is a new database; anything else (the server unreachable) is not
      if (!isMissingTable(err)) throw err;
      applied = new Set();
    }
    return migrationNames.filter((name) => !applied.has(name));
  }

  /** Applies pending migrations; returns the names applied. */
  async migrate(): Promise<string[]> {
    if ((await this.pendingMigrations()).length === 0) return [];
    if (this.dialect === 'postgresql') {
      const schema = this.orm.config.get('schema');
      if (schema && schema !== 'public') await this.orm.em.fork().execute(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    }
    const [{ Migrator }, { migrationsList }] = await Promise.all([
      import('@mikro-orm/migrations'),
      import('./migrations/index.js'),
    ]);
    this.orm.config.set('migrations', {
      ...this.orm.config.get('migrations'),
      migrationsList,
      transactional: true,
      allOrNothing: true,
      tableName: 'mikro_orm_migrations',
    });
    Migrator.register(this.orm);
    const applied = await this.orm.getMigrator().up();
    return applied.map((m) => m.name);
  }

  async ping(): Promise<boolean> {
    try {
      await this.execute('SELECT 1 AS ok');
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.executor?.close();
    await this.orm.close(true);
  }
}

/** PostgreSQL: MikroORM's pool for migrations and `ctx.em`, the executor's own for everything else. */
async function openPostgres(
  database: Extract<Config['database'], { kind: 'postgresql' }>,
  opts: { poolMax?: number; idleInTransactionMs?: number },
  common: Partial<Options<AbstractSqlDriver>>,
): Promise<{ orm: MikroORM<AbstractSqlDriver>; makeExecutor: () => SqlExecutor }> {
  const schema = database.schema;
  const { PostgreSqlDriver } = await import('@mikro-orm/postgresql');
  const { PgExecutor } = await import('./pg-executor.js');
  const orm = await MikroORM.init<AbstractSqlDriver>({
    ...common,
    driver: PostgreSqlDriver,
    clientUrl: database.url,
    schema,
    pool: {
      min: 0,
      max: opts.poolMax ?? 10,
      afterCreate(
        conn: { query(sql: string, cb: (err: Error | null) => void): void },
        done: (err: Error | null, conn: unknown) => void,
      ) {
        // A transaction left open by a stuck or paused process would hold the fence row and
        // stall the shard's new owner; PostgreSQL ends such sessions after this long.
        const idle = Math.max(1000, Math.floor(opts.idleInTransactionMs ?? 30_000));
        conn.query(`SET search_path TO "${schema}"; SET idle_in_transaction_session_timeout = ${idle}`, (err) =>
          done(err, conn),
        );
      },
    },
  } as Options<AbstractSqlDriver>);
  return {
    orm,
    makeExecutor: () =>
      new PgExecutor({
        url: database.url,
        schema: database.schema,
        poolMax: opts.poolMax ?? 10,
        idleInTransactionMs: opts.idleInTransactionMs ?? 30_000,
      }),
  };
}

/** SQLite's "no such table", PostgreSQL's undefined_table (42P01). */
function isMissingTable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return ('code' in err && err.code === '42P01') || /no such table/i.test(err.message);
}

/** SQLite's executor borrows the connection from knex's pool (why: `SqliteExecutor`). */
function sqliteExecutor(db: Database): SqlExecutor {
  const client = db.orm.em.getConnection().getKnex().client;
  return new SqliteExecutor({
    // knex types its pool's connection as any; with the better-sqlite driver it is a better-sqlite3 Database
    acquire: () => client.acquireConnection() as Promise<BetterSqlite3.Database>,
    release: (conn) => void client.releaseConnection(conn),
  });
}
