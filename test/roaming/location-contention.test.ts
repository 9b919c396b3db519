import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
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

  it('twenty chargers sending their statuses together are all answered, and the location ends as they said', async () => {
    const EVSES = 20;
    const loc = world.unique('LOC-');
    const uids = Array.from({ length: EVSES }, (_, i) => `E${i + 1}`);
    await world.location(loc, uids);
    const chargers: RPCClient[] = [];
    for (const uid of uids) {
      const cp = await world.chargePoint('ocpp1.6');
      await world.link(cp.id, 1, loc, uid);
      chargers.push(await world.charger(cp, 'ocpp1.6'));
    }
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
    const e = await world.emsp('2.2.1');
    const res = await e.sim.call('GET', 'locations', `/${loc}`, undefined, { role: 'SENDER' });
    const statuses = ((res.data as { evses?: { status: string }[] } | undefined)?.evses ?? []).map((x) => x.status);
    expect(statuses).to.deep.equal(uids.map(() => 'AVAILABLE'));
  });
});
