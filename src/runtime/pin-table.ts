import type { Address } from './address.js';
import type { Lease } from './placement.js';

/** A pin lease this process holds; `valid` turns false when it is superseded or given up. */
export interface HeldPin extends Lease {
  valid: boolean;
}

/**
 * The pins one process holds, shared by the embedded and the cluster placement: a newer claim
 * replaces an older one, a newer epoch seen elsewhere ends ours, and only the current lease can
 * be released (a superseded connection closing must not end its successor).
 */
export class PinTable<P extends HeldPin> {
  private readonly pins = new Map<Address, P>();

  get size(): number {
    return this.pins.size;
  }

  get(address: Address): P | undefined {
    return this.pins.get(address);
  }

  has(address: Address): boolean {
    return this.pins.has(address);
  }

  entries(): IterableIterator<[Address, P]> {
    return this.pins.entries();
  }

  put(address: Address, lease: P): void {
    const old = this.pins.get(address);
    if (old) old.valid = false;
    this.pins.set(address, lease);
  }

  invalidate(address: Address, newerEpoch: number): void {
    const lease = this.pins.get(address);
    if (lease && lease.epoch < newerEpoch) {
      lease.valid = false;
      this.pins.delete(address);
    }
  }

  /** The lease, if it is still the current one for the address (it is then removed). */
  release(address: Address, lease: Lease): P | undefined {
    const mine = this.pins.get(address);
    if (mine !== lease) return undefined;
    this.pins.delete(address);
    mine.valid = false;
    return mine;
  }

  invalidateAll(): void {
    for (const lease of this.pins.values()) lease.valid = false;
  }

  clear(): void {
    this.pins.clear();
  }
}
