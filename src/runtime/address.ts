import { createHash } from 'node:crypto';

/** `kind/key`, e.g. `partner/NL-ABC`, `charge-point/CP-0001`, `command/<uuid>`. */
export type Address = string;

export function addressOf(kind: string, key: string): Address {
  return `${kind}/${key}`;
}

export function parseAddress(address: Address): { kind: string; key: string } {
  const slash = address.indexOf('/');
  if (slash <= 0 || slash === address.length - 1) throw new TypeError(`not an actor address: ${address}`);
  return { kind: address.slice(0, slash), key: address.slice(slash + 1) };
}

/** FNV-1a, 32 bit: stable across processes and releases, which shard assignment depends on. */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function shardOf(address: Address, shardCount: number): number {
  return fnv1a(address) % shardCount;
}

function weight(member: string, shard: number): bigint {
  return createHash('sha1').update(`${member}#${shard}`).digest().readBigUInt64BE(0);
}

/**
 * Rendezvous (highest random weight) hashing: every process computes the same owner for a shard
 * from the same member list, and a join or leave moves only the shards that must move.
 */
export function rendezvousOwner(shard: number, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1n;
  for (const m of members) {
    const w = weight(m, shard);
    if (w > bestWeight || (w === bestWeight && best !== undefined && m < best)) {
      best = m;
      bestWeight = w;
    }
  }
  return best;
}

export function fenceKeyForShard(shard: number): string {
  return `shard:${shard}`;
}

export function fenceKeyForPin(address: Address): string {
  return `pin:${address}`;
}
