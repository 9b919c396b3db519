import { expect } from 'chai';
import type { ChargingSession } from '../../src/csms/session-store.js';
import type { MeterSample } from '../../src/csms/meter-samples.js';
import { MeterSampleSweep } from '../../src/csms/meter-samples.js';
import { clusterEnvironment, embeddedEnvironment } from '../support/platforms.js';
import { API_KEY, bootedCharger, startCsms, type CsmsUnderTest } from './support/csms.js';
import { v16, v201 } from './support/messages.js';
import { eventually } from './support/scenario.js';
import { createLogger } from '../../src/logger.js';

/** Seconds after a fixed start, as the charger's clock says (in the past: the sweep's cutoff is now). */
const T0 = Date.parse('2024-03-01T10:00:00Z');
const at = (s: number): string => new Date(T0 + s * 1000).toISOString();

const register16 = (wh: number, s: number) => [
  { timestamp: at(s), sampledValue: [{ value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh' }] },
];
const register201 = (wh: number, s: number) => [
  {
    timestamp: at(s),
    sampledValue: [{ value: wh, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' } }],
  },
];

/** A 2.0.1 TransactionEvent of charger `id`'s transaction: its seqNo, register reading (Wh) and second. */
const event201 =
  (id: string) => (eventType: 'Started' | 'Updated' | 'Ended', seqNo: number, wh: number, s: number) => ({
    ...v201.transactionEvent({ eventType, transactionId: `TX-${id}`, seqNo, idToken: 'TAG-0001' }),
    timestamp: at(s),
    meterValue: register201(wh, s),
  });

interface MeterValues {
  session_id: string;
  samples: MeterSample[];
}

/**
 * A session's energy over time (docs/CSMS.md "Energy over time"): its first and last readings
 * and one per CSMS_METER_SAMPLE_S between them, whatever the charger's own interval, read back as
 * an operator's chart reads them; deleted with old sessions.
 */
for (const database of ['SQLite', 'PostgreSQL'] as const)
  describe(`energy over time of a session (${database})`, function () {
    this.timeout(30_000);
    let csms: CsmsUnderTest;
    let cleanup: (() => Promise<void>) | undefined;
    before(async () => {
      const settings = { CSMS_API_KEY: API_KEY, CSMS_METER_SAMPLE_S: '60' };
      const env = database === 'PostgreSQL' ? await clusterEnvironment(settings) : await embeddedEnvironment(settings);
      csms = await startCsms({}, env);
      cleanup = env.cleanup;
    });
    after(async () => {
      await csms.stop();
      await cleanup?.();
    });

    const booted = (protocol: 'ocpp1.6' | 'ocpp2.0.1') => bootedCharger(csms, protocol);

    const sessionOf = async (id: string): Promise<ChargingSession> => {
      const res = await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${encodeURIComponent(id)}`);
      const [session] = res.body;
      if (!session) throw new Error(`no session of ${id}`);
      return session;
    };
    const meterOf = async (sessionId: string): Promise<MeterValues> => {
      const res = await csms.api<MeterValues>('GET', `/v1/sessions/${sessionId}/meter-values`);
      expect(res.status).to.equal(200);
      return res.body;
    };

    it('OCPP 1.6: readings every 10 s keep the first, one a minute and the last; power between them', async () => {
      const { id, charger } = await booted('ocpp1.6');
      const { transactionId } = (await charger.call(
        'StartTransaction',
        v16.start({ meterStart: 1000, timestamp: at(0) }),
      )) as { transactionId: number };
      // 100 Wh every 10 s (36 kW) for three minutes, one reading sent twice
      for (let s = 10; s <= 180; s += 10) {
        await charger.call('MeterValues', { connectorId: 1, transactionId, meterValue: register16(1000 + s * 10, s) });
        if (s === 60)
          await charger.call('MeterValues', { connectorId: 1, transactionId, meterValue: register16(1600, 60) });
        if (s === 90) {
          // running: the chart ends with the latest reading, though the minute has not kept it
          const sessionId = (await sessionOf(id)).id;
          await eventually(async () =>
            expect((await meterOf(sessionId)).samples.map((p) => [p.at, p.wh])).to.deep.equal([
              [at(0), 1000],
              [at(60), 1600],
              [at(90), 1900],
            ]),
          );
        }
      }
      await charger.call('StopTransaction', v16.stop(transactionId, 2850, { timestamp: at(185) }));
      await charger.close();

      const session = await sessionOf(id);
      await eventually(async () => expect((await meterOf(session.id)).samples.at(-1)?.wh).to.equal(2850));
      const { session_id, samples } = await meterOf(session.id);
      expect(session_id).to.equal(session.id);
      expect(samples.map((p) => [p.at, p.wh, p.energy_wh, p.power_w])).to.deep.equal([
        [at(0), 1000, 0, null],
        [at(60), 1600, 600, 36_000],
        [at(120), 2200, 1200, 36_000],
        [at(180), 2800, 1800, 36_000],
        [at(185), 2850, 1850, 36_000],
      ]);
      // the session itself, as the chart's page reads it
      const one = await csms.api<ChargingSession>('GET', `/v1/sessions/${session.id}`);
      expect(one.status).to.equal(200);
      expect(one.body).to.include({ id: session.id, charge_point_id: id, energy_wh: 1850, status: 'COMPLETED' });
    });

    it('OCPP 2.0.1: the Started, Updated and Ended readings are kept the same way', async () => {
      const { id, charger } = await booted('ocpp2.0.1');
      const event = event201(id);
      await charger.call('TransactionEvent', event('Started', 0, 500, 0));
      await charger.call('TransactionEvent', event('Updated', 1, 700, 30));
      await charger.call('TransactionEvent', event('Updated', 2, 900, 90));
      await charger.call('TransactionEvent', event('Ended', 3, 950, 100));
      await charger.close();
      const session = await sessionOf(id);
      await eventually(async () => expect((await meterOf(session.id)).samples).to.have.length(3));
      expect((await meterOf(session.id)).samples.map((p) => [p.at, p.energy_wh])).to.deep.equal([
        [at(0), 0],
        [at(90), 400],
        [at(100), 450],
      ]);
    });

    it('OCPP 2.0.1: an update that repeats an applied seqNo with another reading is no reading of the chart either; energies to the thousandth', async () => {
      const { id, charger } = await booted('ocpp2.0.1');
      const event = event201(id);
      await charger.call('TransactionEvent', event('Started', 0, 100.1, 0));
      await charger.call('TransactionEvent', event('Updated', 1, 1100.4, 600));
      // seqNo 1 again, ten minutes later, 50 kWh: the session leaves it out
      await charger.call('TransactionEvent', event('Updated', 1, 50_000, 1200));
      await charger.call('TransactionEvent', event('Ended', 2, 2100.3, 1800));
      await charger.close();
      const session = await sessionOf(id);
      expect(session.energy_wh).to.equal(2000.2);
      await eventually(async () => expect((await meterOf(session.id)).samples.at(-1)?.wh).to.equal(2100.3));
      // was [at(1200), 50000, 49899.9, 293998]: a 294 kW step and 50 kWh drawn for a 2 kWh charge
      expect((await meterOf(session.id)).samples.map((p) => [p.at, p.wh, p.energy_wh])).to.deep.equal([
        [at(0), 100.1, 0],
        [at(600), 1100.4, 1000.3],
        [at(1800), 2100.3, 2000.2],
      ]);
    });

    it('answers 404 for an unknown session, and the sweep deletes the readings of sessions ended before the retention', async () => {
      for (const path of ['/v1/sessions/nope', '/v1/sessions/nope/meter-values']) {
        const res = await csms.api<{ error: { code: string } }>('GET', path);
        expect(res.status, path).to.equal(404);
        expect(res.body.error.code).to.equal('not_found');
      }
      const { id, charger } = await booted('ocpp1.6');
      const { transactionId } = (await charger.call(
        'StartTransaction',
        v16.start({ meterStart: 0, timestamp: at(0) }),
      )) as { transactionId: number };
      await charger.call('MeterValues', { connectorId: 1, transactionId, meterValue: register16(500, 120) });
      const session = await sessionOf(id);
      await eventually(async () => expect((await meterOf(session.id)).samples).to.have.length(2));

      const sweep = new MeterSampleSweep({
        db: csms.started.platform.services.db,
        retentionMs: 86_400_000,
        intervalMs: 0,
        log: createLogger('silent'),
      });
      // running: kept whatever its age
      await sweep.sweep();
      expect((await meterOf(session.id)).samples).to.have.length(2);
      await charger.call('StopTransaction', v16.stop(transactionId, 600, { timestamp: at(180) }));
      await charger.close();
      await eventually(async () => expect((await meterOf(session.id)).samples).to.have.length(3));
      // a sweep as of an hour after it ended keeps them (the retention is a day)
      expect(await sweep.sweep(T0 + 3600_000)).to.equal(0);
      expect((await meterOf(session.id)).samples).to.have.length(3);
      // ended in 2024: older than a day
      expect(await sweep.sweep()).to.be.at.least(1);
      const rows = await csms.started.platform.services.db.sql.query(
        'SELECT COUNT(*) AS n FROM csms_meter_sample WHERE session_id = ?',
        [session.id],
      );
      expect(Number(rows[0]?.n)).to.equal(0);
      // what the session row holds still draws it: its start and its last reading
      expect((await meterOf(session.id)).samples.map((p) => [p.at, p.wh])).to.deep.equal([
        [at(0), 0],
        [at(180), 600],
      ]);
    });

    it('a stop stamped with the second of the last reading replaces it: the chart ends where the session does', async () => {
      const { id, charger } = await booted('ocpp1.6');
      const { transactionId } = (await charger.call(
        'StartTransaction',
        v16.start({ meterStart: 1000, timestamp: at(0) }),
      )) as { transactionId: number };
      await charger.call('MeterValues', { connectorId: 1, transactionId, meterValue: register16(2800, 120) });
      await charger.call('StopTransaction', v16.stop(transactionId, 2850, { timestamp: at(120) }));
      await charger.close();
      const session = await sessionOf(id);
      await eventually(async () => expect((await sessionOf(id)).status).to.equal('COMPLETED'));
      const { samples } = await meterOf(session.id);
      expect(samples.map((p) => [p.at, p.wh, p.energy_wh])).to.deep.equal([
        [at(0), 1000, 0],
        [at(120), 2850, 1850],
      ]);
      expect((await sessionOf(id)).energy_wh).to.equal(1850);
    });

    it('a register that goes back adds nothing: energy and power follow the highest reading', async () => {
      const { id, charger } = await booted('ocpp1.6');
      const { transactionId } = (await charger.call(
        'StartTransaction',
        v16.start({ meterStart: 1000, timestamp: at(0) }),
      )) as { transactionId: number };
      for (const [wh, s] of [
        [5000, 60],
        [3000, 120],
        [6000, 180],
      ] as const)
        await charger.call('MeterValues', { connectorId: 1, transactionId, meterValue: register16(wh, s) });
      const session = await sessionOf(id);
      await eventually(async () => expect((await meterOf(session.id)).samples).to.have.length(4));
      expect((await meterOf(session.id)).samples.map((p) => [p.at, p.wh, p.energy_wh, p.power_w])).to.deep.equal([
        [at(0), 1000, 0, null],
        [at(60), 5000, 4000, 240_000],
        [at(120), 3000, 4000, 0],
        [at(180), 6000, 5000, 60_000],
      ]);
      expect((await sessionOf(id)).energy_wh).to.equal(5000);
      await charger.close();
    });

    it('OCPP 2.0.1: readings stamped before the Started are drawn at the start, the energy from the first', async () => {
      const begin = (s: number, wh: number, context?: string) => ({
        timestamp: at(s),
        sampledValue: [
          {
            value: wh,
            ...(context ? { context } : {}),
            measurand: 'Energy.Active.Import.Register',
            unitOfMeasure: { unit: 'Wh' },
          },
        ],
      });
      const started = (id: string) =>
        v201.transactionEvent({ eventType: 'Started', transactionId: `TX-${id}`, seqNo: 0, idToken: 'TAG-0001' });
      // the Begin reading sent in the first update, stamped 5 s before the Started
      const late = await booted('ocpp2.0.1');
      await late.charger.call('TransactionEvent', { ...started(late.id), timestamp: at(10) });
      await late.charger.call('TransactionEvent', {
        ...v201.transactionEvent({ eventType: 'Updated', transactionId: `TX-${late.id}`, seqNo: 1 }),
        timestamp: at(12),
        meterValue: [begin(5, 800, 'Transaction.Begin')],
      });
      // the Begin and a second reading in the Started, both before its timestamp
      const early = await booted('ocpp2.0.1');
      await early.charger.call('TransactionEvent', {
        ...started(early.id),
        timestamp: at(10),
        meterValue: [begin(5, 800, 'Transaction.Begin'), begin(8, 900)],
      });
      const chart = async (id: string) => {
        const session = await sessionOf(id);
        expect(session.started_at).to.equal(at(10));
        return (await meterOf(session.id)).samples.map((p) => [p.at, p.wh, p.energy_wh]);
      };
      await eventually(async () => expect(await chart(late.id)).to.deep.equal([[at(10), 800, 0]]));
      await eventually(async () =>
        expect(await chart(early.id)).to.deep.equal([
          [at(10), 800, 0],
          [at(10), 900, 100],
        ]),
      );
      expect((await sessionOf(early.id)).energy_wh).to.equal(100);
      await late.charger.close();
      await early.charger.close();
    });

    it("a message's peak counts, whatever its stamp, and the chart ends at the session's energy", async () => {
      // 1.6: a reading whose stamp does not parse (a leap second) counts as one sent alone would
      const one = await booted('ocpp1.6');
      const { transactionId } = (await one.charger.call(
        'StartTransaction',
        v16.start({ meterStart: 1000, timestamp: at(0) }),
      )) as { transactionId: number };
      await one.charger.call('MeterValues', {
        connectorId: 1,
        transactionId,
        meterValue: [
          ...register16(5000, 60),
          {
            timestamp: '2026-11-30T23:59:60Z',
            sampledValue: [{ value: '9000', measurand: 'Energy.Active.Import.Register', unit: 'Wh' }],
          },
          ...register16(6000, 180),
        ],
      });
      // was 5000: the peak with the stamp that does not parse was left out
      expect((await sessionOf(one.id)).energy_wh).to.equal(8000);
      // 2.0.1: an Ended alone whose Begin, peak and End are of one instant
      const two = await booted('ocpp2.0.1');
      const read = (wh: number, context: string) => ({
        timestamp: at(30),
        sampledValue: [
          { value: wh, context, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' } },
        ],
      });
      await two.charger.call('TransactionEvent', {
        ...v201.transactionEvent({ eventType: 'Ended', transactionId: `TX-${two.id}`, seqNo: 0, idToken: 'TAG-0001' }),
        timestamp: at(30),
        meterValue: [read(1000, 'Transaction.Begin'), read(9000, 'Sample.Periodic'), read(5000, 'Transaction.End')],
      });
      const session = await sessionOf(two.id);
      expect(session.energy_wh).to.equal(8000);
      // was 4000 at the chart's end: the peak shared its instant with the end's reading
      const { samples } = await meterOf(session.id);
      expect(samples.at(-1)?.energy_wh).to.equal(8000);
      await one.charger.close();
      await two.charger.close();
    });

    it('answers a long session in at most about 2,000 points, its first and last readings exact', async () => {
      const { id, charger } = await booted('ocpp1.6');
      const { transactionId } = (await charger.call(
        'StartTransaction',
        v16.start({ meterStart: 0, timestamp: at(0) }),
      )) as { transactionId: number };
      const session = await sessionOf(id);
      // a day at one reading a second's worth of rows: 9,000 readings, 10 s apart
      const values: unknown[] = [];
      for (let k = 1; k <= 9000; k++) values.push(session.id, T0 + k * 10_000, k * 10);
      const marks = Array.from({ length: 9000 }, () => '(?, ?, ?)').join(', ');
      await csms.started.platform.services.db.sql.run(
        `INSERT INTO csms_meter_sample (session_id, at_ms, wh) VALUES ${marks}`,
        values,
      );
      await charger.call('StopTransaction', v16.stop(transactionId, 90_010, { timestamp: at(90_005) }));
      await charger.close();
      await eventually(async () => expect((await sessionOf(id)).status).to.equal('COMPLETED'));
      const { samples } = await meterOf(session.id);
      expect(samples.length).to.be.within(1000, 2002);
      expect(samples[0]).to.deep.include({ at: at(0), wh: 0, energy_wh: 0 });
      expect(samples.at(-1)).to.deep.include({ at: at(90_005), wh: 90_010, energy_wh: 90_010 });
      const times = samples.map((p) => Date.parse(p.at));
      for (let i = 1; i < times.length; i++) expect(times[i]).to.be.above(times[i - 1] ?? 0);
      // 1 Wh a second: 3.6 kW between any two points
      for (const p of samples.slice(1, -1)) expect(p.power_w).to.equal(3600);
    });
  });
