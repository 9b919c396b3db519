import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import type { ChargePointView } from '../../src/csms/views.js';
import { eventually } from '../support/eventually.js';
import { strictCharger } from '../support/rpc-client.js';
import { startCsms, type CsmsUnderTest } from './support/csms.js';
import { v16, v201 } from './support/messages.js';

/**
 * The operator's operations (docs/CSMS.md "Operations"), pressed through /v1 and answered by an
 * independent charger (ocpp-rpc in strict mode, which checks each of our calls against its own
 * copy of the official schemas): what the charger receives, what the operator reads back.
 */
describe('operations on a charger through /v1, both versions', function () {
  this.timeout(30_000);
  let csms: CsmsUnderTest;
  before(async () => {
    csms = await startCsms();
  });
  after(async () => csms.stop());

  interface Result {
    result: string;
    command_id: string;
    command_status: string;
    answered: boolean;
    detail: string | null;
    reply?: unknown;
  }
  const received: Record<string, unknown[]> = {};

  /** A booted charger answering each action with `answers[action]`, recording what it got. */
  async function charger(
    protocol: 'ocpp1.6' | 'ocpp2.0.1',
    answers: Record<string, Record<string, unknown>>,
  ): Promise<{ id: string; client: RPCClient }> {
    const cp = await csms.registerChargePoint(protocol);
    const client = strictCharger(csms.url, cp, protocol);
    for (const [action, answer] of Object.entries(answers))
      client.handle(action, ({ params }) => {
        (received[`${cp.id}:${action}`] ??= []).push(params);
        return Promise.resolve(answer);
      });
    await client.connect();
    await client.call('BootNotification', protocol === 'ocpp1.6' ? v16.boot() : v201.boot());
    return { id: cp.id, client };
  }

  const press = async (id: string, op: string, body: unknown = {}, query = '') => {
    const res = await csms.api<Result>('POST', `/v1/charge-points/${id}/${op}${query}`, body);
    return res;
  };

  it('OCPP 1.6: availability, reset, cache, configuration, local list, DataTransfer, firmware, diagnostics, security log', async () => {
    const { id, client } = await charger('ocpp1.6', {
      ChangeAvailability: { status: 'Scheduled' },
      Reset: { status: 'Accepted' },
      ClearCache: { status: 'Rejected' },
      GetConfiguration: {
        configurationKey: [
          { key: 'HeartbeatInterval', readonly: false, value: '300' },
          // write-only in OCPP, but firmware that returns it must not have it stored or shown
          { key: 'AuthorizationKey', readonly: false, value: '3132333435363738393031323334353637383930' },
        ],
        unknownKey: ['Nope'],
      },
      ChangeConfiguration: { status: 'RebootRequired' },
      GetLocalListVersion: { listVersion: 3 },
      DataTransfer: { status: 'Accepted', data: 'pong' },
      UpdateFirmware: {},
      GetDiagnostics: { fileName: 'diag.zip' },
      GetLog: { status: 'Accepted', filename: 'security.log' },
      UnlockConnector: { status: 'Unlocked' },
      TriggerMessage: { status: 'Accepted' },
    });
    const got = (action: string): unknown[] => received[`${id}:${action}`] ?? [];

    let res = await press(id, 'change-availability', { operative: false, evse_id: 1 });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ result: 'ACCEPTED', command_status: 'Scheduled', answered: true });
    expect(got('ChangeAvailability')).to.deep.equal([{ connectorId: 1, type: 'Inoperative' }]);

    expect((await press(id, 'reset', { type: 'hard' })).body.command_status).to.equal('Accepted');
    expect(got('Reset')).to.deep.equal([{ type: 'Hard' }]);
    expect((await press(id, 'clear-cache')).body.command_status).to.equal('Rejected');
    // an operation whose fields are all optional is sent without a body too, as `curl -X POST` does
    const bare = await csms.api<Result>('POST', `/v1/charge-points/${id}/clear-cache`);
    expect(bare.status, JSON.stringify(bare.body)).to.equal(200);
    expect(got('ClearCache')).to.deep.equal([{}, {}]);
    expect((await csms.api('POST', `/v1/charge-points/${id}/reset`)).status).to.equal(422);
    expect((await press(id, 'unlock', { evse_id: 2 })).body.command_status).to.equal('Unlocked');
    expect(got('UnlockConnector')).to.deep.equal([{ connectorId: 2 }]);
    await press(id, 'trigger', { message: 'FirmwareStatusNotification' });
    // the log upload's status, by either version's name (was 422: not a message of the route)
    await press(id, 'trigger', { message: 'LogStatusNotification' });
    // a 1.6 connector is its EVSE: connector_id alone is the connectorId, two different are 422
    await press(id, 'trigger', { message: 'StatusNotification', connector_id: 2 });
    const two = await press(id, 'trigger', { message: 'StatusNotification', evse_id: 1, connector_id: 2 });
    expect(two.body).to.deep.nested.include({ 'error.code': 'connector_evse_conflict' });
    expect(got('TriggerMessage')).to.deep.equal([
      { requestedMessage: 'FirmwareStatusNotification' },
      { requestedMessage: 'DiagnosticsStatusNotification' },
      { requestedMessage: 'StatusNotification', connectorId: 2 },
    ]);

    res = await press(id, 'get-configuration', { keys: ['HeartbeatInterval', 'Nope'] });
    expect(res.body.reply).to.deep.equal({
      configurationKey: [
        { key: 'HeartbeatInterval', readonly: false, value: '300' },
        { key: 'AuthorizationKey', readonly: false, value: '(hidden)' },
      ],
      unknownKey: ['Nope'],
    });
    expect(got('GetConfiguration')).to.deep.equal([{ key: ['HeartbeatInterval', 'Nope'] }]);
    // the reply stays readable with its command (a route that stopped waiting has none)
    const kept = await csms.api<Record<string, unknown>>(
      'GET',
      `/v1/charge-points/${id}/commands/${String(res.body.command_id)}`,
    );
    expect(kept.status).to.equal(200);
    expect(kept.body).to.deep.include({
      command_id: res.body.command_id,
      kind: 'get-configuration',
      status: 'Accepted',
    });
    expect(kept.body.reply).to.deep.equal(res.body.reply);
    expect((await csms.api('GET', `/v1/charge-points/${id}/commands/no-such-command`)).status).to.equal(404);
    expect(
      (await press(id, 'change-configuration', { key: 'HeartbeatInterval', value: '60' })).body.command_status,
    ).to.equal('RebootRequired');
    expect((await press(id, 'get-local-list-version')).body.reply).to.deep.equal({ listVersion: 3 });
    res = await press(id, 'data-transfer', { vendor_id: 'com.example', message_id: 'ping', data: 'x' });
    expect(res.body).to.deep.include({ command_status: 'Accepted', reply: { status: 'Accepted', data: 'pong' } });
    // 1.6 DataTransfer data is text: JSON is sent as its text, not refused by the charger's schema
    res = await press(id, 'data-transfer', { vendor_id: 'com.example', data: { a: 1 } });
    expect(res.status).to.equal(422);
    expect(res.body).to.deep.nested.include({ 'error.code': 'data_not_text' });

    res = await press(id, 'update-firmware', {
      location: 'https://fw.example/1.9.bin',
      retrieve_at: '2026-03-01T02:00:00Z',
      retries: 2,
    });
    expect(res.body.command_status).to.equal('Accepted');
    expect(got('UpdateFirmware')).to.deep.equal([
      { location: 'https://fw.example/1.9.bin', retrieveDate: '2026-03-01T02:00:00Z', retries: 2 },
    ]);
    const upload = await press(id, 'upload-log', { location: 'ftp://logs.example/', since: '2026-02-01T00:00:00Z' });
    // the file the charger will upload (none: nothing to upload)
    expect(upload.body.reply).to.deep.equal({ fileName: 'diag.zip' });
    expect(got('GetDiagnostics')).to.deep.equal([
      { location: 'ftp://logs.example/', startTime: '2026-02-01T00:00:00Z' },
    ]);
    await press(id, 'upload-log', { location: 'ftp://logs.example/', log_type: 'security' });
    expect(got('GetLog')).to.have.length(1);
    expect(got('GetLog')[0]).to.deep.include({
      logType: 'SecurityLog',
      log: { remoteLocation: 'ftp://logs.example/' },
    });

    // the charger reports the update's progress; the operator sees it on the charge point
    await client.call('FirmwareStatusNotification', { status: 'Installing' });
    const view = (await csms.api<ChargePointView>('GET', `/v1/charge-points/${id}`)).body;
    expect(view.operations.firmware).to.include({ status: 'Installing' });
    // every operation is in the command history with its outcome
    expect(view.commands.map((c) => [c.kind, c.status]).slice(-4)).to.deep.equal([
      ['data-transfer', 'Accepted'],
      ['update-firmware', 'Accepted'],
      ['upload-log', 'Accepted'],
      ['upload-log', 'Accepted'],
    ]);

    // an operation of the other version is refused, naming it
    res = await press(id, 'get-variables', {
      variables: [{ component: 'OCPPCommCtrlr', variable: 'HeartbeatInterval' }],
    });
    expect(res.status).to.equal(422);
    expect(JSON.stringify(res.body)).to.contain('ocpp1.6');
    // a 1.6 charger has no device model to report: get-configuration reads its keys
    res = await press(id, 'get-base-report', { report_base: 'full' });
    expect(res.status).to.equal(422);
    expect(res.body).to.deep.nested.include({ 'error.code': 'not_in_version' });
    await client.close();
  });

  it('OCPP 1.6: a connector is its EVSE: connector_id alone names it, two different numbers are 422', async () => {
    const { id, client } = await charger('ocpp1.6', {
      UnlockConnector: { status: 'Unlocked' },
      ChangeAvailability: { status: 'Accepted' },
    });
    const got = (action: string): unknown[] => received[`${id}:${action}`] ?? [];
    // was 200, and the charger was asked to unlock connector 1: connector_id 2 dropped without a word
    for (const op of ['unlock', 'change-availability']) {
      const body = { evse_id: 1, connector_id: 2, ...(op === 'unlock' ? {} : { operative: false }) };
      const both = await press(id, op, body);
      expect(both.status, op).to.equal(422);
      expect(both.body, op).to.deep.nested.include({ 'error.code': 'connector_evse_conflict' });
      expect(JSON.stringify(both.body)).to.contain('connector_id 2 and evse_id 1');
    }
    expect(got('UnlockConnector')).to.deep.equal([]);
    expect(got('ChangeAvailability')).to.deep.equal([]);
    // connector_id alone is the connectorId (change-availability: was 422 connector_without_evse)
    expect((await press(id, 'unlock', { connector_id: 2 })).body.command_status).to.equal('Unlocked');
    expect((await press(id, 'unlock', { evse_id: 2, connector_id: 2 })).body.command_status).to.equal('Unlocked');
    expect((await press(id, 'change-availability', { operative: false, connector_id: 2 })).status).to.equal(200);
    expect(got('UnlockConnector')).to.deep.equal([{ connectorId: 2 }, { connectorId: 2 }]);
    expect(got('ChangeAvailability')).to.deep.equal([{ connectorId: 2, type: 'Inoperative' }]);
    // unlock names a connector: none at all is 422, on either version
    const none = await press(id, 'unlock', {});
    expect(none.status).to.equal(422);
    expect(none.body).to.deep.nested.include({ 'error.code': 'connector_required' });
    await client.close();
  });

  it('a 1.6 charger that comes back speaking 2.0.1 gets the operations of 2.0.1 before it boots again', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const before = strictCharger(csms.url, cp, 'ocpp1.6');
    await before.connect();
    await before.call('BootNotification', v16.boot());
    await before.close();
    const { id } = cp;
    const upgraded = strictCharger(csms.url, cp, 'ocpp2.0.1');
    upgraded.handle('GetVariables', ({ params }) => {
      const { getVariableData } = params as { getVariableData: { component: unknown; variable: unknown }[] };
      return Promise.resolve({
        getVariableResult: getVariableData.map((v) => ({ ...v, attributeStatus: 'Accepted', attributeValue: '300' })),
      });
    });
    await upgraded.connect();
    // was 422 not_in_version (the charger was taken for 1.6 until its next boot or status)
    const res = await press(id, 'get-variables', {
      variables: [{ component: 'OCPPCommCtrlr', variable: 'HeartbeatInterval' }],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.include({ command_status: 'Accepted', answered: true });
    expect(JSON.stringify(res.body.reply)).to.contain('HeartbeatInterval');
    await upgraded.close();
  });

  it('a remote start with a limit for its transaction: the charger gets it as its TxProfile, both versions', async () => {
    const profile = {
      id: 7,
      stack_level: 1,
      purpose: 'tx',
      kind: 'relative',
      schedule: { rate_unit: 'A', periods: [{ start_s: 0, limit: 16 }] },
    };
    const v16 = await charger('ocpp1.6', { RemoteStartTransaction: { status: 'Accepted' } });
    let res = await csms.api<Result>('POST', `/v1/charge-points/${v16.id}/remote-start`, {
      id_tag: 'TAG-LIMIT',
      connector_id: 1,
      profile,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    // the strict charger checked it against the 1.6 schema (was 422 extra_forbidden at profile)
    expect(await eventually(async () => received[`${v16.id}:RemoteStartTransaction`]?.[0])).to.deep.equal({
      idTag: 'TAG-LIMIT',
      connectorId: 1,
      chargingProfile: {
        chargingProfileId: 7,
        stackLevel: 1,
        chargingProfilePurpose: 'TxProfile',
        chargingProfileKind: 'Relative',
        chargingSchedule: { chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 16 }] },
      },
    });
    // only a tx profile, naming no transaction (it has none yet)
    for (const bad of [
      { ...profile, purpose: 'tx_default' },
      { ...profile, transaction_id: '5' },
    ]) {
      res = await csms.api<Result>('POST', `/v1/charge-points/${v16.id}/remote-start`, { id_tag: 'T', profile: bad });
      expect(res.status).to.equal(422);
    }
    await v16.client.close();
    const v201 = await charger('ocpp2.0.1', { RequestStartTransaction: { status: 'Accepted' } });
    res = await csms.api<Result>('POST', `/v1/charge-points/${v201.id}/remote-start`, {
      id_tag: 'TAG-LIMIT',
      evse_id: 1,
      profile,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(await eventually(async () => received[`${v201.id}:RequestStartTransaction`]?.[0])).to.deep.include({
      chargingProfile: {
        id: 7,
        stackLevel: 1,
        chargingProfilePurpose: 'TxProfile',
        chargingProfileKind: 'Relative',
        chargingSchedule: [{ id: 7, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 16 }] }],
      },
    });
    await v201.client.close();
  });

  it("60 operations sent to one charger at once: each answers with the charger's reply", async () => {
    const { id, client } = await charger('ocpp1.6', {
      GetConfiguration: { configurationKey: [{ key: 'HeartbeatInterval', readonly: false, value: '300' }] },
    });
    const results = await Promise.all(
      Array.from({ length: 60 }, () => press(id, 'get-configuration', { keys: ['HeartbeatInterval'] })),
    );
    // the newest 20 outcomes only were kept: the first ones' were pushed out before their routes
    // read them, which then answered "queued" after 5 s though the charger had answered
    expect(results.map((r) => `${r.status} ${r.body.command_status} ${String(r.body.answered)}`)).to.deep.equal(
      results.map(() => '200 Accepted true'),
    );
    expect(results.every((r) => JSON.stringify(r.body.reply).includes('HeartbeatInterval'))).to.equal(true);
    expect(received[`${id}:GetConfiguration`]).to.have.length(60);
    await client.close();
  });

  it('a charger that answers nothing: at most 100 calls, and 256 KB of them, wait for it; the next is refused at once', async () => {
    const { id, client } = await charger('ocpp1.6', {});
    client.handle('ClearCache', () => new Promise(() => undefined));
    client.handle('DataTransfer', () => new Promise(() => undefined));
    const statuses: string[] = [];
    for (let i = 0; i < 100; i++) statuses.push((await press(id, 'clear-cache', {}, '?wait_ms=0')).body.command_status);
    expect(new Set(statuses)).to.deep.equal(new Set(['sent', 'queued']));
    // was queued without end: each turn of the charger wrote the whole queue, slower at each call
    const refused = await press(id, 'clear-cache', {}, '?wait_ms=0');
    expect(refused.status).to.equal(200);
    expect(refused.body).to.include({ command_status: 'refused', answered: true });
    expect(refused.body.detail).to.match(/^100 calls already wait for this charger/);
    await client.close({ force: true });

    const other = await charger('ocpp1.6', {});
    other.client.handle('DataTransfer', () => new Promise(() => undefined));
    const transfer = async () =>
      (await press(other.id, 'data-transfer', { vendor_id: 'v', data: 'x'.repeat(10_000) }, '?wait_ms=0')).body;
    const taken: Result[] = [];
    for (let i = 0; i < 30; i++) taken.push(await transfer());
    const firstRefused = taken.findIndex((r) => r.command_status === 'refused');
    expect(firstRefused).to.be.within(24, 26);
    expect(taken[firstRefused]?.detail).to.match(/would hold \d+ characters \(at most 262144\)/);
    await other.client.close({ force: true });
  });

  it('OCPP 2.0.1: variables, reset, availability of an EVSE, firmware with its requestId, logs', async () => {
    const { id, client } = await charger('ocpp2.0.1', {
      GetVariables: {
        getVariableResult: [
          {
            attributeStatus: 'Accepted',
            attributeValue: '300',
            component: { name: 'OCPPCommCtrlr' },
            variable: { name: 'HeartbeatInterval' },
          },
        ],
      },
      SetVariables: {
        setVariableResult: [
          {
            attributeStatus: 'Accepted',
            component: { name: 'OCPPCommCtrlr' },
            variable: { name: 'HeartbeatInterval' },
          },
        ],
      },
      Reset: { status: 'Scheduled' },
      ChangeAvailability: { status: 'Accepted' },
      UpdateFirmware: { status: 'Accepted' },
      GetLog: { status: 'Accepted', filename: 'diag.tgz' },
      UnlockConnector: { status: 'Unlocked' },
      TriggerMessage: { status: 'Accepted' },
      DataTransfer: { status: 'Accepted', data: { accepted: [1, 2] } },
    });
    const got = (action: string): unknown[] => received[`${id}:${action}`] ?? [];
    const heartbeat = { component: 'OCPPCommCtrlr', variable: 'HeartbeatInterval' };

    // 2.0.1 DataTransfer data is anyType: structured data goes as it is, and comes back so
    let transfer = await press(id, 'data-transfer', { vendor_id: 'com.example', data: { ids: [1, 2], on: true } });
    expect(transfer.body).to.deep.include({
      command_status: 'Accepted',
      reply: { status: 'Accepted', data: { accepted: [1, 2] } },
    });
    expect(got('DataTransfer')).to.deep.equal([{ vendorId: 'com.example', data: { ids: [1, 2], on: true } }]);
    transfer = await press(id, 'data-transfer', { vendor_id: 'com.example', data: { text: 'x'.repeat(10_000) } });
    expect(transfer.status).to.equal(422);
    expect(transfer.body).to.deep.nested.include({ 'error.code': 'data_too_long' });

    let res = await press(id, 'get-variables', { variables: [heartbeat] });
    expect(res.body.reply).to.deep.equal({
      getVariableResult: [
        {
          attributeStatus: 'Accepted',
          attributeValue: '300',
          component: { name: 'OCPPCommCtrlr' },
          variable: { name: 'HeartbeatInterval' },
        },
      ],
    });
    expect(got('GetVariables')).to.deep.equal([
      { getVariableData: [{ component: { name: 'OCPPCommCtrlr' }, variable: { name: 'HeartbeatInterval' } }] },
    ]);
    await press(id, 'set-variables', { variables: [{ ...heartbeat, value: '60', attribute: 'Actual' }] });
    expect(got('SetVariables')).to.deep.equal([
      {
        setVariableData: [
          {
            component: { name: 'OCPPCommCtrlr' },
            variable: { name: 'HeartbeatInterval' },
            attributeType: 'Actual',
            attributeValue: '60',
          },
        ],
      },
    ]);
    expect((await press(id, 'reset', { type: 'soft' })).body.command_status).to.equal('Scheduled');
    expect(got('Reset')).to.deep.equal([{ type: 'OnIdle' }]);
    expect((await press(id, 'unlock', { evse_id: 1, connector_id: 2 })).body.command_status).to.equal('Unlocked');
    expect(got('UnlockConnector')).to.deep.equal([{ evseId: 1, connectorId: 2 }]);
    // F06.FR.12: a StatusNotification is of one connector (was sent without, and Rejected)
    const noConnector = await press(id, 'trigger', { message: 'StatusNotification', evse_id: 1 });
    expect(noConnector.status).to.equal(422);
    expect(noConnector.body).to.deep.nested.include({ 'error.code': 'connector_required' });
    const noEvse = await press(id, 'trigger', { message: 'StatusNotification', connector_id: 2 });
    expect(noEvse.body).to.deep.nested.include({ 'error.code': 'connector_without_evse' });
    await press(id, 'trigger', { message: 'StatusNotification', evse_id: 1, connector_id: 2 });
    await press(id, 'trigger', { message: 'DiagnosticsStatusNotification' });
    await press(id, 'trigger', { message: 'MeterValues', evse_id: 2 });
    expect(got('TriggerMessage')).to.deep.equal([
      { requestedMessage: 'StatusNotification', evse: { id: 1, connectorId: 2 } },
      { requestedMessage: 'LogStatusNotification' },
      { requestedMessage: 'MeterValues', evse: { id: 2 } },
    ]);
    await press(id, 'change-availability', { operative: true, evse_id: 2, connector_id: 1 });
    // a 2.0.1 connector is one of an EVSE: alone it names nothing (on 1.6 it is the connectorId)
    const alone = await press(id, 'change-availability', { operative: false, connector_id: 2 });
    expect(alone.body).to.deep.nested.include({ 'error.code': 'connector_without_evse' });
    expect(got('ChangeAvailability')).to.deep.equal([
      { operationalStatus: 'Operative', evse: { id: 2, connectorId: 1 } },
    ]);

    await press(id, 'update-firmware', { location: 'https://fw.example/2.bin', retrieve_at: '2026-03-01T02:00:00Z' });
    const update = got('UpdateFirmware')[0] as { requestId: number; firmware: unknown };
    expect(update.firmware).to.deep.equal({
      location: 'https://fw.example/2.bin',
      retrieveDateTime: '2026-03-01T02:00:00Z',
    });
    await client.call('FirmwareStatusNotification', { status: 'Downloaded', requestId: update.requestId });
    const view = (await csms.api<ChargePointView>('GET', `/v1/charge-points/${id}`)).body;
    expect(view.operations.firmware).to.include({ status: 'Downloaded', request_id: update.requestId });

    await press(id, 'upload-log', { location: 'https://logs.example/up', log_type: 'diagnostics' });
    expect(got('GetLog')[0]).to.deep.include({
      logType: 'DiagnosticsLog',
      log: { remoteLocation: 'https://logs.example/up' },
    });

    res = await press(id, 'get-configuration', {});
    expect(res.status).to.equal(422);
    expect(JSON.stringify(res.body)).to.contain('ocpp2.0.1');
    await client.close();
  });

  it('reports the answer of a charger that drops its connection right after (a reset)', async () => {
    const { id, client } = await charger('ocpp1.6', {});
    client.handle('Reset', () => {
      setTimeout(() => void client.close({ force: true }), 20);
      return Promise.resolve({ status: 'Accepted' });
    });
    const res = await press(id, 'reset', { type: 'hard' });
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ command_status: 'Accepted', answered: true });
  });

  it('a call the charger has not answered within the wait says which OCPP action it went as', async () => {
    const { id, client } = await charger('ocpp1.6', {});
    client.handle('Reset', () => new Promise(() => undefined));
    const res = await press(id, 'reset', { type: 'soft' }, '?wait_ms=300');
    // the detail was the bare action name, which read as an error
    expect(res.body).to.include({
      command_status: 'sent',
      answered: false,
      detail: 'sent as Reset, not answered yet',
    });
    await client.close({ force: true });
  });

  it("answers before the charger does when asked not to wait, and refuses what can't be sent", async () => {
    const { id, client } = await charger('ocpp1.6', {});
    // the charger never answers Reset: the route answers with the call sent, not its outcome
    client.handle('Reset', () => new Promise(() => undefined));
    const res = await press(id, 'reset', { type: 'soft' }, '?wait_ms=0');
    expect(res.body).to.include({ command_status: 'sent', answered: false });
    expect((await press(id, 'reset', { type: 'warm' })).status).to.equal(422);
    // a location must be a URL (the official schemas say so)
    expect((await press(id, 'update-firmware', { location: 'firmware.bin' })).status).to.equal(422);
    expect((await press('NO-SUCH-CP', 'reset', { type: 'soft' })).status).to.equal(404);
    // its handler never settles: close without waiting for it
    await client.close({ force: true });
    const offline = await csms.registerChargePoint('ocpp1.6');
    expect((await press(offline.id, 'clear-cache')).status).to.equal(409);
  });

  it("2.0.1 variables: the operation's status is the variables' own (a charger that took none is not Accepted)", async () => {
    const result = (attributeStatus: string, name: string) => ({
      attributeStatus,
      component: { name: 'OCPPCommCtrlr' },
      variable: { name },
    });
    const { id, client } = await charger('ocpp2.0.1', {
      SetVariables: { setVariableResult: [result('Rejected', 'HeartbeatInterval'), result('Rejected', 'X')] },
      GetVariables: { getVariableResult: [result('Accepted', 'HeartbeatInterval'), result('UnknownVariable', 'Nope')] },
    });
    const variables = [
      { component: 'OCPPCommCtrlr', variable: 'HeartbeatInterval', value: '60' },
      { component: 'OCPPCommCtrlr', variable: 'X', value: '1' },
    ];
    // was Accepted: the answer has no status of its own, only each variable's
    const set = await press(id, 'set-variables', { variables });
    expect(set.body).to.include({ command_status: 'Rejected', answered: true });
    const get = await press(id, 'get-variables', {
      variables: [
        { component: 'OCPPCommCtrlr', variable: 'HeartbeatInterval' },
        { component: 'OCPPCommCtrlr', variable: 'Nope' },
      ],
    });
    expect(get.body).to.include({ command_status: 'UnknownVariable' });
    await client.close();
  });

  it("remote start takes an id tag of the charger's version: 36 characters on 2.0.1, 20 on 1.6", async () => {
    const long = 'EMAID-NL-EVP-C0123456789ABCDEF012345'; // 36, an eMAID-length token
    expect(long).to.have.length(36);
    const v2 = await charger('ocpp2.0.1', { RequestStartTransaction: { status: 'Accepted' } });
    // was 422 "must not have more than 20 characters", the 1.6 limit
    const started = await press(v2.id, 'remote-start', { id_tag: long, evse_id: 1 });
    expect(started.status, JSON.stringify(started.body)).to.equal(200);
    const [sent] = (received[`${v2.id}:RequestStartTransaction`] ?? []) as Array<{ idToken: { idToken: string } }>;
    expect(sent?.idToken.idToken).to.equal(long);
    const v1 = await charger('ocpp1.6', { RemoteStartTransaction: { status: 'Accepted' } });
    const refused = await csms.api<{ title?: string; detail?: unknown }>(
      'POST',
      `/v1/charge-points/${v1.id}/remote-start`,
      {
        id_tag: long.slice(0, 21),
        connector_id: 1,
      },
    );
    expect(refused.status).to.equal(422);
    expect(JSON.stringify(refused.body)).to.include('20 characters');
    expect((await press(v1.id, 'remote-start', { id_tag: long.slice(0, 20), connector_id: 1 })).status).to.equal(200);
    await Promise.all([v1.client.close(), v2.client.close()]);
  });
});
