import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import { SampleSweep } from '../../src/roaming/sample-sweep.js';
import { eventually } from '../support/eventually.js';
import { aConnector, aLocation, anEvse } from '../support/ocpi-builders.js';
import type { RecordedRequest } from '../support/ocpi-simulator.js';
import { RoamingWorld, type Emsp } from '../support/roaming-world.js';

type Json = Record<string, unknown>;

/**
 * A roamed session is priced with the tariff and built at the place of its start
 * (docs/ROAMING.md "Tariff and place at the start"), whatever the operator changes while it runs;
 * its meter samples go once its CDR is stored, or after the retention when no CDR can come
 * (docs/ROAMING.md "Meter samples").
 */

const DAY_MS = 86_400_000;

/** 0.30/kWh from 18:00 to 22:00 local time, 0.20/kWh otherwise, no VAT; `factor` scales both. */
const aTariff = (id: string, factor: number, lastUpdated: string): Json => ({
  country_code: 'NL',
  party_id: 'EVP',
  id,
  currency: 'EUR',
  elements: [
    {
      price_components: [{ type: 'ENERGY', price: 0.3 * factor, vat: 0, step_size: 1 }],
      restrictions: { start_time: '18:00', end_time: '22:00' },
    },
    { price_components: [{ type: 'ENERGY', price: 0.2 * factor, vat: 0, step_size: 1 }] },
  ],
  last_updated: lastUpdated,
});

// 17:30 in Amsterdam (summer time), 11:30 in New York: 6 kWh before 18:00 Amsterdam, 6 after
const T0 = Date.parse('2024-05-02T15:30:00Z');
const at = (minutes: number): string => new Date(T0 + minutes * 60_000).toISOString();
// 6 kWh at 0.20 and 6 at 0.30: what the tariff and place of the start give
const AT_START = 3;
// the same session with the tariff and place put while it ran (0.40 and 0.60, 18:00 in New York never comes)
const EDITED_TARIFF_ZONE = 4.8;
const EDITED_TARIFF_AMSTERDAM = 6;

describe('roaming: the tariff and place of a session are those of its start; its meter samples are purged', function () {
  this.timeout(60_000);
  let world: RoamingWorld;
  let e: Emsp;

  before(async () => {
    world = await RoamingWorld.start({ ROAMING_SESSION_PUSH_MS: '0', PRICING_THREADS: '1', OUTBOX_MAX_ATTEMPTS: '2' });
    e = await world.emsp('2.2.1');
  });
  after(async () => world.stop());

  const sql = () => world.platform.platform.services.db.sql;
  const count = async (table: string, sessionId: string): Promise<number> => {
    const rows = await sql().query(`SELECT COUNT(*) AS n FROM ${table} WHERE session_id = ?`, [sessionId]);
    return Number(rows[0]?.n);
  };
  const cdrPost = (since: number, sessionId: string): RecordedRequest | undefined =>
    e.sim
      .receivedSince(since)
      .find((r) => r.method === 'POST' && /\/cdrs$/.test(r.path) && (r.body as Json | undefined)?.id === sessionId);

  async function putTariff(body: Json): Promise<void> {
    const put = await world.api.request('PUT', `/v1/ocpi/tariffs/${String(body.id)}`, { body });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
  }

  async function putLocation(id: string, tariffId: string, over: Json = {}): Promise<void> {
    const evse = anEvse({ uid: 'E1', evse_id: 'NL*EVP*E1', connectors: [aConnector({ tariff_ids: [tariffId] })] });
    const body = aLocation({ id, name: 'Old Square', address: 'Old street 1', evses: [evse], ...over });
    const put = await world.api.request('PUT', `/v1/ocpi/locations/${id}`, { body });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
  }

  /** A location whose connector names `tariffId`, a 1.6 charger linked to it, and a partner's token. */
  async function site(tariffId: string): Promise<{ loc: string; charger: RPCClient; uid: string }> {
    const loc = world.unique('LOC-');
    await putLocation(loc, tariffId);
    const cp = await world.chargePoint('ocpp1.6');
    await world.link(cp.id, 1, loc, 'E1');
    const charger = await world.charger(cp, 'ocpp1.6');
    const uid = `S${randomUUID().slice(0, 8)}`.toUpperCase();
    await world.pushToken(e, uid, { whitelist: 'ALWAYS' });
    return { loc, charger, uid };
  }

  /** Starts a transaction at T0 with 6 kWh by 18:00 Amsterdam; answers its transaction and session ids. */
  async function startCharging(charger: RPCClient, uid: string): Promise<{ tx: number; session: string }> {
    const since = e.sim.lastSeq;
    const start = (await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: uid,
      meterStart: 0,
      timestamp: at(0),
    })) as { transactionId: number; idTagInfo: { status: string } };
    expect(start.idTagInfo.status).to.equal('Accepted');
    await meter(charger, start.transactionId, 30, 6000);
    const put = await eventually(
      async () =>
        e.sim.receivedSince(since).find((r) => r.method === 'PUT' && /\/sessions\//.test(r.path) && r.status === 200),
      { timeoutMs: 10_000, what: 'the session PUT to the eMSP' },
    );
    return { tx: start.transactionId, session: String((put.body as Json).id) };
  }

  async function meter(charger: RPCClient, transactionId: number, minute: number, wh: number): Promise<void> {
    await charger.call('MeterValues', {
      connectorId: 1,
      transactionId,
      meterValue: [{ timestamp: at(minute), sampledValue: [{ value: String(wh), unit: 'Wh' }] }],
    });
  }

  /** The rest of the session: 12 kWh by 18:30 Amsterdam, stopped then; answers the CDR the eMSP got. */
  async function finish(charger: RPCClient, tx: number, session: string, since: number): Promise<Json> {
    await meter(charger, tx, 60, 12000);
    await charger.call('StopTransaction', { transactionId: tx, meterStop: 12000, timestamp: at(60) });
    const post = await eventually(async () => cdrPost(since, session), { timeoutMs: 10_000, what: 'the CDR' });
    return post.body as Json;
  }

  it('a tariff and a location edited during the session change neither its CDR nor its running cost', async () => {
    const tariffId = world.unique('T-');
    await putTariff(aTariff(tariffId, 1, '2024-01-01T00:00:00Z'));
    const { loc, charger, uid } = await site(tariffId);
    const since = e.sim.lastSeq;
    const { tx, session } = await startCharging(charger, uid);

    // the operator: a new version of the tariff (twice the price), the location renamed, moved
    // to New York's time zone and to another street
    await putTariff(aTariff(tariffId, 2, '2024-06-01T00:00:00Z'));
    await putLocation(loc, tariffId, { name: 'New Plaza', address: 'New avenue 9', time_zone: 'America/New_York' });

    // the running cost after the edits is still that of the start (12 kWh by the last reading)
    await meter(charger, tx, 60, 12000);
    const running = await eventually(
      async () =>
        e.sim
          .receivedSince(since)
          .map((r) => r.body as Json)
          // past the 1.20 of the first 6 kWh
          .find(
            (b) =>
              b?.id === session && b.status === 'ACTIVE' && Number((b.total_cost as Json | undefined)?.excl_vat) > 1.2,
          ),
      { what: 'an ACTIVE session PUT with its running cost' },
    );
    expect((running.total_cost as Json).excl_vat).to.equal(AT_START);

    const cdr = await finish(charger, tx, session, since);
    expect(cdr.total_cost).to.deep.equal({ excl_vat: AT_START, incl_vat: AT_START });
    expect(cdr.total_energy).to.equal(12);
    // cut at 18:00 in Amsterdam, where the session started
    const periods = cdr.charging_periods as { start_date_time: string }[];
    expect(periods.map((p) => p.start_date_time)).to.deep.equal([at(0), at(30)]);
    const tariffs = cdr.tariffs as Json[];
    expect(tariffs.map((t) => t.id)).to.deep.equal([tariffId]);
    expect(tariffs[0]?.last_updated).to.equal('2024-01-01T00:00:00Z');
    expect(cdr.cdr_location).to.deep.include({
      id: loc,
      name: 'Old Square',
      address: 'Old street 1',
      evse_uid: 'E1',
      connector_id: '1',
    });
    expect(e.sim.violations).to.deep.equal([]);
  });

  it('a session without a snapshot (started before m0018) is priced with the tariff and place as stored at its end', async () => {
    const tariffId = world.unique('T-');
    await putTariff(aTariff(tariffId, 1, '2024-01-01T00:00:00Z'));
    const { loc, charger, uid } = await site(tariffId);
    const since = e.sim.lastSeq;
    const { tx, session } = await startCharging(charger, uid);
    await sql().run('DELETE FROM roaming_session_snapshot WHERE session_id = ?', [session]);
    await putTariff(aTariff(tariffId, 2, '2024-06-01T00:00:00Z'));
    await putLocation(loc, tariffId, { name: 'New Plaza', time_zone: 'America/New_York' });
    const cdr = await finish(charger, tx, session, since);
    expect((cdr.total_cost as Json).excl_vat).to.equal(EDITED_TARIFF_ZONE);
    expect(cdr.cdr_location).to.deep.include({ name: 'New Plaza' });
  });

  it('a tariff the connector named but that was not stored at the start prices the session once it is put', async () => {
    const tariffId = world.unique('T-');
    const { charger, uid } = await site(tariffId);
    const since = e.sim.lastSeq;
    const { tx, session } = await startCharging(charger, uid);
    // the snapshot keeps the place and that the connector named the tariff, without one
    const [kept] = await sql().query('SELECT tariff_ids, tariff FROM roaming_session_snapshot WHERE session_id = ?', [
      session,
    ]);
    expect(JSON.parse(String(kept?.tariff_ids))).to.deep.equal([tariffId]);
    expect(kept?.tariff ?? null).to.equal(null);
    await putTariff(aTariff(tariffId, 2, '2024-01-01T00:00:00Z'));
    const cdr = await finish(charger, tx, session, since);
    expect((cdr.total_cost as Json).excl_vat).to.equal(EDITED_TARIFF_AMSTERDAM);
  });

  it('samples go with a stored CDR; the sweep purges those no CDR can come from after the retention, and nothing else', async () => {
    const db = world.platform.platform.services.db;
    const { config } = world.platform;
    const sweep = new SampleSweep({
      db,
      own: { country_code: config.OCPI_COUNTRY_CODE, party_id: config.OCPI_PARTY_ID },
      retentionDays: 30,
      log: world.platform.platform.services.log,
    });

    // a session that ends with its CDR: its samples and snapshot go when the CDR is stored
    const tariffId = world.unique('T-');
    await putTariff(aTariff(tariffId, 1, '2024-01-01T00:00:00Z'));
    const priced = await site(tariffId);
    let since = e.sim.lastSeq;
    const done = await startCharging(priced.charger, priced.uid);
    expect(await count('roaming_meter_sample', done.session)).to.equal(2);
    expect(await count('roaming_session_snapshot', done.session)).to.equal(1);
    await finish(priced.charger, done.tx, done.session, since);
    expect(await count('roaming_meter_sample', done.session)).to.equal(0);
    expect(await count('roaming_session_snapshot', done.session)).to.equal(0);

    // a session still running keeps its samples
    const running = await site(tariffId);
    const open = await startCharging(running.charger, running.uid);

    // a session that ends without a CDR (its connector names a tariff never put): its CDR row
    // retries, then waits as a dead letter the operator may retry
    const unpriced = await site(world.unique('T-NONE-'));
    since = e.sim.lastSeq;
    const orphan = await startCharging(unpriced.charger, unpriced.uid);
    await meter(unpriced.charger, orphan.tx, 60, 12000);
    await unpriced.charger.call('StopTransaction', { transactionId: orphan.tx, meterStop: 12000, timestamp: at(60) });
    const dead = await eventually(async () => {
      const q = await world.api.request('GET', `/v1/outbox?status=dead&partner_id=${e.id}`);
      return (q.body as { value: Json[] }).value.find((r) => r.object === `cdrs/${orphan.session}`);
    });

    // a session whose CDR is stored but whose samples were left (a version before the purge)
    await db.sql.run('INSERT INTO roaming_meter_sample (session_id, at_ms, wh) VALUES (?, ?, ?)', [
      done.session,
      T0,
      0,
    ]);

    const samplesOf = async (): Promise<Record<string, number>> => ({
      open: await count('roaming_meter_sample', open.session),
      orphan: await count('roaming_meter_sample', orphan.session),
      done: await count('roaming_meter_sample', done.session),
    });
    const later = Date.now() + 31 * DAY_MS;

    // within the retention only the leftover of the stored CDR goes
    expect(await sweep.sweep(Date.now())).to.equal(1);
    expect(await samplesOf()).to.deep.equal({ open: 2, orphan: 3, done: 0 });
    // past it, a session whose CDR row can still be retried keeps its samples
    expect(await sweep.sweep(later)).to.equal(0);
    expect(await samplesOf()).to.deep.equal({ open: 2, orphan: 3, done: 0 });
    // the operator drops the dead letter: no CDR can come any more, the samples go after the retention
    expect((await world.api.request('DELETE', `/v1/outbox/${String(dead.id)}`)).status).to.equal(200);
    expect(await sweep.sweep(Date.now())).to.equal(0);
    expect(await sweep.sweep(later)).to.equal(1);
    expect(await samplesOf()).to.deep.equal({ open: 2, orphan: 0, done: 0 });
    expect(await count('roaming_session_snapshot', orphan.session)).to.equal(0);
    expect(await count('roaming_session_snapshot', open.session)).to.equal(1);

    // nothing else went: the sessions and the CDR are all there
    const objects = await db.sql.query(
      `SELECT module, object_id FROM ocpi_object WHERE module IN ('sessions', 'cdrs') AND object_id IN (?, ?, ?)`,
      [done.session, open.session, orphan.session],
    );
    expect(objects.map((o) => `${String(o.module)}/${String(o.object_id)}`).sort()).to.deep.equal(
      [
        `cdrs/${done.session}`,
        `sessions/${done.session}`,
        `sessions/${open.session}`,
        `sessions/${orphan.session}`,
      ].sort(),
    );
    await running.charger.call('StopTransaction', { transactionId: open.tx, meterStop: 6000, timestamp: at(40) });
  });
});
