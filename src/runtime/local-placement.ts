import { fenceKeyForPin, fenceKeyForShard, type Address } from './address.js';
import type { ActorPlacement, Lease, PlacementEvents } from './placement.js';
import { PinTable } from './pin-table.js';
import type { RuntimeStore } from './runtime-store.js';

class FixedLease implements Lease {
  valid = true;
  constructor(
    readonly fenceKey: string,
    readonly epoch: number,
  ) {}
  isValid(): boolean {
    return this.valid;
  }
  isAccepting(): boolean {
    return this.valid;
  }
}

/**
 * Embedded mode: this process owns every shard. Its epoch is its start time in milliseconds,
 * so a restarted process fences out anything the previous run left half-done.
 */
export class LocalPlacement implements ActorPlacement {
  readonly processId = `local-${process.pid}`;
  private readonly epoch = Date.now();
  private pinCounter = 0;
  private readonly shards = new Map<number, FixedLease>();
  private readonly pins = new PinTable<FixedLease>();

  constructor(
    readonly shardCount: number,
    private readonly store: RuntimeStore,
  ) {}

  async start(events: PlacementEvents): Promise<void> {
    const keys: string[] = [];
    for (let s = 0; s < this.shardCount; s++) {
      keys.push(fenceKeyForShard(s));
      this.shards.set(s, new FixedLease(fenceKeyForShard(s), this.epoch));
    }
    await this.store.raiseFences(keys, this.epoch);
    events.shardsGained([...this.shards.keys()]);
  }

  async stop(): Promise<void> {
    for (const lease of this.shards.values()) lease.valid = false;
    this.pins.invalidateAll();
  }

  shardLease(shard: number): Lease | undefined {
    return this.shards.get(shard);
  }

  ownedShards(): number[] {
    return [...this.shards.keys()];
  }

  async ownerOfShard(shard: number): Promise<string | undefined> {
    return this.shards.has(shard) ? this.processId : undefined;
  }

  forgetShardOwner(): void {}

  async claimPin(address: Address): Promise<{ lease: Lease; previousOwner: string | undefined }> {
    // epochs above any shard epoch of this run and unique per claim
    const epoch = this.epoch * 1000 + ++this.pinCounter;
    const lease = new FixedLease(fenceKeyForPin(address), epoch);
    this.pins.put(address, lease);
    await this.store.raiseFence(lease.fenceKey, epoch);
    return { lease, previousOwner: undefined };
  }

  invalidatePin(address: Address, newerEpoch: number): void {
    this.pins.invalidate(address, newerEpoch);
  }

  async releasePin(address: Address, lease: Lease): Promise<void> {
    this.pins.release(address, lease);
  }

  /**
   * Another process fenced this one out of the shared database (two embedded processes on one
   * file): the newer one owns it. This process stops serving what it lost and does not take it
   * back.
   */
  leaseFenced(lease: Lease): void {
    for (const [shard, mine] of this.shards) {
      if (mine === lease) {
        mine.valid = false;
        this.shards.delete(shard);
      }
    }
    for (const [address, mine] of this.pins.entries()) if (mine === lease) this.pins.release(address, mine);
  }

  pinLease(address: Address): Lease | undefined {
    return this.pins.get(address);
  }

  async ownerOfPin(address: Address): Promise<string | undefined> {
    return this.pins.has(address) ? this.processId : undefined;
  }

  async pinnedAmong(addresses: readonly Address[]): Promise<Set<Address>> {
    return this.pinnedHere(addresses);
  }

  pinnedHere(addresses: readonly Address[]): Set<Address> {
    return new Set(addresses.filter((a) => this.pins.has(a)));
  }

  isReady(): boolean {
    return true;
  }

  describe(): Record<string, unknown> {
    return { mode: 'embedded', processId: this.processId, shards: this.shardCount, pins: this.pins.size };
  }
}
