import { Redis } from 'ioredis';
import { loadConfig, type Config } from '../../config/index.js';
import { Database } from '../../src/db/database.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { Platform } from '../../src/platform/platform.js';
import type { PlatformModule } from '../../src/platform/services.js';
import { PG_URL, REDIS_URL, tempSchema, tempSqlite, uniqueName } from './databases.js';
import { TURN_LOG_SQL } from './test-actors.js';

/**
 * Where a test platform keeps its data: a temporary SQLite file (embedded), or a fresh
 * PostgreSQL schema plus a Redis key prefix (cluster). `cleanup` removes all of it.
 */
export interface TestEnvironment {
  mode: 'embedded' | 'cluster';
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

export async function embeddedEnvironment(extra: Record<string, string> = {}): Promise<TestEnvironment> {
  const db = tempSqlite();
  return {
    mode: 'embedded',
    env: {
      DATABASE_URL: db.url,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      NODE_ENV: 'test',
      ...extra,
    },
    cleanup: async () => db.cleanup(),
  };
}

export async function clusterEnvironment(extra: Record<string, string> = {}): Promise<TestEnvironment> {
  const schema = await tempSchema();
  const prefix = uniqueName('evpt');
  const env = {
    DATABASE_URL: PG_URL,
    DATABASE_SCHEMA: schema.schema,
    REDIS_URL,
    REDIS_PREFIX: prefix,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    NODE_ENV: 'test',
    LEASE_TTL_MS: '3000',
    ...extra,
  };
  // the release phase: cluster processes refuse to start with pending migrations
  const config = loadConfig(env);
  const db = await Database.open(config.database, { log: createLogger('silent') });
  await db.migrate();
  await db.execute(TURN_LOG_SQL.postgresql);
  await db.close();
  return {
    mode: 'cluster',
    env,
    cleanup: async () => {
      await schema.drop();
      await deleteRedisPrefix(prefix);
    },
  };
}

export async function deleteRedisPrefix(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export interface StartedPlatform {
  platform: Platform;
  config: Config;
  stop(): Promise<void>;
}

export async function startPlatform(
  env: TestEnvironment,
  modules: PlatformModule[],
  opts: { overrides?: Record<string, string>; hostShards?: boolean; log?: Logger } = {},
): Promise<StartedPlatform> {
  const config = loadConfig({ ...env.env, ...opts.overrides });
  const log = opts.log ?? createLogger(config.LOG_LEVEL);
  const platform = await Platform.create({
    config,
    log,
    modules,
    ...(opts.hostShards === undefined ? {} : { hostShards: opts.hostShards }),
  });
  // one process: the turn log in its database (SQLite, or PostgreSQL: ROAMING_TEST_DB)
  if (env.mode === 'embedded')
    await platform.services.db.execute(
      TURN_LOG_SQL[platform.services.db.dialect === 'sqlite' ? 'sqlite' : 'postgresql'],
    );
  await platform.start();
  return { platform, config, stop: () => platform.stop() };
}
