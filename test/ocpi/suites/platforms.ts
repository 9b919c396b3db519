import { expect } from 'chai';
import { aLocation, aToken221 } from '../../support/ocpi-builders.js';
import { useOcpiTarget, dataOf, uniqueParty, type OcpiTarget } from '../../support/ocpi-harness.js';
import { eventually } from '../../support/eventually.js';

type Obj = Record<string, unknown>;
const b64 = { encoding: 'base64' as const };

function errorOf(body: Obj): Obj | undefined {
  return (body.errors as Obj[] | undefined)?.[0];
}

/**
 * A 2.2.1 platform that speaks for several parties with one token (docs/OCPI.md "Platforms and
 * hubs"): its credentials list a CPO and an eMSP role of different parties. Each party reaches
 * the modules of its role; the routing headers choose the party and must name us as the receiver.
 */
export function platformsSuite(makeTarget: () => Promise<OcpiTarget>): void {
  describe('OCPI platforms: one token, several parties', function () {
    this.timeout(60_000);
    const t = useOcpiTarget(makeTarget);

    /** Onboards `cpo` as a CPO partner and registers it listing `extra` roles too. */
    async function registerPlatform(
      cpo: { country_code: string; party_id: string },
      extra: Array<{ role: string; country_code: string; party_id: string }>,
      allowed?: Array<{ role: string; country_code: string; party_id: string }>,
    ) {
      // the operator names the other parties the platform may speak for
      const onboarded = await t.api.request('POST', '/v1/partners', {
        body: { ...cpo, role: 'CPO', parties: allowed ?? extra },
      });
      const { id, token: tokenA } = onboarded.body as { id: string; token: string };
      const fake = await t.target.partner(`P-${cpo.party_id}-${Date.now()}`, ['2.2.1']);
      const roles = [{ role: 'CPO', ...cpo }, ...extra].map((r) => ({
        ...r,
        business_details: { name: `Platform ${r.party_id}` },
      }));
      const res = await t.api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
        token: tokenA,
        ...b64,
        body: { token: fake.token, url: fake.versionsUrl, roles },
      });
      return { id, res, token: (res.body.data as { token?: string } | undefined)?.token ?? '' };
    }

    /** A platform with a CPO and an eMSP party, its token and our party as its credentials name it. */
    async function platformOfTwo() {
      const cpo = uniqueParty();
      const emsp = uniqueParty('NL');
      const { token } = await registerPlatform(cpo, [{ role: 'EMSP', ...emsp }]);
      const ours = dataOf<{ roles: Array<{ country_code: string; party_id: string }> }>(
        await t.api.request('GET', '/ocpi/cpo/2.2.1/credentials', { token, ...b64 }),
      ).roles[0];
      return { cpo, emsp, token, us: { country_code: String(ours?.country_code), party_id: String(ours?.party_id) } };
    }

    it('registers a platform with a CPO and an eMSP party: each party reaches the modules of its role with one token', async () => {
      const cpo = uniqueParty();
      const emsp = uniqueParty('NL');
      const { id, res, token } = await registerPlatform(cpo, [{ role: 'EMSP', ...emsp }]);
      expect(res.status).to.equal(200);
      expect(res.body.status_code).to.equal(1000);

      const shown = await t.api.request('GET', `/v1/partners/${id}`);
      expect(shown.body.parties).to.deep.equal([{ ...emsp, role: 'EMSP' }]);

      // as the CPO party: pushes its location to our eMSP side
      const loc = aLocation({ ...cpo });
      const put = await t.api.request(
        'PUT',
        `/ocpi/emsp/2.2.1/locations/${cpo.country_code}/${cpo.party_id}/${String(loc.id)}`,
        {
          token,
          ...b64,
          body: loc,
        },
      );
      expect(put.body.status_code, JSON.stringify(put.body)).to.equal(1000);
      // as the eMSP party: lists our locations on the CPO side (before: 403 for a CPO partner)
      const list = await t.api.request('GET', '/ocpi/cpo/2.2.1/locations', { token, ...b64 });
      expect(list.status).to.equal(200);
      expect(list.body.status_code).to.equal(1000);
      // the eMSP party cannot push locations: it is not a CPO party of the token
      const asEmsp = aLocation({ ...emsp });
      const refused = await t.api.request(
        'PUT',
        `/ocpi/emsp/2.2.1/locations/${emsp.country_code}/${emsp.party_id}/${String(asEmsp.id)}`,
        { token, ...b64, body: asEmsp },
      );
      expect(refused.body.status_code).to.equal(2001);
      expect(errorOf(refused.body)).to.include({ field: 'country_code', type: 'value_error.identity_mismatch' });
    });

    it('pulls from a platform party by party, each request addressed to the party whose Sender answers it', async () => {
      const [cpo, cpo2, emsp] = [uniqueParty(), uniqueParty(), uniqueParty('NL')];
      const parties = [
        { role: 'CPO', ...cpo2 },
        { role: 'EMSP', ...emsp },
      ];
      const onboarded = await t.api.request('POST', '/v1/partners', { body: { ...cpo, role: 'CPO', parties } });
      const { id, token: tokenA, versions_url } = onboarded.body as { id: string; token: string; versions_url: string };
      // both roles: the overview, whose details list both sides (was the eMSP mount's, CPO side unlisted)
      expect(new URL(versions_url).pathname).to.equal('/ocpi/2.2.1/versions');
      // a platform that routes by OCPI-to: each party's Sender lists that party's objects
      const fake = await t.target.partner(`P-${cpo.party_id}-${Date.now()}`, ['2.2.1'], {
        modules: [
          { identifier: 'locations', role: 'SENDER' },
          { identifier: 'tokens', role: 'SENDER' },
          { identifier: 'tokens', role: 'RECEIVER' },
        ],
        answer: (req) => {
          const to = req.headers['ocpi-to-party-id'];
          if (req.method !== 'GET') return null;
          // each CPO party has a location of its own and one whose id the other has too
          if (req.path.startsWith('/locations'))
            return [cpo, cpo2]
              .filter((p) => p.party_id === to)
              .flatMap((p) => [aLocation({ ...p, id: `L-${p.party_id}` }), aLocation({ ...p, id: 'L-SHARED' })]);
          return to === emsp.party_id ? [aToken221({ ...emsp, uid: 'PLATFORM-TOK' })] : [];
        },
      });
      const roles = [{ role: 'CPO', ...cpo }, ...parties].map((r) => ({ ...r, business_details: { name: 'P' } }));
      const registered = await t.api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
        token: tokenA,
        ...b64,
        body: { token: fake.token, url: fake.versionsUrl, roles },
      });
      expect(registered.body.status_code, JSON.stringify(registered.body)).to.equal(1000);
      const token = (registered.body.data as { token: string }).token;

      const locations = await t.api.request('POST', `/v1/partners/${id}/pull/locations`);
      // was one GET to the onboarded CPO party: the second party's location never came
      // two objects of one id, each its party's, count twice (were merged as one)
      expect(locations.body, JSON.stringify(locations.body)).to.deep.include({ stored: 4, rejected: 0 });
      const sent = (module: string) =>
        fake.received.filter((r) => r.path.startsWith(`/${module}`)).map((r) => r.headers['ocpi-to-party-id']);
      expect(sent('locations')).to.deep.equal([cpo.party_id, cpo2.party_id]);
      // the tokens Sender is the eMSP party's: it was addressed to the onboarded CPO party
      const tokens = await t.api.request('POST', `/v1/partners/${id}/pull/tokens`);
      expect(tokens.body, JSON.stringify(tokens.body)).to.deep.include({ stored: 1, rejected: 0 });
      expect(sent('tokens')).to.deep.equal([emsp.party_id]);

      // a token of ours goes to each CPO party of the platform, addressed to it (was the onboarded one only)
      const uid = `PLAT-${Date.now()}`;
      expect(
        (await t.api.request('PUT', `/v1/ocpi/tokens/NL/EVP/${uid}`, { body: aToken221({ uid }) })).status,
      ).to.equal(200);
      const putTo = () =>
        fake.received
          .filter((r) => r.method === 'PUT' && r.path.includes(uid))
          .map((r) => r.headers['ocpi-to-party-id']);
      await eventually(async () => (putTo().length >= 2 ? true : undefined), {
        what: 'the token PUT to both CPO parties',
      });
      expect(putTo()).to.deep.equal([cpo.party_id, cpo2.party_id]);
      const pushed = await t.api.request('POST', `/v1/partners/${id}/push/tokens`);
      expect(pushed.body, JSON.stringify(pushed.body)).to.deep.include({ failed_total: 0 });
      expect(putTo()).to.deep.equal([cpo.party_id, cpo2.party_id, cpo.party_id, cpo2.party_id]);

      // the overview serves our locations to the eMSP party when no header chose one: answered to it
      const list = await t.api.request('GET', '/ocpi/2.2.1/locations', { token, ...b64 });
      expect(list.body.status_code).to.equal(1000);
      expect([list.headers.get('OCPI-to-country-code'), list.headers.get('OCPI-to-party-id')]).to.deep.equal([
        emsp.country_code,
        emsp.party_id,
      ]);
      // and one of them, found or not (was to the onboarded CPO party)
      const ours = aLocation({ id: `OURS-${Date.now()}` });
      expect((await t.api.request('PUT', `/v1/ocpi/locations/${String(ours.id)}`, { body: ours })).status).to.equal(
        200,
      );
      for (const id of [String(ours.id), 'NO-SUCH-LOC']) {
        const one = await t.api.request('GET', `/ocpi/2.2.1/locations/NL/EVP/${id}`, { token, ...b64 });
        expect(one.status).to.equal(id === 'NO-SUCH-LOC' ? 404 : 200);
        expect(one.headers.get('OCPI-to-party-id'), `${id}: ${one.status}`).to.equal(emsp.party_id);
      }
    });

    it('an outbox row to a platform whose second CPO party fails names that party in its error', async () => {
      const [cpo, cpo2] = [uniqueParty(), uniqueParty()];
      const onboarded = await t.api.request('POST', '/v1/partners', {
        body: { ...cpo, role: 'CPO', parties: [{ role: 'CPO', ...cpo2 }] },
      });
      const { id, token: tokenA } = onboarded.body as { id: string; token: string };
      const fake = await t.target.partner(`P-${cpo.party_id}-${Date.now()}`, ['2.2.1'], {
        modules: [{ identifier: 'tokens', role: 'RECEIVER' }],
        failWith: (req) => (req.headers['ocpi-to-party-id'] === cpo2.party_id ? 500 : undefined),
      });
      const roles = [
        { role: 'CPO', ...cpo },
        { role: 'CPO', ...cpo2 },
      ].map((r) => ({ ...r, business_details: { name: 'P' } }));
      const registered = await t.api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
        token: tokenA,
        ...b64,
        body: { token: fake.token, url: fake.versionsUrl, roles },
      });
      expect(registered.body.status_code, JSON.stringify(registered.body)).to.equal(1000);
      const uid = `FAIL2-${Date.now()}`;
      expect(
        (await t.api.request('PUT', `/v1/ocpi/tokens/NL/EVP/${uid}`, { body: aToken221({ uid }) })).status,
      ).to.equal(200);
      const row = await eventually(
        async () => {
          const q = await t.api.request('GET', `/v1/outbox?partner_id=${id}&limit=1000`);
          const items = ((q.body as Obj).value ?? []) as Obj[];
          return items.find((r) => String(r.object).includes(uid) && typeof r.last_error === 'string');
        },
        { timeoutMs: 10_000, what: "the token row's error" },
      );
      // was "HTTP 500, ...": the onboarded party, which took it, seemed the one failing
      expect(String(row.last_error)).to.match(new RegExp(`^${cpo2.country_code}-${cpo2.party_id}: HTTP 500`));
      // with the partner's own words (its status_message was left out)
      expect(String(row.last_error)).to.contain('status_code 3000: failing');
    });

    it('reads the routing headers: OCPI-from names one of the parties of the token, OCPI-to names us', async () => {
      const { cpo, emsp, token, us } = await platformOfTwo();
      const from = (p: { country_code: string; party_id: string }) => ({
        'OCPI-from-country-code': p.country_code,
        'OCPI-from-party-id': p.party_id,
      });
      const to = (p: { country_code: string; party_id: string }) => ({
        'OCPI-to-country-code': p.country_code,
        'OCPI-to-party-id': p.party_id,
      });

      const ok = await t.api.request('GET', '/ocpi/cpo/2.2.1/locations', {
        token,
        ...b64,
        headers: { ...from(emsp), ...to(us) },
      });
      expect(ok.body.status_code, JSON.stringify(ok.body)).to.equal(1000);
      // the response is routed back: from us, to the party that asked
      expect(ok.headers.get('OCPI-from-party-id')).to.equal(us.party_id);
      expect(ok.headers.get('OCPI-to-country-code')).to.equal(emsp.country_code);
      expect(ok.headers.get('OCPI-to-party-id')).to.equal(emsp.party_id);
      // the header names a party, in any case (CiString)
      const lower = await t.api.request('GET', '/ocpi/cpo/2.2.1/locations', {
        token,
        ...b64,
        headers: from({ country_code: emsp.country_code.toLowerCase(), party_id: emsp.party_id.toLowerCase() }),
      });
      expect(lower.body.status_code).to.equal(1000);

      const stranger = await t.api.request('GET', '/ocpi/cpo/2.2.1/locations', {
        token,
        ...b64,
        headers: from({ country_code: 'FR', party_id: 'ZZZ' }),
      });
      expect(stranger.body.status_code).to.equal(2001);
      expect(errorOf(stranger.body)).to.include({ field: 'country_code', type: 'value_error.identity_mismatch' });

      // the CPO party of the platform on an interface for eMSP partners: the role's refusal
      const wrongRole = await t.api.request('GET', '/ocpi/cpo/2.2.1/locations', { token, ...b64, headers: from(cpo) });
      expect(wrongRole.status).to.equal(403);
      // the party its headers chose has the other role, not the token (was "the token is of a EMSP partner")
      expect(wrongRole.body.status_message).to.equal(
        `this interface serves EMSP partners; the party the request acts as (${cpo.country_code}-${cpo.party_id}, OCPI-from) is a CPO`,
      );

      const elsewhere = await t.api.request('GET', '/ocpi/cpo/2.2.1/locations', {
        token,
        ...b64,
        headers: { ...from(emsp), ...to({ country_code: 'BE', party_id: 'XYZ' }) },
      });
      expect(elsewhere.body.status_code).to.equal(2001);
      expect(errorOf(elsewhere.body)).to.include({ field: 'OCPI-to-party-id', type: 'value_error.not_our_party' });

      const half = await t.api.request('GET', '/ocpi/cpo/2.2.1/locations', {
        token,
        ...b64,
        headers: { 'OCPI-from-country-code': emsp.country_code },
      });
      expect(half.body.status_code).to.equal(2001);

      // configuration modules carry no routing headers: credentials ignores them
      const creds = await t.api.request('GET', '/ocpi/cpo/2.2.1/credentials', {
        token,
        ...b64,
        headers: { ...from({ country_code: 'FR', party_id: 'ZZZ' }), ...to({ country_code: 'BE', party_id: 'XYZ' }) },
      });
      expect(creds.body.status_code).to.equal(1000);
    });

    it('routes its error answers back as well: from us, to the party that asked, with the request ids', async () => {
      const { cpo, emsp, token, us } = await platformOfTwo();
      const ids = { 'X-Request-ID': 'err-req-1', 'X-Correlation-ID': 'err-corr-1' };
      const routed = (
        label: string,
        res: { status: number; headers: Headers; body: Obj },
        to: { country_code: string; party_id: string },
      ) => {
        const got = {
          status: res.status,
          from: `${res.headers.get('OCPI-from-country-code')}/${res.headers.get('OCPI-from-party-id')}`,
          to: `${res.headers.get('OCPI-to-country-code')}/${res.headers.get('OCPI-to-party-id')}`,
          request: res.headers.get('X-Request-ID'),
          correlation: res.headers.get('X-Correlation-ID'),
        };
        expect(got, `${label}: ${JSON.stringify(res.body)}`).to.deep.include({
          from: `${us.country_code}/${us.party_id}`,
          to: `${to.country_code}/${to.party_id}`,
          request: ids['X-Request-ID'],
          correlation: ids['X-Correlation-ID'],
        });
      };
      const fromEmsp = { 'OCPI-from-country-code': emsp.country_code, 'OCPI-from-party-id': emsp.party_id };

      // an object we do not have (the handler's error)
      const unknown = await t.api.request('GET', `/ocpi/cpo/2.2.1/tokens/${emsp.country_code}/${emsp.party_id}/NOPE`, {
        token,
        ...b64,
        headers: { ...ids, ...fromEmsp },
      });
      routed('unknown token', unknown, emsp);
      // a body that fails the schema (the validator's error)
      const invalid = await t.api.request('PUT', `/ocpi/emsp/2.2.1/locations/${cpo.country_code}/${cpo.party_id}/L1`, {
        token,
        ...b64,
        body: { id: 'L1' },
        headers: { ...ids, 'OCPI-from-country-code': cpo.country_code, 'OCPI-from-party-id': cpo.party_id },
      });
      expect(invalid.status).to.be.within(400, 499);
      routed('invalid body', invalid, cpo);
      // headers naming a party the token does not speak for: answered to the token's own party
      const stranger = await t.api.request('GET', '/ocpi/cpo/2.2.1/locations', {
        token,
        ...b64,
        headers: { ...ids, 'OCPI-from-country-code': 'FR', 'OCPI-from-party-id': 'ZZZ' },
      });
      expect(stranger.body.status_code).to.equal(2001);
      routed('identity mismatch', stranger, cpo);
      // addressed to a party that is not ours
      const elsewhere = await t.api.request('GET', '/ocpi/cpo/2.2.1/locations', {
        token,
        ...b64,
        headers: { ...ids, ...fromEmsp, 'OCPI-to-country-code': 'BE', 'OCPI-to-party-id': 'XYZ' },
      });
      expect(elsewhere.body.status_code).to.equal(2001);
      routed('not our party', elsewhere, emsp);
    });

    it("a platform with two CPO parties writes each under its own path only: the body names the path's party", async () => {
      const a = uniqueParty();
      const b = uniqueParty('NL');
      const { token } = await registerPlatform(a, [{ role: 'CPO', ...b }]);
      const at = (p: { country_code: string; party_id: string }, id: string) =>
        `/ocpi/emsp/2.2.1/locations/${p.country_code}/${p.party_id}/${id}`;
      const own = await t.api.request('PUT', at(b, 'PB-1'), { token, ...b64, body: aLocation({ ...b, id: 'PB-1' }) });
      expect(own.body.status_code).to.equal(1000);
      const crossed = await t.api.request('PUT', at(a, 'PA-1'), {
        token,
        ...b64,
        body: aLocation({ ...b, id: 'PA-1' }),
      });
      expect(crossed.body.status_code).to.equal(2001);
      const patched = await t.api.request('PATCH', at(b, 'PB-1'), {
        token,
        ...b64,
        body: { ...a, last_updated: new Date().toISOString() },
      });
      expect(patched.body.status_code).to.equal(2001);
    });

    it('grants only the parties the operator named: other roles a platform lists, ours among them, are not its', async () => {
      const cpo = uniqueParty();
      const claimed = uniqueParty('NL');
      // onboarded with no other party, the platform lists an eMSP party and ours in its credentials
      const { id, res, token } = await registerPlatform(
        cpo,
        [
          { role: 'EMSP', ...claimed },
          { role: 'CPO', country_code: 'NL', party_id: 'EVP' },
          { role: 'EMSP', ...cpo },
        ],
        [],
      );
      expect(res.body.status_code).to.equal(1000);
      expect((await t.api.request('GET', `/v1/partners/${id}`)).body.parties).to.deep.equal([]);
      // so it can neither write our data nor act as an eMSP
      const ours = aLocation({ country_code: 'NL', party_id: 'EVP', id: 'HIJACK' });
      const put = await t.api.request('PUT', '/ocpi/emsp/2.2.1/locations/NL/EVP/HIJACK', { token, ...b64, body: ours });
      expect(put.body.status_code).to.equal(2001);
      expect((await t.api.request('GET', '/ocpi/cpo/2.2.1/locations', { token, ...b64 })).status).to.equal(403);
      // the operator cannot name our own party either
      const own = await t.api.request('POST', '/v1/partners', {
        body: { ...uniqueParty(), role: 'CPO', parties: [{ role: 'CPO', country_code: 'NL', party_id: 'EVP' }] },
      });
      expect([own.status, (own.body.error as { code: string }).code]).to.deep.equal([409, 'own_party']);
    });

    it('keeps a party with one partner: onboarding it again is 409, a platform registering it second is 2001', async () => {
      const emsp = uniqueParty('NL');
      const allowed = [{ role: 'EMSP', ...emsp }];
      // two platforms may be onboarded naming the same free party; the first to register gets it
      const a = uniqueParty();
      const b = uniqueParty();
      const onboardB = await t.api.request('POST', '/v1/partners', { body: { ...b, role: 'CPO', parties: allowed } });
      expect(onboardB.status).to.equal(201);
      const first = await registerPlatform(a, allowed);
      expect(first.res.body.status_code).to.equal(1000);

      const again = await t.api.request('POST', '/v1/partners', { body: { ...emsp, role: 'EMSP' } });
      expect([again.status, (again.body.error as { code: string }).code]).to.deep.equal([
        409,
        'party_of_another_partner',
      ]);
      const third = await t.api.request('POST', '/v1/partners', {
        body: { ...uniqueParty(), role: 'CPO', parties: allowed },
      });
      expect(third.status).to.equal(409);

      const fake = await t.target.partner(`P-${b.party_id}-late`, ['2.2.1']);
      const roles = [{ role: 'CPO', ...b }, ...allowed].map((r) => ({ ...r, business_details: { name: 'B' } }));
      const second = await t.api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
        token: (onboardB.body as { token: string }).token,
        ...b64,
        body: { token: fake.token, url: fake.versionsUrl, roles },
      });
      expect(second.body.status_code).to.equal(2001);
      expect(errorOf(second.body)).to.include({ field: 'roles', type: 'value_error.party_taken' });

      // after DELETE the party is free again
      expect(
        (await t.api.request('DELETE', '/ocpi/emsp/2.2.1/credentials', { token: first.token, ...b64 })).status,
      ).to.equal(200);
      const later = await registerPlatform(uniqueParty(), allowed);
      expect(later.res.body.status_code).to.equal(1000);
    });
  });
}
