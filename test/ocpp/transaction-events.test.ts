import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import type { ChargingSession } from '../../src/csms/session-store.js';
import { clusterEnvironment, type TestEnvironment } from '../support/platforms.js';
import { strictCharger } from '../support/rpc-client.js';
import { API_KEY, startCsms, type CsmsUnderTest, type RegisteredChargePoint } from './support/csms.js';
import { v201 } from './support/messages.js';
import { actorState } from './support/scenario.js';

/**
 * OCPP 2.0.1 TransactionEvents whose transaction ids, clocks and EVSEs are not what a CSMS would
 * wish for (docs/CSMS.md "Messages handled" and the sections after it), on SQLite and PostgreSQL.
 */
for (const database of ['SQLite', 'PostgreSQL'] as const)
  describe(`OCPP 2.0.1 transaction events (${database})`, function () {
    this.timeout(60_000);
    let csms: CsmsUnderTest;
    let env: TestEnvironment | undefined;
    before(async () => {
      env = database === 'PostgreSQL' ? await clusterEnvironment({ CSMS_API_KEY: API_KEY }) : undefined;
      csms = await startCsms({}, env);
    });
    after(async () => {
      await csms.stop();
      await env?.cleanup();
    });

    /** a session's energy chart (GET /v1/sessions/{id}/meter-values) */
    const chartOf = async (sessionId: string | undefined) =>
      (
        await csms.api<{ samples: Array<{ at: string; wh: number }> }>(
          'GET',
          `/v1/sessions/${sessionId ?? ''}/meter-values`,
        )
      ).body.samples;
    const sessionsOf = async (id: string): Promise<ChargingSession[]> =>
      (await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${encodeURIComponent(id)}&limit=1000`))
        .body;

    async function booted(cp: RegisteredChargePoint): Promise<RPCClient> {
      const charger = strictCharger(csms.url, cp, 'ocpp2.0.1');
      await charger.connect();
      await charger.call('BootNotification', v201.boot());
      return charger;
    }

    /** One whole transaction: Started at `from` Wh, Ended at `to` Wh. */
    async function transaction(charger: RPCClient, transactionId: string, from: number, to: number): Promise<void> {
      await charger.call(
        'TransactionEvent',
        v201.transactionEvent({ eventType: 'Started', transactionId, seqNo: 0, wh: from }),
      );
      await charger.call(
        'TransactionEvent',
        v201.transactionEvent({ eventType: 'Ended', transactionId, seqNo: 1, wh: to, stoppedReason: 'EVDisconnected' }),
      );
    }

    const energyOf = (list: ChargingSession[]) =>
      list
        .map((s) => [s.transaction_id, s.status, s.meter_start_wh, s.meter_last_wh, s.energy_wh])
        .sort((a, b) => Number(a[2]) - Number(b[2]));

    it('a charger removed and registered again may use a transaction id of its first life: a new session', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      let charger = await booted(cp);
      await transaction(charger, 'T1', 1000, 2000);
      await charger.close();
      expect((await csms.api('DELETE', `/v1/charge-points/${cp.id}?force=true`)).status).to.equal(204);
      const again = await csms.registerChargePoint('ocpp2.0.1', cp.id);
      charger = await booted({ ...cp, password: again.password });
      // was a CALLERROR InternalError (the session table's unique key), on every retry
      await transaction(charger, 'T1', 5000, 9000);
      expect(energyOf(await sessionsOf(cp.id))).to.deep.equal([
        ['T1', 'COMPLETED', 1000, 2000, 1000],
        ['T1', 'COMPLETED', 5000, 9000, 4000],
      ]);
      await charger.close();
    });

    it('a transaction id reused after its transaction ended is a new session; the finished one stays as it was', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const charger = await booted(cp);
      await transaction(charger, 'tx-1', 0, 1000);
      const [finished] = await sessionsOf(cp.id);
      // the charger's counter restarted: the same id again, seqNo from 0
      const started = v201.transactionEvent({ eventType: 'Started', transactionId: 'tx-1', seqNo: 0, wh: 5000 });
      expect(await charger.call('TransactionEvent', started)).to.deep.equal({});
      // a true retry of that start and a repeated update change nothing
      expect(await charger.call('TransactionEvent', started)).to.deep.equal({});
      const updated = v201.transactionEvent({ eventType: 'Updated', transactionId: 'tx-1', seqNo: 1, wh: 6000 });
      await charger.call('TransactionEvent', updated);
      await charger.call('TransactionEvent', { ...updated, meterValue: v201.meterValues(1, 99_000).meterValue });
      let sessions = await sessionsOf(cp.id);
      expect(energyOf(sessions)).to.deep.equal([
        ['tx-1', 'COMPLETED', 0, 1000, 1000],
        ['tx-1', 'ACTIVE', 5000, 6000, 1000],
      ]);
      await charger.call(
        'TransactionEvent',
        v201.transactionEvent({
          eventType: 'Ended',
          transactionId: 'tx-1',
          seqNo: 2,
          wh: 9000,
          stoppedReason: 'Local',
        }),
      );
      sessions = await sessionsOf(cp.id);
      expect(energyOf(sessions)).to.deep.equal([
        ['tx-1', 'COMPLETED', 0, 1000, 1000],
        ['tx-1', 'COMPLETED', 5000, 9000, 4000],
      ]);
      expect(sessions.find((s) => s.id === finished?.id)).to.deep.equal(finished);
      // a retry of the end finds the transaction finished
      await charger.call(
        'TransactionEvent',
        v201.transactionEvent({
          eventType: 'Ended',
          transactionId: 'tx-1',
          seqNo: 2,
          wh: 9500,
          stoppedReason: 'Local',
        }),
      );
      expect(energyOf(await sessionsOf(cp.id))).to.deep.equal(energyOf(sessions));
      await charger.close();
    });

    it("a finished transaction's events delivered again (a charger replaying its store) open no second session", async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const charger = await booted(cp);
      const ev = (eventType: 'Started' | 'Updated' | 'Ended', seqNo: number, wh: number, minutes: number) => {
        const timestamp = new Date(Date.now() - (60 - minutes) * 60_000).toISOString();
        return {
          ...v201.transactionEvent({ eventType, transactionId: 'tx-replay', seqNo }),
          timestamp,
          offline: true,
          meterValue: [{ timestamp, sampledValue: [{ value: wh, measurand: 'Energy.Active.Import.Register' }] }],
        };
      };
      const stored = [ev('Started', 0, 1000, 0), ev('Updated', 1, 3000, 10), ev('Ended', 2, 6000, 20)];
      for (const e of stored) await charger.call('TransactionEvent', e);
      const once = energyOf(await sessionsOf(cp.id));
      expect(once).to.deep.equal([['tx-replay', 'COMPLETED', 1000, 6000, 5000]]);
      // the whole store again: was a second COMPLETED session of 5,000 Wh
      for (const e of stored) await charger.call('TransactionEvent', e);
      expect(energyOf(await sessionsOf(cp.id))).to.deep.equal(once);
      // its Started alone again: was a session left ACTIVE
      await charger.call('TransactionEvent', stored[0]);
      expect(energyOf(await sessionsOf(cp.id))).to.deep.equal(once);
      const view = await csms.api<{ active_transactions: string[] }>('GET', `/v1/charge-points/${cp.id}`);
      expect(view.body.active_transactions).to.deep.equal([]);
      await charger.close();
    });

    it('a store of more than 20 finished transactions replayed opens none of them again', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const charger = await booted(cp);
      const ev = (id: string, eventType: 'Started' | 'Updated' | 'Ended', seqNo: number, wh: number, at: number) => {
        const timestamp = new Date(at).toISOString();
        return {
          ...v201.transactionEvent({ eventType, transactionId: id, seqNo }),
          timestamp,
          offline: true,
          meterValue: [{ timestamp, sampledValue: [{ value: wh, measurand: 'Energy.Active.Import.Register' }] }],
        };
      };
      // 22 transactions a minute apart, two hours ago, 1,000 Wh each
      const base = Date.now() - 2 * 3_600_000;
      const stored = Array.from({ length: 22 }, (_, i) => {
        const at = base + i * 60_000;
        return [
          ev(`L${i}`, 'Started', 0, i * 1000, at),
          ev(`L${i}`, 'Updated', 1, i * 1000 + 500, at + 20_000),
          ev(`L${i}`, 'Ended', 2, i * 1000 + 1000, at + 40_000),
        ];
      }).flat();
      for (const e of stored) await charger.call('TransactionEvent', e);
      const once = energyOf(await sessionsOf(cp.id));
      expect(once).to.have.length(22);
      // the whole store again, as a charger sends it after a reboot: was 44 sessions of 44,000 Wh
      // (each replayed transaction pushed the next out of the 20 the state remembers)
      for (const e of stored) await charger.call('TransactionEvent', e);
      expect(energyOf(await sessionsOf(cp.id))).to.deep.equal(once);
      // the first one's end alone, once more: was a second session of no energy
      await charger.call('TransactionEvent', stored[2]);
      expect(energyOf(await sessionsOf(cp.id))).to.deep.equal(once);
      await charger.close();
    });

    it('the lost end of a transaction a new start ended, arriving after 20 more, changes nothing', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const charger = await booted(cp);
      const te = (eventType: 'Started' | 'Updated' | 'Ended', id: string, seqNo: number, wh: number, evse = 1) =>
        v201.transactionEvent({ eventType, transactionId: id, seqNo, wh, evse });
      await charger.call('TransactionEvent', te('Started', 'A', 0, 0));
      await charger.call('TransactionEvent', te('Updated', 'A', 1, 500));
      // A's Ended was lost; B starts on its EVSE and ends it at its last reading
      await charger.call('TransactionEvent', te('Started', 'B', 0, 1000));
      await charger.call('TransactionEvent', te('Ended', 'B', 1, 1500));
      for (let i = 0; i < 21; i++) await transaction(charger, `M${i}`, 2000 + i * 100, 2000 + i * 100 + 10);
      const before = energyOf(await sessionsOf(cp.id));
      // A's own messages, delivered at last: an Updated had opened an ACTIVE session of A, an Ended a second one
      await charger.call('TransactionEvent', te('Updated', 'A', 2, 800));
      await charger.call('TransactionEvent', te('Ended', 'A', 3, 900));
      expect(energyOf(await sessionsOf(cp.id))).to.deep.equal(before);
      const view = await csms.api<{ active_transactions: string[] }>('GET', `/v1/charge-points/${cp.id}`);
      expect(view.body.active_transactions).to.deep.equal([]);
      await charger.close();
    });

    it('a reading stamped in the future does not freeze the energy; the Ended reading is applied', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const charger = await booted(cp);
      const reading = (wh: number, timestamp: string) => [
        { timestamp, sampledValue: [{ value: wh, measurand: 'Energy.Active.Import.Register' }] },
      ];
      const event = (eventType: 'Started' | 'Updated' | 'Ended', seqNo: number, wh: number, at?: string) => {
        const e = v201.transactionEvent({ eventType, transactionId: 'tx-clock', seqNo, wh });
        return at === undefined ? e : { ...e, timestamp: at, meterValue: reading(wh, at) };
      };
      await charger.call('TransactionEvent', event('Started', 0, 1000));
      // a clock error: this reading says it was taken in 2099
      await charger.call('TransactionEvent', event('Updated', 1, 1100, '2099-01-01T00:00:00.000Z'));
      await new Promise((r) => setTimeout(r, 5));
      await charger.call('TransactionEvent', event('Updated', 2, 15_000));
      let [session] = await sessionsOf(cp.id);
      expect(session).to.include({ meter_last_wh: 15_000, energy_wh: 14_000 });
      await new Promise((r) => setTimeout(r, 5));
      await charger.call('TransactionEvent', {
        ...event('Ended', 3, 30_000),
        transactionInfo: { transactionId: 'tx-clock', stoppedReason: 'EVDisconnected' },
      });
      [session] = await sessionsOf(cp.id);
      expect(session).to.include({
        status: 'COMPLETED',
        meter_start_wh: 1000,
        meter_last_wh: 30_000,
        energy_wh: 29_000,
      });
      // the chart ends at the Ended's reading, with no point in 2099
      const chart = await chartOf(session?.id);
      expect(chart.at(-1)?.wh).to.equal(30_000);
      expect(chart.every((p) => Date.parse(p.at) <= Date.now())).to.equal(true);
      await charger.close();
    });

    // the end is the transaction's last reading whatever the charger's clock stamped on it
    for (const [clock, endAhead] of [
      ['a clock about 10 s fast, whose end is stamped past the tolerance (counted at its arrival)', 12_000],
      ['a clock set right before the end, whose end is stamped now', 0],
    ] as const) {
      it(`a reading stamped 9 s ahead, then ${clock}: the end is still the last, and nothing is after it`, async () => {
        const cp = await csms.registerChargePoint('ocpp2.0.1');
        const charger = await booted(cp);
        const ahead = (ms: number) => new Date(Date.now() + ms).toISOString();
        const event = (eventType: 'Started' | 'Updated' | 'Ended', seqNo: number, wh: number, at: string) => ({
          ...v201.transactionEvent({ eventType, transactionId: 'tx-clock-ahead', seqNo, wh }),
          timestamp: at,
          meterValue: [{ timestamp: at, sampledValue: [{ value: wh, measurand: 'Energy.Active.Import.Register' }] }],
        });
        await charger.call('TransactionEvent', event('Started', 0, 1_000, ahead(0)));
        await charger.call('TransactionEvent', event('Updated', 1, 11_000, ahead(9_000)));
        await charger.call('TransactionEvent', {
          ...event('Ended', 2, 15_000, ahead(endAhead)),
          transactionInfo: { transactionId: 'tx-clock-ahead', stoppedReason: 'Local' },
        });
        const [session] = await sessionsOf(cp.id);
        expect(session).to.include({ status: 'COMPLETED', meter_last_wh: 15_000, energy_wh: 14_000 });
        const stopped = Date.parse(session?.stopped_at ?? '');
        expect(stopped).to.be.at.least(Date.parse(session?.started_at ?? ''));
        const chart = await chartOf(session?.id);
        expect(chart.at(-1)?.wh).to.equal(15_000);
        expect(chart.every((p) => Date.parse(p.at) <= stopped)).to.equal(true);
        await charger.close();
      });
    }

    it('a start stamped in the future counts as started when it arrived: the session never stops before it starts', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const charger = await booted(cp);
      const before = Date.now();
      await charger.call('TransactionEvent', {
        ...v201.transactionEvent({ eventType: 'Started', transactionId: 'tx-ahead', seqNo: 0, wh: 1000 }),
        timestamp: '2099-01-01T00:00:00.000Z',
      });
      await charger.call(
        'TransactionEvent',
        v201.transactionEvent({
          eventType: 'Ended',
          transactionId: 'tx-ahead',
          seqNo: 1,
          wh: 2000,
          stoppedReason: 'EVDisconnected',
        }),
      );
      const [session] = await sessionsOf(cp.id);
      const started = Date.parse(session?.started_at ?? '');
      const stopped = Date.parse(session?.stopped_at ?? '');
      expect(started).to.be.within(before, Date.now());
      expect(stopped).to.be.at.least(started);
      expect(session).to.include({ status: 'COMPLETED', energy_wh: 1000 });
      await charger.close();
    });

    it('a start stamped before any charger could speak OCPP (a clock never set, 1970) counts as started when it arrived', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const charger = await booted(cp);
      const before = Date.now();
      await charger.call('TransactionEvent', {
        ...v201.transactionEvent({ eventType: 'Started', transactionId: 'tx-1970', seqNo: 0, wh: 1000 }),
        timestamp: '1970-01-01T00:00:12.000Z',
      });
      await charger.call(
        'TransactionEvent',
        v201.transactionEvent({
          eventType: 'Ended',
          transactionId: 'tx-1970',
          seqNo: 1,
          wh: 2000,
          stoppedReason: 'EVDisconnected',
        }),
      );
      const [session] = await sessionsOf(cp.id);
      // was a session of 56 years
      expect(Date.parse(session?.started_at ?? '')).to.be.within(before, Date.now());
      expect(Date.parse(session?.stopped_at ?? '')).to.be.within(before, Date.now());
      expect(session).to.include({ status: 'COMPLETED', energy_wh: 1000 });
      await charger.close();
    });

    it('a charger that gives its energy register per phase only is billed the sum of the phases', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const charger = await booted(cp);
      const perPhase = (
        eventType: 'Started' | 'Updated' | 'Ended',
        seqNo: number,
        l1: number,
        l2: number,
        l3: number,
      ) => {
        const e = v201.transactionEvent({ eventType, transactionId: 'tx-phases', seqNo });
        const at = new Date().toISOString();
        return {
          ...e,
          ...(eventType === 'Ended'
            ? { transactionInfo: { transactionId: 'tx-phases', stoppedReason: 'EVDisconnected' } }
            : {}),
          meterValue: [
            {
              timestamp: at,
              sampledValue: (
                [
                  ['L1', l1],
                  ['L2', l2],
                  ['L3', l3],
                ] as const
              ).map(([phase, value]) => ({ value, measurand: 'Energy.Active.Import.Register', phase })),
            },
          ],
        };
      };
      await charger.call('TransactionEvent', perPhase('Started', 0, 1000, 1000, 1000));
      await new Promise((r) => setTimeout(r, 5));
      await charger.call('TransactionEvent', perPhase('Updated', 1, 2000, 2500, 3000));
      await new Promise((r) => setTimeout(r, 5));
      await charger.call('TransactionEvent', perPhase('Ended', 2, 4000, 4000, 4000));
      const [session] = await sessionsOf(cp.id);
      expect(session).to.include({ status: 'COMPLETED', meter_start_wh: 3000, meter_last_wh: 12_000, energy_wh: 9000 });
      await charger.close();
    });

    it("reads kWh whatever the case of the unit's letters; a register in a unit that is no energy unit counts for nothing", async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const charger = await booted(cp);
      const withUnit = (eventType: 'Started' | 'Updated' | 'Ended', seqNo: number, value: number, unit: string) => ({
        ...v201.transactionEvent({
          eventType,
          transactionId: 'tx-units',
          seqNo,
          ...(eventType === 'Ended' ? { stoppedReason: 'EVDisconnected' } : {}),
        }),
        meterValue: [
          {
            timestamp: new Date().toISOString(),
            sampledValue: [{ value, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit } }],
          },
        ],
      });
      await charger.call('TransactionEvent', withUnit('Started', 0, 10, 'kwh'));
      await new Promise((r) => setTimeout(r, 5));
      // reactive energy in the register's place: was read as 5,000,000 Wh
      await charger.call('TransactionEvent', withUnit('Updated', 1, 5_000_000, 'varh'));
      await new Promise((r) => setTimeout(r, 5));
      await charger.call('TransactionEvent', withUnit('Ended', 2, 22.5, 'KWh'));
      const [session] = await sessionsOf(cp.id);
      // was meter_start_wh 10 and energy 12.5 Wh: lower-case kWh was read as Wh
      expect(session).to.include({
        status: 'COMPLETED',
        meter_start_wh: 10_000,
        meter_last_wh: 22_500,
        energy_wh: 12_500,
      });
      await charger.close();
    });

    it('a transaction whose start names no EVSE gets its EVSE and connector from the first event that does', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const charger = await booted(cp);
      const at = (
        evse: { id: number; connectorId: number } | undefined,
        e: ReturnType<typeof v201.transactionEvent>,
      ) => {
        const { evse: _named, ...rest } = e;
        return evse === undefined ? rest : { ...rest, evse };
      };
      const placeOf = async (transactionId: string) => {
        const s = (await sessionsOf(cp.id)).find((x) => x.transaction_id === transactionId);
        return [s?.evse_id, s?.connector_id];
      };
      await charger.call(
        'TransactionEvent',
        at(undefined, v201.transactionEvent({ eventType: 'Started', transactionId: 'tx-e', seqNo: 0, wh: 0 })),
      );
      // not known yet: no connector made up
      expect(await placeOf('tx-e')).to.deep.equal([0, 0]);
      await charger.call(
        'TransactionEvent',
        at(
          { id: 2, connectorId: 1 },
          v201.transactionEvent({ eventType: 'Updated', transactionId: 'tx-e', seqNo: 1, wh: 100 }),
        ),
      );
      expect(await placeOf('tx-e')).to.deep.equal([2, 1]);
      expect((await actorState(csms, cp.id)).transactions.map((t) => t.evse_id)).to.deep.equal([2]);
      // the first EVSE named stays
      await charger.call(
        'TransactionEvent',
        at(
          { id: 1, connectorId: 1 },
          v201.transactionEvent({
            eventType: 'Ended',
            transactionId: 'tx-e',
            seqNo: 2,
            wh: 200,
            stoppedReason: 'Local',
          }),
        ),
      );
      expect(await placeOf('tx-e')).to.deep.equal([2, 1]);
      // a transaction known only from its end
      await charger.call(
        'TransactionEvent',
        at(
          { id: 3, connectorId: 2 },
          v201.transactionEvent({ eventType: 'Ended', transactionId: 'tx-end-only', seqNo: 5, wh: 900 }),
        ),
      );
      expect(await placeOf('tx-end-only')).to.deep.equal([3, 2]);
      await charger.close();
    });

    it('a transaction id reused after more than 20 other transactions is a new session too', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const charger = await booted(cp);
      for (let i = 0; i < 21; i++) await transaction(charger, `N${i}`, i * 100, i * 100 + 10);
      // was a CALLERROR InternalError
      await transaction(charger, 'N0', 50_000, 50_500);
      const sessions = (await sessionsOf(cp.id)).filter((s) => s.transaction_id === 'N0');
      expect(energyOf(sessions)).to.deep.equal([
        ['N0', 'COMPLETED', 0, 10, 10],
        ['N0', 'COMPLETED', 50_000, 50_500, 500],
      ]);
      await charger.close();
    });
  });
