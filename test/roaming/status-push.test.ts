import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { aConnector, aLocation, aTariff221, anEvse } from '../support/ocpi-builders.js';
import type { RecordedRequest } from '../support/ocpi-simulator.js';
import { RoamingWorld, status16, status201, type Emsp } from '../support/roaming-world.js';

type Json = Record<string, unknown>;

/** A /v1 list answer's items (the harness keeps a JSON array under `value`). */
const items = (a: { body: Json }): Json[] => a.body.value as Json[];

/**
 * Status flows out (docs/ROAMING.md "Status", "The outbox"): an ocpp-rpc charger reports a status
 * on a linked EVSE, and every registered eMSP gets a PATCH of that EVSE in its version; a partner
 * that fails gets it later, in order, with the newest status; one that refuses it leaves a dead
 * letter the operator sees, sends again or discards; one that is down is cut off by its breaker
 * while the others go on.
 */
describe('roaming: EVSE status pushed to eMSPs through the outbox', function () {
  this.timeout(60_000);
  let world: RoamingWorld;
  let emsp221: Emsp;
  let emsp211: Emsp;

  before(async () => {
    world = await RoamingWorld.start();
    emsp221 = await world.emsp('2.2.1');
    emsp211 = await world.emsp('2.1.1');
  });
  after(async () => world.stop());

  const patchesOf = (e: Emsp, locationId: string, evseUid: string, since = 0): RecordedRequest[] =>
    e.sim
      .receivedSince(since)
      .filter((r) => r.method === 'PATCH' && r.path.endsWith(`/${locationId}/${evseUid}`) && r.status === 200);
  const lastStatus = (e: Emsp, locationId: string, evseUid: string, since = 0): string | undefined =>
    (patchesOf(e, locationId, evseUid, since).at(-1)?.body as Json | undefined)?.status as string | undefined;
  const statusArrives = (e: Emsp, locationId: string, evseUid: string, status: string, since = 0) =>
    eventually(async () => (lastStatus(e, locationId, evseUid, since) === status ? true : undefined), {
      timeoutMs: 10_000,
      what: `${status} of ${evseUid} at the ${e.version} eMSP`,
    });

  /** Nothing queued for the partner any more (what earlier steps pushed has arrived). */
  const settled = (e: Emsp) =>
    eventually(async () => {
      const q = await world.api.request('GET', `/v1/outbox?partner_id=${e.id}&status=pending`);
      return items(q).length === 0 ? true : undefined;
    });

  /** A location with EVSEs E1 and E2, and a 1.6 charger whose connector 1 is E1, charging there. */
  const chargingAtE1 = async () => {
    const loc = world.unique('LOC-');
    await world.location(loc, ['E1', 'E2']);
    const cp = await world.chargePoint('ocpp1.6');
    await world.link(cp.id, 1, loc, 'E1');
    const charger = await world.charger(cp, 'ocpp1.6');
    await charger.call('StatusNotification', status16(1, 'Charging'));
    return { loc, charger };
  };

  it('1.6: a StatusNotification on a linked EVSE reaches every eMSP as a PATCH of that EVSE, in its version', async () => {
    const { loc, charger } = await chargingAtE1();
    // an unlinked connector of the same charger changes nothing at the partners
    await charger.call('StatusNotification', status16(2, 'Faulted'));
    await statusArrives(emsp221, loc, 'E1', 'CHARGING');
    await statusArrives(emsp211, loc, 'E1', 'CHARGING');
    for (const e of [emsp221, emsp211]) {
      const patch = patchesOf(e, loc, 'E1').at(-1);
      expect(patch?.path).to.match(new RegExp(`^/ocpi/${e.version}/(.*/)?locations/NL/EVP/${loc}/E1$`));
      expect(Object.keys((patch?.body as Json) ?? {}).sort()).to.deep.equal(['last_updated', 'status']);
      expect(patch?.tokenForm).to.equal(e.version === '2.2.1' ? 'base64' : 'raw');
      expect(patchesOf(e, loc, 'E2')).to.have.length(0);
      expect(e.sim.violations).to.deep.equal([]);
    }
    const headers = patchesOf(emsp221, loc, 'E1').at(-1)?.headers ?? {};
    expect(headers['ocpi-to-party-id']).to.equal(emsp221.sim.party.party_id);
    expect(headers['ocpi-from-party-id']).to.equal('EVP');
    expect(headers['x-request-id']).to.be.a('string');
  });

  it('2.0.1: the EVSE is CHARGING while one of its connectors is Occupied', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp2.0.1');
    await charger.call('StatusNotification', status201(1, 1, 'Occupied'));
    await charger.call('StatusNotification', status201(1, 2, 'Available'));
    await statusArrives(emsp221, loc, 'E1', 'CHARGING');
    await charger.call('StatusNotification', status201(1, 1, 'Available'));
    await statusArrives(emsp221, loc, 'E1', 'AVAILABLE');
    await charger.call('StatusNotification', status201(1, 1, 'Faulted'));
    await charger.call('StatusNotification', status201(1, 2, 'Faulted'));
    await statusArrives(emsp211, loc, 'E1', 'OUTOFORDER');
  });

  it('a partner that answers 503 twice gets the status on the third attempt; nothing is left queued', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    await settled(emsp221);
    const since = emsp221.sim.lastSeq;
    emsp221.sim.failNext(2, 503);
    await charger.call('StatusNotification', status16(1, 'Reserved'));
    await statusArrives(emsp221, loc, 'E1', 'RESERVED', since);
    const attempts = emsp221.sim
      .receivedSince(since)
      .filter((r) => r.method === 'PATCH' && r.path.endsWith(`/${loc}/E1`));
    expect(attempts.map((r) => r.status)).to.deep.equal([503, 503, 200]);
    await eventually(async () => {
      const q = await world.api.request('GET', `/v1/outbox?partner_id=${emsp221.id}`);
      return items(q).length === 0 ? true : undefined;
    });
  });

  it('a partner whose answer is not an OCPI envelope (a page, an empty or cut body) gets the status again', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    await settled(emsp221);
    const since = emsp221.sim.lastSeq;
    emsp221.sim.answerRawNext(1, 200, '<html><body>Bad gateway</body></html>');
    emsp221.sim.answerRawNext(1, 200, '');
    emsp221.sim.answerRawNext(1, 200, '{"status_code": 1000, "data": [');
    await charger.call('StatusNotification', status16(1, 'Reserved'));
    // three answers say nothing of the data: the fourth attempt is the one the partner took
    const attempts = await eventually(async () => {
      const sent = emsp221.sim
        .receivedSince(since)
        .filter((r) => r.method === 'PATCH' && r.path.endsWith(`/${loc}/E1`));
      return sent.length >= 4 ? sent : undefined;
    });
    expect(attempts.map((r) => (r.body as Json).status)).to.deep.equal([
      'RESERVED',
      'RESERVED',
      'RESERVED',
      'RESERVED',
    ]);
    await eventually(async () => {
      const summary = await world.api.request('GET', '/v1/outbox/partners');
      const mine = items(summary).find((p) => (p.partner as Json).id === emsp221.id);
      return mine?.pending === 0 ? mine : undefined;
    });
  });

  it('changes while a partner is down coalesce: it gets the newest status, never an older one after it', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    const since = emsp211.sim.lastSeq;
    emsp211.sim.setDown(true);
    for (const s of ['Preparing', 'Charging', 'Finishing', 'Available', 'Unavailable'])
      await charger.call('StatusNotification', status16(1, s));
    // the other partner is not held up
    await statusArrives(emsp221, loc, 'E1', 'INOPERATIVE');
    emsp211.sim.setDown(false);
    await statusArrives(emsp211, loc, 'E1', 'INOPERATIVE', since);
    const delivered = patchesOf(emsp211, loc, 'E1', since).map((r) => (r.body as Json).status);
    // at most one PATCH per state the row carried when it was sent: the last one is the newest
    expect(delivered.at(-1)).to.equal('INOPERATIVE');
    expect(delivered.length).to.be.at.most(2);
  });

  it('a partner that refuses a PATCH leaves a dead letter the operator can send again or discard', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    await settled(emsp221);
    emsp221.sim.failNext(1, 404, 2003);
    await charger.call('StatusNotification', status16(1, 'Faulted'));
    const dead = await eventually(async () => {
      const q = await world.api.request('GET', `/v1/outbox?status=dead&partner_id=${emsp221.id}`);
      return items(q).find((r) => r.object === `locations/${loc}/E1`);
    });
    expect(dead).to.include({ kind: 'evse', status: 'dead', attempts: 1 });
    expect(dead.partner).to.deep.include({ id: emsp221.id });
    expect(String(dead.last_error)).to.contain('404');
    const summary = await world.api.request('GET', '/v1/outbox/partners');
    const mine = items(summary).find((p) => (p.partner as Json).id === emsp221.id);
    expect(mine).to.include({ dead: 1, breaker: 'closed' });
    const retried = await world.api.request('POST', `/v1/outbox/${String(dead.id)}/retry`);
    expect(retried.status, JSON.stringify(retried.body)).to.equal(200);
    await statusArrives(emsp221, loc, 'E1', 'OUTOFORDER');
    expect((await world.api.request('POST', `/v1/outbox/${String(dead.id)}/retry`)).status).to.equal(404);

    await settled(emsp221);
    emsp221.sim.failNext(1, 400, 2001);
    await charger.call('StatusNotification', status16(1, 'Available'));
    const second = await eventually(async () => {
      const q = await world.api.request('GET', `/v1/outbox?status=dead`);
      return items(q).find((r) => r.object === `locations/${loc}/E1`);
    });
    const discarded = await world.api.request('DELETE', `/v1/outbox/${String(second.id)}`);
    expect(discarded.status).to.equal(200);
    expect((await world.api.request('DELETE', `/v1/outbox/${String(second.id)}`)).status).to.equal(404);
  });

  /** The partner's line of `/v1/outbox/partners`. */
  async function breakerOf(e: Emsp): Promise<Json> {
    const s = await world.api.request('GET', '/v1/outbox/partners');
    return items(s).find((x) => (x.partner as Json).id === e.id) ?? {};
  }

  it("a partner that is down opens its breaker; the other partner's pushes go on; it closes when the partner is back", async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    emsp211.sim.setDown(true);
    for (let i = 0; i < 8; i++) {
      await charger.call('StatusNotification', status16(1, i % 2 === 0 ? 'Charging' : 'Available'));
      await new Promise((r) => setTimeout(r, 60));
    }
    const open = await eventually(async () => {
      const s = await world.api.request('GET', '/v1/outbox/partners');
      const p = items(s).find((x) => (x.partner as Json).id === emsp211.id);
      return p?.breaker === 'open' ? p : undefined;
    });
    expect(open.pending).to.be.at.least(1);
    expect(open.open_until).to.be.a('string');
    await statusArrives(emsp221, loc, 'E1', 'AVAILABLE');
    emsp211.sim.setDown(false);
    await statusArrives(emsp211, loc, 'E1', 'AVAILABLE');
    const closed = await eventually(async () => {
      const s = await world.api.request('GET', '/v1/outbox/partners');
      const p = items(s).find((x) => (x.partner as Json).id === emsp211.id);
      return p?.breaker === 'closed' && p.pending === 0 ? p : undefined;
    });
    // the outage's error stays, with its time: sends went well since (it read as a present failure)
    expect(closed.last_error).to.be.a('string');
    expect(Date.parse(String(closed.last_failed_at))).to.be.at.most(Date.parse(String(closed.last_sent_at)));
  });

  it('a partner that refuses the probe of its open breaker is up: the breaker closes', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    await settled(emsp211);
    emsp211.sim.setDown(true);
    await charger.call('StatusNotification', status16(1, 'Faulted'));
    await eventually(async () => ((await breakerOf(emsp211)).breaker === 'open' ? true : undefined));
    // back, and it refuses the row the probe carries
    emsp211.sim.setDown(false);
    emsp211.sim.failNext(1, 400, 2001);
    await eventually(async () => {
      const q = await world.api.request('GET', `/v1/outbox?status=dead&partner_id=${emsp211.id}`);
      return items(q).find((r) => r.object === `locations/${loc}/E1`);
    });
    expect(await breakerOf(emsp211)).to.include({ breaker: 'closed' });
    await charger.call('StatusNotification', status16(1, 'Available'));
    await statusArrives(emsp211, loc, 'E1', 'AVAILABLE');
  });

  it('a status acknowledged to the charger while a partner is down reaches it after our restart', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    await settled(emsp211);
    const since = emsp211.sim.lastSeq;
    emsp211.sim.setDown(true);
    // answered: from here on the status must reach the partner
    await charger.call('StatusNotification', status16(1, 'SuspendedEV'));
    await world.restart();
    emsp211.sim.setDown(false);
    await statusArrives(emsp211, loc, 'E1', 'CHARGING', since);
  });

  it("the operator's tariff is PUT to every eMSP in its version", async () => {
    const id = world.unique('TAR-');
    const since221 = emsp221.sim.lastSeq;
    const since211 = emsp211.sim.lastSeq;
    const put = await world.api.request('PUT', `/v1/ocpi/tariffs/${id}`, { body: aTariff221({ id }) });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    for (const [e, since] of [
      [emsp221, since221],
      [emsp211, since211],
    ] as const) {
      const sent = await eventually(async () =>
        e.sim.receivedSince(since).find((r) => r.method === 'PUT' && r.path.endsWith(`/tariffs/NL/EVP/${id}`)),
      );
      expect((sent.body as Json).id).to.equal(id);
      // 2.2.1 Tariffs have country_code; 2.1.1 ones do not
      expect('country_code' in (sent.body as Json)).to.equal(e.version === '2.2.1');
      expect(sent.status).to.equal(200);
    }
  });

  it("the operator's tariff DELETE reaches every eMSP in its version, once no connector names it", async () => {
    const id = world.unique('TAR-');
    const since = [emsp221.sim.lastSeq, emsp211.sim.lastSeq] as const;
    expect((await world.api.request('PUT', `/v1/ocpi/tariffs/${id}`, { body: aTariff221({ id }) })).status).to.equal(
      200,
    );
    const loc = world.unique('LOC-');
    const named = aLocation({
      id: loc,
      evses: [anEvse({ uid: 'E1', connectors: [aConnector({ tariff_ids: [id] })] })],
    });
    expect((await world.api.request('PUT', `/v1/ocpi/locations/${loc}`, { body: named })).status).to.equal(200);

    // mod_tariffs DELETE: no Connector should still reference it
    const refused = await world.api.request('DELETE', `/v1/ocpi/tariffs/${id}`);
    expect(refused.status, JSON.stringify(refused.body)).to.equal(409);
    const error = refused.body.error as Json;
    expect(error.code).to.equal('tariff_in_use');
    expect(String(error.message)).to.include(`connector 1 of EVSE E1 at location ${loc}`);
    expect((await world.api.request('GET', `/v1/ocpi/tariffs/${id}`)).status).to.equal(200);

    const elsewhere = aLocation({
      id: loc,
      evses: [anEvse({ uid: 'E1', connectors: [aConnector({ tariff_ids: [] })] })],
    });
    expect((await world.api.request('PUT', `/v1/ocpi/locations/${loc}`, { body: elsewhere })).status).to.equal(200);
    const removed = await world.api.request('DELETE', `/v1/ocpi/tariffs/${id}`);
    expect(removed.status, JSON.stringify(removed.body)).to.equal(200);
    expect(removed.body.id).to.equal(id);
    expect((await world.api.request('GET', `/v1/ocpi/tariffs/${id}`)).status).to.equal(404);
    expect((await world.api.request('DELETE', `/v1/ocpi/tariffs/${id}`)).status).to.equal(404);

    for (const [e, from] of [
      [emsp221, since[0]],
      [emsp211, since[1]],
    ] as const) {
      const sent = await eventually(async () =>
        e.sim.receivedSince(from).find((r) => r.method === 'DELETE' && r.path.endsWith(`/tariffs/NL/EVP/${id}`)),
      );
      expect(sent.status).to.equal(200);
      // after its PUT, never before it
      const put = e.sim.receivedSince(from).find((r) => r.method === 'PUT' && r.path.endsWith(`/tariffs/NL/EVP/${id}`));
      expect(put?.seq ?? Infinity).to.be.below(sent.seq);
      await settled(e);
    }
    // no longer listed (our tariffs Senders read the same store)
    const listed = await world.api.request('GET', '/v1/ocpi/tariffs?limit=1000');
    expect(items(listed).map((t) => t.id)).to.not.include(id);
  });

  it('a tariff DELETE the eMSP answers with "unknown" (it never had it) is done, not retried or dead', async () => {
    const id = world.unique('TAR-');
    const since = emsp221.sim.lastSeq;
    expect((await world.api.request('PUT', `/v1/ocpi/tariffs/${id}`, { body: aTariff221({ id }) })).status).to.equal(
      200,
    );
    await settled(emsp221);
    emsp221.sim.failPath(`/tariffs/NL/EVP/${id}`, 1, 404, 2003);
    expect((await world.api.request('DELETE', `/v1/ocpi/tariffs/${id}`)).status).to.equal(200);
    const sent = await eventually(async () =>
      emsp221.sim.receivedSince(since).find((r) => r.method === 'DELETE' && r.path.endsWith(`/tariffs/NL/EVP/${id}`)),
    );
    expect(sent.status).to.equal(404);
    await settled(emsp221);
    const dead = await world.api.request('GET', `/v1/outbox?partner_id=${emsp221.id}&status=dead`);
    expect(items(dead).map((r) => r.object)).to.not.include(`tariffs/${id}`);
    expect(
      emsp221.sim.receivedSince(since).filter((r) => r.method === 'DELETE' && r.path.endsWith(`/tariffs/NL/EVP/${id}`)),
    ).to.have.length(1);
  });

  it("the operator's edit of a location keeps the status its chargers reported on linked EVSEs, except PLANNED and REMOVED", async () => {
    const { loc } = await chargingAtE1();
    await statusArrives(emsp221, loc, 'E1', 'CHARGING');
    await settled(emsp221);
    const since = emsp221.sim.lastSeq;
    // the operator renames the location, its file saying AVAILABLE for both EVSEs
    await world.location(loc, ['E1', 'E2']);
    const put = await eventually(async () =>
      emsp221.sim.receivedSince(since).find((r) => r.method === 'PUT' && r.path.endsWith(`/locations/NL/EVP/${loc}`)),
    );
    const statuses = ((put.body as Json).evses as Json[]).map((e) => [e.uid, e.status]);
    expect(statuses).to.deep.equal([
      ['E1', 'CHARGING'],
      ['E2', 'AVAILABLE'],
    ]);
    // taking the EVSE out is the operator's
    const since2 = emsp221.sim.lastSeq;
    const removed = aLocation({
      id: loc,
      evses: [anEvse({ uid: 'E1', status: 'REMOVED' }), anEvse({ uid: 'E2', status: 'AVAILABLE' })],
    });
    expect((await world.api.request('PUT', `/v1/ocpi/locations/${loc}`, { body: removed })).status).to.equal(200);
    const put2 = await eventually(async () =>
      emsp221.sim.receivedSince(since2).find((r) => r.method === 'PUT' && r.path.endsWith(`/locations/NL/EVP/${loc}`)),
    );
    expect(((put2.body as Json).evses as Json[])[0]).to.include({ uid: 'E1', status: 'REMOVED' });
    // and so is bringing it back
    const since3 = emsp221.sim.lastSeq;
    await world.location(loc, ['E1', 'E2']);
    const put3 = await eventually(async () =>
      emsp221.sim.receivedSince(since3).find((r) => r.method === 'PUT' && r.path.endsWith(`/locations/NL/EVP/${loc}`)),
    );
    expect(((put3.body as Json).evses as Json[])[0]).to.include({ uid: 'E1', status: 'AVAILABLE' });
  });

  it("the operator's edit of a location is PUT to every eMSP in its version", async () => {
    const loc = world.unique('LOC-');
    const since221 = emsp221.sim.lastSeq;
    const since211 = emsp211.sim.lastSeq;
    await world.location(loc, ['E1']);
    for (const [e, since] of [
      [emsp221, since221],
      [emsp211, since211],
    ] as const) {
      const put = await eventually(async () =>
        e.sim.receivedSince(since).find((r) => r.method === 'PUT' && r.path.endsWith(`/locations/NL/EVP/${loc}`)),
      );
      const body = put.body as Json;
      expect(body.id).to.equal(loc);
      // 2.1.1 has no country_code/party_id in a Location; 2.2.1 has them
      expect('party_id' in body).to.equal(e.version === '2.2.1');
    }
    expect(emsp221.sim.violations).to.deep.equal([]);
    expect(emsp211.sim.violations).to.deep.equal([]);
  });

  it('an eMSP that registers again gets our locations as they are now: a status changed while it was away', async () => {
    const e = await world.emsp('2.2.1');
    const { loc, charger } = await chargingAtE1();
    await statusArrives(e, loc, 'E1', 'CHARGING');
    expect((await e.sim.unregister()).statusCode).to.equal(1000);
    // while no link speaks for it, the charge ends: nothing is queued for it
    await charger.call('StatusNotification', status16(1, 'Available'));
    const since = e.sim.lastSeq;
    const again = await world.api.request('POST', '/v1/partners', { body: e.sim.party });
    expect(again.status, JSON.stringify(again.body)).to.equal(201);
    const { versions_url, token } = again.body as { versions_url: string; token: string };
    expect((await e.sim.registerWith(versions_url, token)).answer.statusCode).to.equal(1000);
    // was CHARGING at the eMSP until it pulled: the PATCH went to no one
    const put = await eventually(
      async () =>
        e.sim
          .receivedSince(since)
          .find((r) => r.method === 'PUT' && r.path.endsWith(`/locations/NL/EVP/${loc}`) && r.status === 200),
      { timeoutMs: 10_000, what: `the PUT of ${loc} after the registration` },
    );
    const evses = (put.body as { evses: Array<{ uid: string; status: string }> }).evses;
    expect(evses.find((x) => x.uid === 'E1')?.status).to.equal('AVAILABLE');
    expect(e.sim.violations).to.deep.equal([]);
  });
});

describe('roaming: a linked charger that went away shows UNKNOWN, and its statuses come back when it returns', function () {
  this.timeout(30_000);
  let world: RoamingWorld;
  let emsp: Emsp;

  before(async () => {
    world = await RoamingWorld.start({ ROAMING_OFFLINE_GRACE_MS: '400' });
    emsp = await world.emsp('2.2.1');
  });
  after(async () => world.stop());

  const lastStatus = (loc: string, since: number): string | undefined =>
    (
      emsp.sim
        .receivedSince(since)
        .filter((r) => r.method === 'PATCH' && r.path.endsWith(`/${loc}/E1`) && r.status === 200)
        .at(-1)?.body as Json | undefined
    )?.status as string | undefined;

  it('UNKNOWN after the grace period offline; the last reported status again on reconnection', async () => {
    const since = emsp.sim.lastSeq;
    const { loc, cp, charger } = await world.linkedCharger('ocpp1.6');
    await charger.call('StatusNotification', status16(1, 'Charging'));
    await eventually(async () => (lastStatus(loc, since) === 'CHARGING' ? true : undefined));
    const closedAt = Date.now();
    await charger.close({ force: true });
    await eventually(async () => (lastStatus(loc, since) === 'UNKNOWN' ? true : undefined), { timeoutMs: 5000 });
    // not before the grace period
    expect(Date.now() - closedAt).to.be.at.least(400);
    // the charger comes back without a new StatusNotification: its last report counts again
    await world.charger(cp, 'ocpp1.6');
    await eventually(async () => (lastStatus(loc, since) === 'CHARGING' ? true : undefined));
  });
});

describe('roaming: a charger back for a moment starts the grace before UNKNOWN again', function () {
  this.timeout(30_000);
  let world: RoamingWorld;
  let emsp: Emsp;

  before(async () => {
    // looks every 750 ms (twice per grace)
    world = await RoamingWorld.start({ ROAMING_OFFLINE_GRACE_MS: '1500' });
    emsp = await world.emsp('2.2.1');
  });
  after(async () => world.stop());

  it('a reconnection of a second between two looks counts: UNKNOWN a grace after its last frame, not the first leaving', async () => {
    const since = emsp.sim.lastSeq;
    const { loc, cp, charger } = await world.linkedCharger('ocpp1.6');
    await charger.call('StatusNotification', status16(1, 'Available'));
    const unknownAt = (): number | undefined =>
      emsp.sim
        .receivedSince(since)
        .find((r) => r.method === 'PATCH' && r.path.endsWith(`/${loc}/E1`) && (r.body as Json).status === 'UNKNOWN')
        ?.receivedAt;
    await charger.close({ force: true });
    await new Promise((r) => setTimeout(r, 1000));
    // back for a moment, between two looks of the watch, and away again
    const back = await world.charger(cp, 'ocpp1.6');
    await back.call('Heartbeat', {});
    await back.close({ force: true });
    const leftAgain = Date.now();
    const at = await eventually(async () => unknownAt(), { timeoutMs: 6000 });
    // was about a second after it left again: the grace counted from its first leaving
    expect(at - leftAgain).to.be.at.least(1300);
  });
});
