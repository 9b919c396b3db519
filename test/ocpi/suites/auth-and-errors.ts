import { expect } from 'chai';
import { aLocation, aSession, aTariff, anEvse211, isoAt } from '../../support/ocpi-builders.js';
import { OcpiApi, type OcpiTarget, type RegisteredPartner } from '../../support/ocpi-harness.js';

/** Every role-mount endpoint of the spec with a body that passes validation (commands are not there yet). */
const ROLE_ENDPOINTS: Array<[string, string, '2.1.1' | '2.2.1', unknown?]> = [
  ['GET', '/ocpi/cpo/2.1.1/locations', '2.1.1'],
  ['PATCH', '/ocpi/cpo/2.1.1/tokens/DE/AAA/T1', '2.1.1', { valid: false }],
  ['PUT', '/ocpi/cpo/2.2.1/credentials', '2.2.1', {}],
  ['GET', '/ocpi/emsp/2.2.1', '2.2.1'],
  ['POST', '/ocpi/emsp/2.2.1/credentials', '2.2.1', {}],
  ['PUT', '/ocpi/emsp/2.2.1/locations/DE/AAA/L1', '2.2.1', {}],
  ['PATCH', '/ocpi/emsp/2.2.1/locations/DE/AAA/L1', '2.2.1', {}],
  ['PATCH', '/ocpi/emsp/2.2.1/locations/DE/AAA/L1/E1', '2.2.1', {}],
  ['GET', '/ocpi/emsp/2.1.1/tokens', '2.1.1'],
  ['POST', '/ocpi/emsp/2.1.1/tokens/T1/authorize', '2.1.1'],
  ['PUT', '/ocpi/emsp/2.1.1/sessions/DE/AAA/S1', '2.1.1', {}],
  ['PUT', '/ocpi/emsp/2.1.1/locations/DE/AAA/L1/E1', '2.1.1', {}],
  ['PATCH', '/ocpi/emsp/2.1.1/locations/DE/AAA/L1/E1/C1', '2.1.1', {}],
  ['PUT', '/ocpi/emsp/2.1.1/credentials', '2.1.1', {}],
  ['PUT', '/ocpi/emsp/2.1.1/tariffs/DE/AAA/T1', '2.1.1', {}],
  ['GET', '/ocpi/2.2.1/credentials', '2.2.1'],
  ['GET', '/ocpi/2.2.1/locations', '2.2.1'],
  ['GET', '/ocpi/2.2.1/sessions', '2.2.1'],
  ['GET', '/ocpi/2.2.1/cdrs', '2.2.1'],
  ['GET', '/ocpi/2.2.1/tariffs', '2.2.1'],
  ['GET', '/ocpi/2.2.1/tokens', '2.2.1'],
];

export function authAndErrorsSuite(makeTarget: () => Promise<OcpiTarget>): void {
  describe('OCPI authentication, envelope and errors', function () {
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
    });
    after(async () => {
      await target.stop();
    });

    it('answers 401 without a token on every role-mount endpoint: status_code 2001 on 2.2.1, 2000 on 2.1.1', async () => {
      for (const [method, path, version, body] of ROLE_ENDPOINTS) {
        for (const token of [undefined, 'not-a-token']) {
          const res = await api.request(method, path, { body, ...(token ? { token } : {}) });
          expect(res.status, `${method} ${path}`).to.equal(401);
          expect(res.body.status_code, `${method} ${path}`).to.equal(version === '2.2.1' ? 2001 : 2000);
          expect(res.body.status_message).to.equal('Unauthorized');
          expect(res.body.timestamp).to.be.a('string');
          expect(res.body).not.to.have.property('data');
        }
      }
    });

    it('accepts the base64-encoded and the raw token on 2.2.1, only the raw token on 2.1.1', async () => {
      const b64 = await api.request('GET', '/ocpi/emsp/2.2.1', { token: cpo.token, encoding: 'base64' });
      const raw = await api.request('GET', '/ocpi/emsp/2.2.1', { token: cpo.token });
      expect([b64.status, raw.status]).to.deep.equal([200, 200]);
      const raw211 = await api.request('GET', '/ocpi/cpo/2.1.1/locations', { token: emsp.token });
      expect(raw211.status).to.equal(200);
      const b64211 = await api.request('GET', '/ocpi/cpo/2.1.1/locations', { token: emsp.token, encoding: 'base64' });
      expect(b64211.status).to.equal(401);
      expect(b64211.body.status_code).to.equal(2000);
    });

    it('wraps successes in the envelope: status_code 1000, status_message, timestamp, data', async () => {
      const res = await api.request('GET', '/ocpi/emsp/2.2.1', { token: cpo.token, encoding: 'base64' });
      expect(res.body.status_code).to.equal(1000);
      expect(res.body.status_message).to.equal('Success');
      expect(Number.isNaN(Date.parse(String(res.body.timestamp)))).to.equal(false);
      expect(res.body.data).to.be.an('object');
    });

    it('refuses Token A on module endpoints: it only registers', async () => {
      const { token: tokenA } = await api.onboard({ country_code: 'BE', party_id: 'TKA' }, 'CPO');
      const res = await api.request('PUT', '/ocpi/emsp/2.2.1/locations/BE/TKA/L1', {
        token: tokenA,
        encoding: 'base64',
        body: aLocation({ country_code: 'BE', party_id: 'TKA', id: 'L1' }),
      });
      expect(res.status).to.equal(401);
      expect(res.body.status_code).to.equal(2001);
      // on the other role's mount too: a 403 naming its role told a guesser the token was real
      for (const [method, path] of [
        ['GET', '/ocpi/cpo/2.2.1/locations'],
        ['GET', '/ocpi/cpo/2.2.1/tokens/BE/TKA/T1'],
        ['GET', '/ocpi/cpo/2.1.1/locations'],
        // the other role's versions list, details and credentials too
        ['GET', '/ocpi/cpo/versions'],
        ['GET', '/ocpi/cpo/2.2.1'],
        ['GET', '/ocpi/cpo/2.2.1/credentials'],
      ] as const) {
        const other = await api.request(method, path, {
          token: tokenA,
          encoding: path.includes('2.1.1') ? 'raw' : 'base64',
        });
        expect(other.status, path).to.equal(401);
        expect(JSON.stringify(other.body), path).not.to.contain('CPO');
      }
      // the versions list and details still answer it: the partner discovers us with it
      for (const path of ['/ocpi/emsp/versions', '/ocpi/emsp/2.2.1', '/ocpi/2.2.1/versions/2.2.1'])
        expect((await api.request('GET', path, { token: tokenA, encoding: 'base64' })).status, path).to.equal(200);
    });

    it('rejects a request naming another party with 2001, field country_code, type value_error.identity_mismatch', async () => {
      const res = await api.request('PUT', '/ocpi/emsp/2.2.1/locations/FR/XYZ/L1', {
        token: cpo.token,
        encoding: 'base64',
        body: aLocation({ country_code: 'FR', party_id: 'XYZ', id: 'L1' }),
      });
      expect(res.status).to.equal(200);
      expect(res.body.status_code).to.equal(2001);
      expect(res.body.status_message).to.equal('Invalid or missing parameters');
      expect(res.body.doc_url)
        .to.be.a('string')
        .and.match(/^https?:\/\//);
      expect(res.body.errors).to.be.an('array').with.length(1);
      const [error] = res.body.errors as Array<Record<string, unknown>>;
      expect(error).to.include({ field: 'country_code', type: 'value_error.identity_mismatch' });
      expect(error?.message).to.be.a('string');
      expect(res.body).not.to.have.property('data');
    });

    it('rejects a body naming another party than the path with the identity mismatch too', async () => {
      const { country_code, party_id } = cpo.party;
      const res = await api.request('PUT', `/ocpi/emsp/2.2.1/locations/${country_code}/${party_id}/L1`, {
        token: cpo.token,
        encoding: 'base64',
        body: aLocation({ country_code: 'FR', party_id: 'XYZ', id: 'L1' }),
      });
      expect(res.body.status_code).to.equal(2001);
      expect((res.body.errors as Array<Record<string, unknown>>)[0]).to.include({
        field: 'country_code',
        type: 'value_error.identity_mismatch',
      });
    });

    it('answers the identity mismatch on every endpoint that names a party', async () => {
      const other = { country_code: 'FR', party_id: 'XYZ' };
      const cases: Array<[string, string, RegisteredPartner, unknown?]> = [
        ['PUT', '/ocpi/emsp/2.2.1/locations/FR/XYZ/L1', cpo, aLocation({ ...other, id: 'L1' })],
        ['PATCH', '/ocpi/emsp/2.2.1/locations/FR/XYZ/L1', cpo, { name: 'x', last_updated: isoAt() }],
        ['PATCH', '/ocpi/emsp/2.2.1/locations/FR/XYZ/L1/E1', cpo, { status: 'BLOCKED', last_updated: isoAt() }],
        ['PUT', '/ocpi/emsp/2.1.1/sessions/FR/XYZ/S1', cpo, aSession({ id: 'S1' })],
        ['PUT', '/ocpi/emsp/2.1.1/locations/FR/XYZ/L1/E1', cpo, anEvse211({ uid: 'E1' })],
        ['PATCH', '/ocpi/emsp/2.1.1/locations/FR/XYZ/L1/E1/C1', cpo, { amperage: 16, last_updated: isoAt() }],
        ['PUT', '/ocpi/emsp/2.1.1/tariffs/FR/XYZ/T1', cpo, aTariff({ id: 'T1' })],
        ['PATCH', '/ocpi/cpo/2.1.1/tokens/FR/XYZ/T1', emsp, { valid: false }],
        ['GET', '/ocpi/2.2.1/locations/FR/XYZ/L1', cpo],
        ['PUT', '/ocpi/2.2.1/locations/FR/XYZ/L1', cpo, aLocation({ ...other, id: 'L1' })],
        ['PATCH', '/ocpi/2.2.1/locations/FR/XYZ/L1', cpo, { name: 'x', last_updated: isoAt() }],
      ];
      for (const [method, path, caller, body] of cases) {
        const res = await api.request(method, path, { token: caller.token, body });
        expect(res.status, `${method} ${path}`).to.equal(200);
        expect(res.body.status_code, `${method} ${path}`).to.equal(2001);
        expect((res.body.errors as Array<Record<string, unknown>>)[0], `${method} ${path}`).to.include({
          field: 'country_code',
          type: 'value_error.identity_mismatch',
        });
      }
    });

    it('answers 422 on every endpoint whose body, query or path fails its schema', async () => {
      const { country_code: cc, party_id: pid } = cpo.party;
      const cases: Array<[string, string, RegisteredPartner, unknown?]> = [
        ['GET', '/ocpi/cpo/2.1.1/locations?limit=0', emsp],
        ['PATCH', `/ocpi/cpo/2.1.1/tokens/${emsp.party.country_code}/${emsp.party.party_id}/T1`, emsp, { valid: 'no' }],
        ['PUT', '/ocpi/cpo/2.2.1/credentials', emsp, { token: 'x', url: 'http://x/versions' }],
        ['POST', '/ocpi/emsp/2.2.1/credentials', cpo, { url: 'http://x/versions', roles: [] }],
        ['PUT', `/ocpi/emsp/2.2.1/locations/${cc}/${pid}/L1`, cpo, { id: 'L1' }],
        ['PATCH', `/ocpi/emsp/2.2.1/locations/${cc}/${pid}/L1`, cpo, { name: 5, last_updated: isoAt() }],
        ['PATCH', `/ocpi/emsp/2.2.1/locations/${cc}/${pid}/L1/E1`, cpo, { connectors: 'none', last_updated: isoAt() }],
        ['GET', '/ocpi/emsp/2.1.1/tokens?offset=-1', cpo],
        ['POST', '/ocpi/emsp/2.1.1/tokens/T1/authorize', cpo, { location_id: 7 }],
        ['PUT', `/ocpi/emsp/2.1.1/sessions/${cc}/${pid}/S1`, cpo, { id: 'S1' }],
        ['PUT', `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/L1/E1`, cpo, { uid: 'E1', status: 'AVAILABLE' }],
        [
          'PATCH',
          `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/L1/E1/C1`,
          cpo,
          { power_type: 'AC_9_PHASE', last_updated: isoAt() },
        ],
        ['PUT', '/ocpi/emsp/2.1.1/credentials', cpo, { token: 'x', url: 'http://x/versions', party_id: 'TOOLONG' }],
        ['PUT', `/ocpi/emsp/2.1.1/tariffs/${cc}/${pid}/T1`, cpo, { ...aTariff({ id: 'T1' }), elements: 'free' }],
        ['POST', '/ocpi/2.2.1/credentials', cpo, { token: 1 }],
        ['PUT', '/ocpi/2.2.1/credentials', cpo, {}],
        ['GET', '/ocpi/2.2.1/locations?date_to=later', cpo],
        ['GET', '/ocpi/2.2.1/locations/nl/EVP/L1', cpo],
        [
          'PUT',
          `/ocpi/2.2.1/locations/${cc}/${pid}/L1`,
          cpo,
          { ...aLocation({ country_code: cc, party_id: pid }), coordinates: 'here' },
        ],
        ['PATCH', `/ocpi/2.2.1/locations/${cc}/${pid}/L1`, cpo, { publish: 'yes', last_updated: isoAt() }],
        ['GET', '/ocpi/2.2.1/sessions?limit=x', cpo],
        ['GET', '/ocpi/2.2.1/cdrs?offset=x', cpo],
        ['GET', '/ocpi/2.2.1/tariffs?date_from=x', cpo],
        ['GET', '/ocpi/2.2.1/tokens?limit=-5', cpo],
      ];
      for (const [method, path, caller, body] of cases) {
        const res = await api.request(method, path, { token: caller.token, body });
        expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.equal(422);
        const detail = res.body.detail as Array<Record<string, unknown>>;
        expect(detail, `${method} ${path}`).to.be.an('array').with.length.greaterThan(0);
        for (const d of detail) expect(d, `${method} ${path}`).to.have.all.keys('loc', 'msg', 'type', 'input', 'ctx');
      }
    });

    it('answers 422 HTTPValidationError {detail: [{loc, msg, type, input, ctx}]} for a body failing its schema', async () => {
      const { country_code, party_id } = cpo.party;
      const res = await api.request('PUT', `/ocpi/emsp/2.2.1/locations/${country_code}/${party_id}/L1`, {
        token: cpo.token,
        encoding: 'base64',
        body: aLocation({ country_code, party_id, id: 'L1', publish: 'yes', last_updated: undefined }),
      });
      expect(res.status).to.equal(422);
      const detail = res.body.detail as Array<Record<string, unknown>>;
      expect(detail).to.be.an('array').with.length.greaterThan(0);
      for (const d of detail) expect(d).to.have.all.keys('loc', 'msg', 'type', 'input', 'ctx');
      expect(detail.map((d) => (d.loc as unknown[]).join('.'))).to.include.members([
        'body.last_updated',
        'body.publish',
      ]);
      expect(detail.find((d) => (d.loc as unknown[]).join('.') === 'body.last_updated')).to.include({
        type: 'missing',
      });
    });

    it('answers 422 for query and path parameters that fail their schema, and for malformed JSON', async () => {
      const query = await api.request('GET', '/ocpi/cpo/2.1.1/locations?limit=many', { token: emsp.token });
      expect(query.status).to.equal(422);
      expect((query.body.detail as Array<{ loc: unknown[] }>)[0]?.loc).to.deep.equal(['query', 'limit']);
      const path = await api.request('PUT', '/ocpi/emsp/2.1.1/tariffs/de/abc/T1', {
        token: cpo.token,
        body: aTariff({ id: 'T1' }),
      });
      expect(path.status).to.equal(422);
      expect((path.body.detail as Array<{ loc: unknown[] }>)[0]?.loc[0]).to.equal('path');
      const malformed = await api.request(
        'PUT',
        `/ocpi/emsp/2.1.1/tariffs/${cpo.party.country_code}/${cpo.party.party_id}/T1`,
        { token: cpo.token, rawBody: '{"id": ' },
      );
      expect(malformed.status).to.equal(422);
      expect((malformed.body.detail as Array<{ type: string }>)[0]?.type).to.equal('json_invalid');
    });

    it('answers with and without a trailing slash, never with a redirect', async () => {
      for (const path of ['/ocpi/cpo/2.1.1/locations', '/ocpi/cpo/2.1.1/locations/']) {
        const res = await api.request('GET', path, { token: emsp.token });
        expect(res.status, path).to.equal(200);
        expect(res.body.status_code).to.equal(1000);
      }
      const root = await api.request('GET', '/ocpi/emsp/2.2.1/', { token: cpo.token, encoding: 'base64' });
      expect(root.status).to.equal(200);
      const versions = await api.request('GET', '/ocpi/2.2.1/versions/');
      expect(versions.status).to.equal(200);
    });

    it('serves an OpenAPI 3.1 document listing the OCPI endpoints', async () => {
      const res = await api.request('GET', '/openapi.json');
      expect(res.status).to.equal(200);
      expect(res.body.openapi).to.equal('3.1.0');
      const paths = Object.keys(res.body.paths as Record<string, unknown>);
      expect(paths).to.include.members([
        '/ocpi/cpo/2.1.1/locations',
        '/ocpi/cpo/2.1.1/tokens/{country_code}/{party_id}/{token_uid}',
        '/ocpi/emsp/2.2.1/locations/{country_code}/{party_id}/{location_id}/{evse_uid}',
        '/ocpi/emsp/2.1.1/tokens/{token_uid}/authorize',
        '/ocpi/2.2.1/versions/{version}',
        '/v1/partners',
      ]);
      // commands: one path per command on the CPO side, the result path on the eMSP side
      expect(paths).to.include.members([
        '/ocpi/cpo/2.2.1/commands/CANCEL_RESERVATION',
        '/ocpi/emsp/2.1.1/commands/{command}/{uid}',
        '/v1/partners/{id}/commands/{command}',
        '/v1/commands/{uid}',
      ]);
      expect(paths).not.to.include('/ocpi/cpo/2.1.1/commands/CANCEL_RESERVATION');
      expect(paths).to.include('/ocpi/cpo/2.1.1/commands/{command}');
    });
  });
}
