import { expect } from 'chai';
import {
  aConnector,
  aLocation,
  aSession,
  aSession221,
  aTariff,
  aToken,
  anEvse,
  isoAt,
} from '../../support/ocpi-builders.js';
import { OcpiApi, dataOf, type OcpiTarget, type RegisteredPartner } from '../../support/ocpi-harness.js';

type Obj = Record<string, unknown>;

/** The overview mount (spec Endpoints "Overview mount"). */
export function overviewSuite(makeTarget: () => Promise<OcpiTarget>): void {
  describe('OCPI overview mount', function () {
    this.timeout(60_000);
    let target: OcpiTarget;
    let api: OcpiApi;
    let cpo: RegisteredPartner;
    let emsp: RegisteredPartner;

    before(async () => {
      target = await makeTarget();
      api = new OcpiApi(target);
      cpo = await api.register('CPO');
      emsp = await api.register('EMSP');
      await api.request('PUT', '/v1/ocpi/locations/OV-OWN', { body: aLocation({ id: 'OV-OWN' }) });
      await api.request('PUT', '/v1/ocpi/tariffs/OV-TAR', { body: aTariff({ id: 'OV-TAR' }) });
      await api.request('PUT', '/v1/ocpi/tokens/NL/EVP/OV-TOK', { body: aToken({ uid: 'OV-TOK' }) });
    });
    after(async () => {
      await target.stop();
    });

    it('GET /versions lists the versions without authentication; /versions/{version} answers the endpoint map or 404', async () => {
      const versions = await api.request('GET', '/ocpi/2.2.1/versions');
      expect(versions.status).to.equal(200);
      const list = dataOf<Array<{ version: string; url: string }>>(versions);
      expect(list.map((v) => v.version)).to.deep.equal(['2.1.1', '2.2.1']);
      const detail = await api.request('GET', '/ocpi/2.2.1/versions/2.2.1');
      const endpoints = dataOf<{
        version: string;
        endpoints: Array<{ identifier: string; role: string; url: string }>;
      }>(detail).endpoints;
      // both sides of every module: our CPO side for eMSP partners, our eMSP side for CPOs
      expect(endpoints.map((e) => `${e.identifier} ${e.role}`)).to.deep.equal([
        'credentials SENDER',
        'locations SENDER',
        'locations RECEIVER',
        'sessions SENDER',
        'sessions RECEIVER',
        'cdrs SENDER',
        'cdrs RECEIVER',
        'tariffs SENDER',
        'tariffs RECEIVER',
        'tokens SENDER',
        'tokens RECEIVER',
        'commands RECEIVER',
        'commands SENDER',
      ]);
      expect(endpoints[1]?.url).to.match(/\/ocpi\/2\.2\.1\/locations$/);
      type Listed = { endpoints: Array<{ identifier: string; url: string }> };
      const old = dataOf<Listed>(await api.request('GET', '/ocpi/2.2.1/versions/2.1.1')).endpoints;
      // no token: both 2.1.1 role mounts, each with its credentials
      expect(old.filter((e) => e.identifier === 'credentials')).to.have.length(2);
      // an eMSP partner's token: only the CPO mount it talks to, one credentials endpoint
      const forEmsp = dataOf<Listed>(
        await api.request('GET', '/ocpi/2.2.1/versions/2.1.1', { token: emsp.token }),
      ).endpoints;
      const credentials = forEmsp.filter((e) => e.identifier === 'credentials');
      expect(credentials).to.have.length(1);
      expect(credentials[0]?.url).to.match(/\/ocpi\/cpo\/2\.1\.1\/credentials$/);
      expect(forEmsp.every((e) => e.url.includes('/ocpi/cpo/2.1.1/'))).to.equal(true);
      const unknown = await api.request('GET', '/ocpi/2.2.1/versions/3.0');
      expect(unknown.status).to.equal(404);
      expect(unknown.body.status_code).to.be.a('number');
    });

    it("GET /locations pages our locations; GET one answers ours or the caller's, 404 2003 when unknown, 2001 for another party", async () => {
      const list = await api.request('GET', '/ocpi/2.2.1/locations?limit=10', {
        token: emsp.token,
        encoding: 'base64',
      });
      expect(dataOf<Obj[]>(list).map((l) => l.id)).to.deep.equal(['OV-OWN']);
      expect(list.headers.get('x-total-count')).to.equal('1');
      const one = await api.request('GET', '/ocpi/2.2.1/locations/NL/EVP/OV-OWN', {
        token: emsp.token,
        encoding: 'base64',
      });
      expect(dataOf<Obj>(one)).to.include({
        id: 'OV-OWN',
        country_code: 'NL',
        party_id: 'EVP',
        parking_type: 'ON_STREET',
      });
      const unknown = await api.request('GET', '/ocpi/2.2.1/locations/NL/EVP/NOPE', {
        token: emsp.token,
        encoding: 'base64',
      });
      expect(unknown.status).to.equal(404);
      expect(unknown.body).to.include({ status_code: 2003, status_message: 'Unknown location' });
      const foreign = await api.request(
        'GET',
        `/ocpi/2.2.1/locations/${cpo.party.country_code}/${cpo.party.party_id}/X`,
        { token: emsp.token, encoding: 'base64' },
      );
      expect(foreign.body.status_code).to.equal(2001);
    });

    it("keeps our unpublished locations (publish: false) out of partners' lists and reads", async () => {
      await api.request('PUT', '/v1/ocpi/locations/OV-HIDDEN', {
        body: aLocation({ id: 'OV-HIDDEN', publish: false }),
      });
      const list = await api.request('GET', '/ocpi/2.2.1/locations', { token: emsp.token, encoding: 'base64' });
      expect(dataOf<Obj[]>(list).map((l) => l.id)).to.deep.equal(['OV-OWN']);
      const list211 = await api.request('GET', '/ocpi/cpo/2.1.1/locations', { token: emsp.token });
      expect(dataOf<Obj[]>(list211).map((l) => l.id)).to.deep.equal(['OV-OWN']);
      const one = await api.request('GET', '/ocpi/2.2.1/locations/NL/EVP/OV-HIDDEN', {
        token: emsp.token,
        encoding: 'base64',
      });
      expect(one.status).to.equal(404);
      await api.request('PATCH', '/v1/ocpi/locations/OV-HIDDEN', { body: { publish: true, last_updated: isoAt(5) } });
      const shown = await api.request('GET', '/ocpi/2.2.1/locations/NL/EVP/OV-HIDDEN', {
        token: emsp.token,
        encoding: 'base64',
        on: 0,
      });
      expect(shown.status).to.equal(200);
    });

    it('serves a location with publish_allowed_to to 2.2.1 eMSPs (to show to those drivers only), never on 2.1.1', async () => {
      const allowed = [{ uid: 'RFID-1', type: 'RFID' }, { group_id: 'FLEET-7' }];
      const put = await api.request('PUT', '/v1/ocpi/locations/OV-FLEET', {
        body: aLocation({ id: 'OV-FLEET', publish: false, publish_allowed_to: allowed, last_updated: isoAt(7) }),
      });
      expect(put.status).to.equal(200);
      const list = await api.request('GET', '/ocpi/cpo/2.2.1/locations', { token: emsp.token, encoding: 'base64' });
      const fleet = dataOf<Obj[]>(list).find((l) => l.id === 'OV-FLEET');
      expect(fleet).to.deep.include({ publish: false, publish_allowed_to: allowed });
      const one = await api.request('GET', '/ocpi/cpo/2.2.1/locations/OV-FLEET', {
        token: emsp.token,
        encoding: 'base64',
      });
      expect(one.status).to.equal(200);
      // 2.1.1 has no publish field: there it would be public, so it is not served
      const list211 = await api.request('GET', '/ocpi/cpo/2.1.1/locations', { token: emsp.token });
      expect(dataOf<Obj[]>(list211).map((l) => l.id)).to.not.include('OV-FLEET');
      expect((await api.request('GET', '/ocpi/cpo/2.1.1/locations/OV-FLEET', { token: emsp.token })).status).to.equal(
        404,
      );

      // the rules of the field: only with publish false; each entry names a token, a uid with its type
      for (const [body, loc] of [
        [{ publish: true, publish_allowed_to: allowed }, ['body', 'publish_allowed_to']],
        [{ publish: false, publish_allowed_to: [{ type: 'RFID' }] }, ['body', 'publish_allowed_to', 0]],
        [{ publish: false, publish_allowed_to: [{ uid: 'X' }] }, ['body', 'publish_allowed_to', 0, 'type']],
        [
          { publish: false, publish_allowed_to: [{ visual_number: '12' }] },
          ['body', 'publish_allowed_to', 0, 'issuer'],
        ],
      ] as const) {
        const res = await api.request('PUT', '/v1/ocpi/locations/OV-RULE', {
          body: aLocation({ id: 'OV-RULE', ...body }),
        });
        expect(res.status, JSON.stringify(body)).to.equal(422);
        expect((res.body.detail as Array<{ loc: unknown[] }>)[0]?.loc).to.deep.equal(loc);
      }
      // a PATCH that publishes it keeps the rule too
      const patch = await api.request('PATCH', '/v1/ocpi/locations/OV-FLEET', {
        body: { publish: true, last_updated: isoAt(8) },
      });
      expect(patch.status).to.equal(422);
    });

    it("PUT and PATCH store the caller's locations; PATCH updates nested EVSEs and connectors", async () => {
      const { country_code: cc, party_id: pid } = cpo.party;
      const path = `/ocpi/2.2.1/locations/${cc}/${pid}/OV-1`;
      const body = aLocation({
        country_code: cc,
        party_id: pid,
        id: 'OV-1',
        evses: [anEvse({ uid: 'E1', connectors: [aConnector({ id: 'C1' })] })],
      });
      expect(dataOf<Obj>(await api.request('PUT', path, { token: cpo.token, encoding: 'base64', body }))).to.include({
        id: 'OV-1',
      });
      const patched = await api.request('PATCH', path, {
        token: cpo.token,
        encoding: 'base64',
        body: {
          evses: [{ uid: 'E1', status: 'BLOCKED', connectors: [{ id: 'C1', max_amperage: 63 }] }],
          last_updated: isoAt(500),
        },
      });
      expect(patched.body.status_code).to.equal(1000);
      const evse = (dataOf<Obj>(patched).evses as Obj[])[0];
      expect(evse).to.include({ uid: 'E1', status: 'BLOCKED' });
      expect((evse?.connectors as Obj[])[0]).to.include({ id: 'C1', max_amperage: 63, max_voltage: 400 });
      const got = await api.request('GET', path, { token: cpo.token, encoding: 'base64' });
      expect(dataOf<Obj>(got).last_updated).to.equal(isoAt(500));
      const mismatch = await api.request('PUT', path, {
        token: cpo.token,
        encoding: 'base64',
        body: { ...body, id: 'OV-2' },
      });
      expect(mismatch.body.status_code).to.equal(2001);
      const missing = await api.request('PATCH', `/ocpi/2.2.1/locations/${cc}/${pid}/OV-NONE`, {
        token: cpo.token,
        encoding: 'base64',
        body: { name: 'x', last_updated: isoAt() },
      });
      expect(missing.status).to.equal(404);
      const foreign = await api.request('PUT', `/ocpi/2.2.1/locations/NL/EVP/OV-OWN`, {
        token: cpo.token,
        encoding: 'base64',
        body: aLocation({ id: 'OV-OWN' }),
      });
      expect(foreign.body.status_code).to.equal(2001);
    });

    it("takes a CPO partner's sessions (PUT, PATCH, GET one, a 2.1.1 one read back in 2.2.1); GET /sessions is for eMSP partners", async () => {
      const { country_code: cc, party_id: pid } = cpo.party;
      const path = `/ocpi/2.2.1/sessions/${cc}/${pid}/OS-1`;
      const as = { token: cpo.token, encoding: 'base64' as const };
      const body = aSession221({ country_code: cc, party_id: pid, id: 'OS-1' });
      expect(dataOf<Obj>(await api.request('PUT', path, { ...as, body }))).to.include({ id: 'OS-1', kwh: 12.5 });
      const patched = await api.request('PATCH', path, {
        ...as,
        body: { kwh: 20, status: 'COMPLETED', last_updated: isoAt(60) },
      });
      expect(dataOf<Obj>(patched)).to.include({ kwh: 20, status: 'COMPLETED', location_id: 'LOC-1' });
      expect(dataOf<Obj>(await api.request('GET', path, as))).to.include({ kwh: 20, last_updated: isoAt(60) });
      // a session the same CPO pushed over 2.1.1 is served in the 2.2.1 shape here
      const old = aSession({ id: 'OS-211' });
      await api.request('PUT', `/ocpi/emsp/2.1.1/sessions/${cc}/${pid}/OS-211`, { token: cpo.token, body: old });
      const converted = dataOf<Obj>(await api.request('GET', `/ocpi/2.2.1/sessions/${cc}/${pid}/OS-211`, as));
      expect(converted).to.include({ country_code: cc, party_id: pid, start_date_time: old.start_datetime });
      expect(converted.cdr_token).to.include({ contract_id: old.auth_id, country_code: 'NL', party_id: 'EVP' });
      expect(converted).to.include({ location_id: (old.location as Obj).id });
      // a 2.2.1 session cannot be patched in 2.1.1 (it has no 2.1.1 shape of its own)
      const cross = await api.request('PATCH', `/ocpi/emsp/2.1.1/sessions/${cc}/${pid}/OS-1`, {
        token: cpo.token,
        body: { kwh: 1, last_updated: isoAt(90) },
      });
      expect(cross.body.status_code).to.equal(2001);
      // the list is our CPO's sessions with the caller's tokens: for eMSP partners
      expect((await api.request('GET', '/ocpi/2.2.1/sessions', as)).status).to.equal(403);
      const ours = await api.request('GET', '/ocpi/2.2.1/sessions?limit=1', { token: emsp.token, encoding: 'base64' });
      expect(dataOf<Obj[]>(ours)).to.deep.equal([]);
      expect(ours.headers.get('x-total-count')).to.equal('0');
    });

    it('GET /cdrs, /tariffs and /tokens answer lists with paging headers', async () => {
      const cdrs = await api.request('GET', '/ocpi/2.2.1/cdrs', { token: emsp.token, encoding: 'base64' });
      expect(cdrs.body.status_code).to.equal(1000);
      expect(dataOf(cdrs)).to.deep.equal([]);
      expect(cdrs.headers.get('x-total-count')).to.equal('0');
      const tariffs = await api.request('GET', '/ocpi/2.2.1/tariffs', { token: emsp.token, encoding: 'base64' });
      expect(dataOf<Obj[]>(tariffs).map((t) => t.id)).to.deep.equal(['OV-TAR']);
      const tokens = await api.request('GET', '/ocpi/2.2.1/tokens', { token: cpo.token, encoding: 'base64' });
      expect(dataOf<Obj[]>(tokens).map((t) => t.uid)).to.deep.equal(['OV-TOK']);
      expect(tokens.headers.get('x-limit')).to.equal('100');
    });
  });
}
