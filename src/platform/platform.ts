import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { CONNECT_TIMEOUT_MS, ConfigError, nodeTlsOptions, type Config } from '../../config/index.js';
import { byteSize } from '../../config/byte-size.js';
import { Database } from '../db/database.js';
import { migrationNames } from '../db/migrations/names.js';
import { createGateway } from '../gateway/gateway.js';
import { docsMount } from '../gateway/docs-mount.js';
import { buildOpenApi } from '../gateway/openapi.js';
import { boundedPipelining } from '../gateway/pipelining-guard.js';
import { publicOrigin } from '../gateway/public-origin.js';
import type { MountSpec } from '../gateway/route-table.js';
import { systemMount } from '../gateway/system-mount.js';
import { PlatformMetrics } from '../metrics.js';
import { ActorSystem } from '../runtime/actor-system.js';
import { RedisKeys } from '../runtime/cluster/redis-keys.js';
import { LocalPlacement } from '../runtime/local-placement.js';
import type { ActorPlacement } from '../runtime/placement.js';
import { RuntimeStore } from '../runtime/runtime-store.js';
import { InProcessTransport, type Transport } from '../runtime/transport.js';
import { checkDatabase, redisError } from './dependency-error.js';
import { DependencyHealth } from './dependency-health.js';
import type { PlatformModule, PlatformServices } from './services.js';
import { redisErrorListener } from '../log-limit.js';

export interface PlatformOptions {
  config: Config;
  log: Logger;
  modules: PlatformModule[];
  /** default: every role hosts shards */
  hostShards?: boolean;
  processId?: string;
}

/**
 * One process of the platform: database, actor runtime (embedded or cluster), and for the web
 * roles the HTTP server with the gateway and the modules' hooks (OCPP WebSockets).
 */
export class Platform {
  private server: Server | undefined;
  private shuttingDown = false;
  private stopped: Promise<void> | undefined;

  private constructor(
    readonly services: PlatformServices,
    private readonly modules: PlatformModule[],
  ) {}

  static async create(opts: PlatformOptions): Promise<Platform> {
    const { config, log } = opts;
    withoutPretenuring();
    heapGrowth(config.HEAP_GROWING_PERCENT);
    const db = await openDatabase(config, log);
    const store = new RuntimeStore(db);
    const redisKeys = new RedisKeys(config.REDIS_PREFIX);
    const { redis, placement, transport } = await connectPlacement(opts, store, redisKeys);
    const late: { actors?: ActorSystem } = {};
    const metrics = new PlatformMetrics({
      activations: () => late.actors?.stats().activations ?? 0,
      ownedShards: () => late.actors?.ownedShardCount() ?? 0,
    });
    const actors = new ActorSystem({
      db,
      store,
      placement,
      transport,
      log,
      askTimeoutMs: config.ASK_TIMEOUT_MS,
      idleMs: config.ACTOR_IDLE_MS,
      onTurn: (kind, outcome, seconds) => metrics.observeTurn(kind, outcome, seconds),
    });
    late.actors = actors;
    for (const m of opts.modules)
      for (const def of typeof m.actors === 'function' ? m.actors({ config, db, log }) : (m.actors ?? []))
        actors.register(def);
    const health = new DependencyHealth({ db, redis, log });
    return new Platform({ config, log, db, actors, metrics, redis, redisKeys, health }, opts.modules);
  }

  get url(): string {
    const port = portOf(this.server);
    return port !== undefined ? `http://127.0.0.1:${port}` : '';
  }

  get httpServer(): Server | undefined {
    return this.server;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /**
   * Starts the actor host and the HTTP server: for the web roles with every mount and the
   * modules' hooks (OCPP WebSockets); for a worker with the system mount only (/healthz,
   * /readyz, /metrics) on the same PORT, so that it answers readiness and is scraped like a web
   * process (docs/OPERATIONS.md "Signals").
   */
  async start(): Promise<void> {
    try {
      await this.startServing();
    } catch (err) {
      // the process had joined the cluster before it failed (its PORT taken): the others had
      // handed it shards. Stopping hands them back at once; without it they had no owner until
      // their leases lapsed (LEASE_TTL_MS)
      const { config, log } = this.services;
      log.warn({ err }, 'start failed; leaving the cluster');
      const bounded = new Promise<void>((r) => setTimeout(r, config.SHUTDOWN_TIMEOUT_MS).unref());
      await Promise.race([this.stop().catch(() => undefined), bounded]);
      throw err;
    }
  }

  private async startServing(): Promise<void> {
    const { config, log } = this.services;
    for (const m of this.modules) m.observe?.(this.services);
    this.services.health.start();
    await this.services.actors.start();
    const worker = config.PROCESS_ROLE === 'worker';
    const featureMounts = worker ? [] : this.modules.flatMap((m) => (m.mounts ? m.mounts(this.services) : []));
    let openapi: Record<string, unknown> | undefined;
    const mounts: Array<MountSpec<unknown>> = [];
    mounts.push(
      systemMount({
        services: this.services,
        isShuttingDown: () => this.shuttingDown,
        openapi: () =>
          (openapi ??= buildOpenApi(mounts, {
            title: 'EV roaming platform',
            version: '1.0.0',
            serverUrl: publicOrigin(config),
          })),
      }),
      docsMount(),
      ...featureMounts,
    );
    const app = createGateway({
      log,
      mounts,
      bodyLimit: config.BODY_LIMIT,
      bodyMaxDepth: config.BODY_MAX_DEPTH,
      trustProxy: config.TRUST_PROXY === 'true',
      authFailures: config.HTTP_AUTH_FAILURES,
      observe: (method, route, status, seconds) => this.services.metrics.observeRequest(method, route, status, seconds),
      shedsDatabaseWork: () => this.services.health.shedsDatabaseWork(),
    });
    const server = gatewayServer(config, app.callback());
    this.server = server;
    if (!worker) for (const m of this.modules) await m.attach?.(this.services, server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.PORT, config.HOST, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const port = portOf(server);
    const processId = this.services.actors.processId;
    const database = databaseLabel(config.database);
    if (worker) log.info({ mode: config.mode, port, processId, database }, 'worker started');
    else {
      // where to go next: the address as the operator reaches it (PUBLIC_URL when set)
      const url = config.PUBLIC_URL ? config.publicUrl : `http://localhost:${port}`;
      log.info({ mode: config.mode, port, processId, url, console: `${url}/dashboard/`, database }, 'listening');
    }
  }

  /**
   * Graceful stop: refuse new work, let modules close their sockets, hand shards over, drain
   * HTTP, close the database and Redis.
   */
  stop(): Promise<void> {
    this.stopped ??= this.doStop();
    return this.stopped;
  }

  private async doStop(): Promise<void> {
    const { log } = this.services;
    this.shuttingDown = true;
    const server = this.server;
    const closed = server
      ? new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        })
      : Promise.resolve();
    for (const m of this.modules) {
      await m.stop?.().catch((err: unknown) => log.warn({ err, module: m.name }, 'module stop failed'));
    }
    await this.services.actors.stop();
    for (const m of this.modules) {
      await m.close?.().catch((err: unknown) => log.warn({ err, module: m.name }, 'module close failed'));
    }
    this.services.health.stop();
    await Promise.race([closed, new Promise((r) => setTimeout(r, 5000).unref())]);
    server?.closeAllConnections();
    await this.services.db.close();
    if (this.services.redis) await this.services.redis.quit().catch(() => undefined);
    log.info('stopped');
  }
}

/**
 * Where the database is, for the log: the SQLite file's full path, or PostgreSQL's host, port,
 * database and schema (never its user or password).
 */
export function databaseLabel(database: Config['database']): string {
  if (database.kind === 'sqlite')
    return database.file === ':memory:' ? 'sqlite::memory:' : `sqlite:${resolve(database.file)}`;
  try {
    const u = new URL(database.url);
    return `postgres://${u.host}${u.pathname} (schema ${database.schema})`;
  } catch {
    return `postgres (schema ${database.schema})`;
  }
}

/**
 * Opens the database. Embedded mode applies pending migrations; a
 * cluster process refuses to start with any (the release phase applies them).
 */
async function openDatabase(config: Config, log: Logger): Promise<Database> {
  const db = await Database.open(config.database, {
    log,
    poolMax: config.DATABASE_POOL_MAX,
    queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
    idleInTransactionMs: config.LEASE_TTL_MS * 2,
    commitWindowMs: config.COMMIT_WINDOW_MS,
  });
  try {
    await checkDatabase(db, config.database);
    if (config.mode === 'embedded') {
      const applied = await db.migrate(undefined, () =>
        log.info(
          { database: databaseLabel(config.database) },
          'another process is applying migrations; waiting for it',
        ),
      );
      const database = databaseLabel(config.database);
      if (applied.length > 0) log.info({ applied, database }, 'migrations applied');
      // every migration applied: the database was empty (a mistyped SQLite path makes a new file
      // and started on it without a word)
      if (applied.length === migrationNames.length)
        log.warn({ database }, 'the database was empty: a new one was made');
    } else {
      const pending = await db.pendingMigrations();
      if (pending.length > 0) {
        throw new Error(
          `database has ${pending.length} pending migration(s); run the release phase first (npm run migrate)`,
        );
      }
    }
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}

/**
 * Cluster mode (REDIS_URL set): Redis leases and pub/sub; embedded: this process owns everything.
 * The Redis client and the cluster runtime are loaded only in cluster mode (cold start).
 */
async function connectPlacement(
  opts: PlatformOptions,
  store: RuntimeStore,
  redisKeys: RedisKeys,
): Promise<{ redis: Redis | undefined; placement: ActorPlacement; transport: Transport }> {
  const { config, log } = opts;
  if (!config.REDIS_URL) {
    return {
      redis: undefined,
      placement: new LocalPlacement(config.ACTOR_SHARDS, store),
      transport: new InProcessTransport(),
    };
  }
  const [{ Redis }, { ClusterPlacement, claimShardCount }, { RedisTransport }] = await Promise.all([
    import('ioredis'),
    import('../runtime/cluster/cluster-placement.js'),
    import('../runtime/cluster/redis-transport.js'),
  ]);
  const redis = await openRedis(Redis, config, config.REDIS_URL);
  redis.on('error', redisErrorListener(log, 'redis error'));
  const held = await claimShardCount(redis, redisKeys, config.ACTOR_SHARDS, config.LEASE_TTL_MS).catch(
    (err: unknown) => {
      redis.disconnect();
      throw err;
    },
  );
  if (held !== config.ACTOR_SHARDS) {
    redis.disconnect();
    throw new ConfigError(
      'ACTOR_SHARDS',
      `the cluster's processes run with ${held} shards, this one with ${config.ACTOR_SHARDS}: every process takes the same ACTOR_SHARDS (a new count once every process has stopped)`,
    );
  }
  const placement = new ClusterPlacement({
    redis,
    keys: redisKeys,
    shardCount: config.ACTOR_SHARDS,
    leaseTtlMs: config.LEASE_TTL_MS,
    store,
    log,
    hostShards: opts.hostShards ?? true,
    ...(opts.processId ? { processId: opts.processId } : {}),
  });
  return { redis, placement, transport: new RedisTransport(redis, redisKeys, log) };
}

/**
 * The process's Redis client, connected. Its subscribers and other duplicates copy its options:
 * TLS for rediss:// (REDIS_TLS_*) and a bounded connect. Before the first connection succeeded it
 * does not reconnect, so a start against a Redis it cannot use fails in seconds with the reason.
 */
async function openRedis(RedisClient: typeof Redis, config: Config, url: string): Promise<Redis> {
  let connected = false;
  const redis = new RedisClient(url, {
    // each command is written at once: ioredis's auto-pipelining holds a tick's commands until
    // setImmediate, a loop iteration added to every hop of a cross-process ask (docs/PERFORMANCE.md)
    maxRetriesPerRequest: 2,
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    ...(config.redisTls ? { tls: nodeTlsOptions(config.redisTls) } : {}),
    // once connected, ioredis's own back-off: 50 ms more per attempt, at most 2 s
    retryStrategy: (times: number) => (connected ? Math.min(times * 50, 2000) : null),
  });
  // connect() only says "Connection is closed."; the reason (TLS, refused, WRONGPASS) is an event
  let reason: unknown;
  const onError = (err: unknown): void => {
    reason ??= err;
  };
  redis.on('error', onError);
  try {
    await withTimeout(redis.connect(), 2 * CONNECT_TIMEOUT_MS);
    connected = true;
  } catch (err) {
    redis.disconnect();
    throw redisError(reason ?? err, url);
  } finally {
    redis.off('error', onError);
  }
  return redis;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** The port a TCP server listens on; undefined before it listens (a pipe has no port). */
function portOf(server: Server | undefined): number | undefined {
  const addr = server?.address();
  return typeof addr === 'object' && addr !== null ? addr.port : undefined;
}

/**
 * Turns V8's allocation-site pretenuring off for this process. Once V8 sees the objects made at
 * one place in the code outlive a young-generation collection (a caller holding 100,000 price
 * outcomes), it makes every later object of that place in the old generation, where short-lived
 * ones pile up until a full collection. While a bulk job priced, such a collection stopped the
 * event loop for 50-100 ms (its marking done on the event loop while the pricing threads held
 * both cores), and the chargers' calls of that moment set the job's p99 (docs/PERFORMANCE.md,
 * pricing, "Fourteenth sitting"). Without it every object starts young and moves only after two
 * scavenges. It belongs before the process prices anything: set after a benchmark had already
 * priced some 300,000 CDRs, it did not help. The server's processes make their platform at
 * start; a process that prices before making one (a benchmark) calls this first. Idempotent.
 */
export function withoutPretenuring(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}

/**
 * How far V8 lets the heap grow past what its last full collection left alive before it starts
 * the next one (HEAP_GROWING_PERCENT; 0 = V8's own choice). V8 chooses from how fast it marks
 * against how fast the process fills the old generation; a process that promotes little gets
 * 1.1-1.2x. The 10-20 MB that a bulk job of 100,000 CDRs moves up (likely the process's own
 * objects of a second or two, outliving scavenges that come four times as often while it prices)
 * then set off a full collection in most passes: 40-55 ms of marking on the event loop while the
 * pricing threads hold the cores, and the chargers' calls of that moment set the job's p99. At
 * twice, 2 of 18 windows of the pricing benchmark held one, against 18 of 30 (docs/PERFORMANCE.md,
 * pricing, "Sixteenth sitting"). The price is memory: up to as much garbage in the old generation
 * as there is live heap. Takes effect from the next collection on, so it may be set at any time.
 */
export function heapGrowth(percent: number): void {
  setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/**
 * The HTTP server in front of the gateway's handler: request timeouts, keep-alive, pipelining's
 * bound and `Expect: 100-continue`.
 */
function gatewayServer(config: Config, handler: (req: IncomingMessage, res: ServerResponse) => void): Server {
  // a request's headers and body arrive within HTTP_REQUEST_TIMEOUT_MS (Node's default, 300 s,
  // let a client that trickles a body hold its connection for minutes); Node checks every
  // connectionsCheckingInterval
  const requestTimeout = config.HTTP_REQUEST_TIMEOUT_MS;
  const server = createServer(
    { requestTimeout, connectionsCheckingInterval: Math.min(30_000, Math.max(250, requestTimeout / 4)) },
    // a connection that piles up requests without reading their answers is ended (pipelining-guard.ts)
    boundedPipelining(handler),
  );
  server.keepAliveTimeout = 65_000;
  // `Expect: 100-continue`: Node invites the body at once by default, and a client declaring a
  // body over BODY_LIMIT was told 100 Continue, then 413. It is now answered 413 without the
  // invitation (the body parser refuses a declared length over the limit before reading)
  const bodyLimit = byteSize(config.BODY_LIMIT);
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (!(Number(req.headers['content-length']) > bodyLimit)) res.writeContinue();
    server.emit('request', req, res);
  });
  return server;
}
