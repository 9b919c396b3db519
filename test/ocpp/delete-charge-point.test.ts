import { expect } from 'chai';
import type { ChargePointView } from '../../src/csms/views.js';
import { eventually } from '../support/eventually.js';
import { clusterEnvironment, type TestEnvironment } from '../support/platforms.js';
import { strictCharger } from '../support/rpc-client.js';
import { API_KEY, startCsms, type CsmsUnderTest } from './support/csms.js';
import { v16 } from './support/messages.js';

/**
 * An operator removes charge points (docs/CSMS.md "Removing a charge point"): offline or
 * connected, with a transaction running or not; the charger is disconnected and can no longer log
 * in, its sessions stay, and the id can be registered again from nothing.
 */
for (const database of ['SQLite', 'PostgreSQL'] as const)
  describe(`removing a charge point (${database})`, function () {
    this.timeout(30_000);
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

    /** the HTTP status of a WebSocket login with these credentials (101: let in) */
    async function login(id: string, password: string): Promise<boolean> {
      const client = strictCharger(csms.url, { id, password }, 'ocpp1.6');
      try {
        await client.connect();
        await client.close({ force: true });
        return true;
      } catch {
        return false;
      }
    }

    it('an offline charge point: 204, then 404, its password no longer logs in, the id starts again from nothing', async () => {
      const cp = await csms.registerChargePoint('ocpp1.6');
      const client = strictCharger(csms.url, cp, 'ocpp1.6');
      await client.connect();
      await client.call('BootNotification', v16.boot());
      await client.call('StatusNotification', v16.status(1, 'Available'));
      await client.close();
      await eventually(async () =>
        (await csms.api<ChargePointView>('GET', `/v1/charge-points/${cp.id}`)).body.online ? undefined : true,
      );

      expect((await csms.api('DELETE', `/v1/charge-points/${cp.id}`)).status).to.equal(204);
      expect((await csms.api('GET', `/v1/charge-points/${cp.id}`)).status).to.equal(404);
      expect((await csms.api('DELETE', `/v1/charge-points/${cp.id}`)).status).to.equal(404);
      expect(await login(cp.id, cp.password)).to.equal(false);

      const again = await csms.registerChargePoint('ocpp1.6', cp.id);
      const fresh = (await csms.api<ChargePointView>('GET', `/v1/charge-points/${cp.id}`)).body;
      expect(fresh.boot).to.equal(null);
      expect(fresh.connectors).to.deep.equal([]);
      expect(await login(cp.id, again.password)).to.equal(true);
    });

    it('a connected charger with a transaction: 409 unless forced; forced, it is disconnected (1008) and its session stays', async () => {
      const cp = await csms.registerChargePoint('ocpp1.6');
      const client = strictCharger(csms.url, cp, 'ocpp1.6');
      const closed = new Promise<number>((resolve) =>
        client.once('close', ({ code }: { code: number }) => resolve(code)),
      );
      await client.connect();
      await client.call('BootNotification', v16.boot());
      await client.call('StartTransaction', v16.start());

      const refused = await csms.api<{ error: { code: string } }>('DELETE', `/v1/charge-points/${cp.id}`);
      expect(refused.status).to.equal(409);
      expect(refused.body.error.code).to.equal('transaction_running');

      expect((await csms.api('DELETE', `/v1/charge-points/${cp.id}?force=true`)).status).to.equal(204);
      expect(await closed).to.equal(1008);
      expect((await csms.api('GET', `/v1/charge-points/${cp.id}`)).status).to.equal(404);
      // its session stays, closed: nothing will end it any more
      const sessions = await csms.api<Array<{ transaction_id: string; status: string; stop_reason: string }>>(
        'GET',
        `/v1/sessions?charge_point_id=${cp.id}`,
      );
      expect(sessions.body).to.have.length(1);
      expect(sessions.body[0]).to.include({ status: 'COMPLETED', stop_reason: 'ChargePointRemoved' });
      expect(await login(cp.id, cp.password)).to.equal(false);

      // registered again, the charger starts from nothing but never reuses a transaction id
      const again = await csms.registerChargePoint('ocpp1.6', cp.id);
      const back = strictCharger(csms.url, again, 'ocpp1.6');
      await back.connect();
      await back.call('BootNotification', v16.boot());
      const next = (await back.call('StartTransaction', v16.start())) as { transactionId: number };
      expect(String(next.transactionId)).to.not.equal(sessions.body[0]?.transaction_id);
      await back.close();
    });

    it('forced while charging: the session ends at its last reading, and the charger registered again delivering its end opens no second session', async () => {
      const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();
      const cp = await csms.registerChargePoint('ocpp1.6');
      const client = strictCharger(csms.url, cp, 'ocpp1.6');
      await client.connect();
      await client.call('BootNotification', v16.boot());
      const start = v16.start({ meterStart: 1000, timestamp: ago(600) });
      const { transactionId } = (await client.call('StartTransaction', start)) as { transactionId: number };
      const reading = v16.meterValues(1, transactionId, 4000);
      const readAt = ago(300);
      await client.call('MeterValues', { ...reading, meterValue: [{ ...reading.meterValue[0], timestamp: readAt }] });
      expect((await csms.api('DELETE', `/v1/charge-points/${cp.id}?force=true`)).status).to.equal(204);
      type Row = { transaction_id: string; energy_wh: number; stopped_at: string; stop_reason: string };
      const sessions = async () => (await csms.api<Row[]>('GET', `/v1/sessions?charge_point_id=${cp.id}`)).body;
      // was the time of the removal: nothing shows the charge went on after its last reading
      expect((await sessions())[0]).to.include({ energy_wh: 3000, stop_reason: 'ChargePointRemoved' });
      expect(Date.parse((await sessions())[0]?.stopped_at ?? '')).to.equal(Date.parse(readAt));

      // registered again, the charger delivers what it queued meanwhile: the start again, then the stop
      const again = await csms.registerChargePoint('ocpp1.6', cp.id);
      const back = strictCharger(csms.url, again, 'ocpp1.6');
      await back.connect();
      await back.call('BootNotification', v16.boot());
      const retried = (await back.call('StartTransaction', start)) as { transactionId: number };
      expect(retried.transactionId).to.equal(transactionId);
      await back.call('StopTransaction', v16.stop(transactionId, 6000, { timestamp: ago(60), reason: 'Local' }));
      // was a second session of the same charge (5,000 Wh beside the 3,000): 8 kWh counted for 5
      const after = await sessions();
      expect(after).to.have.length(1);
      expect(after[0]).to.include({ transaction_id: String(transactionId), stop_reason: 'ChargePointRemoved' });
      await back.close();
    });
  });
