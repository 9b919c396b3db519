import { expect } from 'chai';
import { eventually } from '../../support/eventually.js';
import { credentials211, credentials221 } from '../../support/ocpi-builders.js';
import { OcpiApi, dataOf, uniqueParty, type OcpiTarget } from '../../support/ocpi-harness.js';

/** The credentials link (spec "States and transitions") on every mount that lists credentials. */
export function credentialsSuite(makeTarget: () => Promise<OcpiTarget>): void {
  describe('OCPI credentials handshake', function () {
    this.timeout(60_000);
    let target: OcpiTarget;
    let api: OcpiApi;

    before(async () => {
      target = await makeTarget();
      api = new OcpiApi(target);
    });
    after(async () => target.stop());

    it('registers a CPO partner via POST on the eMSP 2.2.1 mount: discovery with its token, our token in the answer, Token A retired', async () => {
      const party = uniqueParty();
      const onboarded = await api.onboard(party, 'CPO');
      expect(onboarded.versions_url).to.match(/\/ocpi\/emsp\/versions$/);
      // discovery on one process, the handshake on the other (cluster mode: two web processes)
      const versions = await api.request('GET', '/ocpi/emsp/versions', {
        token: onboarded.token,
        encoding: 'base64',
        on: 0,
      });
      expect(versions.status).to.equal(200);
      expect(dataOf<Array<{ version: string }>>(versions).map((v) => v.version)).to.have.members(['2.1.1', '2.2.1']);

      const fake = await target.partner('token-B-register');
      const res = await api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
        token: onboarded.token,
        encoding: 'base64',
        on: 1,
        body: credentials221(party, fake.token, fake.versionsUrl),
      });
      expect(res.status).to.equal(200);
      expect(res.body.status_code).to.equal(1000);
      const ours = dataOf<{ token: string; url: string; roles: Array<Record<string, unknown>> }>(res);
      expect(ours.token).to.be.a('string').and.not.equal(onboarded.token);
      expect(ours.url).to.match(/\/ocpi\/emsp\/versions$/);
      expect(ours.roles[0]).to.include({ role: 'EMSP', country_code: 'NL', party_id: 'EVP' });
      // a role mount serves one side
      expect(ours.roles).to.have.length(1);
      expect(fake.seen.length).to.be.greaterThan(0);

      const partner = await api.request('GET', `/v1/partners/${onboarded.id}`);
      expect(partner.body).to.include({ status: 'registered', version: '2.2.1', versions_url: fake.versionsUrl });
      // the process that answered the handshake stops accepting Token A at once (others: docs/OCPI.md)
      const withA = await api.request('GET', '/ocpi/emsp/2.2.1', { token: onboarded.token, encoding: 'base64', on: 1 });
      expect(withA.status).to.equal(401);
      const withC = await api.request('GET', '/ocpi/emsp/2.2.1', { token: ours.token, encoding: 'base64', on: 0 });
      expect(withC.status).to.equal(200);
    });

    it('answers 405 to POST /credentials once registered (overview and eMSP 2.2.1 mounts)', async () => {
      const p = await api.register('CPO');
      for (const path of ['/ocpi/2.2.1/credentials', '/ocpi/emsp/2.2.1/credentials']) {
        const res = await api.request('POST', path, {
          token: p.token,
          encoding: 'base64',
          body: credentials221(p.party, p.fake.token, p.fake.versionsUrl),
        });
        expect(res.status, path).to.equal(405);
        expect(res.body.status_code).to.be.a('number');
      }
    });

    it('rejects a registration whose roles name another party (2001 identity mismatch) and keeps Token A usable', async () => {
      const party = uniqueParty();
      const { token } = await api.onboard(party, 'CPO');
      const fake = await target.partner('token-B-mismatch');
      const res = await api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
        token,
        encoding: 'base64',
        body: credentials221({ country_code: 'FR', party_id: 'ZZZ' }, fake.token, fake.versionsUrl),
      });
      expect(res.body.status_code).to.equal(2001);
      expect((res.body.errors as Array<Record<string, unknown>>)[0]).to.include({
        field: 'country_code',
        type: 'value_error.identity_mismatch',
      });
      const retry = await api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
        token,
        encoding: 'base64',
        body: credentials221(party, fake.token, fake.versionsUrl),
      });
      expect(retry.body.status_code).to.equal(1000);
    });

    it('rejects a registration whose roles name the party only in another role than it was onboarded in (2001)', async () => {
      const party = uniqueParty();
      const { token } = await api.onboard(party, 'EMSP');
      const fake = await target.partner('token-B-role');
      // an eMSP that calls itself a CPO would be linked as what it says it is not
      const res = await api.request('POST', '/ocpi/cpo/2.2.1/credentials', {
        token,
        encoding: 'base64',
        body: credentials221(party, fake.token, fake.versionsUrl, 'CPO'),
      });
      expect(res.body.status_code).to.equal(2001);
      expect((res.body.errors as Array<Record<string, unknown>>)[0]).to.include({
        field: 'roles',
        type: 'value_error.role_mismatch',
      });
      const retry = await api.request('POST', '/ocpi/cpo/2.2.1/credentials', {
        token,
        encoding: 'base64',
        body: credentials221(party, fake.token, fake.versionsUrl, 'EMSP'),
      });
      expect(retry.body.status_code).to.equal(1000);
    });

    it('answers 422 for credentials without roles', async () => {
      const { token } = await api.onboard(uniqueParty(), 'CPO');
      const res = await api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
        token,
        encoding: 'base64',
        body: { token: 'x', url: 'http://x/versions', roles: [] },
      });
      expect(res.status).to.equal(422);
      expect((res.body.detail as Array<{ loc: unknown[]; type: string }>)[0]).to.deep.include({
        loc: ['body', 'roles'],
        type: 'too_short',
      });
    });

    it('answers 422 for a credentials token with whitespace, in both versions (printable, non-whitespace ASCII)', async () => {
      const party = uniqueParty();
      const { token } = await api.onboard(party, 'CPO');
      for (const bad of ['a b', 'tab\there']) {
        const res = await api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
          token,
          encoding: 'base64',
          body: credentials221(party, bad, 'http://127.0.0.1:9/versions'),
        });
        // was taken, and discovery tried with it
        expect(res.status, bad).to.equal(422);
        expect((res.body.detail as Array<{ loc: unknown[] }>)[0]?.loc).to.deep.equal(['body', 'token']);
        const old = await api.request('POST', '/ocpi/emsp/2.1.1/credentials', {
          token,
          body: credentials211(party, bad, 'http://127.0.0.1:9/versions'),
        });
        expect(old.status, bad).to.equal(422);
      }
    });

    it('rotates on the eMSP 2.1.1 mount with PUT: fresh token, old one invalid, identity kept from the token', async () => {
      const p = await api.register('CPO');
      const fresh = await target.partner('token-B-rotated');
      const on = 0;
      const res = await api.request('PUT', '/ocpi/emsp/2.1.1/credentials', {
        token: p.token,
        on,
        // the body names another party: ignored, the identity stays the token's
        body: credentials211({ country_code: 'FR', party_id: 'ZZZ' }, fresh.token, fresh.versionsUrl),
      });
      expect(res.status).to.equal(200);
      expect(res.body.status_code).to.equal(1000);
      const ours = dataOf<Record<string, unknown>>(res);
      expect(ours).to.include({ country_code: 'NL', party_id: 'EVP' });
      expect(ours).to.have.property('business_details');
      expect(ours.token).to.be.a('string').and.not.equal(p.token);
      expect(fresh.seen.length).to.be.greaterThan(0);
      const old = await api.request('GET', '/ocpi/emsp/2.1.1/tokens', { token: p.token, on });
      expect(old.status).to.equal(401);
      const now = await api.request('GET', '/ocpi/emsp/2.1.1/tokens', { token: String(ours.token), on });
      expect(now.status).to.equal(200);
      const partner = await api.request('GET', `/v1/partners/${p.id}`);
      expect(partner.body).to.include({
        country_code: p.party.country_code,
        party_id: p.party.party_id,
        versions_url: fresh.versionsUrl,
        status: 'registered',
      });
    });

    it('answers 405 to PUT /credentials with Token A (eMSP 2.1.1, CPO 2.2.1 and overview mounts)', async () => {
      const party = uniqueParty();
      const { token } = await api.onboard(party, 'CPO');
      const r211 = await api.request('PUT', '/ocpi/emsp/2.1.1/credentials', {
        token,
        body: credentials211(party, 'b', 'http://x/versions'),
      });
      expect(r211.status).to.equal(405);
      // the CPO mount serves eMSP partners
      const emspParty = uniqueParty();
      const { token: emspTokenA } = await api.onboard(emspParty, 'EMSP');
      const r221 = await api.request('PUT', '/ocpi/cpo/2.2.1/credentials', {
        token: emspTokenA,
        encoding: 'base64',
        body: credentials221(emspParty, 'b', 'http://x/versions', 'EMSP'),
      });
      expect(r221.status).to.equal(405);
      const overview = await api.request('PUT', '/ocpi/2.2.1/credentials', {
        token,
        encoding: 'base64',
        body: credentials221(party, 'b', 'http://x/versions'),
      });
      expect(overview.status).to.equal(405);
    });

    // the state table's rows "registered, PUT, initial token: 405" and "registered, POST: 405", and
    // Authentication 2 (the overview's GET /credentials takes Token A): Token A is retired by the
    // registration, not forgotten; nothing but the credentials module answers it
    it('answers Token A after the registration on /credentials only: GET our credentials, 405 to POST, PUT and DELETE', async () => {
      const cpo = await api.register('CPO', '/ocpi/emsp/2.1.1/credentials');
      const b211 = credentials211(cpo.party, 'b', 'http://x/versions');
      const answers: string[] = [];
      for (const [method, on, body] of [
        ['PUT', 0, b211],
        ['PUT', 1, b211],
        ['POST', 0, b211],
        ['DELETE', 0, undefined],
      ] as const) {
        const res = await api.request(method, '/ocpi/emsp/2.1.1/credentials', { token: cpo.tokenA, on, body });
        answers.push(`${method} ${res.status}`);
      }
      expect(answers).to.deep.equal(['PUT 405', 'PUT 405', 'POST 405', 'DELETE 405']);
      const overview = await api.request('GET', '/ocpi/2.2.1/credentials', { token: cpo.tokenA, encoding: 'base64' });
      expect(overview.status).to.equal(200);
      expect(dataOf<{ token: string }>(overview).token).to.equal(cpo.tokenA);
      for (const path of ['/ocpi/emsp/2.1.1', '/ocpi/emsp/versions', '/ocpi/emsp/2.1.1/tokens'])
        expect((await api.request('GET', path, { token: cpo.tokenA })).status, path).to.equal(401);
      // the link is untouched: the current token works, and a DELETE with it ends Token A too
      expect((await api.request('GET', '/ocpi/emsp/2.1.1/tokens', { token: cpo.token })).status).to.equal(200);
      expect((await api.request('DELETE', '/ocpi/emsp/2.1.1/credentials', { token: cpo.token })).status).to.equal(200);
      // another process of a cluster may trust a token it looked up for up to a second
      // (docs/OCPI.md "Tokens: storage and lookup"; the revocation it is sent usually comes first)
      await eventually(
        async () =>
          (await api.request('GET', '/ocpi/2.2.1/credentials', { token: cpo.tokenA, encoding: 'base64' })).status ===
          401
            ? true
            : undefined,
        { timeoutMs: 2_000, what: 'Token A refused after the DELETE' },
      );
    });

    it('refuses a 2.1.1 registration whose party is not the one Token A was issued to (2001, identity_mismatch)', async () => {
      const party = uniqueParty();
      const { id, token } = await api.onboard(party, 'CPO');
      const fake = await target.partner(`B-mismatch-${party.party_id}`, ['2.1.1']);
      const res = await api.request('POST', '/ocpi/emsp/2.1.1/credentials', {
        token,
        body: { ...credentials211(party, fake.token, fake.versionsUrl), country_code: 'FR', party_id: 'XYZ' },
      });
      expect(res.body.status_code).to.equal(2001);
      const errors = res.body.errors as Array<{ field: string; type: string }>;
      expect(errors.map((e) => `${e.field} ${e.type}`)).to.deep.equal(['country_code value_error.identity_mismatch']);
      // the explanation of 2.1.1's status codes (it pointed at 2.2.1's, which has codes 2.1.1 lacks)
      expect(res.body.doc_url).to.equal(
        'https://github.com/ocpi/ocpi/blob/release-2.1.1-bugfixes/status_codes.md#2xxx-client-errors',
      );
      expect((await api.request('GET', `/v1/partners/${id}`)).body).to.include({ status: 'unregistered' });
      // Token A still registers, with its own party
      const ok = await api.request('POST', '/ocpi/emsp/2.1.1/credentials', {
        token,
        body: credentials211(party, fake.token, fake.versionsUrl),
      });
      expect(ok.body.status_code).to.equal(1000);
    });

    it('takes a 2.1.1 registration that names its party in lower case (CiString), linked as onboarded', async () => {
      const party = uniqueParty();
      const { id, token } = await api.onboard(party, 'CPO');
      const fake = await target.partner(`B-lower-${party.party_id}`, ['2.1.1']);
      const res = await api.request('POST', '/ocpi/emsp/2.1.1/credentials', {
        token,
        body: {
          ...credentials211(party, fake.token, fake.versionsUrl),
          country_code: party.country_code.toLowerCase(),
          party_id: party.party_id.toLowerCase(),
        },
      });
      // was 2001 value_error.identity_mismatch, while our registration with a 2.1.1 partner takes any case
      expect(res.body.status_code, JSON.stringify(res.body)).to.equal(1000);
      expect((await api.request('GET', `/v1/partners/${id}`)).body).to.include({
        status: 'registered',
        country_code: party.country_code,
        party_id: party.party_id,
      });
    });

    it('rotates on the CPO 2.2.1 mount with PUT', async () => {
      const p = await api.register('EMSP');
      const fresh = await target.partner('token-B-cpo-rotated');
      const res = await api.request('PUT', '/ocpi/cpo/2.2.1/credentials', {
        token: p.token,
        encoding: 'base64',
        on: 0,
        body: credentials221(p.party, fresh.token, fresh.versionsUrl, 'EMSP'),
      });
      expect(res.body.status_code).to.equal(1000);
      const ours = dataOf<{ token: string; roles: Array<Record<string, unknown>> }>(res);
      expect(ours.roles[0]).to.include({ role: 'CPO' });
      expect((await api.request('GET', '/ocpi/cpo/2.1.1/locations', { token: p.token, on: 0 })).status).to.equal(401);
      expect((await api.request('GET', '/ocpi/cpo/2.1.1/locations', { token: ours.token, on: 0 })).status).to.equal(
        200,
      );
    });

    it('GET /credentials on the overview answers with Token A or the current token, 401 without', async () => {
      const party = uniqueParty();
      const { token } = await api.onboard(party, 'EMSP');
      const withA = await api.request('GET', '/ocpi/2.2.1/credentials', { token, encoding: 'base64' });
      expect(withA.status).to.equal(200);
      expect(dataOf<{ token: string; roles: Array<Record<string, unknown>> }>(withA)).to.deep.include({ token });
      const p = await api.register('EMSP');
      const withC = await api.request('GET', '/ocpi/2.2.1/credentials', { token: p.token, encoding: 'base64' });
      expect(dataOf<{ token: string; roles: Array<Record<string, unknown>> }>(withC).token).to.equal(p.token);
      const roles = dataOf<{ roles: Array<Record<string, unknown>> }>(withC).roles;
      expect(roles[0]).to.include({ role: 'CPO', country_code: 'NL', party_id: 'EVP' });
      // the overview serves both sides: both our roles, the one toward the caller first
      expect(roles.map((r) => [r.role, r.country_code, r.party_id])).to.deep.equal([
        ['CPO', 'NL', 'EVP'],
        ['EMSP', 'NL', 'EVP'],
      ]);
      const none = await api.request('GET', '/ocpi/2.2.1/credentials');
      expect(none.status).to.equal(401);
    });

    it('registers and rotates on the overview mount, and DELETE ends the link', async () => {
      const p = await api.register('EMSP', '/ocpi/2.2.1/credentials');
      const fresh = await target.partner('token-B-overview');
      const put = await api.request('PUT', '/ocpi/2.2.1/credentials', {
        token: p.token,
        encoding: 'base64',
        on: 0,
        body: credentials221(p.party, fresh.token, fresh.versionsUrl, 'EMSP'),
      });
      expect(put.body.status_code).to.equal(1000);
      expect(dataOf<{ roles: Array<{ role: string }> }>(put).roles.map((r) => r.role)).to.deep.equal(['CPO', 'EMSP']);
      const current = dataOf<{ token: string }>(put).token;
      const del = await api.request('DELETE', '/ocpi/2.2.1/credentials', { token: current, encoding: 'base64', on: 0 });
      expect(del.status).to.equal(200);
      expect(del.body.status_code).to.equal(1000);
      expect(del.body).not.to.have.property('data');
      expect(
        (await api.request('GET', '/ocpi/2.2.1/credentials', { token: current, encoding: 'base64', on: 0 })).status,
      ).to.equal(401);
      const partner = await api.request('GET', `/v1/partners/${p.id}`);
      expect(partner.body).to.include({ status: 'unregistered' });
      // an unregistered partner can be given a fresh Token A
      const again = await api.request('POST', '/v1/partners', { body: { ...p.party, role: 'EMSP' } });
      expect(again.status).to.equal(201);
      expect(again.body.id).to.equal(p.id);
    });

    it('refuses a partner on the mounts of its own role: 403 with OCPI 2000, nothing served', async () => {
      const cpo = await api.register('CPO');
      const emsp = await api.register('EMSP');
      // an eMSP partner cannot list our eMSP tokens or authorize them; a CPO partner cannot read our CPO side
      const refused: Array<[string, string, string, 'base64' | undefined]> = [
        ['GET', '/ocpi/emsp/2.1.1/tokens', emsp.token, undefined],
        ['POST', '/ocpi/emsp/2.1.1/tokens/TOKEN-1/authorize', emsp.token, undefined],
        ['GET', '/ocpi/emsp/2.2.1', emsp.token, 'base64'],
        ['GET', '/ocpi/emsp/versions', emsp.token, 'base64'],
        ['GET', '/ocpi/cpo/2.1.1/locations', cpo.token, undefined],
        ['GET', '/ocpi/cpo/2.2.1/credentials', cpo.token, 'base64'],
        ['GET', '/ocpi/cpo/versions', cpo.token, undefined],
        // the overview has no role, its modules do: our tokens are for CPOs, our locations and tariffs for eMSPs
        ['GET', '/ocpi/2.2.1/tokens', emsp.token, 'base64'],
        ['GET', '/ocpi/2.2.1/locations', cpo.token, 'base64'],
        ['GET', '/ocpi/2.2.1/tariffs', cpo.token, 'base64'],
        ['PATCH', `/ocpi/2.2.1/locations/${emsp.party.country_code}/${emsp.party.party_id}/X`, emsp.token, 'base64'],
      ];
      for (const [method, path, token, encoding] of refused) {
        const body = method === 'PATCH' ? { name: 'x', last_updated: '2026-11-24T10:00:00Z' } : undefined;
        const res = await api.request(method, path, { token, encoding, ...(body ? { body } : {}) });
        expect(res.status, `${method} ${path}`).to.equal(403);
        expect(res.body.status_code, `${method} ${path}`).to.equal(2000);
        expect(res.body).to.not.have.property('data');
      }
      // and each is served on the mounts of the other role
      expect((await api.request('GET', '/ocpi/emsp/2.1.1/tokens', { token: cpo.token })).status).to.equal(200);
      expect((await api.request('GET', '/ocpi/cpo/2.1.1/locations', { token: emsp.token })).status).to.equal(200);
      const ok = (path: string, token: string) => api.request('GET', path, { token, encoding: 'base64' });
      expect((await ok('/ocpi/2.2.1/tokens', cpo.token)).status).to.equal(200);
      expect((await ok('/ocpi/2.2.1/locations', emsp.token)).status).to.equal(200);
    });

    /**
     * A partner that only has the versions URL and Token A it was handed, on each role mount and
     * version: discovery, GET, POST (register), POST again (405), PUT (rotate), DELETE, each
     * token retired in turn. 2.1.1 partners send the raw token, 2.2.1 partners base64.
     */
    const mounts = [
      { ours: 'cpo', theirs: 'EMSP', version: '2.1.1' },
      { ours: 'cpo', theirs: 'EMSP', version: '2.2.1' },
      { ours: 'emsp', theirs: 'CPO', version: '2.1.1' },
      { ours: 'emsp', theirs: 'CPO', version: '2.2.1' },
    ] as const;
    for (const m of mounts)
      it(`lets a ${m.version} ${m.theirs} partner register, rotate and unregister from our ${m.ours} versions URL`, async () => {
        const encoding = m.version === '2.2.1' ? ('base64' as const) : undefined;
        // one process throughout: another one drops a retired token within a second (docs/OCPI.md "Tokens")
        const call = (method: string, url: string, token: string, body?: unknown) =>
          api.request(method, new URL(url, 'http://x').pathname, { token, encoding, on: 0, ...(body ? { body } : {}) });
        const party = uniqueParty();
        const onboarded = await api.onboard(party, m.theirs);
        expect(onboarded.versions_url).to.match(new RegExp(`/ocpi/${m.ours}/versions$`));
        const tokenA = onboarded.token;

        // discovery as the specification describes it: versions, then the details of one
        const versions = dataOf<Array<{ version: string; url: string }>>(
          await call('GET', onboarded.versions_url, tokenA),
        );
        const entry = versions.find((v) => v.version === m.version);
        expect(entry, `version ${m.version} listed`).to.not.equal(undefined);
        const details = dataOf<{ version: string; endpoints: Array<{ identifier: string; url: string }> }>(
          await call('GET', entry?.url ?? '', tokenA),
        );
        expect(details.version).to.equal(m.version);
        const credentialsUrl = details.endpoints.find((e) => e.identifier === 'credentials')?.url ?? '';
        expect(credentialsUrl).to.match(new RegExp(`/ocpi/${m.ours}/${m.version.replace(/\./g, '\\.')}/credentials$`));

        // paths, not origins: in cluster mode each web process names itself (no PUBLIC_URL here)
        const path = (url: string) => new URL(url).pathname;
        const before = await call('GET', credentialsUrl, tokenA);
        expect(before.status).to.equal(200);
        const shown = dataOf<{ token: string; url: string }>(before);
        expect(shown.token).to.equal(tokenA);
        expect(path(shown.url)).to.equal(path(onboarded.versions_url));
        // DELETE before registering is the state table's 405
        expect((await call('DELETE', credentialsUrl, tokenA)).status).to.equal(405);

        const fake = await target.partner(`B-${m.ours}-${m.version}`, [m.version]);
        const body = (token: string, url: string) =>
          m.version === '2.2.1' ? credentials221(party, token, url, m.theirs) : credentials211(party, token, url);
        const registered = await call('POST', credentialsUrl, tokenA, body(fake.token, fake.versionsUrl));
        expect(registered.status, JSON.stringify(registered.body)).to.equal(200);
        expect(registered.body.status_code).to.equal(1000);
        const ours = dataOf<Record<string, unknown> & { token: string; url: string }>(registered);
        expect(path(ours.url)).to.equal(path(onboarded.versions_url));
        if (m.version === '2.2.1')
          expect((ours.roles as Array<Record<string, unknown>>)[0]).to.include({ role: m.ours.toUpperCase() });
        else expect(ours).to.include({ country_code: 'NL', party_id: 'EVP' }).and.to.have.property('business_details');
        expect(fake.seen.length, 'we discovered the partner with its token').to.be.greaterThan(0);
        const tokenB = ours.token;
        expect(tokenB).to.not.equal(tokenA);
        expect((await call('GET', entry?.url ?? '', tokenA)).status, 'Token A retired').to.equal(401);
        expect((await call('POST', credentialsUrl, tokenB, body(fake.token, fake.versionsUrl))).status).to.equal(405);

        const fresh = await target.partner(`C-${m.ours}-${m.version}`, [m.version]);
        const rotated = await call('PUT', credentialsUrl, tokenB, body(fresh.token, fresh.versionsUrl));
        expect(rotated.status, JSON.stringify(rotated.body)).to.equal(200);
        const tokenC = dataOf<{ token: string }>(rotated).token;
        expect((await call('GET', entry?.url ?? '', tokenB)).status, 'token B retired').to.equal(401);
        expect((await call('GET', credentialsUrl, tokenC)).status).to.equal(200);
        const partner = await api.request('GET', `/v1/partners/${onboarded.id}`);
        expect(partner.body).to.include({ status: 'registered', version: m.version, versions_url: fresh.versionsUrl });

        const deleted = await call('DELETE', credentialsUrl, tokenC);
        expect(deleted.status).to.equal(200);
        expect(deleted.body.status_code).to.equal(1000);
        expect((await call('GET', credentialsUrl, tokenC)).status, 'every token retired').to.equal(401);
      });
  });
}
