import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import { platformModules } from '../../src/modules.js';
import type { ChargePointView } from '../../src/csms/views.js';
import type { DeviceModel } from '../../src/csms/report-store.js';
import type { Static } from '#typebox';
import { aToken221 } from '../support/ocpi-builders.js';
import { eventually } from '../support/eventually.js';
import {
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../support/platforms.js';
import { strictCharger } from '../support/rpc-client.js';
import { API_KEY, apiClient, uniqueChargePointId, type RegisteredChargePoint } from './support/csms.js';
import { v16, v201 } from './support/messages.js';

interface Operation {
  command_status: string;
  answered: boolean;
  reply?: unknown;
  reservation_id?: number;
}

/**
 * An operator's routine with two independent chargers (ocpp-rpc in strict mode, each keeping its
 * own state as firmware would), started from the README's platform and driven only through /v1
 * and OCPP (docs/CSMS.md "Scenarios").
 */
describe('CSMS scenarios: an operator and two chargers', function () {
  this.timeout(60_000);
  let env: TestEnvironment;
  let started: StartedPlatform;
  let api: ReturnType<typeof apiClient>;
  const clients: RPCClient[] = [];

  before(async () => {
    env = await embeddedEnvironment({ CSMS_API_KEY: API_KEY, OCPP_BOOT_RETRY_INTERVAL_S: '20' });
    started = await startPlatform(env, platformModules());
    api = apiClient(started.platform.url);
  });
  after(async () => {
    await Promise.all(clients.map((c) => c.close({ force: true }).catch(() => undefined)));
    await started.stop();
    await env.cleanup();
  });

  const view = async (id: string) => (await api<ChargePointView>('GET', `/v1/charge-points/${id}`)).body;
  const press = async (id: string, op: string, body: unknown = {}) => {
    const res = await api<Operation>('POST', `/v1/charge-points/${id}/${op}`, body);
    expect(res.status, `${op}: ${JSON.stringify(res.body)}`).to.equal(200);
    return res.body;
  };
  const register = async (protocol: 'ocpp1.6' | 'ocpp2.0.1', extra: Record<string, unknown> = {}) => {
    const res = await api<RegisteredChargePoint>('POST', '/v1/charge-points', {
      id: uniqueChargePointId(),
      protocol,
      ...extra,
    });
    expect(res.status).to.equal(201);
    return res.body;
  };
  const connect = async (cp: RegisteredChargePoint, protocol: 'ocpp1.6' | 'ocpp2.0.1') => {
    const client = strictCharger(started.platform.url, cp, protocol);
    clients.push(client);
    return client;
  };

  it('2.0.1: boots Pending, is accepted, reports its model, is configured, updates its firmware and resets', async () => {
    const cp = await register('ocpp2.0.1', { boot_policy: 'Pending' });
    // the charger's own device model and firmware, as its firmware keeps them
    const variables = new Map<string, string>([
      ['OCPPCommCtrlr.HeartbeatInterval', '300'],
      ['SampledDataCtrlr.TxUpdatedInterval', '60'],
    ]);
    let firmware = '1.0.0';
    let charger = await connect(cp, 'ocpp2.0.1');
    const boots: Array<{ status: string; interval: number }> = [];
    const boot = async (c: RPCClient, reason: string) => {
      boots.push(
        (await c.call(
          'BootNotification',
          v201.boot({ reason, chargingStation: { model: 'Terra AC', vendorName: 'ABB', firmwareVersion: firmware } }),
        )) as {
          status: string;
          interval: number;
        },
      );
    };
    const firmwareUpdates: Array<{ requestId: number; firmware: { location: string } }> = [];
    const resets: unknown[] = [];
    const baseReports: Array<{ requestId: number; reportBase: string }> = [];
    // the model as NotifyReport messages, one variable each, after the answer (B07)
    const sendReport = async (c: RPCClient, requestId: number) => {
      const entries = [...variables];
      for (const [seqNo, [name, value]] of entries.entries()) {
        await c.call('NotifyReport', {
          requestId,
          generatedAt: new Date().toISOString(),
          seqNo,
          tbc: seqNo < entries.length - 1,
          reportData: [
            {
              component: { name: name.split('.')[0] },
              variable: { name: name.split('.')[1] },
              variableAttribute: [{ type: 'Actual', value, mutability: 'ReadWrite' }],
              variableCharacteristics: { dataType: 'integer', supportsMonitoring: false },
            },
          ],
        });
      }
    };
    const handlers = (c: RPCClient) => {
      c.handle('GetBaseReport', ({ params }) => {
        const p = params as { requestId: number; reportBase: string };
        baseReports.push(p);
        setImmediate(() => void sendReport(c, p.requestId));
        return Promise.resolve({ status: 'Accepted' });
      });
      c.handle('TriggerMessage', ({ params }) => {
        if ((params as { requestedMessage: string }).requestedMessage === 'BootNotification')
          setImmediate(() => void boot(c, 'Triggered'));
        return Promise.resolve({ status: 'Accepted' });
      });
      c.handle('GetVariables', ({ params }) => {
        const wanted = (
          params as { getVariableData: Array<{ component: { name: string }; variable: { name: string } }> }
        ).getVariableData;
        return Promise.resolve({
          getVariableResult: wanted.map((v) => {
            const value = variables.get(`${v.component.name}.${v.variable.name}`);
            return value === undefined
              ? { attributeStatus: 'UnknownVariable', component: v.component, variable: v.variable }
              : { attributeStatus: 'Accepted', attributeValue: value, component: v.component, variable: v.variable };
          }),
        });
      });
      c.handle('SetVariables', ({ params }) => {
        const data = (
          params as {
            setVariableData: Array<{ attributeValue: string; component: { name: string }; variable: { name: string } }>;
          }
        ).setVariableData;
        return Promise.resolve({
          setVariableResult: data.map((v) => {
            variables.set(`${v.component.name}.${v.variable.name}`, v.attributeValue);
            return { attributeStatus: 'Accepted', component: v.component, variable: v.variable };
          }),
        });
      });
      c.handle('UpdateFirmware', ({ params }) => {
        firmwareUpdates.push(params as (typeof firmwareUpdates)[number]);
        return Promise.resolve({ status: 'Accepted' });
      });
      c.handle('Reset', ({ params }) => {
        resets.push(params);
        return Promise.resolve({ status: 'Accepted' });
      });
    };
    handlers(charger);
    await charger.connect();

    // 1. Pending: the charger waits for its operator, who sees it
    await boot(charger, 'PowerUp');
    expect(boots[0]).to.deep.equal({ ...boots[0], status: 'Pending', interval: 20 });
    expect(await view(cp.id)).to.deep.include({ registration: 'Pending', boot_policy: 'Pending' });

    // 2. the operator accepts it: it is asked to boot again and is Accepted
    const put = await api('PUT', `/v1/charge-points/${cp.id}/boot-policy`, { policy: 'Accepted' });
    expect(put.status).to.equal(200);
    await eventually(async () => (boots.length === 2 ? true : undefined));
    expect(boots[1]).to.deep.include({ status: 'Accepted', interval: 300 });
    await eventually(async () => ((await view(cp.id)).registration === 'Accepted' ? true : undefined));

    // 3. the operator asks for the device model; the charger sends it in two parts
    let op = await press(cp.id, 'get-base-report', { report_base: 'full' });
    expect(op.command_status).to.equal('Accepted');
    expect(baseReports).to.have.length(1);
    expect(baseReports[0]?.reportBase).to.equal('FullInventory');
    await eventually(async () => {
      const m = await api<Static<typeof DeviceModel>>('GET', `/v1/charge-points/${cp.id}/device-model`);
      return m.body.variables.length === 2 ? true : undefined;
    });
    const model = await api<Static<typeof DeviceModel>>('GET', `/v1/charge-points/${cp.id}/device-model`);
    expect(model.body.variables.map((v) => `${v.component}.${v.variable}=${v.value}`)).to.have.members([
      'OCPPCommCtrlr.HeartbeatInterval=300',
      'SampledDataCtrlr.TxUpdatedInterval=60',
    ]);

    // 4. the operator reads and changes a variable; the charger keeps the new value
    const heartbeat = { component: 'OCPPCommCtrlr', variable: 'HeartbeatInterval' };
    op = await press(cp.id, 'get-variables', { variables: [heartbeat] });
    expect(op.reply).to.deep.nested.include({ 'getVariableResult[0].attributeValue': '300' });
    op = await press(cp.id, 'set-variables', { variables: [{ ...heartbeat, value: '120' }] });
    expect(op.reply).to.deep.nested.include({ 'setVariableResult[0].attributeStatus': 'Accepted' });
    op = await press(cp.id, 'get-variables', { variables: [heartbeat] });
    expect(op.reply).to.deep.nested.include({ 'getVariableResult[0].attributeValue': '120' });

    // 5. a firmware update, its progress reported by the charger and shown on the charge point
    op = await press(cp.id, 'update-firmware', { location: 'https://firmware.example/2.0.0.bin' });
    expect(op.command_status).to.equal('Accepted');
    const requestId = firmwareUpdates[0]?.requestId;
    expect(firmwareUpdates[0]?.firmware.location).to.equal('https://firmware.example/2.0.0.bin');
    for (const status of ['Downloading', 'Downloaded', 'Installing', 'Installed']) {
      await charger.call('FirmwareStatusNotification', { status, requestId });
      expect((await view(cp.id)).operations?.firmware).to.include({ status, request_id: requestId });
    }
    firmware = '2.0.0';
    const events = await api<Array<{ summary: string }>>('GET', `/v1/charge-points/${cp.id}/events?limit=10`);
    expect(events.body.map((e) => e.summary).join('\n')).to.contain('Installed');

    // 6. a reset: the charger restarts, reconnects with its password and boots with its new firmware
    op = await press(cp.id, 'reset', { type: 'hard' });
    expect(op.command_status).to.equal('Accepted');
    expect(resets).to.deep.equal([{ type: 'Immediate' }]);
    await charger.close();
    await eventually(async () => ((await view(cp.id)).online ? undefined : true));
    charger = await connect(cp, 'ocpp2.0.1');
    handlers(charger);
    await charger.connect();
    await boot(charger, 'RemoteReset');
    expect(boots[2]).to.deep.include({ status: 'Accepted' });
    const after = await view(cp.id);
    expect(after.online).to.equal(true);
    expect(after.boot).to.include({ firmware_version: '2.0.0' });
  });

  it('1.6: its local list is synced from the tokens, and a reservation is used by the start that names it', async () => {
    const cp = await register('ocpp1.6');
    const charger = await connect(cp, 'ocpp1.6');
    // what the charger's firmware keeps: its local list and its reservations
    let listVersion = 0;
    const localList = new Map<string, string>();
    const reservations = new Map<number, { connectorId: number; idTag: string }>();
    charger.handle('SendLocalList', ({ params }) => {
      const p = params as {
        listVersion: number;
        updateType: string;
        localAuthorizationList?: Array<{ idTag: string; idTagInfo?: { status: string } }>;
      };
      if (p.updateType === 'Differential' && p.listVersion <= listVersion)
        return Promise.resolve({ status: 'VersionMismatch' });
      if (p.updateType === 'Full') localList.clear();
      for (const e of p.localAuthorizationList ?? [])
        if (e.idTagInfo) localList.set(e.idTag, e.idTagInfo.status);
        else localList.delete(e.idTag);
      listVersion = p.listVersion;
      return Promise.resolve({ status: 'Accepted' });
    });
    charger.handle('GetLocalListVersion', () => Promise.resolve({ listVersion }));
    charger.handle('ReserveNow', ({ params }) => {
      const p = params as { reservationId: number; connectorId: number; idTag: string };
      reservations.set(p.reservationId, { connectorId: p.connectorId, idTag: p.idTag });
      return Promise.resolve({ status: 'Accepted' });
    });
    await charger.connect();
    expect(await charger.call('BootNotification', v16.boot())).to.include({ status: 'Accepted' });

    // the operator's card and a partner's card that may be used offline
    const tag = Math.random().toString(36).slice(2, 10).toUpperCase();
    const card = aToken221({ uid: `CARD${tag}` });
    const partner = aToken221({ country_code: 'DE', party_id: 'ABC', uid: `DE${tag}`, whitelist: 'ALWAYS' });
    for (const t of [card, partner]) {
      const res = await api(
        'PUT',
        `/v1/ocpi/tokens/${String(t.country_code)}/${String(t.party_id)}/${String(t.uid)}`,
        t,
      );
      expect(res.status).to.be.oneOf([200, 201]);
    }

    // 1. the local list: the operator syncs it and reads the version back from the charger
    const sync = await api<{ update: string; commands: Operation[] }>(
      'POST',
      `/v1/charge-points/${cp.id}/sync-local-list`,
      {},
    );
    expect(sync.body.update).to.equal('full');
    expect(sync.body.commands.map((c) => c.command_status)).to.deep.equal(['Accepted']);
    expect(localList.get(String(card.uid))).to.equal('Accepted');
    expect(localList.get(String(partner.uid))).to.equal('Accepted');
    expect((await press(cp.id, 'get-local-list-version')).reply).to.deep.equal({ listVersion: 1 });

    // the card is withdrawn: the next sync blocks it on the charger with a differential update
    const withdrawn = await api('PUT', `/v1/ocpi/tokens/NL/EVP/${String(card.uid)}`, {
      ...card,
      valid: false,
      last_updated: new Date().toISOString(),
    });
    expect(withdrawn.status).to.be.oneOf([200, 201]);
    const next = await api<{ update: string; changes: number }>(
      'POST',
      `/v1/charge-points/${cp.id}/sync-local-list`,
      {},
    );
    expect(next.body).to.include({ update: 'differential', changes: 1 });
    expect(localList.get(String(card.uid))).to.equal('Blocked');
    expect(listVersion).to.equal(2);

    // 2. a reservation for the partner's card on connector 1, used by the start that names it
    const expiry = new Date(Date.now() + 30 * 60_000).toISOString();
    const reserved = await press(cp.id, 'reserve', { id_tag: String(partner.uid), expiry_date: expiry, evse_id: 1 });
    expect(reserved.command_status).to.equal('Accepted');
    const reservationId = reserved.reservation_id ?? -1;
    expect(reservations.get(reservationId)).to.deep.equal({ connectorId: 1, idTag: partner.uid });
    await charger.call('StatusNotification', v16.status(1, 'Reserved'));
    expect((await view(cp.id)).reservations.map((r) => r.reservation_id)).to.deep.equal([reservationId]);

    const auth = (await charger.call('Authorize', v16.authorize(String(partner.uid)))) as {
      idTagInfo: { status: string };
    };
    expect(auth.idTagInfo.status).to.equal('Accepted');
    const start = (await charger.call('StartTransaction', {
      ...v16.start({ connectorId: 1, idTag: String(partner.uid), meterStart: 0 }),
      reservationId,
    })) as { transactionId: number; idTagInfo: { status: string } };
    expect(start.idTagInfo.status).to.equal('Accepted');
    reservations.delete(reservationId);
    await eventually(async () => ((await view(cp.id)).reservations.length === 0 ? true : undefined));
    const sessions = await api<Array<{ transaction_id: string; id_tag: string; status: string }>>(
      'GET',
      `/v1/sessions?charge_point_id=${cp.id}`,
    );
    expect(sessions.body).to.have.length(1);
    expect(sessions.body[0]).to.include({ transaction_id: String(start.transactionId), id_tag: partner.uid });

    // the withdrawn card is refused online too
    const refused = (await charger.call('Authorize', v16.authorize(String(card.uid)))) as {
      idTagInfo: { status: string };
    };
    expect(refused.idTagInfo.status).to.equal('Blocked');
  });

  it('1.6: a StartTransaction retried after its card was withdrawn is the same transaction, its card Blocked', async () => {
    const cp = await register('ocpp1.6');
    const charger = await connect(cp, 'ocpp1.6');
    await charger.connect();
    await charger.call('BootNotification', v16.boot());
    const card = aToken221({ uid: `R${Math.random().toString(36).slice(2, 10).toUpperCase()}` });
    const path = `/v1/ocpi/tokens/${String(card.country_code)}/${String(card.party_id)}/${String(card.uid)}`;
    expect((await api('PUT', path, card)).status).to.be.oneOf([200, 201]);
    type Started = { transactionId: number; idTagInfo: { status: string } };
    const start = v16.start({ idTag: String(card.uid), meterStart: 100 });
    const first = (await charger.call('StartTransaction', start)) as Started;
    expect(first.idTagInfo.status).to.equal('Accepted');
    await charger.call('StopTransaction', v16.stop(first.transactionId, 200));
    const withdrawn = { ...card, valid: false, last_updated: new Date().toISOString() };
    expect((await api('PUT', path, withdrawn)).status).to.be.oneOf([200, 201]);
    // the first start's answer was lost and the charger sends it again: the transaction it
    // opened, which the CSMS keeps, and the card as it is now (was Accepted with a new expiry,
    // which put the withdrawn card back in the charger's cache)
    const retry = (await charger.call('StartTransaction', start)) as Started;
    expect(retry).to.deep.equal({ transactionId: first.transactionId, idTagInfo: { status: 'Blocked' } });
    // a new start with the card is refused
    const later = (await charger.call(
      'StartTransaction',
      v16.start({ idTag: String(card.uid), meterStart: 300 }),
    )) as Started;
    expect(later.idTagInfo.status).to.equal('Blocked');
  });
});
