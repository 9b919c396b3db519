import { expect } from 'chai';
import { parseFrame } from '../../src/ocpp/frames.js';
import { energyBetween } from '../../actors/charge-point/transactions.js';
import { energyRegisterWh, type SampledReading } from '../../src/ocpp/meter.js';
import type { OcppCall } from '../../src/ocpp/messages.js';
import { OcppSchemas } from '../../src/ocpp/schemas.js';
import { ocpp16Adapter } from '../../src/ocpp/v16/adapter.js';
import { ocpp201Adapter } from '../../src/ocpp/v201/adapter.js';
import { v16, v201 } from './support/messages.js';

const sample = (
  o: Partial<{ value: number; measurand: string; phase: string; unit: string; multiplier: number; location: string }>,
): SampledReading => ({
  value: 0,
  measurand: undefined,
  phase: undefined,
  unit: undefined,
  multiplier: 0,
  location: undefined,
  ...o,
});

const schemas: OcppSchemas = new OcppSchemas();

/** A call as the connection hands it to an adapter: schema-checked, hence typed by its action. */
function checked<V extends 'ocpp1.6' | 'ocpp2.0.1'>(version: V, action: string, payload: unknown): OcppCall<V> {
  const call = { action, payload };
  schemas.checkRequest(version, call);
  return call;
}

describe('OCPP wire mapping (pure functions)', () => {
  before(() => schemas.load());

  it('reads the energy register in Wh from kWh and unit multipliers, ignoring other measurands', () => {
    expect(energyRegisterWh([sample({ value: 12.5, unit: 'kWh' })])).to.equal(12_500);
    expect(energyRegisterWh([sample({ value: 3, unit: 'Wh', multiplier: 3 })])).to.equal(3000);
    expect(energyRegisterWh([sample({ value: 7, measurand: 'Power.Active.Import' })])).to.equal(null);
    // 2.0.1's unit is free text: kWh and Wh in any case; any other unit is no register reading
    expect(energyRegisterWh([sample({ value: 1.5, unit: 'kwh' })])).to.equal(1500);
    expect(energyRegisterWh([sample({ value: 2, unit: 'KWH' })])).to.equal(2000);
    expect(energyRegisterWh([sample({ value: 3, unit: 'wh' })])).to.equal(3);
    // to the thousandth of a Wh, not the binary product (12345.599999999999)
    expect(energyRegisterWh([sample({ value: 12.3456, unit: 'kWh' })])).to.equal(12_345.6);
    expect(energyBetween(12_345.6, 12_999.9)).to.equal(654.3);
    expect(energyBetween(5000, 4000)).to.equal(0);
    for (const unit of ['varh', 'kvarh', 'MWh', 'W', ''])
      expect(energyRegisterWh([sample({ value: 4, unit })]), unit).to.equal(null);
    expect(energyRegisterWh([sample({ value: 9, phase: 'L1' }), sample({ value: 10 })])).to.equal(10);
  });

  it('sums the phases of a register given per phase only; the whole register wins when given too', () => {
    const phases = (...values: Array<[string, number]>) => values.map(([phase, value]) => sample({ value, phase }));
    expect(energyRegisterWh(phases(['L1', 1000], ['L2', 2000], ['L3', 3000]))).to.equal(6000);
    expect(
      energyRegisterWh(phases(['L1-N', 1.5], ['L2-N', 1.5], ['L3-N', 2]).map((s) => ({ ...s, unit: 'kWh' }))),
    ).to.equal(5000);
    expect(energyRegisterWh(phases(['L1', 700]))).to.equal(700);
    expect(energyRegisterWh([...phases(['L1', 1], ['L2', 2]), sample({ value: 10 })])).to.equal(10);
    // a negative or absurd register reading is none (it would bill more energy than exists)
    expect(energyRegisterWh([sample({ value: -1000 })])).to.equal(null);
    expect(energyRegisterWh([sample({ value: 1e20 })])).to.equal(null);
    expect(energyRegisterWh([sample({ value: 1.79e308, unit: 'kWh' })])).to.equal(null);
    expect(energyRegisterWh([sample({ value: 2000 }), sample({ value: 1e20 })])).to.equal(2000);
    expect(energyRegisterWh([sample({ value: 60e9 })])).to.equal(60e9);
    // neutral and phase-to-phase values are no share of the register
    expect(energyRegisterWh(phases(['N', 5], ['L1-L2', 9]))).to.equal(null);
  });

  it("reads the outlet's register: an inlet's or the EV's is another meter", () => {
    const at = (location: string, value: number) => sample({ value, location });
    expect(energyRegisterWh([at('Outlet', 12_000), at('Inlet', 987_654)])).to.equal(12_000);
    expect(energyRegisterWh([sample({ value: 13_000 }), at('EV', 45), at('Body', 7)])).to.equal(13_000);
    expect(energyRegisterWh([at('Inlet', 987_654)])).to.equal(null);
    // as a 1.6 charger sends it: the session moves by the outlet's reading
    const timestamp = new Date().toISOString();
    const meterValues = {
      connectorId: 1,
      transactionId: 7,
      meterValue: [
        {
          timestamp,
          sampledValue: [
            { value: '12000', unit: 'Wh', location: 'Outlet' },
            { value: '987654', unit: 'Wh', location: 'Inlet' },
          ],
        },
      ],
    };
    expect(ocpp16Adapter.toEvent(checked('ocpp1.6', 'MeterValues', meterValues))).to.include({ meter_wh: 12_000 });
  });

  it("ranks a stop's readings by context before time: Transaction.Begin first, Transaction.End last", () => {
    const entry = (timestamp: string, value: string, context: string) => ({
      timestamp,
      sampledValue: [{ value, context, measurand: 'Energy.Active.Import.Register' }],
    });
    // a charger whose clock was set back between its Begin and its End
    const stop = ocpp16Adapter.toEvent(
      checked('ocpp1.6', 'StopTransaction', {
        transactionId: 7,
        meterStop: 9000,
        timestamp: '2026-01-01T01:00:00.000Z',
        transactionData: [
          entry('2026-01-01T00:50:00.000Z', '9000', 'Transaction.End'),
          entry('2026-01-01T00:55:00.000Z', '5000', 'Transaction.Begin'),
          entry('2026-01-01T00:52:00.000Z', '7000', 'Sample.Periodic'),
        ],
      }),
    );
    expect(stop).to.deep.include({
      begin: { wh: 5000, timestamp: '2026-01-01T00:55:00.000Z', named: true },
      meter_wh: 9000,
    });
  });

  it('parses the three frame types and tells malformed frames apart', () => {
    expect(parseFrame('[2,"a","Heartbeat",{}]')).to.deep.equal({
      t: 'call',
      id: 'a',
      action: 'Heartbeat',
      payload: {},
    });
    expect(parseFrame('[3,"a",{"x":1}]')).to.deep.equal({ t: 'result', id: 'a', payload: { x: 1 } });
    expect(parseFrame('[4,"a","GenericError","oops",{}]')).to.include({
      t: 'error',
      id: 'a',
      code: 'GenericError',
      description: 'oops',
    });
    expect(parseFrame('nope')).to.include({ t: 'malformed', id: '-1', reason: 'not-json' });
    expect(parseFrame(`[2,"${'x'.repeat(37)}","Heartbeat",{}]`)).to.include({ t: 'malformed', id: '-1' });
    expect(parseFrame('[2,"b",5,{}]')).to.include({ t: 'malformed', id: 'b', reason: 'not-a-frame' });
    expect(parseFrame('[9,"c",{}]')).to.include({ t: 'malformed', id: 'c', reason: 'unknown-type' });
    // two elements are enough to read the id: it is answered under it (was "-1", as unreadable)
    expect(parseFrame('[9,"m9"]')).to.include({ t: 'malformed', id: 'm9', reason: 'unknown-type' });
    expect(parseFrame('[2,"m2"]')).to.include({ t: 'malformed', id: 'm2', reason: 'not-a-frame' });
    expect(parseFrame('[2]')).to.include({ t: 'malformed', id: '-1', reason: 'not-a-frame' });
    expect(parseFrame('[3,"r"]')).to.include({ t: 'stray' });
  });

  it('maps 1.6 and 2.0.1 messages onto the same domain events', () => {
    const start16 = v16.start({ connectorId: 2, idTag: 'T', meterStart: 10, timestamp: '2026-01-01T00:00:00.000Z' });
    expect(ocpp16Adapter.toEvent(checked('ocpp1.6', 'StartTransaction', start16))).to.include({
      type: 'transaction-started',
      transaction_id: null,
      evse_id: 2,
      id_tag: 'T',
      meter_start_wh: 10,
    });
    const started201 = ocpp201Adapter.toEvent(
      checked(
        'ocpp2.0.1',
        'TransactionEvent',
        v201.transactionEvent({ eventType: 'Started', transactionId: 'X', seqNo: 0, wh: 10, idToken: 'T' }),
      ),
    );
    expect(started201).to.include({
      type: 'transaction-started',
      transaction_id: 'X',
      evse_id: 1,
      id_tag: 'T',
      meter_start_wh: 10,
      dedupe_key: 'X|0',
    });
    expect(
      ocpp16Adapter.toEvent(
        checked('ocpp1.6', 'StatusNotification', v16.status(1, 'Faulted', { errorCode: 'GroundFailure' })),
      ),
    ).to.include({ type: 'status-changed', status: 'Faulted', error_code: 'GroundFailure' });
    expect(
      ocpp201Adapter.toEvent(checked('ocpp2.0.1', 'StatusNotification', v201.status(2, 1, 'Occupied'))),
    ).to.include({ type: 'status-changed', evse_id: 2, connector_id: 1, status: 'Occupied' });
    expect(ocpp16Adapter.toEvent(checked('ocpp1.6', 'Heartbeat', {}))).to.equal(null);
    expect(ocpp201Adapter.toEvent(checked('ocpp2.0.1', 'DataTransfer', { vendorId: 'X' }))).to.deep.include({
      type: 'reported',
      action: 'DataTransfer',
      data_transfer: { vendor_id: 'X', message_id: null, data: null },
    });
    // what only a CSMS sends is no event of a charger's
    expect(
      ocpp201Adapter.toEvent(
        checked('ocpp2.0.1', 'RequestStartTransaction', {
          idToken: { idToken: 'T', type: 'Central' },
          remoteStartId: 1,
        }),
      ),
    ).to.equal(undefined);
    expect(ocpp16Adapter.toEvent(checked('ocpp1.6', 'Reset', { type: 'Soft' }))).to.equal(undefined);
  });

  it("maps domain commands onto each version's calls", () => {
    expect(ocpp16Adapter.toCall({ kind: 'stop', transaction_id: '42' }, 1)).to.deep.equal({
      action: 'RemoteStopTransaction',
      payload: { transactionId: 42 },
    });
    expect(ocpp201Adapter.toCall({ kind: 'stop', transaction_id: '42' }, 1)).to.deep.equal({
      action: 'RequestStopTransaction',
      payload: { transactionId: '42' },
    });
    expect(ocpp201Adapter.toCall({ kind: 'start', id_tag: 'T', evse_id: null, connector_id: null }, 9)).to.deep.equal({
      action: 'RequestStartTransaction',
      payload: { idToken: { idToken: 'T', type: 'Central' }, remoteStartId: 9 },
    });
  });
});
