import { expect } from 'chai';
import { rendezvousOwner, shardOf } from '../../src/runtime/address.js';

function owners(members: string[], shards: number): string[] {
  return Array.from({ length: shards }, (_, s) => rendezvousOwner(s, members) ?? '');
}

describe('shard placement', () => {
  it('maps an address to the same shard every time, spread over all shards', () => {
    expect(shardOf('partner/NL-ABC', 256)).to.equal(shardOf('partner/NL-ABC', 256));
    const used = new Set(Array.from({ length: 5000 }, (_, i) => shardOf(`counter/k${i}`, 256)));
    expect(used.size).to.equal(256);
  });

  it('gives every process a fair share and agrees whatever the member order', () => {
    const members = ['a', 'b', 'c'];
    const o = owners(members, 256);
    expect(owners(['c', 'a', 'b'], 256)).to.deep.equal(o);
    for (const m of members) {
      const n = o.filter((x) => x === m).length;
      expect(n).to.be.within(256 / 3 - 30, 256 / 3 + 30);
    }
  });

  it('moves only the shards of a process that leaves, and only shards to one that joins', () => {
    const before = owners(['a', 'b', 'c'], 256);
    const afterLeave = owners(['a', 'c'], 256);
    before.forEach((o, s) => {
      if (o !== 'b') expect(afterLeave[s]).to.equal(o);
    });
    const afterJoin = owners(['a', 'b', 'c', 'd'], 256);
    before.forEach((o, s) => {
      if (afterJoin[s] !== o) expect(afterJoin[s]).to.equal('d');
    });
  });
});
