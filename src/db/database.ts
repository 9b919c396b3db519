import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { SqlEntityManager } from '@mikro-orm/knex';
import type { Logger } from 'pino';
import { CONNECT_TIMEOUT_MS, nodeTlsOptions, type Config } from '../../config/index.js';
import { migrationNames, type MigrationName } from './migrations/names.js';
import { GroupCommit } from './group-commit.js';
import type { Orm, OrmOptions } from './orm.js';
import { SqliteExecutor, type Dialect, type Row, type SqlExecutor } from './sql.js';
import { SqliteConnectionLock, openSqlite } from './sqlite-connection.js';

export type { Dialect, Row };

/**
 * The one handle on persistence a process holds. Everything runs on the drivers through `sql`
 * (src/db/sql.ts: prepared statements, bound values). MikroORM is loaded only when asked for
 * (`loadOrm`): for migrations, and for actors whose turns use `ctx.em`; `execute` with an
 * EntityManager goes through it (values written into the SQL text, a fresh prepare each time).
 */
export class Database {
  private grouped: GroupCommit | undefined;
  private ormLoading: Promise<Orm> | undefined;
  private loaded: Orm | undefined;

  private constructor(
    readonly dialect: Dialect,
    /**
     * The drivers directly: the runtime's per-turn path and every `execute` without an
     * EntityManager. On PostgreSQL a pool of its own; once MikroORM is loaded it has its pool
     * beside it (no minimum, idle connections let go), so a process may hold up to
     * DATABASE_POOL_MAX of each.
     */
    readonly sql: SqlExecutor,
    private readonly openOrm: () => Promise<Orm>,
    private readonly commitWindowMs: number,
    /** what the migrations' lock is named after: the PostgreSQL schema (`migrate`) */
    private readonly schemaName = '',
  ) {}

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
      /** PostgreSQL: the executor's statements, bounded (PgExecutorOptions.queryTimeoutMs) */
      queryTimeoutMs?: number;
      idleInTransactionMs?: number;
      commitWindowMs?: number;
    },
  ): Promise<Database> {
    const ormOptions: OrmOptions = {
      log: opts.log,
      poolMax: opts.poolMax ?? 10,
      idleInTransactionMs: opts.idleInTransactionMs ?? 30_000,
      // both pools (and so migrations) connect alike: TLS as DATABASE_URL's sslmode says, bounded
      ssl: database.kind === 'postgresql' && database.tls ? nodeTlsOptions(database.tls) : false,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
    };
    const window = opts.commitWindowMs ?? 0;
    if (database.kind === 'sqlite') {
      if (database.file !== ':memory:') mkdirSync(dirname(resolve(database.file)), { recursive: true });
      const lock = new SqliteConnectionLock(await openSqlite(database.file, { exclusive: database.exclusive }));
      const executor = new SqliteExecutor(lock, () => lock.close());
      const openOrm = async (): Promise<Orm> => {
        const { openSqliteOrm } = await import('./orm.js');
        return openSqliteOrm(database.file, lock, ormOptions);
      };
      return new Database('sqlite', executor, openOrm, window);
    }
    // each dialect's driver is loaded only by the processes that use it (cold start)
    const { PgExecutor } = await import('./pg-executor.js');
    const executor = new PgExecutor({
      url: database.url,
      schema: database.schema,
      poolMax: ormOptions.poolMax,
      idleInTransactionMs: ormOptions.idleInTransactionMs,
      queryTimeoutMs: opts.queryTimeoutMs ?? 30_000,
      ssl: ormOptions.ssl,
      connectTimeoutMs: ormOptions.connectTimeoutMs,
      // every actor turn writes these: `/readyz` says unready while a lock keeps writers out
      probeTables: ['actor_state', 'actor_mailbox'],
    });
    const openOrm = async (): Promise<Orm> => {
      const { openPostgresOrm } = await import('./orm.js');
      return openPostgresOrm(database, ormOptions);
    };
    return new Database('postgresql', executor, openOrm, window, database.schema);
  }

  /** Loads MikroORM (once; later calls share the first). */
  loadOrm(): Promise<Orm> {
    this.ormLoading ??= this.openOrm().then(
      (orm) => (this.loaded = orm),
      (err: unknown) => {
        // a failed load (the server unreachable) is tried again by the next caller
        this.ormLoading = undefined;
        throw err;
      },
    );
    return this.ormLoading;
  }

  /** MikroORM, after `loadOrm`. */
  get orm(): Orm {
    if (!this.loaded) {
      throw new Error(
        'MikroORM is not loaded: an actor that uses ctx.em sets `entityManager: true` (other callers await db.loadOrm())',
      );
    }
    return this.loaded;
  }

  /** A fresh EntityManager, one per request or per actor turn (after `loadOrm`). */
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
   * that finds none never loads MikroORM (cold start).
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

  /**
   * Applies pending migrations (up to and including `to`, when named); returns the names applied.
   * On PostgreSQL one process at a time per schema: a second release phase (or test) started
   * beside the first waits for it, then finds nothing pending, instead of failing on the first's
   * rows half-way through.
   */
  async migrate(to?: MigrationName, onWait: () => void = () => undefined): Promise<string[]> {
    if ((await this.pendingMigrations()).length === 0) return [];
    if (!this.sql.exclusively) return this.applyMigrations(to);
    return this.sql.exclusively(`ev-roaming migrations ${this.schemaName}`, () => this.applyMigrations(to), onWait);
  }

  private async applyMigrations(to: MigrationName | undefined): Promise<string[]> {
    // pending again: what another process applied while this one waited is not applied twice
    if ((await this.pendingMigrations()).length === 0) return [];
    const orm = await this.loadOrm();
    if (this.dialect === 'postgresql') {
      const schema = orm.config.get('schema');
      if (schema && schema !== 'public') await this.sql.run(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    }
    const [{ Migrator }, { migrationsList }] = await Promise.all([
      import('@mikro-orm/migrations'),
      import('./migrations/index.js'),
    ]);
    orm.config.set('migrations', {
      ...orm.config.get('migrations'),
      migrationsList,
      transactional: true,
      allOrNothing: true,
      tableName: 'mikro_orm_migrations',
    });
    Migrator.register(orm);
    const applied = await orm.getMigrator().up(to ? { to } : undefined);
    return applied.map((m) => m.name);
  }

  async ping(): Promise<boolean> {
    // PostgreSQL: on a connection of its own, not behind the pool's busy ones (PgExecutor.ping)
    if (this.sql.ping) return this.sql.ping();
    try {
      await this.execute('SELECT 1 AS ok');
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    // MikroORM first: on SQLite it borrows the executor's connection
    const orm = await this.ormLoading?.catch(() => undefined);
    await orm?.close(true);
    await this.sql.close();
  }
}

/** SQLite's "no such table", PostgreSQL's undefined_table (42P01). */
function isMissingTable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return ('code' in err && err.code === '42P01') || /no such table/i.test(err.message);
}
