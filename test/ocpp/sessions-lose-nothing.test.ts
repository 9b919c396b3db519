import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import pg from 'pg';
import type { ChargingSession } from '../../src/csms/session-store.js';
import type { ChargePointView } from '../../src/csms/views.js';
import { PG_URL } from '../support/databases.js';
import { clusterEnvironment } from '../support/platforms.js';
import { strictCharger } from '../support/rpc-client.js';
import { API_KEY, bootedCharger, startCsms, type CsmsUnderTest } from './support/csms.js';
import { v16, v201 } from './support/messages.js';
import { eventually } from './support/scenario.js';

/**
 * Minutes after a fixed start, as the charger's clock says: in the past, since a reading stamped
 * ahead of the CSMS's clock counts as taken when it arrived (docs/CSMS.md "Energy and
 * out-of-order readings").
 */
const T0 = Date.parse('2024-06-01T10:00:00Z');
const at = (minutes: number): string => new Date(T0 + minutes * 60_000).toISOString();

const register16 = (wh: number, minutes: number) => ({
  timestamp: at(minutes),
  sampledValue: [{ value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh' }],
});
const power16 = (w: number, minutes: number) => ({
  timestamp: at(minutes),
  sampledValue: [{ value: String(w), measurand: 'Power.Active.Import', unit: 'W' }],
});
const register201 = (wh: number, minutes: number) => ({
  timestamp: at(minutes),
  sampledValue: [{ value: wh, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' } }],
});

/** The CALLERROR code a call was answered with (ocpp-rpc throws it as an RPCError). */
/**
 * A CSMS for the suite on `database` (PostgreSQL: a cluster environment of its own), started
 * before its tests and stopped after; the getter reads the one started.
 */
function csmsOn(database: 'SQLite' | 'PostgreSQL', lastSeenFlushMs: number): () => CsmsUnderTest {
  let csms: CsmsUnderTest | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  before(async () => {
    const env = database === 'PostgreSQL' ? await clusterEnvironment({ CSMS_API_KEY: API_KEY }) : undefined;
    csms = await startCsms({ lastSeenFlushMs }, env);
    cleanup = env?.cleanup;
  });
  after(async () => {
    await csms?.stop();
    await cleanup?.();
  });
  return () => {
    if (!csms) throw new Error('the CSMS was not started');
    return csms;
  };
}

async function callError(charger: RPCClient, action: string, payload: unknown): Promise<string> {
  try {
    await charger.call(action, payload);
  } catch (err) {
    return String((err as { rpcErrorCode?: unknown }).rpcErrorCode);
  }
  throw new Error(`${action} was answered with a CALLRESULT`);
}

/**
 * Sessions keep what chargers report (docs/CSMS.md): the energy of the register reading with the
 * latest timestamp, whatever order readings arrive in ("Energy and out-of-order readings"); the
 * end of a transaction whose message fails its schema ("Transaction ends that fail their schema").
 */
for (const database of ['SQLite', 'PostgreSQL'] as const)
  describe(`sessions that lose nothing (${database})`, function () {
    this.timeout(30_000);
    const csms = csmsOn(database, 200);

    const sessionsOf = async (id: string): Promise<ChargingSession[]> =>
      (await csms().api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${encodeURIComponent(id)}`)).body;

    const booted = (protocol: 'ocpp1.6' | 'ocpp2.0.1', strict = true) => bootedCharger(csms(), protocol, strict);

    it('OCPP 1.6: MeterValues queued offline and sent late do not lower the energy or the last reading', async () => {
      const { id, charger } = await booted('ocpp1.6');
      const { transactionId } = (await charger.call(
        'StartTransaction',
        v16.start({ meterStart: 1000, timestamp: at(0) }),
      )) as { transactionId: number };
      const meterValues = (meterValue: unknown[]) =>
        charger.call('MeterValues', { connectorId: 1, transactionId, meterValue });
      await meterValues([register16(3000, 2)]);
      // sent late: taken before the reading the CSMS already has
      await meterValues([register16(2000, 1)]);
      // several readings in one message, the latest not last, and a last entry without a register
      await meterValues([register16(4000, 4), register16(3500, 3), power16(7000, 5)]);
      const [running] = await sessionsOf(id);
      expect(running).to.include({ status: 'ACTIVE', meter_start_wh: 1000, meter_last_wh: 4000, energy_wh: 3000 });
      await meterValues([register16(3800, 3.5)]);
      expect((await sessionsOf(id))[0]).to.include({ meter_last_wh: 4000, energy_wh: 3000 });
      await charger.call('StopTransaction', v16.stop(transactionId, 4500, { timestamp: at(6) }));
      // a reading queued before the stop and sent after it changes nothing
      await meterValues([register16(4200, 5)]);
      const [ended] = await sessionsOf(id);
      expect(ended).to.include({ status: 'COMPLETED', meter_last_wh: 4500, energy_wh: 3500 });
      await charger.close();
    });

    it('OCPP 1.6: a stop reading below one the transaction reported keeps the energy; a SignedData value is no reading', async () => {
      const { id, charger } = await booted('ocpp1.6');
      const { transactionId } = (await charger.call(
        'StartTransaction',
        v16.start({ meterStart: 50_000, timestamp: at(0) }),
      )) as { transactionId: number };
      await charger.call('MeterValues', {
        connectorId: 1,
        transactionId,
        meterValue: [
          {
            timestamp: at(10),
            sampledValue: [
              { value: '60000', measurand: 'Energy.Active.Import.Register', unit: 'Wh', format: 'Raw' },
              // a signed block in hex whose characters happen to be digits: was read as 30,450,221 Wh
              { value: '30450221', measurand: 'Energy.Active.Import.Register', unit: 'Wh', format: 'SignedData' },
            ],
          },
        ],
      });
      expect((await sessionsOf(id))[0]).to.include({ meter_last_wh: 60_000, energy_wh: 10_000 });
      // a failed read at the end: the 10 kWh reported became 0
      await charger.call('StopTransaction', v16.stop(transactionId, 0, { timestamp: at(20) }));
      const [ended] = await sessionsOf(id);
      expect(ended).to.include({ status: 'COMPLETED', meter_last_wh: 60_000, energy_wh: 10_000 });
      // and the energy chart ends where the session's energy does, not at the reading it ignored
      const chart = await csms().api<{ samples: Array<{ wh: number; energy_wh: number }> }>(
        'GET',
        `/v1/sessions/${String(ended?.id)}/meter-values`,
      );
      expect(chart.body.samples.at(-1)).to.include({ wh: 60_000, energy_wh: 10_000 });
      await charger.close();
    });

    it("OCPP 1.6: a failed stop read (meterStop 0) ends at the stop's own transactionData End reading", async () => {
      const { id, charger } = await booted('ocpp1.6');
      const { transactionId } = (await charger.call(
        'StartTransaction',
        v16.start({ meterStart: 1000, timestamp: at(0) }),
      )) as { transactionId: number };
      await charger.call(
        'StopTransaction',
        v16.stop(transactionId, 0, {
          timestamp: at(60),
          transactionData: [
            {
              timestamp: at(60),
              sampledValue: [
                { value: '5000', context: 'Transaction.End', measurand: 'Energy.Active.Import.Register', unit: 'Wh' },
              ],
            },
          ],
        }),
      );
      const [ended] = await sessionsOf(id);
      // was 0 Wh: the reading the stop carried was not read, and meterStop 0 is no end of the register
      expect(ended).to.include({ status: 'COMPLETED', meter_last_wh: 5000, energy_wh: 4000 });
      await charger.close();
    });

    it("OCPP 1.6: a blank or non-decimal value is no reading, nor is the main meter's (connector 0) register", async () => {
      const { id, charger } = await booted('ocpp1.6');
      const { transactionId } = (await charger.call(
        'StartTransaction',
        v16.start({ meterStart: 1000, timestamp: at(0) }),
      )) as { transactionId: number };
      const reading = (connectorId: number, value: string, minutes: number) =>
        charger.call('MeterValues', {
          connectorId,
          transactionId,
          meterValue: [
            {
              timestamp: at(minutes),
              sampledValue: [{ value, measurand: 'Energy.Active.Import.Register', unit: 'Wh' }],
            },
          ],
        });
      // spaces around a number are let pass
      await reading(1, ' 5000 ', 10);
      // was read as 0 Wh (a register reset), then as 2,000 Wh
      await reading(1, '', 11);
      await reading(1, '   ', 12);
      await reading(1, '0x7D0', 13);
      expect((await sessionsOf(id))[0]).to.include({ meter_last_wh: 5000, energy_wh: 4000 });
      // the charger's main meter, tagged with the transaction: was taken as the connector's register
      await reading(0, '250000', 14);
      expect((await sessionsOf(id))[0]).to.include({ meter_last_wh: 5000, energy_wh: 4000 });
      await charger.call('StopTransaction', v16.stop(transactionId, 6000, { timestamp: at(15) }));
      expect((await sessionsOf(id))[0]).to.include({ status: 'COMPLETED', meter_last_wh: 6000, energy_wh: 5000 });
      await charger.close();
    });

    it('OCPP 2.0.1: updates with older readings do not lower the energy; an Ended without meter keeps the latest', async () => {
      const { id, charger } = await booted('ocpp2.0.1');
      const event = (
        eventType: 'Started' | 'Updated' | 'Ended',
        seqNo: number,
        minutes: number,
        meter?: unknown[],
      ) => ({
        ...v201.transactionEvent({ eventType, transactionId: 'tx-order', seqNo }),
        timestamp: at(minutes),
        ...(meter ? { meterValue: meter } : {}),
      });
      await charger.call('TransactionEvent', event('Started', 0, 0, [register201(1000, 0)]));
      await charger.call('TransactionEvent', event('Updated', 1, 2, [register201(3000, 2)]));
      // a higher seqNo whose reading was taken earlier (queued while offline)
      await charger.call('TransactionEvent', event('Updated', 2, 3, [register201(2000, 1)]));
      // an older seqNo arriving late is a repeat as far as the CSMS can tell: nothing changes
      await charger.call('TransactionEvent', event('Updated', 1, 1, [register201(1500, 1)]));
      expect((await sessionsOf(id))[0]).to.include({ meter_last_wh: 3000, energy_wh: 2000 });
      // the latest of several readings in one update, whatever their order
      await charger.call('TransactionEvent', event('Updated', 3, 5, [register201(5000, 5), register201(4000, 4)]));
      expect((await sessionsOf(id))[0]).to.include({ meter_last_wh: 5000, energy_wh: 4000 });
      await charger.call('TransactionEvent', {
        ...event('Ended', 4, 6),
        transactionInfo: { transactionId: 'tx-order', stoppedReason: 'EVDisconnected' },
      });
      const [ended] = await eventually(async () => {
        const list = await sessionsOf(id);
        return list[0]?.status === 'COMPLETED' ? list : undefined;
      });
      expect(ended).to.include({
        meter_start_wh: 1000,
        meter_last_wh: 5000,
        energy_wh: 4000,
        stop_reason: 'EVDisconnected',
      });
      await charger.close();
    });

    it('OCPP 2.0.1: an Ended whose stop reading is older than the latest keeps the latest', async () => {
      const { id, charger } = await booted('ocpp2.0.1');
      const event = (eventType: 'Started' | 'Updated' | 'Ended', seqNo: number, minutes: number, meter: unknown[]) => ({
        ...v201.transactionEvent({ eventType, transactionId: 'tx-stale-stop', seqNo }),
        timestamp: at(minutes),
        meterValue: meter,
      });
      await charger.call('TransactionEvent', event('Started', 0, 0, [register201(0, 0)]));
      await charger.call('TransactionEvent', event('Updated', 1, 10, [register201(9000, 10)]));
      await charger.call('TransactionEvent', event('Ended', 2, 11, [register201(8000, 9)]));
      const [ended] = await sessionsOf(id);
      expect(ended).to.include({ status: 'COMPLETED', meter_last_wh: 9000, energy_wh: 9000 });
      await charger.close();
    });

    it('OCPP 1.6: a StopTransaction that fails its schema gets its CALLERROR and still ends the session', async () => {
      const { id, charger } = await booted('ocpp1.6', false);
      const start = async (connectorId: number, meterStart: number): Promise<number> =>
        (
          (await charger.call('StartTransaction', v16.start({ connectorId, meterStart, timestamp: at(0) }))) as {
            transactionId: number;
          }
        ).transactionId;
      const session = async (transactionId: number) =>
        (await sessionsOf(id)).find((x) => x.transaction_id === String(transactionId));

      // an invalid meterStop: closed with the last known reading
      const first = await start(1, 1000);
      await charger.call('MeterValues', { connectorId: 1, transactionId: first, meterValue: [register16(3000, 1)] });
      expect(
        await callError(charger, 'StopTransaction', v16.stop(first, 0, { meterStop: 'abc', timestamp: at(2) })),
      ).to.equal('TypeConstraintViolation');
      expect(await session(first)).to.include({
        status: 'COMPLETED',
        meter_last_wh: 3000,
        energy_wh: 2000,
        stop_reason: 'Remote',
        stopped_at: at(2),
      });
      // the charger retries the same message: nothing changes
      expect(
        await callError(charger, 'StopTransaction', v16.stop(first, 0, { meterStop: 'abc', timestamp: at(2) })),
      ).to.equal('TypeConstraintViolation');
      expect(await sessionsOf(id)).to.have.length(1);

      // a meterStop with a fraction (the schema says integer): its CALLERROR, and the energy it read
      const decimal = await start(5, 500);
      expect(await callError(charger, 'StopTransaction', v16.stop(decimal, 7845.6, { timestamp: at(2) }))).to.equal(
        'TypeConstraintViolation',
      );
      expect(await session(decimal)).to.include({ status: 'COMPLETED', meter_last_wh: 7845.6, energy_wh: 7345.6 });

      // an invalid meterStop beside the stop's own readings (transactionData): they count, as a valid stop's
      const withData = await start(6, 500);
      await charger.call('MeterValues', { connectorId: 6, transactionId: withData, meterValue: [register16(3000, 1)] });
      const end = {
        ...register16(5000, 2),
        sampledValue: [{ ...register16(5000, 2).sampledValue[0], context: 'Transaction.End' }],
      };
      expect(
        await callError(
          charger,
          'StopTransaction',
          v16.stop(withData, 0, { meterStop: '0', timestamp: at(2), transactionData: [end] }),
        ),
      ).to.equal('TypeConstraintViolation');
      expect(await session(withData)).to.include({ status: 'COMPLETED', meter_last_wh: 5000, energy_wh: 4500 });

      // a reason outside the enumeration: Other, with the valid meterStop
      const second = await start(2, 500);
      expect(await callError(charger, 'StopTransaction', v16.stop(second, 2500, { reason: 'Bogus' }))).to.equal(
        'PropertyConstraintViolation',
      );
      expect(await session(second)).to.include({ status: 'COMPLETED', meter_last_wh: 2500, stop_reason: 'Other' });

      // an invalid timestamp: ended at the arrival time
      const third = await start(3, 0);
      const before = Date.now();
      expect(
        await callError(charger, 'StopTransaction', v16.stop(third, 100, { timestamp: 'yesterday', extra: 1 })),
      ).to.be.oneOf(['FormationViolation', 'PropertyConstraintViolation']);
      const ended = await session(third);
      expect(ended).to.include({ status: 'COMPLETED', meter_last_wh: 100 });
      expect(Date.parse(ended?.stopped_at ?? '')).to.be.at.least(before - 1000);

      // no valid transactionId: nothing can be closed
      const fourth = await start(4, 0);
      expect(
        await callError(charger, 'StopTransaction', { ...v16.stop(fourth, 100), transactionId: String(fourth) }),
      ).to.equal('TypeConstraintViolation');
      expect(await session(fourth)).to.include({ status: 'ACTIVE' });
      // nor does an invalid stop of a transaction that is not open make a session
      expect(await callError(charger, 'StopTransaction', v16.stop(987_654, 'x' as unknown as number))).to.equal(
        'TypeConstraintViolation',
      );
      expect(await session(987_654)).to.equal(undefined);
      // the charger is still served
      await charger.call('StopTransaction', v16.stop(fourth, 100));
      expect(await session(fourth)).to.include({ status: 'COMPLETED' });
      await charger.close();
    });

    it('OCPP 2.0.1: a TransactionEvent Ended that fails its schema gets its CALLERROR and still ends the session', async () => {
      const { id, charger } = await booted('ocpp2.0.1', false);
      const event = (eventType: 'Started' | 'Updated' | 'Ended', transactionId: string, seqNo: number) => ({
        ...v201.transactionEvent({ eventType, transactionId, seqNo }),
        timestamp: at(eventType === 'Started' ? 0 : 5),
      });
      const session = async (transactionId: string) =>
        (await sessionsOf(id)).find((x) => x.transaction_id === transactionId);
      await charger.call('TransactionEvent', { ...event('Started', 'tx-bad-end', 0), meterValue: [register201(0, 0)] });
      await charger.call('TransactionEvent', {
        ...event('Updated', 'tx-bad-end', 1),
        meterValue: [register201(4000, 4)],
      });
      // a reason outside the enumeration, an unknown property, and a valid stop reading
      const code = await callError(charger, 'TransactionEvent', {
        ...event('Ended', 'tx-bad-end', 2),
        transactionInfo: { transactionId: 'tx-bad-end', stoppedReason: 'Bogus' },
        meterValue: [register201(4500, 5)],
        vendorField: true,
      });
      expect(code).to.equal('PropertyConstraintViolation');
      expect(await session('tx-bad-end')).to.include({
        status: 'COMPLETED',
        meter_last_wh: 4500,
        energy_wh: 4500,
        stop_reason: 'Other',
        stopped_at: at(5),
      });

      // a broken meter value: the last known reading stays
      await charger.call('TransactionEvent', {
        ...event('Started', 'tx-bad-meter', 0),
        meterValue: [register201(0, 0)],
      });
      await charger.call('TransactionEvent', {
        ...event('Updated', 'tx-bad-meter', 1),
        meterValue: [register201(700, 1)],
      });
      expect(
        await callError(charger, 'TransactionEvent', {
          ...event('Ended', 'tx-bad-meter', 2),
          meterValue: [{ timestamp: at(5), sampledValue: [{ value: 'lots' }] }],
        }),
      ).to.equal('TypeConstraintViolation');
      expect(await session('tx-bad-meter')).to.include({
        status: 'COMPLETED',
        meter_last_wh: 700,
        stop_reason: 'Local',
      });

      // an invalid Ended of a transaction that was never open makes no session
      expect(
        await callError(charger, 'TransactionEvent', { ...event('Ended', 'tx-never', 1), triggerReason: 'Bogus' }),
      ).to.equal('PropertyConstraintViolation');
      expect(await session('tx-never')).to.equal(undefined);
      await charger.close();
    });

    it('last_seen: the time of the last frame from the charger, stored coalesced and at disconnect', async () => {
      const cp = await csms().registerChargePoint('ocpp1.6');
      const view = async () => (await csms().api<ChargePointView>('GET', `/v1/charge-points/${cp.id}`)).body;
      const listed = async () =>
        (await csms().api<ChargePointView[]>('GET', '/v1/charge-points')).body.find((c) => c.id === cp.id);
      expect((await view()).last_seen).to.equal(null);
      const charger = strictCharger(csms().url, cp, 'ocpp1.6');
      await charger.connect();
      await charger.call('BootNotification', v16.boot());
      const booted = Date.parse((await view()).last_seen ?? '');
      expect(booted).to.be.within(Date.now() - 5_000, Date.now());
      await new Promise((r) => setTimeout(r, 30));
      // any message counts, not only heartbeats
      await charger.call('StatusNotification', v16.status(1, 'Available'));
      const afterStatus = Date.parse((await view()).last_seen ?? '');
      expect(afterStatus).to.be.greaterThan(booted);
      expect((await listed())?.last_seen).to.equal(new Date(afterStatus).toISOString());
      // stored within the flush interval, without a write per message
      const stored = async () =>
        Number(
          (
            await csms().started.platform.services.db.execute(
              'SELECT last_seen_at FROM csms_charge_point WHERE id = ?',
              [cp.id],
            )
          )[0]?.last_seen_at ?? 0,
        );
      await eventually(async () => ((await stored()) === afterStatus ? true : undefined));
      await new Promise((r) => setTimeout(r, 30));
      await charger.call('Heartbeat', {});
      const last = Date.parse((await view()).last_seen ?? '');
      expect(last).to.be.greaterThan(afterStatus);
      await charger.close();
      // offline: the stored time, written at the disconnect at the latest
      const offline = await eventually(async () => {
        const v = await view();
        return v.online ? undefined : v;
      });
      expect(offline.last_seen).to.equal(new Date(last).toISOString());
      expect(await stored()).to.equal(last);
    });
  });

/**
 * Chargers that all drop at once (a site's network, a load balancer's restart): each one's last
 * frame is still stored at its disconnect, with the periodic flush too far off to do it.
 */
for (const database of ['SQLite', 'PostgreSQL'] as const)
  describe(`last_seen when many chargers disconnect together (${database})`, function () {
    this.timeout(30_000);
    const csms = csmsOn(database, 3_600_000);

    it('stores the time of every charger’s last frame', async () => {
      const chargers = await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          const cp = await csms().registerChargePoint(i % 2 ? 'ocpp2.0.1' : 'ocpp1.6');
          const charger = strictCharger(csms().url, cp, i % 2 ? 'ocpp2.0.1' : 'ocpp1.6');
          await charger.connect();
          await charger.call('BootNotification', i % 2 ? v201.boot() : v16.boot());
          return { cp, charger };
        }),
      );
      await new Promise((r) => setTimeout(r, 30));
      const beforeLast = Date.now();
      await Promise.all(chargers.map(({ charger }) => charger.call('Heartbeat', {})));
      const afterLast = Date.now();
      await Promise.all(chargers.map(({ charger }) => charger.close()));
      for (const { cp } of chargers) {
        const offline = await eventually(async () => {
          const v = (await csms().api<ChargePointView>('GET', `/v1/charge-points/${cp.id}`)).body;
          return v.online ? undefined : v;
        });
        expect(Date.parse(offline.last_seen ?? ''), cp.id).to.be.within(beforeLast, afterLast);
      }
    });

    if (database === 'PostgreSQL')
      it('shows the last frame’s time while it is being written after the charger left', async () => {
        const cp = await csms().registerChargePoint('ocpp1.6');
        const charger = strictCharger(csms().url, cp, 'ocpp1.6');
        await charger.connect();
        await charger.call('BootNotification', v16.boot());
        const beforeLast = Date.now();
        await charger.call('Heartbeat', {});
        const afterLast = Date.now();
        // the charger's row held by another transaction: the write of its last-seen time waits
        const locker = new pg.Client({ connectionString: PG_URL });
        await locker.connect();
        try {
          const schema = csms().env.env.DATABASE_SCHEMA ?? 'public';
          await locker.query('BEGIN');
          await locker.query(`SELECT 1 FROM "${schema}".csms_charge_point WHERE id = $1 FOR UPDATE`, [cp.id]);
          await charger.close();
          await new Promise((r) => setTimeout(r, 300));
          const leaving = (await csms().api<ChargePointView>('GET', `/v1/charge-points/${cp.id}`)).body;
          // was null: the connection was forgotten before its time was in the row
          expect(Date.parse(leaving.last_seen ?? ''), 'while written').to.be.within(beforeLast, afterLast);
        } finally {
          await locker.query('ROLLBACK').catch(() => undefined);
          await locker.end();
        }
        const offline = await eventually(async () => {
          const v = (await csms().api<ChargePointView>('GET', `/v1/charge-points/${cp.id}`)).body;
          return v.online ? undefined : v;
        });
        expect(Date.parse(offline.last_seen ?? ''), 'written').to.be.within(beforeLast, afterLast);
      });
  });
