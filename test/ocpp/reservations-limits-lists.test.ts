import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import { platformModules } from '../../src/modules.js';
import type { ChargePointView } from '../../src/csms/views.js';
import { aToken221 } from '../support/ocpi-builders.js';
import {
  clusterEnvironment,
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../support/platforms.js';
import { eventually } from '../support/eventually.js';
import { strictCharger } from '../support/rpc-client.js';
import { API_KEY, apiClient, uniqueChargePointId, type RegisteredChargePoint } from './support/csms.js';
import { v16, v201 } from './support/messages.js';

/**
 * Reservations, charging profiles and local authorization lists (docs/CSMS.md "Reservations",
 * "Smart charging", "Local authorization list"), pressed by the operator through /v1 on the whole
 * platform (the tokens come from OCPI), answered by independent chargers (ocpp-rpc, strict: each
 * call we send is checked against its copy of the official schemas).
 */
for (const database of ['SQLite', 'PostgreSQL'] as const)
  describe(`reservations, charging profiles and local lists through /v1, both versions (${database})`, function () {
    this.timeout(30_000);
    let env: TestEnvironment;
    let started: StartedPlatform;
    let api: ReturnType<typeof apiClient>;
    const received: Record<string, unknown[]> = {};
    const clients: RPCClient[] = [];

    before(async () => {
      env =
        database === 'PostgreSQL'
          ? await clusterEnvironment({ CSMS_API_KEY: API_KEY })
          : await embeddedEnvironment({ CSMS_API_KEY: API_KEY });
      started = await startPlatform(env, platformModules());
      api = apiClient(started.platform.url);
    });
    after(async () => {
      await Promise.all(clients.map((c) => c.close({ force: true }).catch(() => undefined)));
      await started.stop();
      await env.cleanup();
    });

    interface Result {
      command_id: string;
      command_status: string;
      answered: boolean;
      reply?: unknown;
      reservation_id?: number;
      code?: string;
      detail?: string;
    }

    /** A booted charger answering each action with `answers[action]` (a function: per call), recording what it got. */
    async function charger(
      protocol: 'ocpp1.6' | 'ocpp2.0.1',
      answers: Record<string, Record<string, unknown> | (() => Record<string, unknown>)>,
    ): Promise<{ id: string; client: RPCClient; got(action: string): unknown[] }> {
      const id = uniqueChargePointId();
      const res = await api<RegisteredChargePoint>('POST', '/v1/charge-points', { id, protocol });
      expect(res.status).to.equal(201);
      const client = strictCharger(started.platform.url, res.body, protocol);
      clients.push(client);
      for (const [action, answer] of Object.entries(answers))
        client.handle(action, ({ params }) => {
          (received[`${id}:${action}`] ??= []).push(params);
          return Promise.resolve(typeof answer === 'function' ? answer() : answer);
        });
      await client.connect();
      await client.call('BootNotification', protocol === 'ocpp1.6' ? v16.boot() : v201.boot());
      return { id, client, got: (action) => received[`${id}:${action}`] ?? [] };
    }
    const press = (id: string, op: string, body: unknown = {}) =>
      api<Result>('POST', `/v1/charge-points/${id}/${op}`, body);
    const view = async (id: string) => (await api<ChargePointView>('GET', `/v1/charge-points/${id}`)).body;
    const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, '.000Z');

    describe('reservations', () => {
      it('OCPP 1.6: the operator reserves a connector, the start that names the reservation uses it up', async () => {
        const { id, client, got } = await charger('ocpp1.6', {
          ReserveNow: { status: 'Accepted' },
          CancelReservation: { status: 'Accepted' },
        });
        const expiry = inAnHour();
        const res = await press(id, 'reserve', { id_tag: 'CARD-1', expiry_date: expiry, evse_id: 1 });
        expect(res.status).to.equal(200);
        expect(res.body.command_status).to.equal('Accepted');
        const reservationId = res.body.reservation_id;
        expect(reservationId).to.be.a('number');
        expect(got('ReserveNow')).to.deep.equal([
          { connectorId: 1, expiryDate: expiry, idTag: 'CARD-1', reservationId },
        ]);
        expect((await view(id)).reservations).to.deep.include({
          reservation_id: reservationId,
          evse_id: 1,
          id_tag: 'CARD-1',
          expiry_date: expiry,
          status: 'Accepted',
        });

        // a second one on the whole charger, then cancelled by the operator
        const other = await press(id, 'reserve', { id_tag: 'CARD-2', expiry_date: inAnHour() });
        expect(other.body.reservation_id).to.not.equal(reservationId);
        expect(got('ReserveNow')[1]).to.deep.include({ connectorId: 0, idTag: 'CARD-2' });
        expect(
          (await press(id, 'cancel-reservation', { reservation_id: other.body.reservation_id })).body.command_status,
        ).to.equal('Accepted');
        expect(got('CancelReservation')).to.deep.equal([{ reservationId: other.body.reservation_id }]);

        await client.call('StartTransaction', { ...v16.start({ idTag: 'CARD-1' }), reservationId });
        await eventually(async () => ((await view(id)).reservations.length === 0 ? true : undefined));
      });

      it('OCPP 2.0.1: ReserveNow with a central token, ended by the charger’s ReservationStatusUpdate', async () => {
        const { id, client, got } = await charger('ocpp2.0.1', { ReserveNow: { status: 'Accepted' } });
        const expiry = inAnHour();
        const res = await press(id, 'reserve', { id_tag: 'APP-7', expiry_date: expiry, evse_id: 2 });
        expect(res.body.command_status).to.equal('Accepted');
        expect(got('ReserveNow')).to.deep.equal([
          {
            id: res.body.reservation_id,
            expiryDateTime: expiry,
            idToken: { idToken: 'APP-7', type: 'Central' },
            evseId: 2,
          },
        ]);
        expect((await view(id)).reservations).to.have.length(1);
        await client.call('ReservationStatusUpdate', {
          reservationId: res.body.reservation_id,
          reservationUpdateStatus: 'Expired',
        });
        await eventually(async () => ((await view(id)).reservations.length === 0 ? true : undefined));
        // a driver's card: the operator names its type, which the charger compares when it is tapped
        const card = await press(id, 'reserve', {
          id_tag: 'CARD-7',
          id_tag_type: 'ISO14443',
          expiry_date: expiry,
          evse_id: 1,
        });
        expect(card.body.command_status).to.equal('Accepted');
        expect(got('ReserveNow')[1]).to.deep.include({ idToken: { idToken: 'CARD-7', type: 'ISO14443' } });
        const wrong = await press(id, 'reserve', { id_tag: 'CARD-8', id_tag_type: 'RFID', expiry_date: expiry });
        expect(wrong.status).to.equal(422);
      });

      it('a reservation the charger refuses answers no reservation_id: no cancel could find it', async () => {
        let status = 'Occupied';
        const { id } = await charger('ocpp1.6', { ReserveNow: () => ({ status }) });
        for (const refused of ['Occupied', 'Rejected', 'Faulted', 'Unavailable']) {
          status = refused;
          const res = await press(id, 'reserve', { id_tag: 'CARD-9', expiry_date: inAnHour(), evse_id: 1 });
          // was an id that cancel-reservation answered 404 for
          expect([res.body.command_status, res.body.reservation_id], refused).to.deep.equal([refused, undefined]);
        }
        status = 'Accepted';
        expect((await press(id, 'reserve', { id_tag: 'CARD-9', expiry_date: inAnHour() })).body.reservation_id).to.be.a(
          'number',
        );
      });

      it('refuses a reservation in the past and the cancel of one the charger does not hold', async () => {
        const { id, got } = await charger('ocpp1.6', { ReserveNow: { status: 'Accepted' } });
        const past = await press(id, 'reserve', { id_tag: 'CARD-1', expiry_date: '2020-01-01T00:00:00Z' });
        expect(past.status).to.equal(422);
        const none = await press(id, 'cancel-reservation', { reservation_id: 424242 });
        expect(none.status).to.equal(404);
        // a 1.6 idTag has at most 20 characters
        const long = await press(id, 'reserve', { id_tag: 'C'.repeat(21), expiry_date: inAnHour() });
        expect(long.status).to.equal(422);
        // an id tag is printable ASCII (1.6 CiString): an operator's typo of a non-ASCII or control character is refused here
        for (const idTag of ['CÄRD-1', 'CARD\t1', 'CARD\u00a01']) {
          for (const [op, body] of [
            ['reserve', { id_tag: idTag, expiry_date: inAnHour() }],
            ['remote-start', { id_tag: idTag }],
            ['send-local-list', { update: 'full', entries: [{ id_tag: idTag, status: 'Accepted' }] }],
          ] as const) {
            const res = await press(id, op, body);
            expect(res.status, `${op} ${JSON.stringify(idTag)}`).to.equal(422);
            expect(JSON.stringify(res.body), op).to.include('id_tag');
          }
        }
        expect(got('ReserveNow')).to.deep.equal([]);
        expect(got('RemoteStartTransaction')).to.deep.equal([]);
        expect(got('SendLocalList')).to.deep.equal([]);

        // a reservation ends at its expiry (a 1.6 charger says nothing then)
        const soon = new Date(Date.now() + 1500).toISOString();
        const short = await press(id, 'reserve', { id_tag: 'CARD-1', expiry_date: soon, evse_id: 1 });
        expect(short.body.command_status).to.equal('Accepted');
        expect((await view(id)).reservations).to.have.length(1);
        await eventually(async () => ((await view(id)).reservations.length === 0 ? true : undefined), {
          timeoutMs: 5_000,
        });
      });
    });

    describe('charging profiles', () => {
      const schedule = {
        rate_unit: 'A',
        periods: [
          { start_s: 0, limit: 16 },
          { start_s: 3600, limit: 10, phases: 3 },
        ],
      };

      it('OCPP 1.6: a default profile, a profile for the running transaction, clear, composite schedule', async () => {
        const composite = {
          status: 'Accepted',
          connectorId: 1,
          scheduleStart: '2026-11-25T10:00:00.000Z',
          chargingSchedule: { chargingRateUnit: 'A', chargingSchedulePeriod: [{ startPeriod: 0, limit: 16 }] },
        };
        const { id, client, got } = await charger('ocpp1.6', {
          SetChargingProfile: { status: 'Accepted' },
          ClearChargingProfile: { status: 'Accepted' },
          GetCompositeSchedule: composite,
        });
        let res = await press(id, 'set-charging-profile', {
          evse_id: 1,
          profile: { id: 7, stack_level: 1, purpose: 'tx_default', kind: 'relative', schedule },
        });
        expect(res.body.command_status).to.equal('Accepted');
        expect(got('SetChargingProfile')).to.deep.equal([
          {
            connectorId: 1,
            csChargingProfiles: {
              chargingProfileId: 7,
              stackLevel: 1,
              chargingProfilePurpose: 'TxDefaultProfile',
              chargingProfileKind: 'Relative',
              chargingSchedule: {
                chargingRateUnit: 'A',
                chargingSchedulePeriod: [
                  { startPeriod: 0, limit: 16 },
                  { startPeriod: 3600, limit: 10, numberPhases: 3 },
                ],
              },
            },
          },
        ]);

        const started16 = (await client.call('StartTransaction', v16.start())) as { transactionId: number };
        await eventually(async () => ((await view(id)).active_transactions.length === 1 ? true : undefined));
        // named by its integer, as the charger reported it (was 422: a string only)
        const tx = { id: 8, stack_level: 2, purpose: 'tx', kind: 'absolute', transaction_id: started16.transactionId };
        res = await press(id, 'set-charging-profile', {
          evse_id: 1,
          profile: { ...tx, schedule: { ...schedule, start: '2026-11-25T10:00:00Z', duration_s: 7200 } },
        });
        expect(res.body.command_status).to.equal('Accepted');
        expect(got('SetChargingProfile')[1]).to.deep.nested.include({
          'csChargingProfiles.transactionId': started16.transactionId,
          'csChargingProfiles.chargingProfilePurpose': 'TxProfile',
          'csChargingProfiles.chargingSchedule.startSchedule': '2026-11-25T10:00:00Z',
          'csChargingProfiles.chargingSchedule.duration': 7200,
        });

        res = await press(id, 'clear-charging-profile', { purpose: 'tx_default', evse_id: 1 });
        expect(res.body.command_status).to.equal('Accepted');
        expect(got('ClearChargingProfile')).to.deep.equal([
          { connectorId: 1, chargingProfilePurpose: 'TxDefaultProfile' },
        ]);

        res = await press(id, 'get-composite-schedule', { evse_id: 1, duration_s: 3600, rate_unit: 'A' });
        expect(res.body).to.deep.include({ command_status: 'Accepted', reply: composite });
        expect(got('GetCompositeSchedule')).to.deep.equal([{ connectorId: 1, duration: 3600, chargingRateUnit: 'A' }]);
      });

      it('OCPP 2.0.1: the station maximum as one schedule, criteria of a clear, composite of an EVSE', async () => {
        const { id, got } = await charger('ocpp2.0.1', {
          SetChargingProfile: { status: 'Accepted' },
          ClearChargingProfile: { status: 'Unknown' },
          GetCompositeSchedule: { status: 'Rejected' },
        });
        const res = await press(id, 'set-charging-profile', {
          evse_id: 0,
          profile: {
            id: 3,
            stack_level: 0,
            purpose: 'charger_max',
            kind: 'recurring',
            recurrency: 'daily',
            schedule: { start: '2026-11-25T00:00:00Z', rate_unit: 'W', periods: [{ start_s: 0, limit: 22000 }] },
          },
        });
        expect(res.body.command_status).to.equal('Accepted');
        expect(got('SetChargingProfile')).to.deep.equal([
          {
            evseId: 0,
            chargingProfile: {
              id: 3,
              stackLevel: 0,
              chargingProfilePurpose: 'ChargingStationMaxProfile',
              chargingProfileKind: 'Recurring',
              recurrencyKind: 'Daily',
              chargingSchedule: [
                {
                  id: 3,
                  startSchedule: '2026-11-25T00:00:00Z',
                  chargingRateUnit: 'W',
                  chargingSchedulePeriod: [{ startPeriod: 0, limit: 22000 }],
                },
              ],
            },
          },
        ]);
        expect((await press(id, 'clear-charging-profile', { profile_id: 3 })).body.command_status).to.equal('Unknown');
        expect((await press(id, 'clear-charging-profile', { stack_level: 0 })).body.command_status).to.equal('Unknown');
        expect(got('ClearChargingProfile')).to.deep.equal([
          { chargingProfileId: 3 },
          { chargingProfileCriteria: { stackLevel: 0 } },
        ]);
        const composite = await press(id, 'get-composite-schedule', { evse_id: 1, duration_s: 600 });
        expect(composite.body).to.deep.include({ command_status: 'Rejected', reply: { status: 'Rejected' } });
        expect(got('GetCompositeSchedule')).to.deep.equal([{ evseId: 1, duration: 600 }]);
      });

      it('refuses profiles OCPP does not allow, before anything is sent', async () => {
        const { id, got } = await charger('ocpp1.6', { SetChargingProfile: { status: 'Accepted' } });
        const base = { id: 1, stack_level: 0, kind: 'relative', schedule };
        const refused = [
          { evse_id: 1, profile: { ...base, purpose: 'charger_max' } },
          { evse_id: 1, profile: { ...base, purpose: 'tx' } },
          { evse_id: 1, profile: { ...base, purpose: 'tx', transaction_id: '99999' } },
          { evse_id: 1, profile: { ...base, purpose: 'tx_default', transaction_id: '1' } },
          { evse_id: 1, profile: { ...base, purpose: 'tx_default', kind: 'recurring' } },
          {
            evse_id: 1,
            profile: { ...base, purpose: 'tx_default', schedule: { ...schedule, periods: [{ start_s: 5, limit: 1 }] } },
          },
          {
            evse_id: 1,
            profile: {
              ...base,
              purpose: 'tx_default',
              schedule: {
                ...schedule,
                periods: [
                  { start_s: 0, limit: 1 },
                  { start_s: 0, limit: 2 },
                ],
              },
            },
          },
        ];
        // a 1.6 limit has one decimal at most
        refused.push({
          evse_id: 0,
          profile: {
            ...base,
            purpose: 'charger_max',
            schedule: { ...schedule, periods: [{ start_s: 0, limit: 7.25 }] },
          },
        });
        for (const body of refused) {
          const res = await press(id, 'set-charging-profile', body);
          expect(res.status, JSON.stringify(body)).to.equal(422);
        }
        expect(got('SetChargingProfile')).to.deep.equal([]);
        // one decimal goes through, though 11.1 is not a multiple of 0.1 in binary floating point
        const ok = await press(id, 'set-charging-profile', {
          evse_id: 0,
          profile: {
            ...base,
            purpose: 'charger_max',
            schedule: { ...schedule, periods: [{ start_s: 0, limit: 11.1 }] },
          },
        });
        expect(ok.body.command_status).to.equal('Accepted');
      });
      it('OCPP 2.0.1: refuses a relative station maximum and an absolute profile without a start; 1.6 takes both', async () => {
        const v2 = await charger('ocpp2.0.1', { SetChargingProfile: { status: 'Accepted' } });
        const v1 = await charger('ocpp1.6', { SetChargingProfile: { status: 'Accepted' } });
        const max = { id: 4, stack_level: 0, purpose: 'charger_max', kind: 'relative', schedule };
        const absolute = { id: 5, stack_level: 0, purpose: 'tx_default', kind: 'absolute', schedule };
        // was 200, and the station got a profile OCPP 2.0.1 forbids (K01.FR.38, K01.FR.40)
        for (const [evseId, profile, rule] of [
          [0, max, 'K01.FR.38'],
          [1, absolute, 'K01.FR.40'],
        ] as const) {
          const res = await press(v2.id, 'set-charging-profile', { evse_id: evseId, profile });
          expect(res.status, rule).to.equal(422);
          expect(res.body, rule).to.deep.nested.include({ 'error.code': 'bad_charging_profile' });
          expect(JSON.stringify(res.body), rule).to.include(rule);
        }
        expect(v2.got('SetChargingProfile')).to.deep.equal([]);
        // with a start, the absolute maximum goes through
        const start = '2026-11-25T00:00:00Z';
        const ok = await press(v2.id, 'set-charging-profile', {
          evse_id: 0,
          profile: { ...max, kind: 'absolute', schedule: { ...schedule, start } },
        });
        expect(ok.body.command_status).to.equal('Accepted');
        // 1.6 forbids neither: its startSchedule is optional (relative to the start of charging)
        for (const [evseId, profile] of [
          [0, max],
          [1, absolute],
        ] as const)
          expect(
            (await press(v1.id, 'set-charging-profile', { evse_id: evseId, profile })).body.command_status,
          ).to.equal('Accepted');
        expect(v1.got('SetChargingProfile')).to.have.length(2);
      });
    });

    describe('local authorization lists', () => {
      const putToken = async (token: Record<string, unknown>) => {
        const res = await api(
          'PUT',
          `/v1/ocpi/tokens/${String(token.country_code)}/${String(token.party_id)}/${String(token.uid)}`,
          token,
        );
        expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 201]);
      };

      it('OCPP 1.6: syncs the tokens as a full list, then differences only; a VersionMismatch makes the next one full', async () => {
        const answers = ['Accepted', 'Accepted', 'VersionMismatch', 'Accepted'];
        const { id, got } = await charger('ocpp1.6', {
          SendLocalList: () => ({ status: answers.shift() ?? 'Accepted' }),
        });
        const tag = Math.random().toString(36).slice(2, 10);
        const ours = aToken221({ uid: `OWN-${tag}` });
        const blocked = aToken221({ uid: `BLK-${tag}`, valid: false });
        const partners = aToken221({
          country_code: 'DE',
          party_id: 'ABC',
          uid: `DE-${tag}`,
          whitelist: 'ALLOWED_OFFLINE',
        });
        const never = aToken221({
          country_code: 'DE',
          party_id: 'ABC',
          uid: `NEV-${tag}`,
          whitelist: 'NEVER',
        });
        const app = aToken221({ uid: `APP-${tag}`, type: 'APP_USER' });
        for (const t of [ours, blocked, partners, never, app]) await putToken(t);

        let res = await api<{ in_sync: boolean; update: string; changes: number; commands: Result[] }>(
          'POST',
          `/v1/charge-points/${id}/sync-local-list`,
          {},
        );
        expect(res.status).to.equal(200);
        expect(res.body).to.deep.include({ in_sync: false, update: 'full' });
        expect(res.body.commands.map((c) => c.command_status)).to.deep.equal(['Accepted']);
        const [first] = got('SendLocalList') as Array<{
          listVersion: number;
          updateType: string;
          localAuthorizationList: Array<{ idTag: string; idTagInfo?: { status: string } }>;
        }>;
        expect(first?.listVersion).to.equal(1);
        expect(first?.updateType).to.equal('Full');
        const mine = (first?.localAuthorizationList ?? []).filter((e) => e.idTag.endsWith(tag));
        expect(Object.fromEntries(mine.map((e) => [e.idTag, e.idTagInfo?.status]))).to.deep.equal({
          [String(ours.uid)]: 'Accepted',
          [String(blocked.uid)]: 'Blocked',
          [String(partners.uid)]: 'Accepted',
        });
        const held = await api<{ version: number; entries: Array<{ id_tag: string }> }>(
          'GET',
          `/v1/charge-points/${id}/local-list`,
        );
        expect(held.body.version).to.equal(1);
        expect(held.body.entries.map((e) => e.id_tag)).to.include.members([ours.uid, blocked.uid, partners.uid]);

        // no body at all, as `curl -X POST`: its one field is optional (was 422)
        res = await api('POST', `/v1/charge-points/${id}/sync-local-list`);
        expect(res.body).to.deep.include({ in_sync: true, update: null, changes: 0 });

        await putToken({ ...ours, valid: false, last_updated: new Date().toISOString() });
        res = await api('POST', `/v1/charge-points/${id}/sync-local-list`, {});
        expect(res.body).to.deep.include({ in_sync: false, update: 'differential', changes: 1 });
        expect(got('SendLocalList')[1]).to.deep.equal({
          listVersion: 2,
          updateType: 'Differential',
          localAuthorizationList: [{ idTag: ours.uid, idTagInfo: { status: 'Blocked' } }],
        });

        // the operator's own differential update: the charger says its version is not ours
        const own = await press(id, 'send-local-list', {
          update: 'differential',
          entries: [{ id_tag: String(partners.uid), status: null }],
        });
        expect(own.body.command_status).to.equal('VersionMismatch');
        expect(got('SendLocalList')[2]).to.deep.equal({
          listVersion: 3,
          updateType: 'Differential',
          localAuthorizationList: [{ idTag: partners.uid }],
        });
        expect((await api<{ version: null }>('GET', `/v1/charge-points/${id}/local-list`)).body.version).to.equal(null);
        res = await api('POST', `/v1/charge-points/${id}/sync-local-list`, {});
        expect(res.body).to.deep.include({ update: 'full' });
        expect(got('SendLocalList')[3]).to.deep.include({ listVersion: 1, updateType: 'Full' });
      });

      it('OCPP 2.0.1: SendLocalList with id tokens; a full update may not remove', async () => {
        const { id, got } = await charger('ocpp2.0.1', { SendLocalList: { status: 'Accepted' } });
        const res = await press(id, 'send-local-list', {
          update: 'full',
          entries: [
            { id_tag: 'CARD-A', status: 'Accepted', expiry: '2027-01-01T00:00:00Z' },
            { id_tag: 'EMAID-B', type: 'eMAID', status: 'Blocked' },
          ],
        });
        expect(res.body.command_status).to.equal('Accepted');
        expect(got('SendLocalList')).to.deep.equal([
          {
            versionNumber: 1,
            updateType: 'Full',
            localAuthorizationList: [
              {
                idToken: { idToken: 'CARD-A', type: 'ISO14443' },
                idTokenInfo: { status: 'Accepted', cacheExpiryDateTime: '2027-01-01T00:00:00Z' },
              },
              { idToken: { idToken: 'EMAID-B', type: 'eMAID' }, idTokenInfo: { status: 'Blocked' } },
            ],
          },
        ]);
        const bad = await press(id, 'send-local-list', {
          update: 'full',
          entries: [{ id_tag: 'CARD-A', status: null }],
        });
        expect(bad.status).to.equal(422);
        const next = await press(id, 'send-local-list', {
          update: 'differential',
          entries: [{ id_tag: 'CARD-A', status: null }],
        });
        expect(next.body.command_status).to.equal('Accepted');
        expect(got('SendLocalList')[1]).to.deep.include({ versionNumber: 2, updateType: 'Differential' });
        const held = await api<{ version: number; entries: Array<{ id_tag: string; type?: string; status: string }> }>(
          'GET',
          `/v1/charge-points/${id}/local-list`,
        );
        expect(held.body).to.deep.equal({
          version: 2,
          entries: [{ id_tag: 'EMAID-B', type: 'eMAID', status: 'Blocked' }],
        });
        // an empty full update clears the list (the schema takes no empty array)
        const clear = await press(id, 'send-local-list', { update: 'full', entries: [] });
        expect(clear.body.command_status).to.equal('Accepted');
        expect(got('SendLocalList')[2]).to.deep.equal({ versionNumber: 3, updateType: 'Full' });
        const empty = await api<{ version: number; entries: unknown[] }>('GET', `/v1/charge-points/${id}/local-list`);
        expect(empty.body).to.deep.equal({ version: 3, entries: [] });
      });
    });
  });
