import type { ConnectionOptions } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Pipeline, type PipelinedStatement } from './pg-pipeline.js';
import {
  MAX_CACHED_STATEMENTS,
  withSavepoint,
  type Row,
  type SqlExecutor,
  type SqlStatement,
  type SqlTx,
  type StatementResult,
} from './sql.js';

/**
 * `?` placeholders to PostgreSQL's `$n`, skipping quoted text. Done once per statement text: the
 * result is cached with the statement's name.
 */
export function toDollarParams(sql: string): string {
  let n = 0;
  let out = '';
  let quote: string | undefined;
  for (const ch of sql) {
    if (quote) {
      if (ch === quote) quote = undefined;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else out += ch === '?' ? `$${++n}` : ch;
  }
  return out;
}

const BEGIN: PipelinedStatement = { text: 'BEGIN', values: [] };
const COMMIT: PipelinedStatement = { text: 'COMMIT', values: [] };

export interface PgExecutorOptions {
  url: string;
  schema: string;
  poolMax: number;
  /** idle_in_transaction_session_timeout, as `Database.open` sets it for MikroORM's pool */
  idleInTransactionMs: number;
  /** TLS options (DATABASE_URL's sslmode, DATABASE_SSL_*); false: plain TCP */
  ssl: ConnectionOptions | false;
  /** a connection (TCP, TLS, login) that takes longer fails */
  connectTimeoutMs: number;
  /**
   * A statement running longer is cancelled by the server (`statement_timeout`); one not answered
   * a second after that fails here and its connection is let go: a server or network that hangs
   * holds no request, turn or probe forever (DATABASE_QUERY_TIMEOUT_MS).
   */
  queryTimeoutMs: number;
  /**
   * Tables `ping` takes a writer's lock on (ROW EXCLUSIVE, at once released): a lock that keeps
   * writers out of them (ALTER TABLE, CREATE INDEX without CONCURRENTLY, VACUUM FULL, LOCK TABLE)
   * stalls every actor turn while `SELECT 1` still answers. None: `SELECT 1` alone.
   */
  probeTables?: readonly string[];
}

/** how long `ping` waits for its writer's lock on `probeTables`: a lock held longer counts as unreachable */
const PROBE_LOCK_MS = 500;

/** how long after the server's own cancel a statement's answer is awaited before giving up */
const ANSWER_GRACE_MS = 1000;

/** how often `exclusively` asks again for a lock another process holds */
const LOCK_POLL_MS = 250;

/** node-postgres's error when a statement's answer did not come within its query_timeout */
const UNANSWERED_MESSAGE = 'Query read timeout';

function isUnanswered(err: unknown): boolean {
  return err instanceof Error && err.message === UNANSWERED_MESSAGE;
}

/**
 * PostgreSQL through a `pg.Pool` of the executor's own (same URL, schema and session settings as
 * MikroORM's). Each SQL text becomes a named prepared statement, parsed once per connection by
 * the server; the `?` -> `$n` rewrite happens once per text.
 */
export class PgExecutor implements SqlExecutor {
  readonly dialect = 'postgresql' as const;
  private readonly pool: pg.Pool;
  private readonly named = new Map<string, { name: string; text: string }>();
  /** how `ping`'s connection of its own is made */
  private readonly probeConfig: pg.ClientConfig;
  /** `ping`'s connection, once made; dropped when it fails, made again at the next ping */
  private prober: Promise<pg.Client> | undefined;
  /** what `ping` runs: `SELECT 1`, or a writer's lock on `probeTables` */
  private readonly probeSql: string;

  constructor(opts: PgExecutorOptions) {
    const idle = Math.max(1000, Math.floor(opts.idleInTransactionMs));
    // session settings as startup parameters: in force before the first statement, no extra query
    const schema = `"${opts.schema.replace(/"/g, '""')}"`.replace(/([\\ ])/g, '\\$1');
    // a connection being made is bounded by connectTimeoutMs; waiting for a pooled one by the
    // statement bound (a shorter bound would fail queries queued behind a merely busy pool)
    const connectTimeoutMs = opts.connectTimeoutMs;
    // node-postgres's query_timeout counts from when a statement is queued on its connection, and
    // when it fires the connection still waits for the statement's answer: the connection is let
    // go (pool.query and `checkout` release it as broken on the error), never handed on
    const statementMs = Math.max(1000, Math.floor(opts.queryTimeoutMs));
    const answerMs = statementMs + ANSWER_GRACE_MS;
    class BoundedClient extends pg.Client {
      constructor(config: pg.ClientConfig = {}) {
        super({ ...config, connectionTimeoutMillis: connectTimeoutMs, query_timeout: answerMs });
      }
    }
    this.pool = new pg.Pool({
      Client: BoundedClient,
      connectionString: opts.url,
      max: opts.poolMax,
      // waiting for a pooled connection is bounded too (making one is, by BoundedClient): behind a
      // pool whose connections all wait on a silent server, a request waited a multiple of the
      // statement bound ("timeout exceeded when trying to connect", an outage: 503)
      connectionTimeoutMillis: answerMs,
      ssl: opts.ssl,
      options: `-c search_path=${schema} -c idle_in_transaction_session_timeout=${idle} -c statement_timeout=${statementMs}`,
    });
    // an idle client's error (server restart) must not crash the process; the pool drops it
    this.pool.on('error', () => undefined);
    this.probeConfig = {
      connectionString: opts.url,
      ssl: opts.ssl,
      connectionTimeoutMillis: connectTimeoutMs,
      // a probe on a connection that stopped answering fails, and the next one connects anew
      query_timeout: Math.min(answerMs, 2 * connectTimeoutMs),
      options: `-c search_path=${schema} -c lock_timeout=${PROBE_LOCK_MS}`,
    };
    const tables = opts.probeTables ?? [];
    this.probeSql =
      tables.length === 0
        ? 'SELECT 1'
        : `BEGIN; LOCK TABLE ${tables.map((t) => `"${t.replace(/"/g, '""')}"`).join(', ')} IN ROW EXCLUSIVE MODE; COMMIT`;
  }

  /**
   * Whether PostgreSQL answers, asked on a connection of its own rather than the pool's. A pool
   * whose connections are all busy (a burst of turns, a transaction waiting on a row's lock) is no
   * server that is down: a probe queued behind them ran into its timeout, and `/readyz` said the
   * database was unreachable on every web process at once, taking them all out of a load
   * balancer (docs/OPERATIONS.md). With `probeTables`, a server that answers while a lock keeps
   * writers out of them for over PROBE_LOCK_MS is not one the process can serve with: false.
   */
  async ping(): Promise<boolean> {
    try {
      const client = await (this.prober ??= this.connectProber());
      // on failure (a lock not granted within PROBE_LOCK_MS) its transaction is left aborted: the
      // connection is dropped below, and the next ping makes another
      await client.query(this.probeSql);
      return true;
    } catch {
      this.dropProber();
      return false;
    }
  }

  private async connectProber(): Promise<pg.Client> {
    const client = new pg.Client(this.probeConfig);
    // a broken connection (server restart) must not crash the process: the next ping makes another
    client.on('error', () => this.dropProber());
    await client.connect();
    return client;
  }

  private dropProber(): void {
    const was = this.prober;
    this.prober = undefined;
    void was?.then((c) => c.end()).catch(() => undefined);
  }

  private statement(sql: string, params: readonly unknown[]): pg.QueryConfig {
    let s = this.named.get(sql);
    if (!s) {
      // past the bound, a text runs as an unnamed statement: parsed each time, values still bound
      if (this.named.size >= MAX_CACHED_STATEMENTS) return { text: toDollarParams(sql), values: [...params] };
      s = { name: `rt${this.named.size + 1}`, text: toDollarParams(sql) };
      this.named.set(sql, s);
    }
    return { name: s.name, text: s.text, values: [...params] };
  }

  async query(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return (await this.pool.query<Row>(this.statement(sql, params))).rows;
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return (await this.pool.query(this.statement(sql, params))).rowCount ?? 0;
  }

  execute(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.query(sql, params);
  }

  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T> {
    return this.onConnection(
      (client) => client.query('BEGIN').then(() => undefined),
      (_begun, tx) => fn(tx),
    );
  }

  /**
   * BEGIN and `first` sent in one write and answered in one round trip (pg-pipeline.ts), then
   * `fn` with their results on the same connection, then COMMIT (ROLLBACK when `fn` throws). A
   * group commit's batch of light turns is two round trips this way instead of five. When a
   * statement of `first` fails, the transaction is gone with the connection (which prepared
   * statements the server kept is not known) and the error is the result.
   */
  pipelinedTransaction<T>(
    first: readonly SqlStatement[],
    fn: (results: StatementResult[], tx: SqlTx) => Promise<T>,
  ): Promise<T> {
    return this.onConnection(async (client) => {
      const pipeline = new Pipeline([BEGIN, ...first.map((s) => this.pipelined(s))]);
      client.query(pipeline);
      return (await pipeline.done).slice(1);
    }, fn);
  }

  /**
   * BEGIN, `statements` and COMMIT in one write and one round trip (pg-pipeline.ts): a group
   * commit's batch of light turns whose fences a statement of the batch checks (`BatchRead.guard`).
   * When a statement fails the server skips the rest, COMMIT included, and the connection is let
   * go (its transaction rolls back with it; which prepared statements the server kept is not
   * known).
   */
  async pipelinedCommit(statements: readonly SqlStatement[]): Promise<StatementResult[]> {
    const { client, release } = await this.checkout();
    let broken = true;
    try {
      const pipeline = new Pipeline([BEGIN, ...statements.map((s) => this.pipelined(s)), COMMIT]);
      client.query(pipeline);
      const results = await pipeline.done;
      broken = false;
      return results.slice(1, -1);
    } finally {
      release(broken);
    }
  }

  /**
   * A pooled connection, lent until `release`. While lent, the pool no longer listens for the
   * connection's errors, and `pg` emits one when the server or the network drops it (`Connection
   * terminated unexpectedly`, even between two statements): unheard, that is an uncaught
   * exception that ends the process. The lent connection's errors are heard here; the statement
   * under way fails with them, and the connection is let go instead of handed back.
   */
  private async checkout(): Promise<{ client: pg.PoolClient; release(broken: boolean): void }> {
    const client = await this.pool.connect();
    let lost = false;
    const onError = (): void => {
      lost = true;
    };
    client.on('error', onError);
    return {
      client,
      release: (broken) => {
        client.removeListener('error', onError);
        client.release(broken || lost);
      },
    };
  }

  /**
   * `SqlExecutor.exclusively`: a session advisory lock on one pooled connection, asked for again
   * every `LOCK_POLL_MS` (a statement waiting on the lock would run into the statement bound
   * while another process applies a long migration). The connection is not in a transaction while
   * it waits or holds, so no idle-in-transaction bound ends it; it is let go afterwards rather than
   * handed back, which drops the lock even when the unlock could not be sent.
   */
  async exclusively<T>(name: string, fn: () => Promise<T>, onWait: () => void): Promise<T> {
    const { client, release } = await this.checkout();
    try {
      for (let waited = false; ;) {
        const rows = (await client.query<Row>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [name])).rows;
        if (rows[0]?.locked === true) break;
        if (!waited) onWait();
        waited = true;
        await sleep(LOCK_POLL_MS);
      }
      return await fn();
    } finally {
      release(true);
    }
  }

  /** A statement of a pipeline: named (prepared once per connection) as `statement` makes it. */
  private pipelined(s: SqlStatement): PipelinedStatement {
    const q = this.statement(s.sql, s.params);
    return { ...(q.name ? { name: q.name } : {}), text: q.text, values: q.values ?? [] };
  }

  /**
   * On one pooled connection: `begin` opens a transaction (answering what else it ran), `fn`, then
   * COMMIT, or ROLLBACK when `fn` throws. A connection whose `begin` or ROLLBACK failed is let go
   * rather than handed back in an unknown state.
   */
  private async onConnection<B, T>(
    begin: (client: pg.PoolClient) => Promise<B>,
    fn: (begun: B, tx: SqlTx) => Promise<T>,
  ): Promise<T> {
    const { client, release } = await this.checkout();
    let broken = false;
    try {
      let begun: B;
      try {
        begun = await begin(client);
      } catch (err) {
        broken = true;
        throw err;
      }
      try {
        const result = await fn(begun, this.txOn(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        // a statement not answered in time still holds the connection: a ROLLBACK would wait
        // behind it; letting the connection go rolls the transaction back on the server
        if (isUnanswered(err)) broken = true;
        else
          await client.query('ROLLBACK').catch(() => {
            broken = true;
          });
        throw err;
      }
    } finally {
      release(broken);
    }
  }

  private txOn(client: pg.PoolClient): SqlTx {
    const query = async (sql: string, params: readonly unknown[] = []): Promise<Row[]> =>
      (await client.query<Row>(this.statement(sql, params))).rows;
    return {
      dialect: 'postgresql',
      query,
      execute: query,
      run: async (sql, params = []) => (await client.query(this.statement(sql, params))).rowCount ?? 0,
      savepoint: (fn) => withSavepoint((sql) => client.query(sql), fn, false),
    };
  }

  async close(): Promise<void> {
    this.dropProber();
    await this.pool.end();
  }
}
