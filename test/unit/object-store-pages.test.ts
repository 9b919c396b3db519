import { expect } from 'chai';
import type { Row } from '../../src/db/database.js';
import type { PartyIdentity } from '../../src/ocpi/core/auth.js';
import { ObjectStore, type ObjectSql } from '../../src/ocpi/store/object-store.js';

interface Item {
  id: string;
  last_updated: string;
}

/** Statements answered from memory: every list reads `count` and one object; counts the reads. */
function countingSql(): ObjectSql & { reads: number } {
  const sql = {
    reads: 0,
    query(text: string): Promise<Row[]> {
      if (text.startsWith('SELECT COUNT')) return Promise.resolve([{ n: 1 }]);
      sql.reads++;
      return Promise.resolve([{ data: JSON.stringify({ id: 'A', last_updated: '2026-01-01T00:00:00Z' }) }]);
    },
    run: () => Promise.resolve(1),
  };
  return sql;
}

const window = { offset: 0, limit: 10 };
const one: PartyIdentity = { country_code: 'NL', party_id: 'ONE' };
const two: PartyIdentity = { country_code: 'DE', party_id: 'TWO' };
const item = { id: 'A', last_updated: '2026-01-01T00:00:00Z' };

/** The list-page cache is dropped per party: a write of one party's object keeps other parties' pages. */
describe('object store page cache', () => {
  async function listed(store: ObjectStore<Item>, parties?: PartyIdentity[]): Promise<void> {
    await store.renderedList(window, parties, 'as-stored', (items) => items);
  }

  it("a write drops the pages of the object's party and of all parties, not those of another party", async () => {
    const sql = countingSql();
    const written: Array<[string, PartyIdentity]> = [];
    const store = new ObjectStore<Item>(sql, 'locations', { onWrite: (m, p) => written.push([m, p]) });
    await listed(store, [one]);
    await listed(store, [two]);
    await listed(store);
    expect(sql.reads).to.equal(3);
    await listed(store, [one]);
    await listed(store, [two]);
    await listed(store);
    expect(sql.reads, 'all three from the cache').to.equal(3);
    await store.put({ ...one, id: 'A' }, item);
    expect(written).to.deep.equal([['locations', one]]);
    await listed(store, [two]);
    expect(sql.reads, "the other party's page stays").to.equal(3);
    await listed(store, [one]);
    await listed(store);
    expect(sql.reads, 'the written party and the all-parties list are read again').to.equal(5);
  });

  it('clearPages without a party (an old notice, or none) drops every page', async () => {
    const sql = countingSql();
    const store = new ObjectStore<Item>(sql, 'locations');
    await listed(store, [one]);
    await listed(store, [two]);
    store.clearPages();
    await listed(store, [one]);
    await listed(store, [two]);
    expect(sql.reads).to.equal(4);
  });
});

/**
 * Rows answered from memory where another process's writer wins the first `lost` rounds of an
 * update (its UPDATE finds the revision moved on); counts the rounds.
 */
function contendedSql(lost: number): ObjectSql & { rounds: number } {
  let revision = 1;
  const sql = {
    rounds: 0,
    query(): Promise<Row[]> {
      return Promise.resolve([{ data: JSON.stringify(item), revision }]);
    },
    run(): Promise<number> {
      sql.rounds++;
      if (sql.rounds <= lost) {
        revision++;
        return Promise.resolve(0);
      }
      return Promise.resolve(1);
    },
  };
  return sql;
}

describe('object store updates against the writes of other processes', () => {
  it('keeps trying while another process keeps winning (15 rounds lost, as two web processes with 15 PATCHes each can)', async () => {
    const sql = contendedSql(15);
    const store = new ObjectStore<Item>(sql, 'locations');
    const next = await store.update({ ...one, id: 'A' }, (current) => ({
      ...current,
      last_updated: '2026-01-02T00:00:00Z',
    }));
    expect(next?.last_updated).to.equal('2026-01-02T00:00:00Z');
    expect(sql.rounds).to.equal(16);
  });
});
