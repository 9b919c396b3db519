import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import { DataTransferRegistry } from '../../src/csms/data-transfer.js';
import type { ChargerEventEntry, DeviceModel } from '../../src/csms/report-store.js';
import type { ChargePointView } from '../../src/csms/views.js';
import type { Static } from '#typebox';
import { clusterEnvironment } from '../support/platforms.js';
import { strictCharger } from '../support/rpc-client.js';
import { API_KEY, startCsms, type CsmsUnderTest } from './support/csms.js';
import { v16, v201 } from './support/messages.js';
import { connectedCharger } from './support/scenario.js';

/**
 * Every message a charger sends to tell what happened is answered as its version specifies and
 * kept where an operator looks (docs/CSMS.md "Event log"). The chargers are ocpp-rpc clients in
 * strict mode: each of our replies is checked against their own copy of the official schemas.
 */
for (const database of ['SQLite', 'PostgreSQL'] as const)
  describe(`what chargers report (${database}): answered per spec and kept in the event log and device model`, function () {
    this.timeout(30_000);
    let csms: CsmsUnderTest;
    let cleanup: (() => Promise<void>) | undefined;
    const vendorCalls: unknown[] = [];
    before(async () => {
      const dataTransfer = new DataTransferRegistry().register('com.example.meter', (id, request) => {
        vendorCalls.push({ id, ...request });
        return request.message_id === 'ping'
          ? { status: 'Accepted', data: { pong: true } }
          : { status: 'UnknownMessageId' };
      });
      const env = database === 'PostgreSQL' ? await clusterEnvironment({ CSMS_API_KEY: API_KEY }) : undefined;
      csms = await startCsms({ dataTransfer }, env);
      cleanup = env?.cleanup;
    });
    after(async () => {
      await csms.stop();
      await cleanup?.();
    });

    async function charger(protocol: 'ocpp1.6' | 'ocpp2.0.1'): Promise<{ id: string; client: RPCClient }> {
      const cp = await csms.registerChargePoint(protocol);
      const client = strictCharger(csms.url, cp, protocol);
      await client.connect();
      await client.call('BootNotification', protocol === 'ocpp1.6' ? v16.boot() : v201.boot());
      return { id: cp.id, client };
    }

    async function eventsOf(
      id: string,
      query = '',
    ): Promise<{ items: ChargerEventEntry[]; total: string | undefined }> {
      const res = await csms.api<ChargerEventEntry[]>('GET', `/v1/charge-points/${id}/events${query}`);
      expect(res.status).to.equal(200);
      return { items: res.body, total: res.headers.get('x-total-count') ?? undefined };
    }

    it('OCPP 1.6: firmware and diagnostics progress, security events, DataTransfer by vendor, refused CSR', async () => {
      const { id, client } = await charger('ocpp1.6');
      const at = '2026-03-01T10:00:00.000Z';
      expect(await client.call('FirmwareStatusNotification', { status: 'Downloading' })).to.deep.equal({});
      expect(await client.call('FirmwareStatusNotification', { status: 'InstallationFailed' })).to.deep.equal({});
      expect(await client.call('DiagnosticsStatusNotification', { status: 'Uploaded' })).to.deep.equal({});
      expect(
        await client.call('SecurityEventNotification', {
          type: 'InvalidFirmwareSignature',
          timestamp: at,
          techInfo: 'key 3',
        }),
      ).to.deep.equal({});
      expect(
        await client.call('SecurityEventNotification', { type: 'StartupOfTheDevice', timestamp: at }),
      ).to.deep.equal({});
      expect(await client.call('LogStatusNotification', { status: 'Uploading', requestId: 7 })).to.deep.equal({});
      expect(
        await client.call('SignedFirmwareStatusNotification', { status: 'SignatureVerified', requestId: 9 }),
      ).to.deep.equal({});
      // a vendor with a handler answers; an unknown vendor is UnknownVendorId (1.6 section 4.3)
      expect(
        await client.call('DataTransfer', { vendorId: 'com.example.meter', messageId: 'ping', data: 'x' }),
      ).to.deep.equal({ status: 'Accepted', data: '{"pong":true}' });
      expect(await client.call('DataTransfer', { vendorId: 'com.example.meter', messageId: 'other' })).to.deep.equal({
        status: 'UnknownMessageId',
      });
      expect(await client.call('DataTransfer', { vendorId: 'org.nobody' })).to.deep.equal({
        status: 'UnknownVendorId',
      });
      expect(await client.call('SignCertificate', { csr: '-----BEGIN CERTIFICATE REQUEST-----' })).to.deep.equal({
        status: 'Rejected',
      });
      expect(vendorCalls).to.deep.include({ id, message_id: 'ping', data: 'x' });

      const { items, total } = await eventsOf(id);
      expect(total).to.equal('11');
      expect(items.map((e) => [e.action, e.severity])).to.deep.equal([
        ['SignCertificate', 'warning'],
        ['DataTransfer', 'info'],
        ['DataTransfer', 'info'],
        ['DataTransfer', 'info'],
        ['SignedFirmwareStatusNotification', 'info'],
        ['LogStatusNotification', 'info'],
        ['SecurityEventNotification', 'info'],
        ['SecurityEventNotification', 'warning'],
        ['DiagnosticsStatusNotification', 'info'],
        ['FirmwareStatusNotification', 'error'],
        ['FirmwareStatusNotification', 'info'],
      ]);
      const security = items.find((e) => e.severity === 'warning' && e.action === 'SecurityEventNotification');
      expect(security).to.include({ summary: 'security event InvalidFirmwareSignature: key 3', timestamp: at });
      expect((await eventsOf(id, '?severity=error')).items.map((e) => e.summary)).to.deep.equal([
        'firmware update: InstallationFailed',
      ]);

      // the last status of each long operation is on the charge point
      const view = (await csms.api<ChargePointView>('GET', `/v1/charge-points/${id}`)).body;
      expect(view.operations.firmware).to.include({ status: 'SignatureVerified', request_id: 9 });
      expect(view.operations.diagnostics).to.include({ status: 'Uploaded', request_id: null });
      expect(view.operations.log).to.include({ status: 'Uploading', request_id: 7 });
      await client.close();
    });

    it('OCPP 2.0.1: NotifyEvent as log entries with severity, NotifyReport as the device model', async () => {
      const { id, client } = await charger('ocpp2.0.1');
      const generatedAt = '2026-03-01T11:00:00.000Z';
      expect(
        await client.call('NotifyEvent', {
          generatedAt,
          seqNo: 0,
          eventData: [
            {
              eventId: 1,
              timestamp: generatedAt,
              trigger: 'Delta',
              actualValue: 'true',
              techCode: 'GF-12',
              eventNotificationType: 'HardWiredNotification',
              component: { name: 'ChargingStation' },
              variable: { name: 'Problem' },
            },
            {
              eventId: 2,
              timestamp: generatedAt,
              trigger: 'Alerting',
              actualValue: '71',
              eventNotificationType: 'HardWiredMonitor',
              component: { name: 'Connector', evse: { id: 1, connectorId: 1 } },
              variable: { name: 'Temperature' },
            },
          ],
        }),
      ).to.deep.equal({});
      const report = (seqNo: number, tbc: boolean, value: string) => ({
        requestId: 42,
        generatedAt,
        seqNo,
        tbc,
        reportData: [
          {
            component: { name: 'OCPPCommCtrlr' },
            variable: { name: 'HeartbeatInterval' },
            variableAttribute: [{ type: 'Actual', value, mutability: 'ReadWrite' }],
            variableCharacteristics: { dataType: 'integer', unit: 's', supportsMonitoring: false },
          },
          {
            component: { name: 'EVSE', evse: { id: 1 } },
            variable: { name: 'Power' },
            variableAttribute: [
              { type: 'Actual', value: '0', mutability: 'ReadOnly' },
              { type: 'MaxSet', value: '22000', mutability: 'ReadOnly' },
            ],
            variableCharacteristics: { dataType: 'decimal', unit: 'W', supportsMonitoring: true },
          },
        ],
      });
      expect(await client.call('NotifyReport', report(0, true, '300'))).to.deep.equal({});
      // a later part (or report) with a new value replaces the row, not adds one
      expect(await client.call('NotifyReport', report(1, false, '60'))).to.deep.equal({});

      const { items } = await eventsOf(id);
      expect(items.map((e) => [e.severity, e.summary])).to.deep.equal([
        ['warning', 'Connector[evse 1/1].Temperature = 71 (Alerting)'],
        ['error', 'ChargingStation.Problem = true (Delta code GF-12)'],
      ]);
      const model = (await csms.api<Static<typeof DeviceModel>>('GET', `/v1/charge-points/${id}/device-model`)).body;
      expect(model.variables.map(({ updated_at: _, ...v }) => v)).to.deep.equal([
        {
          component: 'EVSE',
          component_instance: null,
          evse_id: 1,
          connector_id: null,
          variable: 'Power',
          variable_instance: null,
          attribute: 'Actual',
          value: '0',
          mutability: 'ReadOnly',
          data_type: 'decimal',
          unit: 'W',
        },
        {
          component: 'EVSE',
          component_instance: null,
          evse_id: 1,
          connector_id: null,
          variable: 'Power',
          variable_instance: null,
          attribute: 'MaxSet',
          value: '22000',
          mutability: 'ReadOnly',
          data_type: 'decimal',
          unit: 'W',
        },
        {
          component: 'OCPPCommCtrlr',
          component_instance: null,
          evse_id: null,
          connector_id: null,
          variable: 'HeartbeatInterval',
          variable_instance: null,
          attribute: 'Actual',
          value: '60',
          mutability: 'ReadWrite',
          data_type: 'integer',
          unit: 's',
        },
      ]);
      await client.close();
    });

    it('OCPP 2.0.1: a password a charger reports (it should not) is hidden in the event log and the device model, whatever the case of its name', async () => {
      const { id, client } = await charger('ocpp2.0.1');
      const at = '2026-03-01T11:00:00.000Z';
      const secret = 'Sup3rSecretPassw0rd!';
      await client.call('NotifyEvent', {
        generatedAt: at,
        seqNo: 0,
        eventData: [
          {
            eventId: 1,
            timestamp: at,
            trigger: 'Delta',
            actualValue: secret,
            eventNotificationType: 'CustomMonitor',
            component: { name: 'SecurityCtrlr' },
            variable: { name: 'basicauthpassword' },
          },
        ],
      });
      await client.call('NotifyReport', {
        requestId: 7,
        generatedAt: at,
        seqNo: 0,
        reportData: [
          {
            component: { name: 'SecurityCtrlr' },
            variable: { name: 'BasicAuthPassword' },
            variableAttribute: [{ type: 'Actual', value: secret, mutability: 'WriteOnly' }],
          },
        ],
      });
      const events = await eventsOf(id);
      expect(events.items.map((e) => e.summary)).to.deep.equal(['SecurityCtrlr.basicauthpassword = (hidden) (Delta)']);
      const model = await csms.api('GET', `/v1/charge-points/${id}/device-model`);
      expect(JSON.stringify(model.body)).to.include('(hidden)');
      expect(JSON.stringify([events, model.body])).not.to.include(secret);
      await client.close();
    });

    it('OCPP 2.0.1: a device model past its 5,000 rows keeps 5,000, the newest part whole', async () => {
      const { id, client } = await charger('ocpp2.0.1');
      const part = (seqNo: number) => ({
        requestId: 8,
        generatedAt: '2026-03-01T12:00:00.000Z',
        seqNo,
        tbc: seqNo < 25,
        reportData: Array.from({ length: 200 }, (_, i) => ({
          component: { name: `Ctrlr${String(seqNo).padStart(2, '0')}` },
          variable: { name: `Var${String(i).padStart(3, '0')}` },
          variableAttribute: [{ type: 'Actual', value: String(i), mutability: 'ReadOnly' }],
        })),
      });
      // 26 parts of 200: 5,200 rows; each part's rows are stored at one time
      for (let seqNo = 0; seqNo < 26; seqNo++) {
        expect(await client.call('NotifyReport', part(seqNo))).to.deep.equal({});
        // a part a millisecond apart at least, so that the oldest are told apart by their time
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      const model = (await csms.api<Static<typeof DeviceModel>>('GET', `/v1/charge-points/${id}/device-model`)).body;
      // was 5,200: the cut fell inside a part, whose rows share their time, and all of them stayed
      expect(model.variables).to.have.length(5_000);
      const components = new Set(model.variables.map((v) => v.component));
      expect(components.has('Ctrlr25')).to.equal(true);
      expect(model.variables.filter((v) => v.component === 'Ctrlr25')).to.have.length(200);
      expect(components.has('Ctrlr00')).to.equal(false);
      await client.close();
    });

    it("OCPP 2.0.1: a device model cut inside a part keeps that part's first rows in key order", async () => {
      const { id, client } = await charger('ocpp2.0.1');
      const part = (seqNo: number, rows: number) => ({
        requestId: 9,
        generatedAt: '2026-03-01T12:00:00.000Z',
        seqNo,
        tbc: seqNo < 25,
        reportData: Array.from({ length: rows }, (_, i) => ({
          component: { name: `Part${String(seqNo).padStart(2, '0')}` },
          variable: { name: `Var${String(i).padStart(3, '0')}` },
          variableAttribute: [{ type: 'Actual', value: String(i), mutability: 'ReadOnly' }],
        })),
      });
      // 25 parts of 200, then one of 300: the newest 5,000 end 100 rows into part 01
      for (let seqNo = 0; seqNo < 26; seqNo++) {
        expect(await client.call('NotifyReport', part(seqNo, seqNo === 25 ? 300 : 200))).to.deep.equal({});
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      const model = (await csms.api<Static<typeof DeviceModel>>('GET', `/v1/charge-points/${id}/device-model`)).body;
      expect(model.variables).to.have.length(5_000);
      const ofPart = (name: string) => model.variables.filter((v) => v.component === name).map((v) => v.variable);
      expect(ofPart('Part00')).to.deep.equal([]);
      expect(ofPart('Part01')).to.deep.equal(Array.from({ length: 100 }, (_, i) => `Var${String(i).padStart(3, '0')}`));
      expect(ofPart('Part25')).to.have.length(300);
      await client.close();
    });

    it('OCPP 2.0.1: every other message a charger sends is answered as the spec says, never NotSupported', async () => {
      const { id, client } = await charger('ocpp2.0.1');
      const at = '2026-03-01T12:00:00.000Z';
      const calls: [string, Record<string, unknown>, Record<string, unknown>][] = [
        ['SecurityEventNotification', { type: 'TamperDetectionActivated', timestamp: at }, {}],
        ['FirmwareStatusNotification', { status: 'Installed', requestId: 3 }, {}],
        ['LogStatusNotification', { status: 'UploadFailure', requestId: 4 }, {}],
        ['PublishFirmwareStatusNotification', { status: 'Published', location: ['http://lc/fw'], requestId: 5 }, {}],
        [
          'DataTransfer',
          { vendorId: 'com.example.meter', messageId: 'ping' },
          { status: 'Accepted', data: { pong: true } },
        ],
        ['DataTransfer', { vendorId: 'org.nobody' }, { status: 'UnknownVendorId' }],
        ['SignCertificate', { csr: 'CSR' }, { status: 'Rejected' }],
        [
          'Get15118EVCertificate',
          { iso15118SchemaVersion: 'urn:iso:15118:2:2013:MsgDef', action: 'Install', exiRequest: 'AAAA' },
          { status: 'Failed', exiResponse: '' },
        ],
        [
          'GetCertificateStatus',
          {
            ocspRequestData: {
              hashAlgorithm: 'SHA256',
              issuerNameHash: 'a',
              issuerKeyHash: 'b',
              serialNumber: 'c',
              responderURL: 'http://ocsp',
            },
          },
          { status: 'Failed' },
        ],
        ['NotifyChargingLimit', { chargingLimit: { chargingLimitSource: 'SO', isGridCritical: true }, evseId: 1 }, {}],
        ['ClearedChargingLimit', { chargingLimitSource: 'SO', evseId: 1 }, {}],
        [
          'NotifyEVChargingNeeds',
          { evseId: 1, chargingNeeds: { requestedEnergyTransfer: 'AC_three_phase' } },
          { status: 'Rejected' },
        ],
        [
          'NotifyEVChargingSchedule',
          {
            timeBase: at,
            evseId: 1,
            chargingSchedule: {
              id: 1,
              chargingRateUnit: 'W',
              chargingSchedulePeriod: [{ startPeriod: 0, limit: 11000 }],
            },
          },
          { status: 'Accepted' },
        ],
        ['NotifyDisplayMessages', { requestId: 6 }, {}],
        ['NotifyCustomerInformation', { data: 'none', seqNo: 0, generatedAt: at, requestId: 7 }, {}],
        ['NotifyMonitoringReport', { requestId: 8, seqNo: 0, generatedAt: at }, {}],
        [
          'ReportChargingProfiles',
          {
            requestId: 9,
            chargingLimitSource: 'CSO',
            evseId: 1,
            chargingProfile: [
              {
                id: 1,
                stackLevel: 0,
                chargingProfilePurpose: 'TxDefaultProfile',
                chargingProfileKind: 'Absolute',
                chargingSchedule: [
                  { id: 1, chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 16 }] },
                ],
              },
            ],
          },
          {},
        ],
      ];
      for (const [action, payload, answer] of calls)
        expect(await client.call(action, payload), action).to.deep.equal(answer);

      const { items, total } = await eventsOf(id, '?limit=100');
      expect(total).to.equal(String(calls.length));
      expect(new Set(items.map((e) => e.action))).to.deep.equal(new Set(calls.map(([action]) => action)));
      const severities = Object.fromEntries(items.map((e) => [e.action, e.severity]));
      expect(severities).to.include({
        SecurityEventNotification: 'warning',
        LogStatusNotification: 'error',
        NotifyChargingLimit: 'warning',
        FirmwareStatusNotification: 'info',
      });
      const view = (await csms.api<ChargePointView>('GET', `/v1/charge-points/${id}`)).body;
      expect(view.operations.firmware).to.include({ status: 'Installed', request_id: 3 });
      expect(view.operations.log).to.include({ status: 'UploadFailure', request_id: 4 });
      // an Idle after a trigger says nothing new: the outcome of the last request stays shown
      // (was {status: 'Idle', request_id: null}, a failed upload visible in the event log only)
      await client.call('LogStatusNotification', { status: 'Idle' });
      await client.call('FirmwareStatusNotification', { status: 'Idle' });
      const after = (await csms.api<ChargePointView>('GET', `/v1/charge-points/${id}`)).body;
      expect(after.operations.log).to.include({ status: 'UploadFailure', request_id: 4 });
      expect(after.operations.firmware).to.include({ status: 'Installed', request_id: 3 });
      // a new request's progress replaces it, as always
      await client.call('FirmwareStatusNotification', { status: 'Downloading', requestId: 5 });
      const next = (await csms.api<ChargePointView>('GET', `/v1/charge-points/${id}`)).body;
      expect(next.operations.firmware).to.include({ status: 'Downloading', request_id: 5 });
      await client.close();
    });

    // 2.0.1 lets DataTransfer's data and every customData hold anything: a few kilobytes can nest
    // thousands of levels, which overflowed the stack where the entry was written (InternalError)
    it('OCPP 2.0.1: reports nested thousands of levels deep are answered, their entries kept without the depth', async () => {
      // written as text: JSON.stringify would overflow this process's stack as well
      const { cp, charger: raw } = await connectedCharger(csms, 'ocpp2.0.1');
      await raw.call('BootNotification', v201.boot());
      const deep = (levels: number): string => `${'['.repeat(levels)}"bottom"${']'.repeat(levels)}`;
      const at = '2026-03-01T12:00:00.000Z';
      const sent = [
        ['d1', `[2,"d1","DataTransfer",{"vendorId":"org.nobody","data":${deep(5000)}}]`],
        [
          'd2',
          `[2,"d2","SecurityEventNotification",{"type":"StartupOfTheDevice","timestamp":"${at}","customData":{"vendorId":"acme","deep":${deep(6000)}}}]`,
        ],
        // 60 levels stay as they came
        [
          'd3',
          `[2,"d3","SecurityEventNotification",{"type":"ResetOrReboot","timestamp":"${at}","customData":{"vendorId":"acme","deep":${deep(60)}}}]`,
        ],
      ];
      const answers = [];
      for (const [id, text] of sent) answers.push(await raw.sendRaw(text ?? '', id ?? ''));
      expect(answers).to.deep.equal([
        [3, 'd1', { status: 'UnknownVendorId' }],
        [3, 'd2', {}],
        [3, 'd3', {}],
      ]);
      const { items } = await eventsOf(cp.id, '?limit=10');
      const details = items.map((e) => JSON.stringify(e.detail));
      expect(details.filter((d) => d.includes('"truncated":true'))).to.have.length(2);
      expect(details.filter((d) => d.includes('bottom'))).to.have.length(1);
      await raw.close();
    });

    it('the event log is for operators, of known chargers, and pages', async () => {
      expect((await csms.api('GET', '/v1/charge-points/NOPE/events')).status).to.equal(404);
      expect((await csms.api('GET', '/v1/charge-points/NOPE/device-model')).status).to.equal(404);
      const { id, client } = await charger('ocpp1.6');
      expect((await csms.api('GET', `/v1/charge-points/${id}/events`, undefined, { key: null })).status).to.equal(401);
      for (let i = 0; i < 3; i++) await client.call('FirmwareStatusNotification', { status: 'Downloading' });
      const page = await eventsOf(id, '?limit=2&offset=1');
      expect(page.items).to.have.length(2);
      expect(page.total).to.equal('3');
      expect((await csms.api('GET', `/v1/charge-points/${id}/events?severity=fatal`)).status).to.equal(422);
      // a long message is logged with its size, not whole
      await client.call('DataTransfer', { vendorId: 'org.big', data: 'x'.repeat(20_000) });
      const [big] = (await eventsOf(id, '?limit=1')).items;
      expect(big?.detail).to.deep.equal({
        truncated: true,
        characters: JSON.stringify({ vendorId: 'org.big', data: 'x'.repeat(20_000) }).length,
      });
      await client.close();
    });
  });
