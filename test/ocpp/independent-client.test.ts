import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import { strictCharger } from '../support/rpc-client.js';
import type { ChargingSession } from '../../src/csms/session-store.js';
import { startCsms, type CsmsUnderTest } from './support/csms.js';
import { v16, v201 } from './support/messages.js';
import { eventually } from './support/scenario.js';

/**
 * The charger here is ocpp-rpc, a library the server does not use, in strict mode: it checks
 * every frame the CSMS sends against its own copy of the official schemas.
 */
describe('an independent OCPP client library drives a charger end to end', () => {
  let csms: CsmsUnderTest;
  before(async () => {
    csms = await startCsms();
  });
  after(async () => csms.stop());

  const client = (id: string, password: string, protocol: 'ocpp1.6' | 'ocpp2.0.1'): RPCClient =>
    strictCharger(csms.url, { id, password }, protocol);

  async function sessionOf(id: string): Promise<ChargingSession | undefined> {
    const res = await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${encodeURIComponent(id)}`);
    return res.body[0];
  }

  it('OCPP 1.6: boot -> remote start -> transaction with meter values -> remote stop -> session with energy', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const charger = client(cp.id, cp.password, 'ocpp1.6');
    let transactionId = 0;
    const startRequested = new Promise<string>((resolve) => {
      charger.handle('RemoteStartTransaction', ({ params }) => {
        resolve(String((params as { idTag: string }).idTag));
        return Promise.resolve({ status: 'Accepted' });
      });
    });
    const stopRequested = new Promise<number>((resolve) => {
      charger.handle('RemoteStopTransaction', ({ params }) => {
        resolve(Number((params as { transactionId: number }).transactionId));
        return Promise.resolve({ status: 'Accepted' });
      });
    });
    await charger.connect();
    expect(await charger.call('BootNotification', v16.boot())).to.include({ status: 'Accepted' });
    await charger.call('StatusNotification', v16.status(1, 'Available'));

    expect(
      (await csms.api('POST', `/v1/charge-points/${cp.id}/remote-start`, { id_tag: 'DRIVER-16', connector_id: 1 }))
        .status,
    ).to.equal(200);
    const idTag = await startRequested;
    await charger.call('StatusNotification', v16.status(1, 'Charging'));
    ({ transactionId } = (await charger.call('StartTransaction', v16.start({ idTag, meterStart: 20_000 }))) as {
      transactionId: number;
    });
    await charger.call('MeterValues', v16.meterValues(1, transactionId, 21_500));
    await charger.call('MeterValues', v16.meterValues(1, transactionId, 23_250));

    expect((await csms.api('POST', `/v1/charge-points/${cp.id}/remote-stop`)).status).to.equal(200);
    expect(await stopRequested).to.equal(transactionId);
    await charger.call('StopTransaction', v16.stop(transactionId, 24_000));
    await charger.call('StatusNotification', v16.status(1, 'Available'));

    const session = await eventually(async () => {
      const s = await sessionOf(cp.id);
      return s?.status === 'COMPLETED' ? s : undefined;
    });
    expect(session).to.include({
      id_tag: 'DRIVER-16',
      transaction_id: String(transactionId),
      energy_wh: 4000,
      stop_reason: 'Remote',
    });
    await charger.close();
  });

  it("remote start and stop with ?wait_ms= answer with the charger's answer; without, at once", async () => {
    const cp = await csms.registerChargePoint('ocpp2.0.1');
    const charger = client(cp.id, cp.password, 'ocpp2.0.1');
    charger.handle('RequestStartTransaction', () => Promise.resolve({ status: 'Rejected' }));
    charger.handle('RequestStopTransaction', () => Promise.resolve({ status: 'Rejected' }));
    await charger.connect();
    await charger.call('BootNotification', v201.boot());
    type Answer = { command_status: string; answered?: boolean };
    const start = (query: string) =>
      csms.api<Answer>('POST', `/v1/charge-points/${cp.id}/remote-start${query}`, { id_tag: 'DRIVER-W', evse_id: 1 });
    // was "sent" whatever wait_ms said, the charger's Rejected left for the operator to poll
    const waited = await start('?wait_ms=3000');
    expect([waited.status, waited.body.command_status, waited.body.answered]).to.deep.equal([200, 'Rejected', true]);
    const atOnce = await start('');
    expect(atOnce.body).to.include({ command_status: 'sent', answered: false });
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({ eventType: 'Started', transactionId: 'TX-W', seqNo: 0, idToken: 'DRIVER-W' }),
    );
    const stop = await csms.api<Answer>('POST', `/v1/charge-points/${cp.id}/remote-stop?wait_ms=3000`);
    expect([stop.status, stop.body.command_status, stop.body.answered]).to.deep.equal([200, 'Rejected', true]);
    expect((await csms.api('POST', `/v1/charge-points/${cp.id}/remote-start?wait_ms=31000`, {})).status).to.equal(422);
    await charger.close();
  });

  it('OCPP 2.0.1: boot -> remote start -> transaction with meter values -> remote stop -> session with energy', async () => {
    const cp = await csms.registerChargePoint('ocpp2.0.1');
    const charger = client(cp.id, cp.password, 'ocpp2.0.1');
    const startRequested = new Promise<{ idToken: { idToken: string }; remoteStartId: number }>((resolve) => {
      charger.handle('RequestStartTransaction', ({ params }) => {
        resolve(params as { idToken: { idToken: string }; remoteStartId: number });
        return Promise.resolve({ status: 'Accepted' });
      });
    });
    const stopRequested = new Promise<string>((resolve) => {
      charger.handle('RequestStopTransaction', ({ params }) => {
        resolve(String((params as { transactionId: string }).transactionId));
        return Promise.resolve({ status: 'Accepted' });
      });
    });
    await charger.connect();
    expect(await charger.call('BootNotification', v201.boot())).to.include({ status: 'Accepted' });
    await charger.call('StatusNotification', v201.status(1, 1, 'Available'));

    expect(
      (await csms.api('POST', `/v1/charge-points/${cp.id}/remote-start`, { id_tag: 'DRIVER-201', evse_id: 1 })).status,
    ).to.equal(200);
    const req = await startRequested;
    const transactionId = 'TX-E2E-201';
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({
        eventType: 'Started',
        transactionId,
        seqNo: 0,
        wh: 1_000,
        idToken: req.idToken.idToken,
        remoteStartId: req.remoteStartId,
      }),
    );
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({ eventType: 'Updated', transactionId, seqNo: 1, wh: 3_000 }),
    );
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({ eventType: 'Updated', transactionId, seqNo: 2, wh: 6_500 }),
    );

    expect((await csms.api('POST', `/v1/charge-points/${cp.id}/remote-stop`)).status).to.equal(200);
    expect(await stopRequested).to.equal(transactionId);
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({ eventType: 'Ended', transactionId, seqNo: 3, wh: 7_000, stoppedReason: 'Remote' }),
    );

    const session = await eventually(async () => {
      const s = await sessionOf(cp.id);
      return s?.status === 'COMPLETED' ? s : undefined;
    });
    expect(session).to.include({
      id_tag: 'DRIVER-201',
      transaction_id: transactionId,
      energy_wh: 6000,
      stop_reason: 'Remote',
    });
    await charger.close();
  });
});
