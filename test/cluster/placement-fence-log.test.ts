import { expect } from 'chai';
import { Redis } from 'ioredis';
import { createLogger } from '../../src/logger.js';
import { ClusterPlacement } from '../../src/runtime/cluster/cluster-placement.js';
import { RedisKeys } from '../../src/runtime/cluster/redis-keys.js';
import type { RuntimeStore } from '../../src/runtime/runtime-store.js';
import { REDIS_URL, uniqueName } from '../support/databases.js';
import { deleteRedisPrefix } from '../support/platforms.js';

const SHARDS = 32;
const TTL = 1000;

/**
 * PostgreSQL away, Redis up: every shard the process tries to take fails to raise its database
 * fence, at every tick. A tester saw 1,472 lines of `could not raise the fence` (850 bytes each,
 * with the stack) in 45 s on one web process; the line is now rate-limited like Redis's errors.
 */
describe('cluster placement while PostgreSQL is away', function () {
  this.timeout(20_000);
  const prefix = uniqueName('fence');
  let redis: Redis;
  let placement: ClusterPlacement | undefined;

  before(() => {
    redis = new Redis(REDIS_URL);
  });
  after(async () => {
    await placement?.stop();
    redis.disconnect();
    await deleteRedisPrefix(prefix);
  });

  /** placement started with events that do nothing */
  const started = (p: ClusterPlacement): Promise<void> =>
    p.start({
      shardsLost: () => Promise.resolve(),
      shardsGained: () => undefined,
      membersLeft: () => undefined,
      pinsLost: () => undefined,
    });

  it('logs a failed fence raise once, then at most once per interval with the count suppressed', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger(
      'info',
      {},
      { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
    );
    let attempts = 0;
    // the one store call placement makes on acquiring a shard, failing as pg does when the server is gone
    const store = {
      raiseFence: () => {
        attempts++;
        return Promise.reject(
          Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
        );
      },
    } as unknown as RuntimeStore;
    placement = new ClusterPlacement({
      redis,
      keys: new RedisKeys(prefix),
      shardCount: SHARDS,
      leaseTtlMs: TTL,
      store,
      log,
      hostShards: true,
      repeatedLineIntervalMs: 1000,
    });
    await started(placement);
    await new Promise((r) => setTimeout(r, 2500));
    const fence = lines.filter((l) => l.msg === 'could not raise the fence; giving the lease back');
    expect(attempts).to.be.above(SHARDS * 5);
    // the first at once, then one per second: not one per shard and tick
    expect(fence.length).to.be.within(2, 4);
    expect(fence[0]).to.include({ level: 40 });
    expect(fence[0]).to.not.have.property('suppressed');
    expect((fence[0]?.err as { message?: string } | undefined)?.message).to.contain('ECONNREFUSED');
    const later = fence.slice(1).map((l) => Number(l.suppressed));
    expect(later.every((n) => n > 0)).to.equal(true);
    expect(fence.length + later.reduce((a, b) => a + b, 0)).to.be.at.most(attempts);
    expect(placement.ownedShards()).to.deep.equal([]);
  });

  it('after Redis lost its epoch counter, raises it past the fences with one line for all the shards, not one each', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger(
      'info',
      {},
      { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
    );
    // the database's fences are at 1000: the epochs of an empty Redis start far below
    const FENCE = 1000;
    const empty = new ClusterPlacement({
      redis,
      keys: new RedisKeys(`${prefix}-empty`),
      shardCount: SHARDS,
      leaseTtlMs: TTL,
      store: {
        raiseFence: (_key: string, epoch: number) => Promise.resolve(Math.max(epoch, FENCE)),
      } as unknown as RuntimeStore,
      log,
      hostShards: true,
    });
    try {
      await started(empty);
      const deadline = Date.now() + 5000;
      while (empty.ownedShards().length < SHARDS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(empty.ownedShards()).to.have.length(SHARDS);
    } finally {
      await empty.stop().catch(() => undefined);
      await deleteRedisPrefix(`${prefix}-empty`);
    }
    const behind = lines.filter((l) => l.msg === 'epoch behind the database fence; raising the counter');
    // it was one line per shard (256 at once with the default ACTOR_SHARDS)
    expect(behind).to.have.length(1);
    expect(behind[0]).to.include({ level: 40, shards: SHARDS, stored: FENCE });
    expect(behind[0]?.shard_ids).to.have.length(16);
  });

  it('logs the tick failures of a Redis that went away once, then at most once per interval', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger(
      'info',
      {},
      { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
    );
    const failing = new Redis(REDIS_URL, { maxRetriesPerRequest: 0 });
    const away = new ClusterPlacement({
      redis: failing,
      keys: new RedisKeys(`${prefix}-away`),
      shardCount: SHARDS,
      leaseTtlMs: TTL,
      store: { raiseFence: (_key: string, epoch: number) => Promise.resolve(epoch) } as unknown as RuntimeStore,
      log,
      hostShards: true,
      repeatedLineIntervalMs: 1000,
    });
    await started(away);
    // Redis goes away, and the connection fails its commands at once instead of queueing them
    failing.options.enableOfflineQueue = false;
    failing.disconnect();
    await new Promise((r) => setTimeout(r, 2500));
    await away.stop().catch(() => undefined);
    await deleteRedisPrefix(`${prefix}-away`);
    const failures = lines.filter((l) =>
      ['placement tick failed', 'lease renewal failed', 'could not re-assert pins'].includes(String(l.msg)),
    );
    expect(failures.length).to.be.above(0);
    const byKey = new Map<string, Array<Record<string, unknown>>>();
    for (const l of failures) {
      const key = `${String(l.msg)} | ${String((l.err as { message?: string } | undefined)?.message)}`;
      byKey.set(key, [...(byKey.get(key) ?? []), l]);
    }
    // was one line a tick (every 200 ms, 13 of the tick's in 2.5 s): now per line and error
    // message, the first at once, then at most one a second with the count dropped between
    for (const [key, same] of byKey) {
      expect(same.length, key).to.be.at.most(3);
      expect(same[0], key).to.not.have.property('suppressed');
      expect(
        same.slice(1).every((l) => Number(l.suppressed) > 0),
        key,
      ).to.equal(true);
    }
  });
});
