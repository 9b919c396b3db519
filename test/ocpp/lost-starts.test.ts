import { expect } from 'chai';
import type { ChargingSession } from '../../src/csms/session-store.js';
import { strictCharger } from '../support/rpc-client.js';
import { startCsms, type CsmsUnderTest } from './support/csms.js';
import { v16, v201 } from './support/messages.js';
import { eventually } from './support/scenario.js';

/**
 * A transaction whose start never reached this CSMS (lost, or sent before a migration) still
 * becomes a session when its updates or its end arrive: its energy and end are not dropped
 * (docs/CSMS.md "Sessions").
 */
describe('transactions whose start never arrived', function () {
  this.timeout(20_000);
  let csms: CsmsUnderTest;
  before(async () => {
    csms = await startCsms();
  });
  after(async () => csms.stop());

  const sessionsOf = async (id: string): Promise<ChargingSession[]> =>
    (await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${encodeURIComponent(id)}`)).body;

  it('OCPP 1.6: a StopTransaction of an unknown transaction is a completed session; later ids do not reuse it', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const charger = strictCharger(csms.url, cp, 'ocpp1.6');
    await charger.connect();
    await charger.call('BootNotification', v16.boot());
    expect(await charger.call('StopTransaction', v16.stop(4711, 52_000, { reason: 'EVDisconnected' }))).to.deep.equal(
      {},
    );
    const [session] = await eventually(async () => {
      const list = await sessionsOf(cp.id);
      return list.length > 0 ? list : undefined;
    });
    expect(session).to.include({
      transaction_id: '4711',
      status: 'COMPLETED',
      meter_last_wh: 52_000,
      stop_reason: 'EVDisconnected',
    });
    // a retry of the same stop changes nothing
    await charger.call('StopTransaction', v16.stop(4711, 52_000));
    expect(await sessionsOf(cp.id)).to.have.length(1);
    const { transactionId } = (await charger.call('StartTransaction', v16.start({ meterStart: 60_000 }))) as {
      transactionId: number;
    };
    expect(transactionId).to.be.greaterThan(4711);
    await charger.close();
  });

  it('OCPP 2.0.1: Updated and Ended without Started make one session with the energy between them', async () => {
    const cp = await csms.registerChargePoint('ocpp2.0.1');
    const charger = strictCharger(csms.url, cp, 'ocpp2.0.1');
    await charger.connect();
    await charger.call('BootNotification', v201.boot());
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({ eventType: 'Updated', transactionId: 'tx-lost', seqNo: 4, wh: 10_000 }),
    );
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({ eventType: 'Updated', transactionId: 'tx-lost', seqNo: 5, wh: 12_500 }),
    );
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({
        eventType: 'Ended',
        transactionId: 'tx-lost',
        seqNo: 6,
        wh: 13_000,
        stoppedReason: 'Local',
      }),
    );
    const sessions = await eventually(async () => {
      const list = await sessionsOf(cp.id);
      return list[0]?.status === 'COMPLETED' ? list : undefined;
    });
    expect(sessions).to.have.length(1);
    expect(sessions[0]).to.include({
      transaction_id: 'tx-lost',
      meter_start_wh: 10_000,
      meter_last_wh: 13_000,
      energy_wh: 3_000,
      stop_reason: 'Local',
    });
    await charger.close();
  });
});
