import type { Server } from 'node:http';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import type { Database } from '../db/database.js';
import type { MountSpec } from '../gateway/route-table.js';
import type { PlatformMetrics } from '../metrics.js';
import type { ActorSystem } from '../runtime/actor-system.js';
import type { RedisKeys } from '../runtime/cluster/redis-keys.js';
import type { DependencyHealth } from './dependency-health.js';
import type { RegisteredActor } from '../runtime/types.js';

/** What feature code gets: settings, logs, the database, the actors, metrics. No globals. */
export interface PlatformServices {
  readonly config: Config;
  readonly log: Logger;
  readonly db: Database;
  readonly actors: ActorSystem;
  readonly metrics: PlatformMetrics;
  /** the shared command connection in cluster mode */
  readonly redis: Redis | undefined;
  /** the names of every Redis key and channel, under REDIS_PREFIX */
  readonly redisKeys: RedisKeys;
  /** whether the database and Redis answer (probed in the background) */
  readonly health: DependencyHealth;
}

/** What actors' ports may use: it exists in every role, before the actor runtime starts. */
export type ActorHost = Pick<PlatformServices, 'config' | 'db' | 'log'>;

/**
 * A feature (OCPI, charge-point management, ...) plugs into the platform through one of these:
 * its actor kinds, its HTTP mounts, and hooks on the HTTP server.
 */
export interface PlatformModule {
  name: string;
  /** its actor kinds; a function when they need settings or the database (every role hosts actors) */
  actors?: RegisteredActor[] | ((host: ActorHost) => RegisteredActor[]);
  mounts?(services: PlatformServices): Array<MountSpec<unknown>>;
  /** in every role, as the platform starts: sets the module's metric sources (`metrics.sources`) */
  observe?(services: PlatformServices): void;
  /** after the HTTP server exists (web roles only), e.g. to accept WebSocket upgrades */
  attach?(services: PlatformServices, server: Server): Promise<void> | void;
  /** first step of shutdown, before actors are handed over (close sockets with 1012) */
  stop?(): Promise<void>;
  /** after the actors stopped: what their last turns still needed (worker threads) */
  close?(): Promise<void>;
}
