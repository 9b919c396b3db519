/**
 * The one place Redis key and channel names are built. Every name is the deployment's
 * REDIS_PREFIX, a colon, then the parts below; the strings must not change, since processes of
 * the previous release share the keys with this one during a rolling upgrade. The Lua scripts
 * still receive their keys as KEYS[] from the callers, never build them.
 */
export class RedisKeys {
  constructor(private readonly prefix: string) {}

  private join(...parts: Array<string | number>): string {
    return [this.prefix, ...parts].join(':');
  }

  /** Pub/sub channel for join/leave/released notices between cluster processes. */
  clusterChannel(): string {
    return this.join('cluster');
  }

  /** Sorted set of live processes, scored by heartbeat expiry. */
  live(): string {
    return this.join('live');
  }

  /** Sorted set of processes willing to host shards. */
  hosts(): string {
    return this.join('hosts');
  }

  /**
   * The number of shards the cluster's processes run with (ACTOR_SHARDS): set by the first
   * process, refreshed by every tick, checked by each process at start.
   */
  shardCount(): string {
    return this.join('shard-count');
  }

  /** Fencing counter raised on every lease or pin hand-over. */
  epoch(): string {
    return this.join('epoch');
  }

  /** Lease of one shard, holding `<processId>|<epoch>`. */
  lease(shard: number): string {
    return this.join('lease', shard);
  }

  /** Pin of one actor address to the process hosting it. */
  pin(address: string): string {
    return this.join('pin', address);
  }

  /**
   * Set of the addresses one process holds pins for: taken by another process when that one's
   * membership lapses without it releasing them (a kill -9), to tell their actors' watchers.
   */
  pinsOf(processId: string): string {
    return this.join('pins-of', processId);
  }

  /** Pub/sub channel of one process's actor inbox. */
  inbox(processId: string): string {
    return this.join('inbox', processId);
  }

  /** Pub/sub channel telling the other processes to drop OCPI caches. */
  ocpiInvalidation(): string {
    return this.join('ocpi', 'invalidate');
  }

  /** Pub/sub channel of CSMS events fanned out to every process's dashboards. */
  csmsEvents(): string {
    return this.join('csms', 'events');
  }

  /** Pub/sub channel on which a process says it has started listening to CSMS events. */
  csmsEventListeners(): string {
    return this.join('csms', 'listeners');
  }
}
