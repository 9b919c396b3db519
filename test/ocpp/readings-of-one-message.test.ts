import { expect } from 'chai';
import type { ChargingSession } from '../../src/csms/session-store.js';
import type { MeterSample } from '../../src/csms/meter-samples.js';
import { bootedCharger, startCsms, type CsmsUnderTest } from './support/csms.js';
import { eventually } from './support/scenario.js';

/**
 * A 2.0.1 TransactionEvent's `meterValue` may hold readings of several instants: an Ended with
 * the TxEndedMeasurands from Transaction.Begin to Transaction.End (OCPP 2.0.1 J02), an Updated
 * holding readings queued offline, a Started with its begin and a periodic reading. A transaction
 * whose first reading is not known yet counts its energy from the earliest of them, not from the
 * latest (docs/CSMS.md "Energy and out-of-order readings").
 */
describe('OCPP 2.0.1: the readings of one TransactionEvent', function () {
  this.timeout(20_000);
  let csms: CsmsUnderTest;
  before(async () => {
    csms = await startCsms();
  });
  after(async () => csms.stop());

  const base = Date.now() - 3_600_000;
  const at = (s: number) => new Date(base + s * 1000).toISOString();
  const reading = (s: number, wh: number, context = 'Sample.Periodic') => ({
    timestamp: at(s),
    sampledValue: [{ value: wh, context, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' } }],
  });
  const event = (
    eventType: 'Started' | 'Updated' | 'Ended',
    transactionId: string,
    seqNo: number,
    s: number,
    meterValue: ReturnType<typeof reading>[] = [],
  ) => ({
    eventType,
    timestamp: at(s),
    triggerReason:
      eventType === 'Started' ? 'Authorized' : eventType === 'Ended' ? 'StopAuthorized' : 'MeterValuePeriodic',
    seqNo,
    transactionInfo: { transactionId, ...(eventType === 'Ended' ? { stoppedReason: 'Local' } : {}) },
    ...(eventType === 'Started' ? { idToken: { idToken: 'TAG-1', type: 'ISO14443' } } : {}),
    evse: { id: 1, connectorId: 1 },
    ...(meterValue.length > 0 ? { meterValue } : {}),
  });

  const sessionOf = async (id: string, status = 'COMPLETED'): Promise<ChargingSession> =>
    eventually(async () => {
      const res = await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${encodeURIComponent(id)}`);
      const [session] = res.body;
      return session?.status === status ? session : undefined;
    });
  const chartOf = async (sessionId: string): Promise<MeterSample[]> =>
    (await csms.api<{ samples: MeterSample[] }>('GET', `/v1/sessions/${sessionId}/meter-values`)).body.samples;

  it('a Started without a reading, then an Ended with the Begin and End readings: the energy between them', async () => {
    const { id, charger } = await bootedCharger(csms, 'ocpp2.0.1');
    await charger.call('TransactionEvent', event('Started', 'NS-E', 0, 300));
    await charger.call(
      'TransactionEvent',
      event('Ended', 'NS-E', 1, 600, [reading(300, 5000, 'Transaction.Begin'), reading(600, 9000, 'Transaction.End')]),
    );
    const session = await sessionOf(id);
    // was 9000 -> 9000, 0 Wh: the latest reading taken as the start
    expect(session).to.include({ meter_start_wh: 5000, meter_last_wh: 9000, energy_wh: 4000 });
    await charger.close();
  });

  /**
   * Readings whose stamps contradict their context: a Begin stamped at the End's instant (listed
   * after it), or after it. The context decides which is the first and which the last, and the
   * Begin is charted at the transaction's start.
   */
  for (const [what, begin, end] of [
    ['stamped at the End instant and listed after it', 600, 600],
    ['stamped after the End', 650, 600],
  ] as const) {
    it(`a Begin reading ${what}: the energy between Begin and End, charted from the start`, async () => {
      const { id, charger } = await bootedCharger(csms, 'ocpp2.0.1');
      const tx = `CTX-${begin}`;
      await charger.call('TransactionEvent', event('Started', tx, 0, 300));
      await charger.call(
        'TransactionEvent',
        event('Ended', tx, 1, 700, [reading(end, 9000, 'Transaction.End'), reading(begin, 5000, 'Transaction.Begin')]),
      );
      const session = await sessionOf(id);
      // was 9000 -> 5000, 0 Wh: the earliest stamp taken as the first reading, the latest as the last
      expect(session).to.include({ meter_start_wh: 5000, meter_last_wh: 9000, energy_wh: 4000 });
      const chart = await chartOf(session.id);
      // was the End reading alone: the Begin was dropped as not earlier than it
      expect(chart.map((c) => [c.at, c.wh])).to.deep.equal([
        [at(300), 5000],
        [at(600), 9000],
      ]);
      await charger.close();
    });
  }

  it('a Begin reading stamped after the Ended event itself: still the first reading, charted at the start', async () => {
    const { id, charger } = await bootedCharger(csms, 'ocpp2.0.1');
    await charger.call('TransactionEvent', event('Started', 'LATE-B', 0, 300));
    await charger.call(
      'TransactionEvent',
      event('Ended', 'LATE-B', 1, 700, [
        reading(600, 9000, 'Transaction.End'),
        reading(750, 5000, 'Transaction.Begin'),
      ]),
    );
    const session = await sessionOf(id);
    // was 9000 -> 9000, 0 Wh: a reading stamped after the message that reports it was dropped
    expect(session).to.include({ meter_start_wh: 5000, meter_last_wh: 9000, energy_wh: 4000 });
    const chart = await chartOf(session.id);
    expect(chart.map((c) => [c.at, c.wh])).to.deep.equal([
      [at(300), 5000],
      [at(600), 9000],
    ]);
    await charger.close();
  });

  it('the Begin and End readings in one meterValue: each is a reading of its own', async () => {
    const { id, charger } = await bootedCharger(csms, 'ocpp2.0.1');
    await charger.call('TransactionEvent', event('Started', 'ONE-MV', 0, 300));
    const both = {
      timestamp: at(600),
      sampledValue: [
        {
          value: 5000,
          context: 'Transaction.Begin',
          measurand: 'Energy.Active.Import.Register',
          unitOfMeasure: { unit: 'Wh' },
        },
        {
          value: 9000,
          context: 'Transaction.End',
          measurand: 'Energy.Active.Import.Register',
          unitOfMeasure: { unit: 'Wh' },
        },
      ],
    };
    await charger.call('TransactionEvent', event('Ended', 'ONE-MV', 1, 600, [both]));
    const session = await sessionOf(id);
    // was 9000 -> 9000, 0 Wh: the meter value read as one reading, the last sample's
    expect(session).to.include({ meter_start_wh: 5000, meter_last_wh: 9000, energy_wh: 4000 });
    const chart = await chartOf(session.id);
    expect(chart.map((c) => [c.at, c.wh])).to.deep.equal([
      [at(300), 5000],
      [at(600), 9000],
    ]);
    await charger.close();
  });

  it("a Begin reading sent after an Updated's reading was taken as the first: the energy counts from the Begin", async () => {
    const { id, charger } = await bootedCharger(csms, 'ocpp2.0.1');
    await charger.call('TransactionEvent', event('Started', 'UPD-B', 0, 0));
    await charger.call('TransactionEvent', event('Updated', 'UPD-B', 1, 120, [reading(120, 2000)]));
    await eventually(async () => ((await sessionOf(id, 'ACTIVE')).meter_start_wh === 2000 ? true : undefined));
    await charger.call(
      'TransactionEvent',
      event('Ended', 'UPD-B', 2, 300, [reading(0, 1000, 'Transaction.Begin'), reading(300, 5000, 'Transaction.End')]),
    );
    const session = await sessionOf(id);
    // was 2000 -> 5000, 3000 Wh: the Updated's reading stayed the first
    expect(session).to.include({ meter_start_wh: 1000, meter_last_wh: 5000, energy_wh: 4000 });
    const chart = await chartOf(session.id);
    expect(chart[0]).to.include({ at: at(0), wh: 1000, energy_wh: 0 });
    expect(chart[chart.length - 1]).to.include({ at: at(300), wh: 5000, energy_wh: 4000 });
    await charger.close();
  });

  it("a Begin reading above a Started's own first reading does not replace it", async () => {
    const { id, charger } = await bootedCharger(csms, 'ocpp2.0.1');
    await charger.call('TransactionEvent', event('Started', 'KEEP-S', 0, 0, [reading(0, 1000, 'Transaction.Begin')]));
    await charger.call('TransactionEvent', event('Updated', 'KEEP-S', 1, 120, [reading(120, 2000)]));
    await charger.call(
      'TransactionEvent',
      event('Ended', 'KEEP-S', 2, 300, [reading(0, 1000, 'Transaction.Begin'), reading(300, 5000, 'Transaction.End')]),
    );
    expect(await sessionOf(id)).to.include({ meter_start_wh: 1000, meter_last_wh: 5000, energy_wh: 4000 });
    await charger.close();
  });

  it('an Ended alone (its Started lost) starts at its Begin reading and time', async () => {
    const { id, charger } = await bootedCharger(csms, 'ocpp2.0.1');
    await charger.call('TransactionEvent', {
      ...event('Ended', 'ONLY-E', 0, 600, [
        reading(300, 5000, 'Transaction.Begin'),
        reading(600, 9000, 'Transaction.End'),
      ]),
      offline: true,
    });
    const session = await sessionOf(id);
    expect(session).to.include({ meter_start_wh: 5000, meter_last_wh: 9000, energy_wh: 4000 });
    expect(session.started_at).to.equal(at(300));
    await charger.close();
  });

  it('an Updated with readings queued offline: the energy counts from the earliest, the chart starts there', async () => {
    const { id, charger } = await bootedCharger(csms, 'ocpp2.0.1');
    await charger.call('TransactionEvent', event('Started', 'Q-1', 0, 0));
    // listed newest first: the order of the list is not the order of the readings
    await charger.call(
      'TransactionEvent',
      event('Updated', 'Q-1', 1, 180, [reading(180, 3000), reading(60, 1000), reading(120, 2000)]),
    );
    const running = await sessionOf(id, 'ACTIVE');
    await eventually(async () => ((await sessionOf(id, 'ACTIVE')).energy_wh === 2000 ? true : undefined));
    await charger.call('TransactionEvent', event('Ended', 'Q-1', 2, 240, [reading(240, 4000, 'Transaction.End')]));
    const session = await sessionOf(id);
    // was 1000 Wh from the first message's latest reading (3000)
    expect(session).to.include({ meter_start_wh: 1000, meter_last_wh: 4000, energy_wh: 3000 });
    const chart = await chartOf(running.id);
    expect(chart[0]).to.include({ at: at(60), wh: 1000, energy_wh: 0 });
    expect(chart[chart.length - 1]).to.include({ at: at(240), wh: 4000, energy_wh: 3000 });
    await charger.close();
  });

  it('a Started carrying its Begin and a later reading: the energy counts from the Begin reading', async () => {
    const { id, charger } = await bootedCharger(csms, 'ocpp2.0.1');
    await charger.call(
      'TransactionEvent',
      event('Started', 'S-2', 0, 700, [reading(700, 10_000, 'Transaction.Begin'), reading(760, 10_500)]),
    );
    const running = await sessionOf(id, 'ACTIVE');
    // was 10500 -> 10500: the later reading taken as the start
    expect(running).to.include({ meter_start_wh: 10_000, meter_last_wh: 10_500, energy_wh: 500 });
    await charger.call('TransactionEvent', event('Ended', 'S-2', 1, 900, [reading(900, 11_000, 'Transaction.End')]));
    expect(await sessionOf(id)).to.include({ meter_start_wh: 10_000, energy_wh: 1000 });
    await charger.close();
  });

  it('a Started whose readings go back within it: the energy counts to its highest, charted', async () => {
    const { id, charger } = await bootedCharger(csms, 'ocpp2.0.1');
    await charger.call(
      'TransactionEvent',
      event('Started', 'S-PEAK', 0, 700, [
        reading(700, 1000, 'Transaction.Begin'),
        reading(730, 5000),
        reading(760, 3000),
      ]),
    );
    const running = await sessionOf(id, 'ACTIVE');
    // was 2000 Wh: the latest reading less the first, the 5000 of the middle lost
    expect(running).to.include({ meter_start_wh: 1000, meter_last_wh: 3000, energy_wh: 4000 });
    expect((await chartOf(running.id)).map((p) => p.wh)).to.include(5000);
    await charger.call('TransactionEvent', event('Ended', 'S-PEAK', 1, 900, [reading(900, 6000, 'Transaction.End')]));
    expect(await sessionOf(id)).to.include({ meter_start_wh: 1000, energy_wh: 5000 });
    await charger.close();
  });
});

/**
 * OCPP 1.6: a StopTransaction's `transactionData` may hold the transaction's Transaction.Begin
 * reading. A `meterStart` below it that the stop's readings contradict (a failed read sends 0)
 * is not the start of the register (docs/CSMS.md "Energy and out-of-order readings").
 */
describe("OCPP 1.6: a stop's Begin reading", function () {
  this.timeout(20_000);
  let csms: CsmsUnderTest;
  before(async () => {
    csms = await startCsms();
  });
  after(async () => csms.stop());

  const base = Date.now() - 3_600_000;
  const at = (s: number) => new Date(base + s * 1000).toISOString();
  const reading = (s: number, wh: number, context: string) => ({
    timestamp: at(s),
    sampledValue: [{ value: String(wh), context, measurand: 'Energy.Active.Import.Register', unit: 'Wh' }],
  });

  async function transaction(meterStart: number, begin: number): Promise<ChargingSession> {
    const { id, charger } = await bootedCharger(csms, 'ocpp1.6');
    const started = (await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: 'TAG-16',
      meterStart,
      timestamp: at(0),
    })) as { transactionId: number };
    await charger.call('MeterValues', {
      connectorId: 1,
      transactionId: started.transactionId,
      meterValue: [reading(120, 6000, 'Sample.Periodic')],
    });
    await charger.call('StopTransaction', {
      transactionId: started.transactionId,
      meterStop: 8000,
      timestamp: at(300),
      transactionData: [reading(0, begin, 'Transaction.Begin'), reading(300, 8000, 'Transaction.End')],
    });
    const session = await eventually(async () => {
      const res = await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${encodeURIComponent(id)}`);
      const [s] = res.body;
      return s?.status === 'COMPLETED' ? s : undefined;
    });
    await charger.close();
    return session;
  }

  it('meterStart 0 and a Begin reading of 5000 Wh: the energy counts from 5000, and so does the chart', async () => {
    const session = await transaction(0, 5000);
    // was 8000 Wh, from the failed read
    expect(session).to.include({ meter_start_wh: 5000, meter_last_wh: 8000, energy_wh: 3000 });
    const chart = (await csms.api<{ samples: MeterSample[] }>('GET', `/v1/sessions/${session.id}/meter-values`)).body
      .samples;
    expect(chart[0]).to.include({ at: at(0), wh: 5000, energy_wh: 0 });
    expect(chart[chart.length - 1]).to.include({ at: at(300), wh: 8000, energy_wh: 3000 });
  });

  it('a Begin reading below meterStart, or above the stop, changes nothing', async () => {
    expect(await transaction(5000, 0)).to.include({ meter_start_wh: 5000, energy_wh: 3000 });
    expect(await transaction(5000, 9000)).to.include({ meter_start_wh: 5000, energy_wh: 3000 });
  });
});
