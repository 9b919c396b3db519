import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import { aLocation, anEvse } from '../support/ocpi-builders.js';
import { RoamingWorld, status16 } from '../support/roaming-world.js';

/**
 * Many chargers of one location, on PostgreSQL: every status writes the one location row (its
 * EVSEs live in it). Statuses that come together run in batches side by side on several
 * connections of the pool (src/db/group-commit.ts, PG_BATCH), each batch a transaction.
 */
describe('roaming: the chargers of one location report at once (PostgreSQL)', function () {
  this.timeout(120_000);
  let world: RoamingWorld;

  before(async () => {
    world = await RoamingWorld.start({}, { database: 'postgresql' });
  });
  after(async () => world.stop());

  /** A location of ours with `count` EVSEs (E1, E2 ...), a 1.6 charger linked to each, connected and booted. */
  async function chargersAt(count: number): Promise<{ loc: string; uids: string[]; chargers: RPCClient[] }> {
    const loc = world.unique('LOC-');
    const uids = Array.from({ length: count }, (_, i) => `E${i + 1}`);
    await world.location(loc, uids);
    const chargers: RPCClient[] = [];
    for (const uid of uids) {
      const cp = await world.chargePoint('ocpp1.6');
      await world.link(cp.id, 1, loc, uid);
      chargers.push(await world.charger(cp, 'ocpp1.6'));
    }
    return { loc, uids, chargers };
  }

  /** Each location's name and its EVSEs' statuses as one eMSP partner pulls them. */
  async function pulled(...locs: string[]): Promise<Array<{ name: string | undefined; statuses: string[] }>> {
    const e = await world.emsp('2.2.1');
    const out = [];
    for (const loc of locs) {
      const res = await e.sim.call('GET', 'locations', `/${loc}`, undefined, { role: 'SENDER' });
      const held = res.data as { name?: string; evses?: { status: string }[] } | undefined;
      out.push({ name: held?.name, statuses: (held?.evses ?? []).map((x) => x.status) });
    }
    return out;
  }

  it('twenty chargers sending their statuses together are all answered, and the location ends as they said', async () => {
    const { loc, uids, chargers } = await chargersAt(20);
    // a site back from a power cut: every charger says Preparing, then Available, six times over.
    // Before, a batch holding the row's lock waited for a write of the same row in the process's
    // turn, itself blocked on that lock: calls failed after the 10 s ask timeout
    const failures: string[] = [];
    for (let round = 0; round < 6; round++) {
      const status = round % 2 === 0 ? 'Preparing' : 'Available';
      const answers = await Promise.allSettled(chargers.map((c) => c.call('StatusNotification', status16(1, status))));
      for (const a of answers) if (a.status === 'rejected') failures.push(String(a.reason));
    }
    expect(failures, failures.slice(0, 3).join('\n')).to.deep.equal([]);
    // the location as an eMSP partner pulls it
    const [held] = await pulled(loc);
    expect(held?.statuses).to.deep.equal(uids.map(() => 'AVAILABLE'));
  });

  it('the chargers of four locations sending their statuses together, in any order, are all answered', async () => {
    const places = [];
    for (let l = 0; l < 4; l++) places.push(await chargersAt(12));
    // every round in another order, so that batches take the locations' rows in every order.
    // Before, batches side by side deadlocked in pairs: PostgreSQL broke each cycle after a
    // second, and calls failed once their batch's retries ran out
    const all = places.flatMap((p) => p.chargers);
    const failures: string[] = [];
    for (let round = 0; round < 6; round++) {
      const status = round % 2 === 0 ? 'Charging' : 'Available';
      const order = all.map((c, i) => ({ c, k: (i * 7919 + round * 104_729) % 1009 })).sort((a, b) => a.k - b.k);
      const answers = await Promise.allSettled(order.map(({ c }) => c.call('StatusNotification', status16(1, status))));
      for (const a of answers) if (a.status === 'rejected') failures.push(String(a.reason));
    }
    expect(failures, failures.slice(0, 3).join('\n')).to.deep.equal([]);
    const held = await pulled(...places.map((p) => p.loc));
    expect(held.map((h) => h.statuses)).to.deep.equal(places.map((p) => p.uids.map(() => 'AVAILABLE')));
  });

  it("the operator's PUT of the location while its chargers report keeps what the chargers said", async () => {
    const { loc, uids, chargers } = await chargersAt(12);
    // the operator renames the location, its file's EVSEs AVAILABLE, while every charger reports
    const edit = (round: number) =>
      aLocation({ id: loc, name: `Renamed ${round}`, evses: uids.map((uid) => anEvse({ uid, status: 'AVAILABLE' })) });
    for (let round = 0; round < 4; round++) {
      const status = round % 2 === 0 ? 'Available' : 'Charging';
      const [puts, answers] = await Promise.all([
        Promise.all(
          Array.from({ length: 6 }, () => world.api.request('PUT', `/v1/ocpi/locations/${loc}`, { body: edit(round) })),
        ),
        Promise.allSettled(chargers.map((c) => c.call('StatusNotification', status16(1, status)))),
      ]);
      expect(puts.map((r) => r.status)).to.deep.equal(puts.map(() => 200));
      expect(answers.filter((a) => a.status === 'rejected')).to.deep.equal([]);
    }
    // before, a PUT read the statuses before a charger's batch changed one and wrote the old one back
    const [held] = await pulled(loc);
    expect(held?.name).to.equal('Renamed 3');
    expect(held?.statuses).to.deep.equal(uids.map(() => 'CHARGING'));
  });
});
