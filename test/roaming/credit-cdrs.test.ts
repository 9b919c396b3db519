import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import { partnerKey } from '../../actors/partner/protocol.js';
import { enqueue } from '../../src/ocpi/outbox/outbox-store.js';
import { eventually } from '../support/eventually.js';
import { aTariff221 } from '../support/ocpi-builders.js';
import type { RecordedRequest } from '../support/ocpi-simulator.js';
import { RoamingWorld, type Emsp } from '../support/roaming-world.js';

type Json = Record<string, unknown>;

/**
 * Credit CDRs (2.2.1 mod_cdrs "Credit CDRs"; docs/TARIFFS.md "Crediting a CDR"): the operator
 * takes back a CDR our charger's session billed. The eMSP of its token gets a credit CDR of its
 * own id that names the CDR it credits, its amounts negated, and can pull it; a 2.1.1 eMSP,
 * whose version has no credit CDR, gets nothing it cannot read.
 */

/** 0.25/kWh with 20% VAT, and 1.00 a session. */
const TARIFF = aTariff221({
  id: 'T-1',
  elements: [
    {
      price_components: [
        { type: 'FLAT', price: 1, vat: 20, step_size: 1 },
        { type: 'ENERGY', price: 0.25, vat: 20, step_size: 1 },
      ],
    },
  ],
  min_price: undefined,
  last_updated: '2024-01-01T00:00:00Z',
});
// 12 kWh: 1.00 + 3.00 = 4.00, 4.80 with VAT
const TOTAL = { excl_vat: 4, incl_vat: 4.8 };

const T0 = Date.parse('2024-05-02T08:00:00Z');
const at = (minutes: number): string => new Date(T0 + minutes * 60_000).toISOString();

const cdrPosts = (e: Emsp, since: number): RecordedRequest[] =>
  e.sim.receivedSince(since).filter((r) => r.method === 'POST' && /\/cdrs$/.test(r.path) && r.status === 200);

describe('roaming: credit CDRs of our CDRs, from the operator to the eMSP', function () {
  this.timeout(60_000);
  let world: RoamingWorld;

  before(async () => {
    world = await RoamingWorld.start({ ROAMING_SESSION_PUSH_MS: '0', PRICING_THREADS: '1' });
    const put = await world.api.request('PUT', '/v1/ocpi/tariffs/T-1', { body: TARIFF });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
  });
  after(async () => world.stop());

  /** A 1.6 transaction of 12 kWh by a token of `e` at a linked charger; answers the CDR's id. */
  async function charge(e: Emsp): Promise<{ cdrId: string; since: number }> {
    const { cp, charger } = await world.linkedCharger('ocpp1.6');
    const uid = `CR${randomUUID().slice(0, 8)}`.toUpperCase();
    await world.pushToken(e, uid, { whitelist: 'ALWAYS' });
    const since = e.sim.lastSeq;
    await transaction(charger, uid);
    const cdrId = await eventually(
      async () => {
        const res = await world.api.request('GET', `/v1/sessions?charge_point_id=${cp.id}`);
        const id = (res.body as { value: Json[] }).value[0]?.cdr_id;
        return typeof id === 'string' ? id : undefined;
      },
      { timeoutMs: 10_000, what: "the session's CDR" },
    );
    return { cdrId, since };
  }

  async function transaction(charger: RPCClient, uid: string): Promise<void> {
    const start = (await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: uid,
      meterStart: 0,
      timestamp: at(0),
    })) as { transactionId: number };
    await charger.call('MeterValues', {
      connectorId: 1,
      transactionId: start.transactionId,
      meterValue: [{ timestamp: at(30), sampledValue: [{ value: '6000', unit: 'Wh' }] }],
    });
    await charger.call('StopTransaction', { transactionId: start.transactionId, meterStop: 12000, timestamp: at(60) });
  }

  /** The eMSP's rows in our outbox (`status` only, when given). */
  const outboxOf = async (e: Emsp, status?: 'dead'): Promise<Json[]> => {
    const q = await world.api.request(
      'GET',
      `/v1/outbox?partner_id=${e.id}&limit=1000${status ? `&status=${status}` : ''}`,
    );
    expect(q.status, JSON.stringify(q.body)).to.equal(200);
    return q.body.value as Json[];
  };

  /** The eMSP's taken POST of CDR `id` since `since`, once it came. */
  const taken = (e: Emsp, since: number, id: string, what: string) =>
    eventually(async () => cdrPosts(e, since).find((r) => (r.body as Json).id === id), { timeoutMs: 15_000, what });

  const credit = (id: string, body?: Json) =>
    world.api.request('POST', `/v1/cdrs/${encodeURIComponent(id)}/credit`, body === undefined ? {} : { body });

  it('2.2.1: the eMSP receives the credit CDR, negated and naming the CDR, and pulls both', async () => {
    const e = await world.emsp('2.2.1');
    const { cdrId, since } = await charge(e);
    const first = await eventually(async () => cdrPosts(e, since)[0], { timeoutMs: 10_000, what: 'the CDR POST' });
    const billed = first.body as Json;
    expect(billed.total_cost).to.deep.equal(TOTAL);

    const answer = await credit(cdrId, { remark: 'meter fault: billed again' });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
    const made = (answer.body as { cdr: Json }).cdr;
    expect(made).to.include({ id: `${cdrId}-C`, credit: true, credit_reference_id: cdrId });
    expect(made.remark).to.equal('meter fault: billed again');
    const { country_code, party_id } = e.sim.party;
    expect(answer.body.recipients).to.deep.equal([
      { partner_key: `${country_code}-${party_id}`, version: '2.2.1', sent: true },
    ]);

    const posted = await eventually(async () => cdrPosts(e, since).find((r) => (r.body as Json).credit === true), {
      timeoutMs: 10_000,
      what: 'the credit CDR POST',
    });
    const got = posted.body as Json;
    expect(got.id).to.equal(`${cdrId}-C`);
    expect(got.credit_reference_id).to.equal(cdrId);
    // mod_cdrs: the data of the original CDR, its amounts negative
    expect(got.total_cost).to.deep.equal({ excl_vat: -4, incl_vat: -4.8 });
    expect(got.total_fixed_cost).to.deep.equal({ excl_vat: -1, incl_vat: -1.2 });
    expect(got.total_energy_cost).to.deep.equal({ excl_vat: -3, incl_vat: -3.6 });
    expect(got.total_energy).to.equal(billed.total_energy);
    expect(got.charging_periods).to.deep.equal(billed.charging_periods);
    expect(got.cdr_token).to.deep.equal(billed.cdr_token);
    expect(got.session_id).to.equal(billed.session_id);
    expect(e.sim.violations).to.deep.equal([]);

    // its delivery shows in /v1 with the eMSP's Location
    const listed = await eventually(
      async () => {
        const list = await world.api.request('GET', '/v1/cdrs?limit=1000');
        const view = (list.body.value as Array<{ cdr: Json; deliveries: Json[]; credited_by: unknown }>).find(
          (c) => c.cdr.id === `${cdrId}-C`,
        );
        return view && view.deliveries.length > 0 ? view : undefined;
      },
      { what: "the credit's delivery in /v1" },
    );
    expect(String(listed.deliveries[0]?.location)).to.match(new RegExp(`/cdrs/${cdrId}-C$`));
    expect(listed.credited_by).to.equal(null);
    // the CDR names the credit that took it back
    const original = await world.api.request('GET', `/v1/sessions/${cdrId}/cdr`);
    expect(original.body.credited_by).to.equal(`${cdrId}-C`);

    // the pull has both, the credit after the CDR it credits
    const pulled = await e.sim.call('GET', 'cdrs', '', undefined, { role: 'SENDER' });
    const ids = (pulled.data as Json[]).map((c) => c.id);
    expect(ids).to.include.members([cdrId, `${cdrId}-C`]);

    // a credit once: sent twice, the eMSP would take back twice what it paid once
    await new Promise((r) => setTimeout(r, 300));
    expect(cdrPosts(e, since).filter((r) => (r.body as Json).credit === true)).to.have.length(1);
    const again = await credit(cdrId);
    expect(again.status).to.equal(409);
    expect((again.body.error as Json).code).to.equal('cdr_credited');
    const ofCredit = await credit(`${cdrId}-C`);
    expect(ofCredit.status).to.equal(409);
    expect((ofCredit.body.error as Json).code).to.equal('cdr_is_credit');
  });

  it('refuses what names no CDR of ours, and a remark longer than a CDR holds', async () => {
    const unknown = await credit('NO-SUCH-CDR');
    expect(unknown.status).to.equal(404);
    expect((unknown.body.error as Json).code).to.equal('cdr_not_found');
    const long = await credit('NO-SUCH-CDR', { remark: 'x'.repeat(256) });
    expect(long.status).to.equal(422);
    const extra = await credit('NO-SUCH-CDR', { amount: 3 });
    expect(extra.status).to.equal(422);
    expect((await credit('NO-SUCH-CDR', { remark: '   ' })).status).to.equal(422);
  });

  it('a CDR still on its way to its eMSP is credited after it: the eMSP never gets the credit of a CDR it lacks', async () => {
    const e = await world.emsp('2.2.1');
    // the eMSP refuses the next four CDR POSTs (overloaded): the CDR waits out its back-off
    e.sim.failPath('/cdrs', 4, 503);
    const { cdrId, since } = await charge(e);
    const answer = await credit(cdrId);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
    const creditTaken = await taken(e, since, `${cdrId}-C`, 'the credit CDR taken');
    const cdrTaken = cdrPosts(e, since).find((r) => (r.body as Json).id === cdrId);
    expect(cdrTaken, 'the CDR taken').not.to.equal(undefined);
    // nothing of the credit was sent before its CDR was taken, not even a refused attempt
    const creditTries = e.sim
      .receivedSince(since)
      .filter((r) => r.method === 'POST' && (r.body as Json | undefined)?.id === `${cdrId}-C`);
    expect(creditTries.map((r) => r.seq)).to.deep.equal([creditTaken.seq]);
    expect(creditTaken.seq).to.be.greaterThan(cdrTaken?.seq ?? Infinity);
  });

  it('an eMSP that is down opens its breaker while a credit waits for its CDR; once it is back, the CDR comes first', async () => {
    const e = await world.emsp('2.2.1');
    e.sim.setDown(true);
    const { cdrId, since } = await charge(e);
    expect((await credit(cdrId)).status).to.equal(201);
    // the credit's waiting makes no call: it is no answer that would keep the breaker closed
    await eventually(
      async () => {
        const s = await world.api.request('GET', '/v1/outbox/partners');
        const mine = (s.body.value as Json[]).find((x) => (x.partner as Json).id === e.id);
        return mine?.breaker === 'open' ? true : undefined;
      },
      { timeoutMs: 10_000, what: "the partner's breaker open" },
    );
    e.sim.setDown(false);
    const creditTaken = await taken(e, since, `${cdrId}-C`, 'the credit CDR taken');
    const cdrTaken = cdrPosts(e, since).find((r) => (r.body as Json).id === cdrId);
    expect(creditTaken.seq).to.be.greaterThan(cdrTaken?.seq ?? Infinity);
  });

  /** The dead letter of CDR `cdrId` for the eMSP `e`, once it is one. */
  const deadCdrRow = (e: Emsp, cdrId: string) =>
    eventually(
      async () => {
        return (await outboxOf(e, 'dead')).find((r) => r.object === `cdrs/${cdrId}`);
      },
      { timeoutMs: 10_000, what: `the dead letter of CDR ${cdrId}` },
    );

  it('a CDR the eMSP refused (a dead letter) is credited after it is sent again, never before', async () => {
    const e = await world.emsp('2.2.1');
    e.sim.failPath('/cdrs', 1, 400, 2001);
    const { cdrId, since } = await charge(e);
    const dead = await deadCdrRow(e, cdrId);
    expect((await credit(cdrId)).status).to.equal(201);
    // the credit waits for its CDR, and says so in its row
    const waiting = await eventually(
      async () => {
        const row = (await outboxOf(e)).find((r) => r.object === `cdrs/${cdrId}-C`);
        return row?.last_error ? row : undefined;
      },
      { what: "the credit's row waiting" },
    );
    expect(String(waiting.last_error)).to.contain(`waits for CDR ${cdrId}, a dead letter`);
    expect(cdrPosts(e, since)).to.deep.equal([]);
    expect((await world.api.request('POST', `/v1/outbox/${String(dead.id)}/retry`)).status).to.equal(200);
    const creditTaken = await taken(e, since, `${cdrId}-C`, 'the credit CDR taken');
    const cdrTaken = cdrPosts(e, since).find((r) => (r.body as Json).id === cdrId);
    expect(creditTaken.seq).to.be.greaterThan(cdrTaken?.seq ?? Infinity);
  });

  it('a CDR whose dead letter was discarded is credited alone, and not sent after its credit when the link registers again', async () => {
    const e = await world.emsp('2.2.1');
    e.sim.failPath('/cdrs', 1, 400, 2001);
    const { cdrId, since } = await charge(e);
    const dead = await deadCdrRow(e, cdrId);
    expect((await credit(cdrId)).status).to.equal(201);
    expect((await world.api.request('DELETE', `/v1/outbox/${String(dead.id)}`)).status).to.equal(200);
    await taken(e, since, `${cdrId}-C`, 'the credit CDR taken alone');
    // the link ends and registers again: its catch-up queues the CDR it was never sent
    expect((await e.sim.unregister()).statusCode).to.equal(1000);
    const again = await world.api.request('POST', '/v1/partners', { body: e.sim.party });
    const { versions_url, token } = again.body as { versions_url: string; token: string };
    expect((await e.sim.registerWith(versions_url, token)).answer.statusCode).to.equal(1000);
    await eventually(
      async () => {
        return (await outboxOf(e)).some((r) => String(r.object).startsWith('cdrs/')) ? undefined : true;
      },
      { timeoutMs: 10_000, what: "the catch-up's CDR rows settled" },
    );
    // a charge already taken back, after its credit: not sent
    expect(cdrPosts(e, since).filter((r) => (r.body as Json).id === cdrId)).to.deep.equal([]);
  });

  it("a CDR row held for a link that no longer speaks for the token's party is not sent to it", async () => {
    const e = await world.emsp('2.2.1');
    const { cdrId, since } = await charge(e);
    await eventually(async () => cdrPosts(e, since)[0], { timeoutMs: 10_000, what: 'the CDR POST' });
    // what a link keeps of a party it spoke for before its registration changed: a row of that
    // party's CDR (and its credit), held, then sent again by the operator
    const other = await world.emsp('2.2.1');
    const otherSince = other.sim.lastSeq;
    const db = world.platform.platform.services.db;
    const { country_code, party_id } = e.sim.party;
    expect((await credit(cdrId)).status).to.equal(201);
    await db.sql.transaction(async (tx) => {
      for (const id of [cdrId, `${cdrId}-C`])
        await enqueue(
          tx,
          { partner_key: partnerKey(other.sim.party.country_code, other.sim.party.party_id) },
          { kind: 'cdr', cdr_id: id, to: { country_code, party_id } },
        );
    });
    await eventually(
      async () => {
        return (await outboxOf(other)).length === 0 ? true : undefined;
      },
      { timeoutMs: 10_000, what: "the other link's rows settled" },
    );
    // two eMSPs billed for one session: the other link was sent nothing
    expect(cdrPosts(other, otherSince)).to.deep.equal([]);
  });

  it('a credit made while its eMSP was unregistered reaches it when it registers again', async () => {
    const e = await world.emsp('2.2.1');
    const { cdrId, since } = await charge(e);
    await eventually(async () => cdrPosts(e, since)[0], { timeoutMs: 10_000, what: 'the CDR POST' });
    expect((await e.sim.unregister()).statusCode).to.equal(1000);
    expect((await credit(cdrId)).status).to.equal(201);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(cdrPosts(e, since)).to.have.length(1);
    const again = await world.api.request('POST', '/v1/partners', { body: e.sim.party });
    expect(again.status, JSON.stringify(again.body)).to.equal(201);
    const { versions_url, token } = again.body as { versions_url: string; token: string };
    expect((await e.sim.registerWith(versions_url, token)).answer.statusCode).to.equal(1000);
    const creditPost = await taken(e, since, `${cdrId}-C`, 'the credit CDR after the registration');
    expect((creditPost.body as Json).credit_reference_id).to.equal(cdrId);
    // the CDR it credits was delivered before: it is not sent again
    expect(cdrPosts(e, since).filter((r) => (r.body as Json).id === cdrId)).to.have.length(1);
  });

  it('2.1.1: a credit whose CDR is a dead letter is settled at once, not held for it', async () => {
    const e = await world.emsp('2.1.1');
    e.sim.failPath('/cdrs', 1, 400, 2001);
    const { cdrId } = await charge(e);
    await deadCdrRow(e, cdrId);
    expect((await credit(cdrId)).status).to.equal(201);
    await eventually(
      async () => {
        return (await outboxOf(e)).some((r) => r.object === `cdrs/${cdrId}-C`) ? undefined : true;
      },
      { what: "the credit's row settled" },
    );
    // it waited for nothing: no attempt, no dead letter of its own
    expect((await outboxOf(e, 'dead')).map((r) => r.object)).to.deep.equal([`cdrs/${cdrId}`]);
  });

  it('2.1.1: the credit is kept, but neither sent nor listed to the eMSP, whose version has no credit CDR', async () => {
    const e = await world.emsp('2.1.1');
    const { cdrId, since } = await charge(e);
    await eventually(async () => cdrPosts(e, since)[0], { timeoutMs: 10_000, what: 'the CDR POST' });
    const answer = await credit(cdrId);
    expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
    // the operator is told it does not go to that link
    expect(answer.body.recipients).to.deep.equal([
      { partner_key: `${e.sim.party.country_code}-${e.sim.party.party_id}`, version: '2.1.1', sent: false },
    ]);
    // its outbox row is settled without a call: nothing pending, nothing dead for it
    await eventually(
      async () => ((await outboxOf(e)).some((r) => String(r.object).endsWith(`${cdrId}-C`)) ? undefined : true),
      { what: "the credit's outbox row settled" },
    );
    expect(cdrPosts(e, since)).to.have.length(1);
    const pulled = await e.sim.call('GET', 'cdrs', '', undefined);
    const ids = (pulled.data as Json[]).map((c) => c.id);
    expect(ids).to.include(cdrId);
    expect(ids).not.to.include(`${cdrId}-C`);
    expect(e.sim.violations).to.deep.equal([]);
    // the operator's list says the same of the credit, and nothing of the CDR (was: neither, and
    // the console's "not yet (2.2.1 links only)" read alike for a credit that waits and this one)
    const listed = await world.api.request('GET', `/v1/cdrs?limit=1000`);
    const items = listed.body.value as Array<{ cdr: Json; recipients?: unknown }>;
    expect(items.find((i) => i.cdr.id === `${cdrId}-C`)?.recipients).to.deep.equal(answer.body.recipients);
    expect(items.find((i) => i.cdr.id === cdrId)).not.to.have.property('recipients');
  });
});
