import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { fenceKeyForPin, fenceKeyForShard, rendezvousOwner, type Address } from '../address.js';
import type { ActorPlacement, Lease, PlacementEvents } from '../placement.js';
import { PinTable } from '../pin-table.js';
import { PinSupersededError } from '../errors.js';
import type { RuntimeStore } from '../runtime-store.js';
import { loadClusterScripts, type ClusterScripts } from './scripts.js';
import type { RedisKeys } from './redis-keys.js';
import { LogLimit, redisErrorListener } from '../../log-limit.js';
import { DependencyDegradedError } from '../../platform/dependency-health.js';

export interface ClusterPlacementOptions {
  redis: Redis;
  keys: RedisKeys;
  shardCount: number;
  leaseTtlMs: number;
  store: RuntimeStore;
  log: Logger;
  /** false: this process routes messages and holds pins but owns no shards */
  hostShards: boolean;
  processId?: string;
  /** a line repeated for every shard and tick while PostgreSQL is away: at most one per this (default 30 s) */
  repeatedLineIntervalMs?: number;
}

/**
 * A lease is trusted locally for this share of its time to live, counted from before the
 * request that took or renewed it, so that it ends here before Redis can hand it to another.
 */
const LOCAL_TRUST = 0.75;
/** pin keys read per MGET (pinnedAmong) */
const PIN_LOOKUP_CHUNK = 1000;
/** A process's set of pins expires this many lease TTLs after its last heartbeat (`takeOrphanedPins`). */
const PINS_SET_TTLS = 10;
/**
 * How many lease TTLs the cluster's shard count outlives its last tick: a process started with
 * another ACTOR_SHARDS is refused while any process of the cluster runs, and a new count can be
 * used this long after the last one stopped.
 */
export const SHARD_COUNT_TTLS = 3;

/**
 * The cluster's shard count, claimed for `count` when no process holds one: the count the
 * cluster runs with. A process whose ACTOR_SHARDS differs would own shards by another mapping,
 * leaving some with no owner while every process says ready.
 */
export async function claimShardCount(
  redis: Redis,
  keys: RedisKeys,
  count: number,
  leaseTtlMs: number,
): Promise<number> {
  const key = keys.shardCount();
  const set = await redis.set(key, String(count), 'PX', leaseTtlMs * SHARD_COUNT_TTLS, 'NX');
  if (set === 'OK') return count;
  const held = Number(await redis.get(key));
  return Number.isInteger(held) && held > 0 ? held : count;
}

class ShardLease implements Lease {
  accepting = true;
  released = false;
  constructor(
    readonly shard: number,
    readonly fenceKey: string,
    readonly epoch: number,
    readonly value: string,
    public validUntil: number,
  ) {}
  isValid(): boolean {
    return !this.released && performance.now() < this.validUntil;
  }
  isAccepting(): boolean {
    return this.accepting && this.isValid();
  }
}

/**
 * A pin stays valid while Redis is away: the charger is connected here, so this is where its
 * actor must live. Losing Redis must not close connected chargers (300 chargers made 4,065
 * reconnects in 60 s when a pin's validity followed our heartbeat; "Degraded mode" in
 * docs/ARCHITECTURE.md). Safety does not rest on Redis: a newer claim elsewhere raises the
 * database fence, which refuses our commits, and the pin is re-asserted (or found lost) once
 * Redis answers again.
 */
class PinLease implements Lease {
  valid = true;
  constructor(
    readonly fenceKey: string,
    readonly epoch: number,
    readonly value: string,
  ) {}
  isValid(): boolean {
    return this.valid;
  }
  isAccepting(): boolean {
    return this.isValid();
  }
}

/**
 * Cluster placement: membership with heartbeats, a fixed number of shards owned through Redis
 * leases with epochs, rendezvous hashing to decide who should own what, hand-over on join and
 * leave, and presence keys for pinned actors. No coordinator: every process runs the same loop.
 */
export class ClusterPlacement implements ActorPlacement {
  readonly processId: string;
  readonly shardCount: number;
  private readonly scripts: ClusterScripts;
  private readonly keys: RedisKeys;
  private readonly owned = new Map<number, ShardLease>();
  private readonly pins = new PinTable<PinLease>();
  private readonly ownerCache = new Map<number, { owner: string | undefined; at: number }>();
  private hosts: string[] = [];
  private live = new Set<string>();
  private liveUntil = 0;
  private events: PlacementEvents | undefined;
  private timer: NodeJS.Timeout | undefined;
  private sub: Redis | undefined;
  private ticking: Promise<void> | undefined;
  /** when the tick in flight began (performance.now()) */
  private tickStartedAt = 0;
  private again = false;
  private stopping = false;
  private lastTickOk = false;
  /** Redis may have lost or missed our pins (a failed tick, a dropped connection): write them again */
  private pinsUnsure = false;
  private readonly onRedisClose = (): void => {
    this.pinsUnsure = true;
  };
  /**
   * Fence raises that fail, per error message: while PostgreSQL is away every shard we try to
   * acquire fails at every tick (about 33 lines a second per process, stack included, before
   * this limit), so the first is logged, then one per interval saying how many were suppressed.
   */
  private readonly fenceFailures: LogLimit;
  /**
   * The tick's other failures while Redis is away (`placement tick failed`, `lease renewal
   * failed`, `could not re-assert pins`), per line and error message: about one line a second
   * each before this limit; the first is logged, then one per interval with the count between.
   */
  private readonly tickFailures: LogLimit;

  constructor(private readonly opts: ClusterPlacementOptions) {
    this.processId = opts.processId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    this.shardCount = opts.shardCount;
    this.scripts = loadClusterScripts(opts.redis);
    this.keys = opts.keys;
    this.fenceFailures = new LogLimit({ perKey: 1, intervalMs: opts.repeatedLineIntervalMs ?? 30_000, capacity: 100 });
    this.tickFailures = new LogLimit({ perKey: 1, intervalMs: opts.repeatedLineIntervalMs ?? 30_000, capacity: 100 });
  }

  /** A failure of the tick's that repeats while Redis is away, limited by `tickFailures`. */
  private warnRepeated(err: unknown, msg: string): void {
    const suppressed = this.tickFailures.admit(`${msg}|${err instanceof Error ? err.message : String(err)}`);
    if (suppressed >= 0) this.opts.log.warn({ err, ...(suppressed > 0 ? { suppressed } : {}) }, msg);
  }

  private get tickMs(): number {
    return Math.max(200, Math.floor(this.opts.leaseTtlMs / 5));
  }

  async start(events: PlacementEvents): Promise<void> {
    this.events = events;
    this.opts.redis.on('close', this.onRedisClose);
    const sub = this.opts.redis.duplicate();
    this.sub = sub;
    // without a listener ioredis prints every failed reconnect to stderr as an unhandled error
    sub.on('error', redisErrorListener(this.opts.log, 'cluster subscriber error'));
    sub.on('message', () => this.tickSoon());
    await sub.subscribe(this.keys.clusterChannel());
    await this.tick();
    await this.opts.redis.publish(this.keys.clusterChannel(), `join ${this.processId}`);
    this.timer = setInterval(() => {
      // a tick stuck on Redis (its commands queue while Redis reconnects) must not keep leases
      // past their local trust; a tick that is merely due renews first and expires after
      if (this.ticking && performance.now() - this.tickStartedAt > this.tickMs)
        this.loseExpired().catch((err: unknown) => this.opts.log.warn({ err }, 'expired leases not given up'));
      this.tickSoon();
    }, this.tickMs);
    this.timer.unref();
  }

  /** Leaves the membership, drains and releases every shard, and gives pins up. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.opts.redis.off('close', this.onRedisClose);
    if (this.timer) clearInterval(this.timer);
    await this.ticking?.catch(() => undefined);
    const redis = this.opts.redis;
    await redis.zrem(this.keys.hosts(), this.processId).catch(() => undefined);
    await redis.publish(this.keys.clusterChannel(), `leave ${this.processId}`).catch(() => undefined);
    await this.handOver([...this.owned.keys()]);
    for (const [address, lease] of this.pins.entries()) {
      lease.valid = false;
      await this.scripts.releaseLease(this.keys.pin(address), lease.value).catch(() => undefined);
    }
    this.pins.clear();
    // every pin given up: none is left for another process to report orphaned
    await redis.del(this.keys.pinsOf(this.processId)).catch(() => undefined);
    await redis.zrem(this.keys.live(), this.processId).catch(() => undefined);
    await redis.publish(this.keys.clusterChannel(), `left ${this.processId}`).catch(() => undefined);
    const sub = this.sub;
    this.sub = undefined;
    if (sub) {
      await sub.unsubscribe().catch(() => undefined);
      sub.disconnect();
    }
  }

  private tickSoon(): void {
    if (this.stopping) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.tickStartedAt = performance.now();
    this.ticking = this.tick()
      .catch((err: unknown) => this.warnRepeated(err, 'placement tick failed'))
      .finally(() => {
        this.ticking = undefined;
        if (this.again) {
          this.again = false;
          this.tickSoon();
        }
      });
  }

  private async tick(): Promise<void> {
    const ttl = this.opts.leaseTtlMs;
    const sentAt = performance.now();
    try {
      const [live, hosts] = await Promise.all([
        this.scripts.heartbeat(this.keys.live(), this.processId, ttl),
        this.scripts.heartbeat(this.keys.hosts(), this.opts.hostShards && !this.stopping ? this.processId : '', ttl),
        // our set of pins outlives our membership long enough for another process to take it
        this.opts.redis.pexpire(this.keys.pinsOf(this.processId), ttl * PINS_SET_TTLS),
        this.opts.redis.set(this.keys.shardCount(), String(this.shardCount), 'PX', ttl * SHARD_COUNT_TTLS),
      ]);
      const before = this.live;
      this.live = new Set(live);
      this.hosts = hosts.slice().sort();
      this.liveUntil = sentAt + ttl * LOCAL_TRUST;
      this.lastTickOk = true;
      const left = [...before].filter((p) => !this.live.has(p));
      if (left.length > 0) this.events?.membersLeft(left);
    } catch (err) {
      this.lastTickOk = false;
      this.pinsUnsure = true;
      throw err;
    } finally {
      await this.renew();
    }
    if (this.stopping) return;
    if (this.pinsUnsure) await this.reassertPins();

    const desired = new Set<number>();
    if (this.opts.hostShards && this.hosts.includes(this.processId)) {
      for (let s = 0; s < this.shardCount; s++) if (rendezvousOwner(s, this.hosts) === this.processId) desired.add(s);
    }
    const surplus = [...this.owned.keys()].filter((s) => !desired.has(s));
    if (surplus.length > 0) await this.handOver(surplus);
    const wanted = [...desired].filter((s) => !this.owned.has(s));
    if (wanted.length > 0) await this.acquire(wanted);
  }

  /** Renews every held lease; drops the lost ones and the ones we can no longer vouch for. */
  private async renew(): Promise<void> {
    const leases = [...this.owned.values()];
    if (leases.length > 0) {
      const sentAt = performance.now();
      try {
        const results = await this.scripts.renewLeases(
          leases.map((l) => this.keys.lease(l.shard)),
          leases.map((l) => l.value),
          this.opts.leaseTtlMs,
        );
        const lost: number[] = [];
        leases.forEach((l, i) => {
          if (l.released) {
            // given up while the renewal was out (expired by the timer): hand the key back
            if (results[i] === 1)
              void this.scripts.releaseLease(this.keys.lease(l.shard), l.value).catch(() => undefined);
          } else if (results[i] === 1) l.validUntil = sentAt + this.opts.leaseTtlMs * LOCAL_TRUST;
          else lost.push(l.shard);
        });
        if (lost.length > 0) await this.lose(lost, 'lease lost');
      } catch (err) {
        this.warnRepeated(err, 'lease renewal failed');
      }
    }
    await this.loseExpired();
  }

  /** A lease we could not renew in time (Redis away, or this process was paused) ends here. */
  private async loseExpired(): Promise<void> {
    const expired = [...this.owned.values()].filter((l) => !l.isValid()).map((l) => l.shard);
    if (expired.length > 0) await this.lose(expired, 'lease expired before renewal');
  }

  /** After Redis was away: our pins are written again, or given up where a newer claim won. */
  private async reassertPins(): Promise<void> {
    this.pinsUnsure = false;
    const held = [...this.pins.entries()];
    if (held.length === 0) return;
    let results: number[];
    try {
      results = await this.scripts.reassertPins(
        held.map(([address]) => this.keys.pin(address)),
        this.keys.epoch(),
        held.map(([, l]) => l.value),
        held.map(([, l]) => l.epoch),
      );
    } catch (err) {
      this.pinsUnsure = true;
      this.warnRepeated(err, 'could not re-assert pins');
      return;
    }
    const lost: Address[] = [];
    const kept: Address[] = [];
    held.forEach(([address, lease], i) => {
      if (results[i] === 1) return void kept.push(address);
      this.pins.release(address, lease);
      lost.push(address);
    });
    // a Redis that came back empty lost our set of pins too
    if (kept.length > 0) await this.opts.redis.sadd(this.keys.pinsOf(this.processId), ...kept).catch(() => undefined);
    this.opts.log.info({ pins: held.length, lost: lost.length, processId: this.processId }, 'pins re-asserted');
    if (lost.length > 0) this.events?.pinsLost(lost);
  }

  private async lose(shards: number[], why: string): Promise<void> {
    for (const s of shards) {
      const l = this.owned.get(s);
      if (l) l.released = true;
      this.owned.delete(s);
      this.ownerCache.delete(s);
    }
    this.opts.log.warn({ shards: shards.length, why, processId: this.processId }, 'shards lost');
    await this.events?.shardsLost(shards, false);
  }

  /**
   * Redis forgot its epochs (restart without persistence): the counter is moved past the highest
   * fence of the shards that were behind, with one line for all of them (after an empty Redis every
   * shard is behind: it was one line each, 256 in 2 ms).
   */
  private async raisePastFences(behind: number[], epoch: number, stored: number): Promise<void> {
    this.opts.log.warn(
      { shards: behind.length, shard_ids: behind.sort((a, b) => a - b).slice(0, 16), epoch, stored },
      'epoch behind the database fence; raising the counter',
    );
    await this.scripts.raiseEpoch(this.keys.epoch(), stored);
  }

  private async acquire(shards: number[]): Promise<void> {
    const gained: number[] = [];
    /** shards whose new lease carried an epoch below their fence, with the highest fence seen */
    const behind: number[] = [];
    let highestFence = 0;
    let highestEpoch = 0;
    await Promise.all(
      shards.map(async (shard) => {
        const sentAt = performance.now();
        const epoch = await this.scripts.acquireLease(
          this.keys.lease(shard),
          this.keys.epoch(),
          this.processId,
          this.opts.leaseTtlMs,
        );
        if (epoch === 0) return;
        const value = `${this.processId}|${epoch}`;
        const fenceKey = fenceKeyForShard(shard);
        let stored: number;
        try {
          stored = await this.opts.store.raiseFence(fenceKey, epoch);
        } catch (err) {
          const suppressed = this.fenceFailures.admit(err instanceof Error ? err.message : String(err));
          if (suppressed >= 0)
            this.opts.log.warn(
              { err, shard, ...(suppressed > 0 ? { suppressed } : {}) },
              'could not raise the fence; giving the lease back',
            );
          await this.scripts.releaseLease(this.keys.lease(shard), value).catch(() => undefined);
          return;
        }
        if (stored > epoch) {
          // Redis forgot its epochs (restart without persistence): the counter is moved past the
          // database's fences below, once for all, and the shard taken again at the next tick
          behind.push(shard);
          highestFence = Math.max(highestFence, stored);
          highestEpoch = Math.max(highestEpoch, epoch);
          await this.scripts.releaseLease(this.keys.lease(shard), value).catch(() => undefined);
          this.again = true;
          return;
        }
        this.owned.set(
          shard,
          new ShardLease(shard, fenceKey, epoch, value, sentAt + this.opts.leaseTtlMs * LOCAL_TRUST),
        );
        this.ownerCache.set(shard, { owner: this.processId, at: Date.now() });
        gained.push(shard);
      }),
    );
    if (behind.length > 0) await this.raisePastFences(behind, highestEpoch, highestFence);
    if (gained.length > 0) {
      this.opts.log.info(
        { shards: gained.length, owned: this.owned.size, processId: this.processId },
        'shards acquired',
      );
      this.events?.shardsGained(gained);
    }
  }

  /** Graceful hand-over: stop accepting, let running turns finish, then release the leases. */
  private async handOver(shards: number[]): Promise<void> {
    const leases = shards.map((s) => this.owned.get(s)).filter((l): l is ShardLease => l !== undefined);
    if (leases.length === 0) return;
    for (const l of leases) l.accepting = false;
    await this.events?.shardsLost(shards, true);
    for (const l of leases) {
      l.released = true;
      this.owned.delete(l.shard);
      this.ownerCache.delete(l.shard);
    }
    await Promise.all(leases.map((l) => this.scripts.releaseLease(this.keys.lease(l.shard), l.value).catch(() => 0)));
    this.opts.log.info(
      { shards: leases.length, owned: this.owned.size, processId: this.processId },
      'shards handed over',
    );
    await this.opts.redis.publish(this.keys.clusterChannel(), `released ${this.processId}`).catch(() => undefined);
  }

  /** True while our membership heartbeat is fresh. */
  isLive(): boolean {
    return performance.now() < this.liveUntil;
  }

  shardLease(shard: number): Lease | undefined {
    return this.owned.get(shard);
  }

  ownedShards(): number[] {
    return [...this.owned.keys()];
  }

  async ownerOfShard(shard: number): Promise<string | undefined> {
    const cached = this.ownerCache.get(shard);
    if (cached && cached.owner !== undefined && Date.now() - cached.at < 2000) return cached.owner;
    const value = await this.opts.redis.get(this.keys.lease(shard));
    const owner = value ? value.split('|')[0] : undefined;
    this.ownerCache.set(shard, { owner, at: Date.now() });
    return owner;
  }

  forgetShardOwner(shard: number): void {
    this.ownerCache.delete(shard);
  }

  async claimPin(address: Address): Promise<{ lease: Lease; previousOwner: string | undefined }> {
    for (let attempt = 0; ; attempt++) {
      const [epoch, previous] = await this.scripts.claimPin(
        this.keys.pin(address),
        this.keys.epoch(),
        this.keys.pinsOf(this.processId),
        this.processId,
        address,
      );
      const value = `${this.processId}|${epoch}`;
      const lease = new PinLease(fenceKeyForPin(address), epoch, value);
      this.pins.put(address, lease);
      const stored = await this.opts.store.raiseFence(lease.fenceKey, epoch);
      const previousOwner = previous ? previous.split('|')[0] : undefined;
      if (stored <= epoch) return { lease, previousOwner };
      this.pins.release(address, lease);
      // a newer claim of the address raised its fence first (two connections of one charger at
      // once): it holds the pin. Claimed again here, this older one took the pin back from it, and
      // the newer connection's turns were fenced while the older one was closed as replaced
      if ((await this.pinEpoch(address)) > epoch) throw new PinSupersededError(`${address} was claimed again since`);
      // Redis forgot its epochs (restarted empty): a claim under this epoch could never commit
      if (attempt >= 2) throw new Error(`pin epoch of ${address} stays behind its database fence ${stored}`);
      this.opts.log.warn({ address, epoch, stored }, 'pin epoch behind the database fence; raising the counter');
      await this.scripts.raiseEpoch(this.keys.epoch(), stored);
    }
  }

  invalidatePin(address: Address, newerEpoch: number): void {
    this.pins.invalidate(address, newerEpoch);
  }

  async releasePin(address: Address, lease: Lease): Promise<void> {
    const mine = this.pins.release(address, lease);
    if (mine)
      await this.scripts
        .releasePin(this.keys.pin(address), this.keys.pinsOf(this.processId), mine.value, address)
        .catch(() => undefined);
  }

  /**
   * The pins that processes which left without releasing them (a kill -9) still hold: each dead
   * process's set of pins is taken whole by one process (read and deleted in one transaction),
   * and of its addresses those whose pin still names that process are answered. Their actors'
   * connections are gone, and no process said so.
   */
  async takeOrphanedPins(processIds: readonly string[]): Promise<Address[]> {
    const orphaned: Address[] = [];
    for (const processId of processIds) {
      const key = this.keys.pinsOf(processId);
      const taken = await this.opts.redis.multi().smembers(key).del(key).exec();
      const members = taken?.[0]?.[1];
      if (!Array.isArray(members) || members.length === 0) continue;
      const addresses = members.map(String);
      for (let i = 0; i < addresses.length; i += PIN_LOOKUP_CHUNK) {
        const chunk = addresses.slice(i, i + PIN_LOOKUP_CHUNK);
        const values = await this.opts.redis.mget(chunk.map((a) => this.keys.pin(a)));
        chunk.forEach((address, j) => {
          if (values[j]?.startsWith(`${processId}|`)) orphaned.push(address);
        });
      }
    }
    return orphaned;
  }

  pinLease(address: Address): Lease | undefined {
    return this.pins.get(address);
  }

  leaseFenced(lease: Lease): void {
    for (const [shard, mine] of this.owned) {
      if (mine !== lease) continue;
      mine.released = true;
      this.owned.delete(shard);
      this.ownerCache.delete(shard);
      this.opts.log.warn(
        { shard, epoch: mine.epoch, processId: this.processId },
        'shard fenced by a newer owner; lease given up',
      );
      // compare-and-delete: if Redis still names us (it lost the newer owner's write), the shard
      // is free for the next acquisition, which takes an epoch past the fence
      void this.scripts
        .releaseLease(this.keys.lease(shard), mine.value)
        .then(() => this.opts.redis.publish(this.keys.clusterChannel(), `released ${this.processId}`))
        .catch((err: unknown) => this.opts.log.warn({ err, shard }, 'could not give a fenced lease up'));
      return;
    }
    for (const [address, mine] of this.pins.entries()) {
      if (mine === lease) void this.releasePin(address, mine);
    }
  }

  /** The epoch of the pin's current claim in Redis (0 when none). */
  private async pinEpoch(address: Address): Promise<number> {
    const value = await this.opts.redis.get(this.keys.pin(address));
    return value ? Number(value.split('|')[1]) || 0 : 0;
  }

  async ownerOfPin(address: Address): Promise<string | undefined> {
    const value = await this.opts.redis.get(this.keys.pin(address));
    const owner = value ? value.split('|')[0] : undefined;
    return owner && this.live.has(owner) ? owner : undefined;
  }

  async pinnedAmong(addresses: readonly Address[]): Promise<Set<Address>> {
    // while Redis is away, at once: a command would wait in ioredis's queue for its retries
    if (this.opts.redis.status !== 'ready')
      throw new DependencyDegradedError(`Redis is not connected (${this.opts.redis.status})`);
    const pinned = new Set<Address>();
    for (let i = 0; i < addresses.length; i += PIN_LOOKUP_CHUNK) {
      const chunk = addresses.slice(i, i + PIN_LOOKUP_CHUNK);
      const values = await this.opts.redis.mget(chunk.map((a) => this.keys.pin(a)));
      chunk.forEach((address, j) => {
        const owner = values[j]?.split('|')[0];
        if (owner && this.live.has(owner)) pinned.add(address);
      });
    }
    return pinned;
  }

  pinnedHere(addresses: readonly Address[]): Set<Address> {
    return new Set(addresses.filter((a) => this.pins.get(a)?.isValid()));
  }

  isReady(): boolean {
    return (
      this.lastTickOk &&
      this.isLive() &&
      (!this.opts.hostShards || this.owned.size > 0 || this.hosts.length > this.shardCount)
    );
  }

  describe(): Record<string, unknown> {
    return {
      mode: 'cluster',
      processId: this.processId,
      shards: this.shardCount,
      owned: this.owned.size,
      hosts: this.hosts.length,
      live: this.live.size,
      pins: this.pins.size,
    };
  }
}
