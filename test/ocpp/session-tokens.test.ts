import { expect } from 'chai';
import type { ChargingSession } from '../../src/csms/session-store.js';
import { bootedCharger, startCsms, type CsmsUnderTest } from './support/csms.js';
import { v16, v201 } from './support/messages.js';
import { eventually } from './support/scenario.js';

/**
 * A session keeps the token that authorized its transaction (`id_tag`, the one billed); the token
 * that stopped it is `stop_id_tag` (docs/CSMS.md "The /v1 API"). Another card of the driver's group or
 * a service card may stop a charge (OCPP 1.6 StopTransaction idTag, 2.0.1 C09 and StopAuthorized).
 */
describe('a session keeps the token that started it apart from the one that stopped it', function () {
  this.timeout(20_000);
  let csms: CsmsUnderTest;
  before(async () => {
    csms = await startCsms();
  });
  after(async () => csms.stop());

  const booted = (protocol: 'ocpp1.6' | 'ocpp2.0.1') => bootedCharger(csms, protocol);
  const completed = (id: string) =>
    eventually(async () => {
      const list = (await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${id}`)).body;
      return list[0]?.status === 'COMPLETED' ? list[0] : undefined;
    });

  it('OCPP 1.6: StopTransaction with another idTag', async () => {
    const { cp, charger } = await booted('ocpp1.6');
    const { transactionId } = (await charger.call('StartTransaction', v16.start({ idTag: 'DRIVER-A' }))) as {
      transactionId: number;
    };
    await charger.call('StopTransaction', v16.stop(transactionId, 9_000, { idTag: 'SERVICE-C', reason: 'Local' }));
    // was id_tag SERVICE-C: the driver's token was gone from the session
    expect(await completed(cp.id)).to.include({ id_tag: 'DRIVER-A', stop_id_tag: 'SERVICE-C', energy_wh: 8_000 });
    await charger.close();
  });

  it('OCPP 1.6: a stop without idTag names no stop token', async () => {
    const { cp, charger } = await booted('ocpp1.6');
    const { transactionId } = (await charger.call('StartTransaction', v16.start({ idTag: 'DRIVER-B' }))) as {
      transactionId: number;
    };
    await charger.call('StopTransaction', v16.stop(transactionId, 2_000, { reason: 'EVDisconnected' }));
    expect(await completed(cp.id)).to.include({ id_tag: 'DRIVER-B', stop_id_tag: null });
    await charger.close();
  });

  it('OCPP 2.0.1: started at plug-in, authorized by one card, stopped by another of its group', async () => {
    const { cp, charger } = await booted('ocpp2.0.1');
    const event = (o: Parameters<typeof v201.transactionEvent>[0]) =>
      charger.call('TransactionEvent', v201.transactionEvent(o));
    await event({ eventType: 'Started', transactionId: 'tx-group', seqNo: 0, wh: 1_000 });
    await event({ eventType: 'Updated', transactionId: 'tx-group', seqNo: 1, idToken: 'GRP-A', wh: 1_000 });
    await event({ eventType: 'Updated', transactionId: 'tx-group', seqNo: 2, idToken: 'GRP-B', wh: 4_000 });
    await event({ eventType: 'Ended', transactionId: 'tx-group', seqNo: 3, idToken: 'GRP-B', wh: 4_500 });
    expect(await completed(cp.id)).to.include({ id_tag: 'GRP-A', stop_id_tag: 'GRP-B', energy_wh: 3_500 });
    await charger.close();
  });
});
