import { MikroORM, type Options } from '@mikro-orm/core';
import { BetterSqliteKnexDialect, knex, type AbstractSqlDriver } from '@mikro-orm/knex';
import type BetterSqlite3 from 'better-sqlite3';
import type { ConnectionOptions } from 'node:tls';
import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import type { SqliteConnectionSource } from './sql.js';

/**
 * MikroORM, loaded only by a process that needs it: one with pending migrations, or one whose
 * actors use `ctx.em` (`entityManager: true`). The per-message path never touches it, and leaving
 * it (with knex and the migrator) out of the start saves a third of the cold start.
 */
export type Orm = MikroORM<AbstractSqlDriver>;

export interface OrmOptions {
  log: Logger;
  poolMax: number;
  idleInTransactionMs: number;
  /** PostgreSQL: TLS options for `pg` (false: plain TCP) and the bound on opening a connection */
  ssl: ConnectionOptions | false;
  connectTimeoutMs: number;
}

function commonOptions(log: Logger): Partial<Options<AbstractSqlDriver>> {
  return {
    entities: [],
    discovery: { warnWhenNoEntities: false },
    allowGlobalContext: false,
    debug: false,
    forceUtcTimezone: true,
    logger: (message) => log.debug({ orm: true }, message),
  };
}

/**
 * SQLite: knex borrows the executor's connection instead of opening one (a second connection
 * writing the same file from this process could deadlock the event loop: see `SqliteExecutor`).
 */
export async function openSqliteOrm(file: string, source: SqliteConnectionSource, opts: OrmOptions): Promise<Orm> {
  // knex's client classes are typed `any` by @mikro-orm/knex: the three methods below are the ones
  // knex's own Client calls around every query and transaction
  class SharedConnectionClient extends BetterSqliteKnexDialect {
    initializePool(): void {
      // no pool: every acquire goes through the connection's lock
    }
    acquireConnection(): Promise<BetterSqlite3.Database> {
      return source.acquire();
    }
    releaseConnection(conn: BetterSqlite3.Database): Promise<void> {
      source.release(conn);
      return Promise.resolve();
    }
  }
  const { BetterSqliteDriver } = await import('@mikro-orm/better-sqlite');
  const client = knex({
    client: SharedConnectionClient as unknown as typeof knex.Client,
    connection: { filename: file },
    useNullAsDefault: true,
  });
  return MikroORM.init<AbstractSqlDriver>({
    ...commonOptions(opts.log),
    driver: BetterSqliteDriver,
    dbName: file,
    driverOptions: client,
  } as Options<AbstractSqlDriver>);
}

/** PostgreSQL: a pool of MikroORM's own beside the executor's (same schema and session settings). */
export async function openPostgresOrm(
  database: Extract<Config['database'], { kind: 'postgresql' }>,
  opts: OrmOptions,
): Promise<Orm> {
  const { PostgreSqlDriver } = await import('@mikro-orm/postgresql');
  const schema = database.schema;
  return MikroORM.init<AbstractSqlDriver>({
    ...commonOptions(opts.log),
    driver: PostgreSqlDriver,
    clientUrl: database.url,
    schema,
    // merged by MikroORM into knex's connection settings, which knex hands to pg.Client
    driverOptions: { connection: { ssl: opts.ssl, connectionTimeoutMillis: opts.connectTimeoutMs } },
    pool: {
      min: 0,
      max: opts.poolMax,
      afterCreate(
        conn: { query(sql: string, cb: (err: Error | null) => void): void },
        done: (err: Error | null, conn: unknown) => void,
      ) {
        // A transaction left open by a stuck or paused process would hold the fence row and
        // stall the shard's new owner; PostgreSQL ends such sessions after this long.
        const idle = Math.max(1000, Math.floor(opts.idleInTransactionMs));
        conn.query(`SET search_path TO "${schema}"; SET idle_in_transaction_session_timeout = ${idle}`, (err) =>
          done(err, conn),
        );
      },
    },
  } as Options<AbstractSqlDriver>);
}
