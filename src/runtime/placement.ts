import type { Address } from './address.js';

/** The right to commit state for a fence key (a shard or a pinned address) at an epoch. */
export interface Lease {
  readonly fenceKey: string;
  readonly epoch: number;
  /** false once the lease may have expired or was lost; turns then stop committing */
  isValid(): boolean;
  /** false while the lease is being handed over: no new activations, running turns finish */
  isAccepting(): boolean;
}

export interface PlacementEvents {
  /** the shards are no longer ours; `graceful` = we are handing them over, drain first */
  shardsLost(shards: number[], graceful: boolean): Promise<void>;
  shardsGained(shards: number[]): void;
  /**
   * these processes' membership lapsed (heartbeats stopped for a lease TTL): their leases have
   * lapsed too, so whatever they were asked and did not answer must be re-sent to the new owner
   */
  membersLeft(processIds: string[]): void;
  /** pins this process held were found claimed by a newer connection elsewhere */
  pinsLost(addresses: Address[]): void;
}

/**
 * Where actors live. The embedded placement owns everything; the cluster placement owns shards
 * through Redis leases and pins through Redis presence keys.
 */
export interface ActorPlacement {
  readonly processId: string;
  readonly shardCount: number;
  start(events: PlacementEvents): Promise<void>;
  /** hand everything over and leave */
  stop(): Promise<void>;
  shardLease(shard: number): Lease | undefined;
  ownedShards(): number[];
  /** the process that owns a shard now, as far as we know (may be stale: answer "moved" then) */
  ownerOfShard(shard: number): Promise<string | undefined>;
  forgetShardOwner(shard: number): void;
  /** claim a pinned address for this process; the newest claim wins */
  claimPin(address: Address): Promise<{ lease: Lease; previousOwner: string | undefined }>;
  /** another process claimed the address with a newer epoch: our lease for it ends */
  invalidatePin(address: Address, newerEpoch: number): void;
  releasePin(address: Address, lease: Lease): Promise<void>;
  pinLease(address: Address): Lease | undefined;
  /**
   * The database refused a commit under this lease: a newer owner exists. The lease is given up
   * here and now (before anything retries), so that no new activation starts under the stale
   * epoch; a shard is then acquired again under a fresh epoch, or by the rightful owner.
   */
  leaseFenced(lease: Lease): void;
  /** the live process holding the pin, if any */
  ownerOfPin(address: Address): Promise<string | undefined>;
  /**
   * Cluster mode: the pins processes that left without releasing them (a kill -9) still hold,
   * each answered to one process only. Embedded: none (the process is the cluster).
   */
  takeOrphanedPins?(processIds: readonly string[]): Promise<Address[]>;
  /** of these pinned addresses, the ones a live process holds (one round trip per 1,000 in cluster mode) */
  pinnedAmong(addresses: readonly Address[]): Promise<Set<Address>>;
  /** of these pinned addresses, the ones this process holds: known without Redis */
  pinnedHere(addresses: readonly Address[]): Set<Address>;
  /** true when this process has what it needs to serve (leases taken, Redis reachable) */
  isReady(): boolean;
  describe(): Record<string, unknown>;
}
