import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import type { ChargePointView } from '../../src/csms/views.js';
import type { UnknownChargePoint } from '../../src/csms/unknown-charge-points.js';
import { eventually } from '../support/eventually.js';
import { clusterEnvironment, embeddedEnvironment, type TestEnvironment } from '../support/platforms.js';
import { strictCharger } from '../support/rpc-client.js';
import { API_KEY, startCsms, uniqueChargePointId, type CsmsUnderTest } from './support/csms.js';
import { v16, v201 } from './support/messages.js';

interface BootReply {
  status: string;
  interval: number;
  currentTime: string;
}

/** The CALLERROR code a call got (ocpp-rpc rejects with it). */
async function errorOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
  } catch (err) {
    return (err as { rpcErrorCode?: string }).rpcErrorCode ?? String(err);
  }
  throw new Error('the call was answered, a CALLERROR was expected');
}

const SETTINGS = {
  CSMS_API_KEY: API_KEY,
  OCPP_BOOT_POLICY: 'Pending',
  OCPP_HEARTBEAT_INTERVAL_S: '120',
  OCPP_BOOT_RETRY_INTERVAL_S: '30',
};

/**
 * Boot policy, registration status and unknown chargers (docs/CSMS.md "Boot and registration
 * policy"), with ocpp-rpc in strict mode as the charger, on SQLite and on PostgreSQL.
 */
for (const mode of ['embedded', 'cluster'] as const) {
  describe(`boot policy and unknown chargers (${mode === 'embedded' ? 'SQLite' : 'PostgreSQL'})`, function () {
    this.timeout(30_000);
    let env: TestEnvironment;
    let csms: CsmsUnderTest;
    before(async () => {
      env = mode === 'embedded' ? await embeddedEnvironment(SETTINGS) : await clusterEnvironment(SETTINGS);
      csms = await startCsms({ unknownFlushMs: 50 }, env);
    });
    after(async () => {
      await csms.stop();
      await env.cleanup();
    });

    const view = async (id: string): Promise<ChargePointView> =>
      (await csms.api<ChargePointView>('GET', `/v1/charge-points/${id}`)).body;

    it('2.0.1: boots Pending (retry interval); only BootNotification is served; the operator accepts it, it is triggered and boots Accepted', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const client = strictCharger(csms.url, cp, 'ocpp2.0.1');
      const reboots: Array<Promise<BootReply>> = [];
      client.handle('TriggerMessage', ({ params }) => {
        if ((params as { requestedMessage: string }).requestedMessage === 'BootNotification')
          setImmediate(() =>
            reboots.push(client.call('BootNotification', v201.boot({ reason: 'Triggered' })) as Promise<BootReply>),
          );
        return Promise.resolve({ status: 'Accepted' });
      });
      await client.connect();
      const first = (await client.call('BootNotification', v201.boot())) as BootReply;
      expect(first).to.include({ status: 'Pending', interval: 30 });
      expect(await errorOf(client.call('Heartbeat', {}))).to.equal('SecurityError');
      expect(await errorOf(client.call('StatusNotification', v201.status(1, 1)))).to.equal('SecurityError');
      // the operator sees it with its boot information before accepting it
      expect(await view(cp.id)).to.deep.include({ registration: 'Pending', boot_policy: null });
      expect((await view(cp.id)).boot).to.include({ vendor: 'ABB', model: 'Terra AC' });
      // nothing that charges is sent while Pending
      const start = await csms.api<{ command_status: string; detail?: string }>(
        'POST',
        `/v1/charge-points/${cp.id}/remote-start`,
        { id_tag: 'TAG-1' },
      );
      expect(start.body.command_status).to.equal('refused');
      // the answer says why (it said nothing, and the record that it would wait, which it did not)
      expect(start.body.detail).to.equal(
        'the charger is Pending: start is not sent before it is Accepted (send it again then)',
      );
      // a reservation refused before it was sent was never made: no id to quote or cancel
      // (was reservation_id 10, of which cancel-reservation answered 404)
      const reserve = await csms.api<Record<string, unknown>>('POST', `/v1/charge-points/${cp.id}/reserve`, {
        id_tag: 'TAG-1',
        expiry_date: new Date(Date.now() + 3_600_000).toISOString(),
      });
      expect(reserve.status).to.equal(200);
      expect(reserve.body).to.include({ command_status: 'refused', answered: true });
      expect(reserve.body).to.not.have.property('reservation_id');
      expect((await view(cp.id)).reservations).to.deep.equal([]);

      const put = await csms.api<ChargePointView>('PUT', `/v1/charge-points/${cp.id}/boot-policy`, {
        policy: 'Accepted',
      });
      expect(put.status).to.equal(200);
      expect(put.body.boot_policy).to.equal('Accepted');
      await eventually(async () => (reboots.length === 1 ? true : undefined), {
        timeoutMs: 5000,
        what: 'the triggered BootNotification',
      });
      const second = await reboots[0];
      expect(second).to.include({ status: 'Accepted', interval: 120 });
      expect(await client.call('Heartbeat', {})).to.have.property('currentTime');
      expect(await view(cp.id)).to.deep.include({ registration: 'Accepted', boot_policy: 'Accepted' });
      await client.close();
    });

    it('1.6: a charger registered Rejected gets Rejected with the retry interval, its calls SecurityError, and no calls from the CSMS', async () => {
      const id = uniqueChargePointId();
      const created = await csms.api<{ password: string; boot_policy: string }>('POST', '/v1/charge-points', {
        id,
        protocol: 'ocpp1.6',
        boot_policy: 'Rejected',
      });
      expect(created.body.boot_policy).to.equal('Rejected');
      const client = strictCharger(csms.url, { id, password: created.body.password }, 'ocpp1.6');
      let calls = 0;
      client.handle(() => {
        calls += 1;
        return Promise.resolve({});
      });
      await client.connect();
      expect(await client.call('BootNotification', v16.boot())).to.include({ status: 'Rejected', interval: 30 });
      expect(await errorOf(client.call('StatusNotification', v16.status(1)))).to.equal('SecurityError');
      const reset = await csms.api<{ command_status: string; detail: string }>(
        'POST',
        `/v1/charge-points/${id}/reset`,
        { type: 'soft' },
      );
      expect(reset.body.command_status).to.equal('refused');
      // the answer says why, as the command record does
      expect(reset.body.detail)
        .to.be.a('string')
        .and.match(/Rejected/);
      // accepted while Rejected: not called (it boots again after the retry interval), then Accepted
      await csms.api('PUT', `/v1/charge-points/${id}/boot-policy`, { policy: 'Accepted' });
      expect(await client.call('BootNotification', v16.boot())).to.include({ status: 'Accepted', interval: 120 });
      expect(calls).to.equal(0);
      await client.close();
    });

    it('an Accepted charger gets OCPP_HEARTBEAT_INTERVAL_S; lowered to Pending while connected, it is triggered and held to Pending from the boot that tells it', async () => {
      const cp = await csms.registerChargePoint('ocpp1.6');
      await csms.api('PUT', `/v1/charge-points/${cp.id}/boot-policy`, { policy: 'Accepted' });
      const client = strictCharger(csms.url, cp, 'ocpp1.6');
      const triggered: unknown[] = [];
      client.handle('TriggerMessage', ({ params }) => {
        triggered.push(params);
        return Promise.resolve({ status: 'Accepted' });
      });
      await client.connect();
      expect(await client.call('BootNotification', v16.boot())).to.include({ status: 'Accepted', interval: 120 });
      expect(await client.call('Heartbeat', {})).to.have.property('currentTime');
      // back to the default (Pending): it must learn it, and is held to it once told
      await csms.api('PUT', `/v1/charge-points/${cp.id}/boot-policy`, { policy: null });
      await eventually(async () => (triggered.length === 1 ? true : undefined), {
        timeoutMs: 5000,
        what: 'a TriggerMessage',
      });
      expect(triggered).to.deep.equal([{ requestedMessage: 'BootNotification' }]);
      // not told yet: still served as Accepted (its calls were answered SecurityError at once)
      expect(await client.call('Heartbeat', {})).to.have.property('currentTime');
      expect(await client.call('BootNotification', v16.boot())).to.include({ status: 'Pending', interval: 30 });
      expect(await errorOf(client.call('Heartbeat', {}))).to.equal('SecurityError');
      await client.close();
    });

    it('a Pending charger sends what it was triggered to send after it was held there; a refused or older trigger lets nothing in', async () => {
      const cp = await csms.registerChargePoint('ocpp1.6');
      await csms.api('PUT', `/v1/charge-points/${cp.id}/boot-policy`, { policy: 'Accepted' });
      const client = strictCharger(csms.url, cp, 'ocpp1.6');
      let answer = 'NotImplemented';
      const asked: string[] = [];
      client.handle('TriggerMessage', ({ params }) => {
        asked.push((params as { requestedMessage: string }).requestedMessage);
        return Promise.resolve({ status: answer });
      });
      await client.connect();
      await client.call('BootNotification', v16.boot());
      const trigger = (message: string) =>
        csms.api<{ command_status: string }>('POST', `/v1/charge-points/${cp.id}/trigger`, { message });
      // refused while Accepted, then the charger is held to Pending: was served ever after
      expect((await trigger('Heartbeat')).body.command_status).to.equal('NotImplemented');
      await csms.api('PUT', `/v1/charge-points/${cp.id}/boot-policy`, { policy: 'Pending' });
      // the CSMS asks it to boot (this charger does not), and it boots later by itself
      await eventually(async () => (asked.includes('BootNotification') ? true : undefined));
      expect(await client.call('BootNotification', v16.boot())).to.include({ status: 'Pending' });
      expect(await errorOf(client.call('Heartbeat', {}))).to.equal('SecurityError');
      // refused while Pending: nothing
      expect((await trigger('Heartbeat')).body.command_status).to.equal('NotImplemented');
      expect(await errorOf(client.call('Heartbeat', {}))).to.equal('SecurityError');
      // accepted while Pending: served
      answer = 'Accepted';
      expect((await trigger('Heartbeat')).body.command_status).to.equal('Accepted');
      expect(await client.call('Heartbeat', {})).to.have.property('currentTime');
      expect(await errorOf(client.call('StatusNotification', v16.status(1, 'Available')))).to.equal('SecurityError');
      await client.close();
    });

    it('2.0.1: a Pending charger triggered for the status of one connector may send that one, not another', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const client = strictCharger(csms.url, cp, 'ocpp2.0.1');
      client.handle('TriggerMessage', () => Promise.resolve({ status: 'Accepted' }));
      await client.connect();
      expect(await client.call('BootNotification', v201.boot())).to.include({ status: 'Pending' });
      const triggered = await csms.api<{ command_status: string }>('POST', `/v1/charge-points/${cp.id}/trigger`, {
        message: 'StatusNotification',
        evse_id: 1,
        connector_id: 1,
      });
      expect(triggered.body.command_status).to.equal('Accepted');
      expect(await client.call('StatusNotification', v201.status(1, 1))).to.deep.equal({});
      // another EVSE, another connector of it: not asked for (both were served for 60 s)
      expect(await errorOf(client.call('StatusNotification', v201.status(2, 1)))).to.equal('SecurityError');
      expect(await errorOf(client.call('StatusNotification', v201.status(1, 2)))).to.equal('SecurityError');
      // a trigger of an EVSE's meter values lets in that EVSE's
      await csms.api('POST', `/v1/charge-points/${cp.id}/trigger`, { message: 'MeterValues', evse_id: 2 });
      expect(await client.call('MeterValues', v201.meterValues(2, 1000))).to.deep.equal({});
      expect(await errorOf(client.call('MeterValues', v201.meterValues(3, 1000)))).to.equal('SecurityError');
      await client.close();
    });

    it('2.0.1: lowered while a transaction runs, a charger that refuses the boot trigger (F06.FR.17) is served as Accepted until it boots: its transaction ends with its energy', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      await csms.api('PUT', `/v1/charge-points/${cp.id}/boot-policy`, { policy: 'Accepted' });
      const client = strictCharger(csms.url, cp, 'ocpp2.0.1');
      const asked: string[] = [];
      client.handle('TriggerMessage', ({ params }) => {
        const requested = (params as { requestedMessage: string }).requestedMessage;
        asked.push(requested);
        // F06.FR.17: a station whose last boot was Accepted refuses a BootNotification trigger
        return Promise.resolve({ status: requested === 'BootNotification' ? 'Rejected' : 'Accepted' });
      });
      await client.connect();
      expect(await client.call('BootNotification', v201.boot())).to.include({ status: 'Accepted' });
      const transactionId = `TX-${cp.id}`;
      await client.call(
        'TransactionEvent',
        v201.transactionEvent({ eventType: 'Started', transactionId, seqNo: 0, wh: 1000 }),
      );
      await csms.api('PUT', `/v1/charge-points/${cp.id}/boot-policy`, { policy: 'Pending' });
      await eventually(async () => (asked.includes('BootNotification') ? true : undefined), {
        timeoutMs: 5000,
        what: 'the TriggerMessage BootNotification',
      });
      // it was not told: its calls are served as before (they were SecurityError, and the energy lost)
      expect(await client.call('Heartbeat', {})).to.have.property('currentTime');
      // and the operator may still stop its transaction (it was refused under the lowered policy)
      const stopped: unknown[] = [];
      client.handle('RequestStopTransaction', ({ params }) => {
        stopped.push(params);
        return Promise.resolve({ status: 'Accepted' });
      });
      const stop = await csms.api<{ command_status: string }>(
        'POST',
        `/v1/charge-points/${cp.id}/remote-stop?wait_ms=5000`,
        { transaction_id: transactionId },
      );
      expect(stop.body.command_status).to.equal('Accepted');
      expect(stopped).to.deep.equal([{ transactionId }]);
      await client.call(
        'TransactionEvent',
        v201.transactionEvent({ eventType: 'Updated', transactionId, seqNo: 1, wh: 3000 }),
      );
      await client.call(
        'TransactionEvent',
        v201.transactionEvent({ eventType: 'Ended', transactionId, seqNo: 2, wh: 5000 }),
      );
      const sessions = await csms.api<Array<{ transaction_id: string; status: string; energy_wh: number }>>(
        'GET',
        `/v1/sessions?charge_point_id=${cp.id}`,
      );
      expect(sessions.body).to.have.length(1);
      expect(sessions.body[0]).to.include({ transaction_id: transactionId, status: 'COMPLETED', energy_wh: 4000 });
      // the operator sees what it was told beside the policy; nothing that charges is sent to it
      expect(await view(cp.id)).to.deep.include({ registration: 'Accepted', boot_policy: 'Pending' });
      const start = await csms.api<{ command_status: string; detail?: string }>(
        'POST',
        `/v1/charge-points/${cp.id}/remote-start`,
        { id_tag: 'TAG-1', evse_id: 1 },
      );
      expect(start.body.command_status).to.equal('refused');
      // once a boot tells it, it is held to Pending
      expect(await client.call('BootNotification', v201.boot({ reason: 'PowerUp' }))).to.include({ status: 'Pending' });
      expect(await errorOf(client.call('Heartbeat', {}))).to.equal('SecurityError');
      expect(await view(cp.id)).to.deep.include({ registration: 'Pending', boot_policy: 'Pending' });
      await client.close();
    });

    it('2.0.1: lowered to Rejected, a charger that refuses the boot trigger may be reset, and learns Rejected at the boot after it', async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      await csms.api('PUT', `/v1/charge-points/${cp.id}/boot-policy`, { policy: 'Accepted' });
      const client = strictCharger(csms.url, cp, 'ocpp2.0.1');
      const asked: string[] = [];
      client.handle('TriggerMessage', ({ params }) => {
        asked.push((params as { requestedMessage: string }).requestedMessage);
        return Promise.resolve({ status: 'Rejected' });
      });
      client.handle('Reset', () => Promise.resolve({ status: 'Accepted' }));
      await client.connect();
      expect(await client.call('BootNotification', v201.boot())).to.include({ status: 'Accepted' });
      await csms.api('PUT', `/v1/charge-points/${cp.id}/boot-policy`, { policy: 'Rejected' });
      await eventually(async () => (asked.includes('BootNotification') ? true : undefined));
      // was refused: "the charger is Rejected: the CSMS sends it nothing", though it was not told
      const reset = await csms.api<{ command_status: string }>('POST', `/v1/charge-points/${cp.id}/reset`, {
        type: 'soft',
      });
      expect(reset.body.command_status).to.equal('Accepted');
      // nothing that charges goes to it
      const start = await csms.api<{ command_status: string; detail?: string }>(
        'POST',
        `/v1/charge-points/${cp.id}/remote-start`,
        { id_tag: 'TAG-1', evse_id: 1 },
      );
      expect(start.body).to.include({ command_status: 'refused' });
      expect(start.body.detail).to.equal(
        'the charger is Rejected: start is not sent before it is Accepted (send it again then)',
      );
      // the boot after the reset tells it
      expect(await client.call('BootNotification', v201.boot({ reason: 'RemoteReset' }))).to.include({
        status: 'Rejected',
      });
      expect(await errorOf(client.call('Heartbeat', {}))).to.equal('SecurityError');
      await client.close();
    });

    it('lists refused logins on /v1/unknown-charge-points with reason, address and attempts, never the password; registers one as Pending', async () => {
      const unknownId = uniqueChargePointId('STRANGER');
      const secret = 'not-a-key-we-ever-issued-0123';
      for (let i = 0; i < 2; i += 1) {
        const stranger = strictCharger(csms.url, { id: unknownId, password: secret }, 'ocpp2.0.1');
        expect(await errorOf(stranger.connect())).to.not.equal('');
      }
      const known = await csms.registerChargePoint('ocpp1.6');
      const wrong = strictCharger(csms.url, { id: known.id, password: 'wrong-password-0123456789' }, 'ocpp1.6');
      await errorOf(wrong.connect());

      const listed = await eventually(
        async () => {
          const res = await csms.api<UnknownChargePoint[]>('GET', '/v1/unknown-charge-points?limit=1000');
          const ours = res.body.filter((u) => u.id === unknownId || u.id === known.id);
          return ours.length === 2 ? res : undefined;
        },
        { timeoutMs: 5000, what: 'both refused logins listed' },
      );
      expect(listed.headers.get('x-total-count')).to.be.a('string');
      expect(JSON.stringify(listed.body)).to.not.contain(secret);
      const stranger = listed.body.find((u) => u.id === unknownId);
      expect(stranger).to.include({ reason: 'unknown', address: '127.0.0.1', attempts: 2 });
      expect(listed.body.find((u) => u.id === known.id)).to.include({ reason: 'bad_password', attempts: 1 });
      const paged = await csms.api<UnknownChargePoint[]>('GET', '/v1/unknown-charge-points?limit=1');
      expect(paged.body).to.have.length(1);
      expect(paged.headers.get('link')).to.contain('rel="next"');

      // registered from the list: Pending, with a key of its own; gone from the list
      const registered = await csms.api<{ id: string; password: string; boot_policy: string }>(
        'POST',
        `/v1/unknown-charge-points/${unknownId}/register`,
        { protocol: 'ocpp2.0.1' },
      );
      expect(registered.status).to.equal(201);
      expect(registered.body).to.include({ id: unknownId, boot_policy: 'Pending' });
      const after = await csms.api<UnknownChargePoint[]>('GET', '/v1/unknown-charge-points?limit=1000');
      expect(after.body.map((u) => u.id)).to.not.include(unknownId);
      expect(
        (await csms.api('POST', `/v1/unknown-charge-points/${unknownId}/register`, { protocol: 'ocpp1.6' })).status,
      ).to.equal(404);
      expect(
        (await csms.api('POST', `/v1/unknown-charge-points/${known.id}/register`, { protocol: 'ocpp1.6' })).status,
      ).to.equal(409);

      const client = strictCharger(csms.url, { id: unknownId, password: registered.body.password }, 'ocpp2.0.1');
      await client.connect();
      expect(await client.call('BootNotification', v201.boot())).to.include({ status: 'Pending' });
      await client.close();
    });
  });
}

/** A charger whose policy is Accepted, before policies existed as after: nothing changes for it. */
describe('boot policy default (Accepted)', function () {
  this.timeout(30_000);
  let env: TestEnvironment;
  let csms: CsmsUnderTest;
  before(async () => {
    env = await embeddedEnvironment({ CSMS_API_KEY: API_KEY });
    csms = await startCsms({}, env);
  });
  after(async () => {
    await csms.stop();
    await env.cleanup();
  });

  it('answers Accepted with 300 s and serves calls before the boot', async () => {
    const cp = await csms.registerChargePoint('ocpp2.0.1');
    const client: RPCClient = strictCharger(csms.url, cp, 'ocpp2.0.1');
    await client.connect();
    expect(await client.call('Heartbeat', {})).to.have.property('currentTime');
    expect(await client.call('BootNotification', v201.boot())).to.include({ status: 'Accepted', interval: 300 });
    await client.close();
  });
});
