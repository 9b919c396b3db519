import { expect } from 'chai';
import {
  aConnector,
  aConnector211,
  aLocation,
  aLocation211,
  aSession,
  aSession221,
  aTariff,
  aToken,
  anEvse,
  anEvse211,
  isoAt,
} from '../../support/ocpi-builders.js';
import { OcpiApi, dataOf, type OcpiTarget, type RegisteredPartner } from '../../support/ocpi-harness.js';

type Obj = Record<string, unknown>;

/** The eMSP mounts (spec Endpoints "eMSP mount, version 2.2.1" and "version 2.1.1"). */
export function emspSuite(makeTarget: () => Promise<OcpiTarget>): void {
  describe('OCPI eMSP mounts', function () {
    this.timeout(60_000);
    let target: OcpiTarget;
    let api: OcpiApi;
    let cpo: RegisteredPartner;
    let other: RegisteredPartner;
    let cc: string;
    let pid: string;

    const put221 = (id: string, body: Obj) =>
      api.request('PUT', `/ocpi/emsp/2.2.1/locations/${cc}/${pid}/${id}`, {
        token: cpo.token,
        encoding: 'base64',
        body,
      });
    const patch221 = (path: string, body: Obj) =>
      api.request('PATCH', `/ocpi/emsp/2.2.1/locations/${cc}/${pid}/${path}`, {
        token: cpo.token,
        encoding: 'base64',
        body,
      });

    before(async () => {
      target = await makeTarget();
      api = new OcpiApi(target);
      cpo = await api.register('CPO');
      other = await api.register('CPO');
      ({ country_code: cc, party_id: pid } = cpo.party);
    });
    after(async () => {
      await target.stop();
    });

    describe('2.2.1', () => {
      it('GET / answers the VersionDetail of the mount', async () => {
        const res = await api.request('GET', '/ocpi/emsp/2.2.1', { token: cpo.token, encoding: 'base64' });
        const detail = dataOf<{ version: string; endpoints: Array<{ identifier: string; role: string; url: string }> }>(
          res,
        );
        expect(detail.version).to.equal('2.2.1');
        expect(detail.endpoints.map(({ identifier, role }) => `${identifier} ${role}`)).to.deep.equal([
          'credentials SENDER',
          'locations RECEIVER',
          'sessions RECEIVER',
          'cdrs RECEIVER',
          'tariffs RECEIVER',
          'tokens SENDER',
          'commands SENDER',
        ]);
        for (const e of detail.endpoints) expect(e.url).to.match(new RegExp(`/ocpi/emsp/2\\.2\\.1/${e.identifier}$`));
      });

      it('stores timestamps in UTC: no designator means UTC, an offset is converted; a bad one is 422', async () => {
        const plain = aLocation({
          country_code: cc,
          party_id: pid,
          id: 'LOC-TZ1',
          last_updated: '2026-11-24T10:00:00',
        });
        const stored = dataOf<Obj>(await put221('LOC-TZ1', plain));
        expect(stored.last_updated).to.equal('2026-11-24T10:00:00Z');
        const shifted = aLocation({
          country_code: cc,
          party_id: pid,
          id: 'LOC-TZ2',
          last_updated: '2026-11-24T10:00:00.250+01:00',
          evses: [anEvse({ uid: 'TZ-E1', last_updated: '2026-11-24T10:00:00-02:30' })],
        });
        const out = dataOf<Obj & { evses: Obj[] }>(await put221('LOC-TZ2', shifted));
        expect(out.last_updated).to.equal('2026-11-24T09:00:00.250Z');
        expect(out.evses[0]?.last_updated).to.equal('2026-11-24T12:30:00Z');
        for (const bad of [
          '2026-13-01T00:00:00Z',
          '2026-11-24 10:00:00',
          '2026-11-24T10:00',
          'yesterday',
          // the right shape, but no such day (2025 is no leap year) or instant
          '2025-02-29T10:00:00Z',
          '2026-04-31T10:00:00',
          '0000-01-01T00:30:00+01:00',
        ]) {
          const res = await put221(
            'LOC-TZ3',
            aLocation({ country_code: cc, party_id: pid, id: 'LOC-TZ3', last_updated: bad }),
          );
          expect(res.status, bad).to.equal(422);
        }
      });

      it('checks coordinates by the rule of each version: 5 to 7 decimals on the globe in 2.2.1, exactly 6 in 2.1.1', async () => {
        const at = (latitude: string, longitude: string, id = 'LOC-GEO') =>
          aLocation({ country_code: cc, party_id: pid, id, coordinates: { latitude, longitude } });
        for (const [lat, lon] of [
          ['52.09', '5.121000'],
          ['91.000000', '5.121000'],
          ['52.090000', '181.00000'],
          ['52,090000', '5.121000'],
          ['52.09000001', '5.121000'],
          ['', '5.121000'],
        ] as const) {
          const res = await put221('LOC-GEO', at(lat, lon));
          expect(res.status, `${lat} ${lon}`).to.equal(422);
          expect((res.body.detail as Array<{ loc: unknown[] }>)[0]?.loc.slice(0, 3)).to.deep.equal([
            'body',
            'coordinates',
            lat === '52.090000' ? 'longitude' : 'latitude',
          ]);
        }
        // an EVSE's coordinates follow the same rule
        const evse = at('52.09001', '5.1210001', 'LOC-GEO');
        (evse.evses as Obj[])[0] = {
          ...(evse.evses as Obj[])[0],
          coordinates: { latitude: '-90.1', longitude: '0.0' },
        };
        expect((await put221('LOC-GEO', evse)).status).to.equal(422);

        // 7 and 5 decimals are 2.2.1's (within its string(10) and string(11)); the 2.1.1 interface serves them with 6
        const seven = await put221('LOC-GEO', at('52.0900049', '-179.99999'));
        expect(seven.body.status_code, JSON.stringify(seven.body)).to.equal(1000);
        const read211 = await api.request('GET', `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/LOC-GEO`, {
          token: cpo.token,
        });
        expect(dataOf<Obj>(read211).coordinates).to.deep.equal({ latitude: '52.090005', longitude: '-179.999990' });
        // a 2.1.1 body must have 6
        const put211 = (latitude: string) =>
          api.request('PUT', `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/LOC-GEO211`, {
            token: cpo.token,
            body: { ...aLocation211({ id: 'LOC-GEO211' }), coordinates: { latitude, longitude: '5.121000' } },
          });
        expect((await put211('52.09000')).status).to.equal(422);
        expect((await put211('52.090000')).body.status_code).to.equal(1000);
      });

      it('takes the two-phase power types of 2.2.1 and serves them as AC_1_PHASE on 2.1.1', async () => {
        const location = aLocation({
          country_code: cc,
          party_id: pid,
          id: 'LOC-2PH',
          evses: [
            anEvse({
              uid: '2PH-E1',
              connectors: [
                aConnector({ id: '1', power_type: 'AC_2_PHASE_SPLIT' }),
                aConnector({ id: '2', power_type: 'AC_2_PHASE' }),
              ],
            }),
          ],
        });
        expect((await put221('LOC-2PH', location)).body.status_code).to.equal(1000);
        const read211 = await api.request('GET', `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/LOC-2PH/2PH-E1`, {
          token: cpo.token,
        });
        const types = (dataOf<Obj>(read211).connectors as Obj[]).map((c) => c.power_type);
        expect(types).to.deep.equal(['AC_1_PHASE', 'AC_1_PHASE']);
        // 2.1.1 itself has no such value
        const put211 = await api.request('PUT', `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/LOC-2PH/2PH-E1/1`, {
          token: cpo.token,
          body: aConnector211({ id: '1', power_type: 'AC_2_PHASE' }),
        });
        expect(put211.status).to.equal(422);
      });

      it('serves capabilities and facilities 2.1.1 does not name left out on 2.1.1, kept on 2.2.1', async () => {
        const location = aLocation({
          country_code: cc,
          party_id: pid,
          id: 'LOC-ENUMS',
          facilities: ['HOTEL', 'PARKING_LOT', 'METRO_STATION', 'WIFI'],
          evses: [
            anEvse({
              uid: 'ENUMS-E1',
              capabilities: ['RFID_READER', 'CHIP_CARD_SUPPORT', 'START_SESSION_CONNECTOR_REQUIRED', 'RESERVABLE'],
            }),
          ],
        });
        expect((await put221('LOC-ENUMS', location)).body.status_code).to.equal(1000);
        const read211 = dataOf<Obj>(
          await api.request('GET', `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/LOC-ENUMS`, { token: cpo.token }),
        );
        expect(read211.facilities).to.deep.equal(['HOTEL', 'WIFI']);
        expect((read211.evses as Obj[])[0]?.capabilities).to.deep.equal(['RFID_READER', 'RESERVABLE']);
        const read221 = dataOf<Obj>(
          await api.request('GET', `/ocpi/emsp/2.2.1/locations/${cc}/${pid}/LOC-ENUMS`, { token: cpo.token }),
        );
        expect(read221.facilities).to.deep.equal(['HOTEL', 'PARKING_LOT', 'METRO_STATION', 'WIFI']);
      });

      it('PUT replaces a location and answers the LocationOut', async () => {
        const first = aLocation({
          country_code: cc,
          party_id: pid,
          id: 'LOC-PUT',
          name: 'First',
          evses: [anEvse({ uid: 'E1' })],
        });
        expect(dataOf(await put221('LOC-PUT', first))).to.include({ id: 'LOC-PUT', name: 'First' });
        const replacement = aLocation({
          country_code: cc,
          party_id: pid,
          id: 'LOC-PUT',
          name: undefined,
          evses: [],
          last_updated: isoAt(60),
        });
        const res = await put221('LOC-PUT', replacement);
        expect(res.body.status_code).to.equal(1000);
        const out = dataOf<Obj>(res);
        expect(out).to.include({ id: 'LOC-PUT', country_code: cc, party_id: pid, last_updated: isoAt(60) });
        expect(out).not.to.have.property('name');
        expect(out.evses).to.deep.equal([]);
      });

      it('PUT takes the id from the path when the body has none, and answers 2001 when they differ', async () => {
        const noId = aLocation({ country_code: cc, party_id: pid, id: undefined });
        expect(dataOf<Obj>(await put221('LOC-NOID', noId)).id).to.equal('LOC-NOID');
        const res = await put221('LOC-A', aLocation({ country_code: cc, party_id: pid, id: 'LOC-B' }));
        expect(res.status).to.equal(200);
        expect(res.body.status_code).to.equal(2001);
        expect((res.body.errors as Obj[])[0]).to.include({ field: 'id' });
      });

      it('PATCH merges into a location; last_updated is required; unknown location is 404 2003', async () => {
        await put221(
          'LOC-PATCH',
          aLocation({ country_code: cc, party_id: pid, id: 'LOC-PATCH', name: 'Before', city: 'Utrecht' }),
        );
        const res = await patch221('LOC-PATCH', { name: 'After', last_updated: isoAt(120) });
        expect(dataOf<Obj>(res)).to.include({ name: 'After', city: 'Utrecht', last_updated: isoAt(120) });
        const noStamp = await patch221('LOC-PATCH', { name: 'x' });
        expect(noStamp.status).to.equal(422);
        const unknown = await patch221('LOC-NONE', { name: 'x', last_updated: isoAt() });
        expect(unknown.status).to.equal(404);
        expect(unknown.body).to.include({ status_code: 2003, status_message: 'Unknown location' });
        const mismatch = await api.request(
          'PATCH',
          `/ocpi/emsp/2.2.1/locations/${other.party.country_code}/${other.party.party_id}/LOC-PATCH`,
          {
            token: cpo.token,
            encoding: 'base64',
            body: { name: 'x', last_updated: isoAt() },
          },
        );
        expect(mismatch.body.status_code).to.equal(2001);
      });

      it("PATCH of a location stamped before one of its EVSEs' keeps the EVSE's later stamp on the location", async () => {
        await put221(
          'LOC-STAMP',
          aLocation({
            country_code: cc,
            party_id: pid,
            id: 'LOC-STAMP',
            evses: [anEvse({ uid: 'E1' }), anEvse({ uid: 'E2' })],
          }),
        );
        // a stamp far ahead of every clock (held, it orders nothing: Decisions 38), then ordinary ones
        const far = '2099-01-01T00:00:00Z';
        expect((await patch221('LOC-STAMP/E2', { status: 'OUTOFORDER', last_updated: far })).status).to.equal(200);
        expect((await patch221('LOC-STAMP/E2', { status: 'AVAILABLE', last_updated: isoAt(600) })).status).to.equal(
          200,
        );
        expect((await patch221('LOC-STAMP/E1', { status: 'CHARGING', last_updated: isoAt(900) })).status).to.equal(200);
        const res = await patch221('LOC-STAMP', { name: 'Renamed', last_updated: isoAt(300) });
        // was isoAt(300), before E1's: mod_locations, when "this Location or one of its EVSEs or Connectors" changed
        expect(dataOf<Obj>(res)).to.include({ name: 'Renamed', last_updated: isoAt(900) });
      });

      it('PATCH of a location that would leave an EVSE incomplete answers 2001', async () => {
        await put221('LOC-INC', aLocation({ country_code: cc, party_id: pid, id: 'LOC-INC', evses: [] }));
        const res = await patch221('LOC-INC', { evses: [{ uid: 'NEW' }], last_updated: isoAt() });
        expect(res.body.status_code).to.equal(2001);
      });

      it('PATCH of an EVSE merges it and answers the EVSE; unknown EVSE or location is 404 2003', async () => {
        await put221(
          'LOC-EVSE',
          aLocation({
            country_code: cc,
            party_id: pid,
            id: 'LOC-EVSE',
            evses: [anEvse({ uid: 'E1', status: 'AVAILABLE' })],
          }),
        );
        const res = await patch221('LOC-EVSE/E1', { status: 'CHARGING', last_updated: isoAt(300) });
        expect(res.body.status_code).to.equal(1000);
        const evse = dataOf<Obj>(res);
        expect(evse).to.include({ uid: 'E1', status: 'CHARGING', last_updated: isoAt(300) });
        expect(evse.connectors).to.have.length(1);
        const location = await api.request('GET', `/ocpi/2.2.1/locations/${cc}/${pid}/LOC-EVSE`, {
          token: cpo.token,
          encoding: 'base64',
        });
        expect(dataOf<Obj>(location).last_updated).to.equal(isoAt(300));
        for (const path of ['LOC-EVSE/NOPE', 'LOC-NONE/E1']) {
          const unknown = await patch221(path, { status: 'BLOCKED', last_updated: isoAt() });
          expect(unknown.status, path).to.equal(404);
          expect(unknown.body.status_code).to.equal(2003);
        }
        expect((await patch221('LOC-EVSE/E1', { status: 'BLOCKED' })).status).to.equal(422);
      });
    });

    it('PATCHes of one location sent all at once all land: 30 EVSEs and the location itself', async () => {
      const uids = Array.from({ length: 30 }, (_, i) => `E${i}`);
      await put221(
        'LOC-STORM',
        aLocation({
          country_code: cc,
          party_id: pid,
          id: 'LOC-STORM',
          evses: uids.map((uid) => anEvse({ uid, status: 'AVAILABLE' })),
        }),
      );
      const answers = await Promise.all([
        ...uids.map((uid, i) => patch221(`LOC-STORM/${uid}`, { status: 'CHARGING', last_updated: isoAt(400 + i) })),
        patch221('LOC-STORM', { name: 'Stormed', last_updated: isoAt(450) }),
      ]);
      expect(answers.map((a) => `${a.status} ${String(a.body.status_code)}`)).to.deep.equal(
        answers.map(() => '200 1000'),
      );
      const location = dataOf<{ name: string; evses: Obj[] }>(
        await api.request('GET', `/ocpi/2.2.1/locations/${cc}/${pid}/LOC-STORM`, {
          token: cpo.token,
          encoding: 'base64',
        }),
      );
      expect(location.name).to.equal('Stormed');
      expect(location.evses.map((e) => `${String(e.uid)} ${String(e.status)}`)).to.deep.equal(
        uids.map((uid) => `${uid} CHARGING`),
      );
    });

    describe('2.1.1', () => {
      it('GET / lists the module endpoints of the mount', async () => {
        const res = await api.request('GET', '/ocpi/emsp/2.1.1', { token: cpo.token });
        const detail = dataOf<{ version: string; endpoints: Array<{ identifier: string; url: string }> }>(res);
        expect(detail.version).to.equal('2.1.1');
        expect(detail.endpoints.map((e) => e.identifier)).to.have.members([
          'credentials',
          'tokens',
          'sessions',
          'locations',
          'tariffs',
          'cdrs',
          'commands',
        ]);
        expect(detail.endpoints[0]).not.to.have.property('role');
      });

      it('GET /tokens pages our own tokens for the CPO', async () => {
        const uids = ['T211-1', 'T211-2', 'T211-3'];
        for (const [i, uid] of uids.entries()) {
          const res = await api.request('PUT', `/v1/ocpi/tokens/NL/EVP/${uid}`, {
            body: aToken({ uid, last_updated: isoAt(i) }),
          });
          expect(res.status).to.equal(200);
        }
        const res = await api.request('GET', '/ocpi/emsp/2.1.1/tokens?limit=2', { token: cpo.token });
        expect(res.status).to.equal(200);
        expect(dataOf<Obj[]>(res).map((t) => t.uid)).to.deep.equal(['T211-1', 'T211-2']);
        expect(res.headers.get('x-total-count')).to.equal('3');
        expect(res.headers.get('x-limit')).to.equal('2');
        expect(res.headers.get('link')).to.match(/offset=2/);
        // and the operator reads them back on /v1 (was 405: a token could be put and never read)
        const listed = await api.request('GET', '/v1/ocpi/tokens?limit=2');
        expect(listed.status).to.equal(200);
        expect((listed.body.value as Obj[]).map((t) => t.uid)).to.deep.equal(['T211-1', 'T211-2']);
        expect(listed.headers.get('x-total-count')).to.equal('3');
        const one = await api.request('GET', '/v1/ocpi/tokens/NL/EVP/T211-2');
        expect([one.status, one.body.uid, one.body.contract_id]).to.deep.equal([200, 'T211-2', 'NL-EVP-C12345678']);
        expect((await api.request('GET', '/v1/ocpi/tokens/NL/EVP/NOPE')).status).to.equal(404);
      });

      it('POST /tokens/{uid}/authorize answers ALLOWED with the location, BLOCKED for an invalid token, 404 2000 when unknown (2.1.1 has no 2004)', async () => {
        await api.request('PUT', '/v1/ocpi/tokens/NL/EVP/AUTH-OK', { body: aToken({ uid: 'AUTH-OK' }) });
        await api.request('PUT', '/v1/ocpi/tokens/NL/EVP/AUTH-BLOCKED', {
          body: aToken({ uid: 'AUTH-BLOCKED', valid: false }),
        });
        const ok = await api.request('POST', '/ocpi/emsp/2.1.1/tokens/AUTH-OK/authorize', {
          token: cpo.token,
          body: { location_id: 'LOC-1', evse_uids: ['E1'] },
        });
        expect(ok.body.status_code).to.equal(1000);
        expect(dataOf(ok)).to.deep.equal({ allowed: 'ALLOWED', location: { location_id: 'LOC-1', evse_uids: ['E1'] } });
        const noBody = await api.request('POST', '/ocpi/emsp/2.1.1/tokens/AUTH-OK/authorize?type=RFID', {
          token: cpo.token,
        });
        expect(dataOf(noBody)).to.deep.equal({ allowed: 'ALLOWED' });
        // token_uid is a CiString: another case of its letters finds it (was 404 2004)
        const otherCase = await api.request('POST', '/ocpi/emsp/2.1.1/tokens/auth-ok/authorize', { token: cpo.token });
        expect([otherCase.status, dataOf<Obj>(otherCase).allowed]).to.deep.equal([200, 'ALLOWED']);
        const blocked = await api.request('POST', '/ocpi/emsp/2.1.1/tokens/AUTH-BLOCKED/authorize', {
          token: cpo.token,
          body: { location_id: 'LOC-1' },
        });
        // no location: it comes back only where the driver may charge (AuthorizationInfo)
        expect(dataOf(blocked)).to.deep.equal({ allowed: 'BLOCKED' });
        for (const path of [
          '/ocpi/emsp/2.1.1/tokens/NOPE/authorize',
          '/ocpi/emsp/2.1.1/tokens/AUTH-OK/authorize?type=OTHER',
        ]) {
          const unknown = await api.request('POST', path, { token: cpo.token });
          expect(unknown.status, path).to.equal(404);
          expect(unknown.body).to.include({ status_code: 2000, status_message: 'Unknown token' });
        }
        const badType = await api.request('POST', '/ocpi/emsp/2.1.1/tokens/AUTH-OK/authorize?type=CARD', {
          token: cpo.token,
        });
        expect(badType.status).to.equal(422);
        const badBody = await api.request('POST', '/ocpi/emsp/2.1.1/tokens/AUTH-OK/authorize', {
          token: cpo.token,
          body: { evse_uids: ['E1'] },
        });
        expect(badBody.status).to.equal(422);
      });

      it('GET and PATCH /sessions: the CPO reads back its session and completes it', async () => {
        const path = `/ocpi/emsp/2.1.1/sessions/${cc}/${pid}/SES-LIFE`;
        const session = aSession({ id: 'SES-LIFE' });
        await api.request('PUT', path, { token: cpo.token, body: session });
        const got = await api.request('GET', path, { token: cpo.token });
        expect(dataOf<Obj>(got)).to.include({ id: 'SES-LIFE', authorization_id: session.auth_id });
        const patched = await api.request('PATCH', path, {
          token: cpo.token,
          body: { kwh: 30.25, status: 'COMPLETED', end_datetime: '2026-11-24T11:00:00+01:00', last_updated: isoAt(5) },
        });
        expect(dataOf<Obj>(patched)).to.include({
          id: 'SES-LIFE',
          kwh: 30.25,
          status: 'COMPLETED',
          end_datetime: '2026-11-24T10:00:00Z',
          authorization_id: session.auth_id,
        });
        const unknown = await api.request('GET', `/ocpi/emsp/2.1.1/sessions/${cc}/${pid}/SES-NONE`, {
          token: cpo.token,
        });
        expect(unknown.status).to.equal(404);
        const foreign = await api.request(
          'GET',
          `/ocpi/emsp/2.1.1/sessions/${other.party.country_code}/${other.party.party_id}/SES-LIFE`,
          { token: cpo.token },
        );
        expect(foreign.body.status_code).to.equal(2001);
      });

      it('a session that would end before it started is refused (2001), by PUT or PATCH, in both versions', async () => {
        const path = `/ocpi/emsp/2.1.1/sessions/${cc}/${pid}/SES-BACKWARDS`;
        const started = aSession({ id: 'SES-BACKWARDS', start_datetime: '2026-11-30T08:00:00Z' });
        expect((await api.request('PUT', path, { token: cpo.token, body: started })).body.status_code).to.equal(1000);
        const early = { status: 'COMPLETED', end_datetime: '2026-11-30T07:00:00Z', last_updated: isoAt(10) };
        for (const [method, body] of [
          ['PATCH', early],
          ['PUT', { ...started, ...early }],
        ] as const) {
          const res = await api.request(method, path, { token: cpo.token, body });
          expect(res.body.status_code, method).to.equal(2001);
          expect((res.body.errors as Obj[])[0], method).to.include({ type: 'value_error.end_before_start' });
        }
        expect(dataOf<Obj>(await api.request('GET', path, { token: cpo.token }))).to.include({ status: 'ACTIVE' });
        const path221 = `/ocpi/emsp/2.2.1/sessions/${cc}/${pid}/SES-BACKWARDS-221`;
        const s221 = aSession221({
          id: 'SES-BACKWARDS-221',
          country_code: cc,
          party_id: pid,
          start_date_time: '2026-11-30T08:00:00Z',
        });
        const put = await api.request('PUT', path221, { token: cpo.token, encoding: 'base64', body: s221 });
        expect(put.body.status_code, JSON.stringify(put.body)).to.equal(1000);
        const patched = await api.request('PATCH', path221, {
          token: cpo.token,
          encoding: 'base64',
          body: { status: 'COMPLETED', end_date_time: '2026-11-30T07:00:00Z', last_updated: isoAt(10) },
        });
        expect(patched.body.status_code, JSON.stringify(patched.body)).to.equal(2001);
      });

      it("a PUT stamped by the CPO's clock a moment after a PATCH without last_updated is applied", async () => {
        // Decisions 33: the PATCH is stamped on receipt, but not so that the CPO's next PUT, made
        // after it by a clock a second or two behind ours, is answered 1000 and dropped as older
        const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
        const path = `/ocpi/emsp/2.1.1/sessions/${cc}/${pid}/SES-ORDER`;
        const call = (method: string, body: Obj) => api.request(method, path, { token: cpo.token, body });
        const started = aSession({ id: 'SES-ORDER', kwh: 0, start_datetime: ago(120), last_updated: ago(60) });
        expect((await call('PUT', started)).body.status_code).to.equal(1000);
        expect(dataOf<Obj>(await call('PATCH', { kwh: 5.5 }))).to.include({ kwh: 5.5 });
        const ended = { ...started, kwh: 6, status: 'COMPLETED', end_datetime: ago(2), last_updated: ago(2) };
        expect(dataOf<Obj>(await call('PUT', ended))).to.include({ kwh: 6, status: 'COMPLETED' });
        // a late copy of the first PUT still changes nothing
        expect(dataOf<Obj>(await call('PUT', started))).to.include({ kwh: 6, status: 'COMPLETED' });

        const loc = `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/LOC-ORDER`;
        const first = aLocation211({ id: 'LOC-ORDER', name: 'Old name', last_updated: ago(60) });
        const evse = (first.evses as Obj[])[0] as Obj;
        const send = (method: string, p: string, body: Obj) => api.request(method, p, { token: cpo.token, body });
        expect((await send('PUT', loc, first)).body.status_code).to.equal(1000);
        const charging = await send('PATCH', `${loc}/${String(evse.uid)}`, { status: 'CHARGING' });
        expect(dataOf<Obj>(charging)).to.include({ status: 'CHARGING' });
        const stamp = Date.parse(String(dataOf<Obj>(charging).last_updated));
        expect(stamp).to.be.within(Date.now() - 12_000, Date.now());
        const renamed = await send('PUT', loc, { ...first, name: 'New name', last_updated: ago(1) });
        expect(dataOf<Obj>(renamed)).to.include({ name: 'New name' });
      });

      it('PUT /sessions stores the session and answers SessionOut with authorization_id', async () => {
        const session = aSession({ id: 'SES-1' });
        const res = await api.request('PUT', `/ocpi/emsp/2.1.1/sessions/${cc}/${pid}/SES-1`, {
          token: cpo.token,
          body: session,
        });
        expect(res.body.status_code).to.equal(1000);
        expect(dataOf<Obj>(res)).to.include({ id: 'SES-1', kwh: 12.5, authorization_id: session.auth_id });
        const mismatch = await api.request('PUT', `/ocpi/emsp/2.1.1/sessions/${cc}/${pid}/SES-2`, {
          token: cpo.token,
          body: session,
        });
        expect(mismatch.body.status_code).to.equal(2001);
        const identity = await api.request(
          'PUT',
          `/ocpi/emsp/2.1.1/sessions/${other.party.country_code}/${other.party.party_id}/SES-1`,
          { token: cpo.token, body: session },
        );
        expect((identity.body.errors as Obj[])[0]).to.include({ type: 'value_error.identity_mismatch' });
        const invalid = await api.request('PUT', `/ocpi/emsp/2.1.1/sessions/${cc}/${pid}/SES-1`, {
          token: cpo.token,
          body: { ...session, kwh: 'lots' },
        });
        expect(invalid.status).to.equal(422);
      });

      it('takes 2.1.1 opening times as regular_hours alone, and gives them to 2.2.1 with twentyfourseven false', async () => {
        const hours = [{ weekday: 1, period_begin: '08:00', period_end: '20:00' }];
        const base = `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/LOC-HRS`;
        const put = await api.request('PUT', base, {
          token: cpo.token,
          body: aLocation211({ id: 'LOC-HRS', opening_times: { regular_hours: hours } }),
        });
        expect(put.body.status_code, JSON.stringify(put.body)).to.equal(1000);
        expect(dataOf<Obj>(put).opening_times).to.deep.equal({ regular_hours: hours });
        const as221 = await api.request('GET', `/ocpi/emsp/2.2.1/locations/${cc}/${pid}/LOC-HRS`, {
          token: cpo.token,
          encoding: 'base64',
        });
        expect(dataOf<Obj>(as221).opening_times).to.deep.equal({ twentyfourseven: false, regular_hours: hours });
        // a PATCH with regular hours only, too; neither of the two is 422
        const patched = await api.request('PATCH', base, {
          token: cpo.token,
          body: { opening_times: { regular_hours: [] } },
        });
        expect(patched.body.status_code).to.equal(1000);
        const neither = await api.request('PATCH', base, { token: cpo.token, body: { opening_times: {} } });
        expect(neither.status).to.equal(422);
      });

      it('takes 2.1.1 location ids and EVSE uids of 39 characters, and PATCHes them at every level', async () => {
        const id = 'L'.repeat(39);
        const uid = 'E'.repeat(39);
        const base = `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/${id}`;
        const call = (method: string, path: string, body?: unknown) =>
          api.request(method, `${base}${path}`, { token: cpo.token, ...(body ? { body } : {}) });
        const location = aLocation211({ id, evses: [anEvse211({ uid, connectors: [aConnector211({ id: '1' })] })] });
        expect((await call('PUT', '', location)).body.status_code).to.equal(1000);
        for (const [path, body] of [
          ['', { name: 'Long ids' }],
          [`/${uid}`, { status: 'AVAILABLE' }],
          [`/${uid}/1`, { amperage: 16 }],
        ] as const) {
          const res = await call('PATCH', path, body);
          expect(res.body.status_code, `${path} ${JSON.stringify(res.body)}`).to.equal(1000);
        }
        expect(dataOf<Obj>(await call('GET', `/${uid}/1`))).to.include({ amperage: 16 });
        // 40 is one too many
        expect((await call('GET', `/${'E'.repeat(40)}`)).status).to.equal(422);
      });

      it('PUT of a whole 2.1.1 location, and GET of it, an EVSE or a connector as we hold them', async () => {
        const base = `/ocpi/emsp/2.1.1/locations/${cc}/${pid}`;
        const call = (method: string, path: string, body?: unknown) =>
          api.request(method, `${base}${path}`, { token: cpo.token, ...(body ? { body } : {}) });
        const location = aLocation211({
          id: 'LOC-W211',
          evses: [anEvse211({ uid: 'W-E1', connectors: [aConnector211({ id: '2', voltage: 400, amperage: 32 })] })],
        });
        const put = await call('PUT', '/LOC-W211', location);
        expect(put.status, JSON.stringify(put.body)).to.equal(200);
        expect(dataOf<Obj>(put)).to.include({ id: 'LOC-W211', type: 'ON_STREET' });
        const got = dataOf<Obj>(await call('GET', '/LOC-W211'));
        expect(got).to.include({ id: 'LOC-W211', type: 'ON_STREET', city: 'Utrecht' });
        expect(dataOf<Obj>(await call('GET', '/LOC-W211/W-E1'))).to.include({ uid: 'W-E1', status: 'CHARGING' });
        expect(dataOf<Obj>(await call('GET', '/LOC-W211/W-E1/2'))).to.include({ id: '2', voltage: 400, amperage: 32 });
        for (const unknown of ['/LOC-NONE', '/LOC-W211/NONE', '/LOC-W211/W-E1/9']) {
          const res = await call('GET', unknown);
          expect(res.status, unknown).to.equal(404);
          expect(res.body.status_code, unknown).to.equal(2003);
        }
        expect((await call('PUT', '/LOC-OTHER', location)).body.status_code).to.equal(2001);
        const foreign = await api.request(
          'GET',
          `/ocpi/emsp/2.1.1/locations/${other.party.country_code}/${other.party.party_id}/LOC-W211`,
          { token: cpo.token },
        );
        expect(foreign.body.status_code).to.equal(2001);
      });

      it('PUT of an EVSE adds it to a known location in the 2.1.1 shape; unknown location is 404 2003', async () => {
        await put221('LOC-211', aLocation({ country_code: cc, party_id: pid, id: 'LOC-211', evses: [] }));
        const evse = anEvse211({ uid: 'E211' });
        const res = await api.request('PUT', `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/LOC-211/E211`, {
          token: cpo.token,
          body: evse,
        });
        expect(res.body.status_code).to.equal(1000);
        expect(dataOf(res)).to.deep.equal(evse);
        const stored = dataOf<{ evses: Array<{ uid: string; connectors: Obj[] }> }>(
          await api.request('GET', `/ocpi/2.2.1/locations/${cc}/${pid}/LOC-211`, { token: cpo.token }),
        );
        expect(stored.evses.map((e) => e.uid)).to.deep.equal(['E211']);
        expect(stored.evses[0]?.connectors[0]).to.include({ max_voltage: 500, max_amperage: 125 });
        const unknown = await api.request('PUT', `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/LOC-NONE/E211`, {
          token: cpo.token,
          body: evse,
        });
        expect(unknown.status).to.equal(404);
        expect(unknown.body.status_code).to.equal(2003);
        const mismatch = await api.request('PUT', `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/LOC-211/OTHER`, {
          token: cpo.token,
          body: evse,
        });
        expect(mismatch.body.status_code).to.equal(2001);
      });

      it('PATCH of a connector merges it and answers the 2.1.1 Connector; unknown connector is 404', async () => {
        await put221(
          'LOC-CON',
          aLocation({
            country_code: cc,
            party_id: pid,
            id: 'LOC-CON',
            evses: [anEvse({ uid: 'E1', connectors: [aConnector({ id: 'C1', max_amperage: 16 })] })],
          }),
        );
        const res = await api.request('PATCH', `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/LOC-CON/E1/C1`, {
          token: cpo.token,
          body: { amperage: 32, last_updated: isoAt(50) },
        });
        expect(res.body.status_code).to.equal(1000);
        expect(dataOf<Obj>(res)).to.include({ id: 'C1', amperage: 32, voltage: 400, last_updated: isoAt(50) });
        expect(dataOf<Obj>(res)).not.to.have.property('max_amperage');
        const unknown = await api.request('PATCH', `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/LOC-CON/E1/C9`, {
          token: cpo.token,
          body: { amperage: 1, last_updated: isoAt() },
        });
        expect(unknown.status).to.equal(404);
        // the answer names what is unknown, as a GET of the same path does
        expect(unknown.body).to.include({ status_code: 2003, status_message: 'Unknown connector' });
        const unknownEvse = await api.request('PATCH', `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/LOC-CON/E9`, {
          token: cpo.token,
          body: { status: 'AVAILABLE' },
        });
        expect(unknownEvse.body).to.include({ status_code: 2003, status_message: 'Unknown EVSE' });
        // 2.1.1 asks a PATCH for the changed fields only: without last_updated it is stamped on
        // receipt, by our clock less the 10 s allowed between clocks (Decisions 33)
        const before = Date.now() - 11_000;
        const noStamp = await api.request('PATCH', `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/LOC-CON/E1/C1`, {
          token: cpo.token,
          body: { amperage: 16 },
        });
        expect(dataOf<Obj>(noStamp)).to.include({ amperage: 16 });
        expect(Date.parse(String(dataOf<Obj>(noStamp).last_updated))).to.be.within(before, Date.now() + 1000);
        // UTC, to the second (Decisions 33)
        expect(String(dataOf<Obj>(noStamp).last_updated)).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      });

      it('PUT /tariffs stores the tariff; id mismatch is 2001', async () => {
        const tariff = aTariff({ id: 'TAR-1' });
        const res = await api.request('PUT', `/ocpi/emsp/2.1.1/tariffs/${cc}/${pid}/TAR-1`, {
          token: cpo.token,
          body: tariff,
        });
        expect(res.body.status_code).to.equal(1000);
        expect(dataOf(res)).to.deep.equal(tariff);
        const mismatch = await api.request('PUT', `/ocpi/emsp/2.1.1/tariffs/${cc}/${pid}/TAR-2`, {
          token: cpo.token,
          body: tariff,
        });
        expect(mismatch.body.status_code).to.equal(2001);
        const identity = await api.request(
          'PUT',
          `/ocpi/emsp/2.1.1/tariffs/${other.party.country_code}/${other.party.party_id}/TAR-1`,
          { token: cpo.token, body: tariff },
        );
        expect(identity.body.status_code).to.equal(2001);
        // 2.1.1 Tariff.elements is `+`: a tariff without one is refused, by PUT or PATCH (was stored)
        const empty = await api.request('PUT', `/ocpi/emsp/2.1.1/tariffs/${cc}/${pid}/TAR-0`, {
          token: cpo.token,
          body: { ...tariff, id: 'TAR-0', elements: [] },
        });
        expect(empty.status, JSON.stringify(empty.body)).to.equal(422);
        const emptied = await api.request('PATCH', `/ocpi/emsp/2.1.1/tariffs/${cc}/${pid}/TAR-1`, {
          token: cpo.token,
          body: { elements: [] },
        });
        expect(emptied.status, JSON.stringify(emptied.body)).to.equal(422);
        const missing = await api.request('GET', `/ocpi/emsp/2.1.1/tariffs/${cc}/${pid}/TAR-0`, { token: cpo.token });
        expect(missing.status).to.equal(404);
      });

      it('GET, PATCH and DELETE /tariffs: the CPO reads back, changes and withdraws its tariff', async () => {
        const path = `/ocpi/emsp/2.1.1/tariffs/${cc}/${pid}/TAR-LIFE`;
        const call = (method: string, body?: unknown) =>
          api.request(method, path, { token: cpo.token, ...(body ? { body } : {}) });
        expect((await call('PUT', aTariff({ id: 'TAR-LIFE', currency: 'EUR' }))).body.status_code).to.equal(1000);
        expect(dataOf<Obj>(await call('GET'))).to.include({ id: 'TAR-LIFE', currency: 'EUR' });
        const patched = await call('PATCH', { currency: 'CHF', last_updated: '2026-11-24T10:00:00' });
        expect(dataOf<Obj>(patched)).to.include({
          id: 'TAR-LIFE',
          currency: 'CHF',
          last_updated: '2026-11-24T10:00:00Z',
        });
        // a 2.1.1 PATCH need not carry last_updated: it is stamped on receipt
        const unstamped = dataOf<Obj>(await call('PATCH', { currency: 'USD' }));
        expect(unstamped.currency).to.equal('USD');
        expect(Date.parse(String(unstamped.last_updated))).to.be.within(Date.now() - 12_000, Date.now());
        const deleted = await call('DELETE');
        expect(deleted.status).to.equal(200);
        expect(deleted.body.status_code).to.equal(1000);
        for (const method of ['GET', 'DELETE']) {
          const gone = await call(method);
          expect(gone.status, method).to.equal(404);
          expect(gone.body.status_code, method).to.equal(2000);
        }
        expect((await call('PATCH', { currency: 'EUR', last_updated: isoAt(1) })).status).to.equal(404);
      });
    });
  });
}
