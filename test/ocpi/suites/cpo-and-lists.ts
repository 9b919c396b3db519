import { expect } from 'chai';
import { aLocation, aToken, anEvse, aConnector, isoAt } from '../../support/ocpi-builders.js';
import { OcpiApi, dataOf, type Answer, type OcpiTarget, type RegisteredPartner } from '../../support/ocpi-harness.js';

type Obj = Record<string, unknown>;

/** The CPO mounts and paging of list endpoints (spec "Query parameters of the list endpoints", Limits). */
export function cpoAndListsSuite(makeTarget: () => Promise<OcpiTarget>): void {
  describe('OCPI CPO mounts and lists', function () {
    this.timeout(60_000);
    let target: OcpiTarget;
    let api: OcpiApi;
    let emsp: RegisteredPartner;
    const ids = ['OWN-1', 'OWN-2', 'OWN-3', 'OWN-4', 'OWN-5'];

    const follow = async (first: string): Promise<{ pages: Answer[]; items: Obj[] }> => {
      const pages: Answer[] = [];
      let next: string | undefined = first;
      while (next) {
        const url = new URL(next, 'http://x');
        const page = await api.request('GET', `${url.pathname}${url.search}`, { token: emsp.token });
        expect(page.status).to.equal(200);
        pages.push(page);
        next = /<([^>]+)>;\s*rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
      }
      return { pages, items: pages.flatMap((p) => dataOf<Obj[]>(p)) };
    };

    before(async () => {
      target = await makeTarget();
      api = new OcpiApi(target);
      emsp = await api.register('EMSP');
      // our own locations, created by an operator, last_updated one minute apart
      for (const [i, id] of ids.entries()) {
        const res = await api.request('PUT', `/v1/ocpi/locations/${id}`, {
          body: aLocation({
            id,
            last_updated: isoAt(i * 60),
            evses: [
              anEvse({
                uid: `${id}-E1`,
                connectors: [aConnector({ id: '1', max_voltage: 230, max_amperage: 16, tariff_ids: ['T-A'] })],
              }),
            ],
          }),
        });
        expect(res.status).to.equal(200);
      }
    });
    after(async () => {
      await target.stop();
    });

    it('GET /locations (CPO 2.1.1) pages our locations with X-Total-Count, X-Limit and Link rel="next" until the end', async () => {
      const { pages, items } = await follow('/ocpi/cpo/2.1.1/locations?limit=2');
      expect(pages).to.have.length(3);
      expect(items.map((l) => l.id)).to.deep.equal(ids);
      for (const p of pages) {
        expect(p.headers.get('x-total-count')).to.equal('5');
        expect(p.headers.get('x-limit')).to.equal('2');
      }
      expect(pages[0]?.headers.get('link')).to.match(
        /^<http:\/\/[^>]+\/ocpi\/cpo\/2\.1\.1\/locations\?offset=2&limit=2>; rel="next"$/,
      );
      expect(pages[2]?.headers.get('link')).to.equal(null);
    });

    it('serves the 2.1.1 LocationOut shape: type, voltage/amperage/tariff_id, no 2.2.1-only fields', async () => {
      const res = await api.request('GET', '/ocpi/cpo/2.1.1/locations?limit=1', { token: emsp.token });
      const [location] = dataOf<Obj[]>(res);
      expect(location).to.include({ id: 'OWN-1', type: 'ON_STREET' });
      for (const field of ['country_code', 'party_id', 'publish', 'parking_type'])
        expect(location).not.to.have.property(field);
      const connector = (location?.evses as Array<{ connectors: Obj[] }>)[0]?.connectors[0];
      expect(connector).to.include({ voltage: 230, amperage: 16, tariff_id: 'T-A' });
      expect(connector).not.to.have.property('max_voltage');
    });

    it('filters by date_from (inclusive) and date_to (exclusive) and keeps the filters in the Link', async () => {
      const from = encodeURIComponent(isoAt(60));
      const to = encodeURIComponent(isoAt(240));
      const { pages, items } = await follow(`/ocpi/cpo/2.1.1/locations?date_from=${from}&date_to=${to}&limit=2`);
      expect(items.map((l) => l.id)).to.deep.equal(['OWN-2', 'OWN-3', 'OWN-4']);
      const link = pages[0]?.headers.get('link') ?? '';
      expect(link).to.include(`date_from=${from}`);
      expect(link).to.include(`date_to=${to}`);
      expect(pages[0]?.headers.get('x-total-count')).to.equal('3');
    });

    it('applies the default limit (100) and caps a larger one at the maximum (1000); offset skips', async () => {
      const def = await api.request('GET', '/ocpi/cpo/2.1.1/locations', { token: emsp.token });
      expect(def.headers.get('x-limit')).to.equal('100');
      expect(def.headers.get('link')).to.equal(null);
      const big = await api.request('GET', '/ocpi/cpo/2.1.1/locations?limit=5000', { token: emsp.token });
      expect(big.headers.get('x-limit')).to.equal('1000');
      const offset = await api.request('GET', '/ocpi/cpo/2.1.1/locations?offset=4', { token: emsp.token });
      expect(dataOf<Obj[]>(offset).map((l) => l.id)).to.deep.equal(['OWN-5']);
      const negative = await api.request('GET', '/ocpi/cpo/2.1.1/locations?offset=-1', { token: emsp.token });
      expect(negative.status).to.equal(422);
      const badDate = await api.request('GET', '/ocpi/cpo/2.1.1/locations?date_from=yesterday', { token: emsp.token });
      expect(badDate.status).to.equal(422);
    });

    it('PATCH /tokens (CPO 2.1.1) updates a token of the caller; unknown token is 404 2000 (2.1.1 has no 2004); another party is 2001', async () => {
      const { country_code: cc, party_id: pid } = emsp.party;
      const created = await api.request('PUT', `/v1/ocpi/tokens/${cc}/${pid}/TOK-P`, {
        body: aToken({ uid: 'TOK-P', valid: true }),
      });
      expect(created.status).to.equal(200);
      const res = await api.request('PATCH', `/ocpi/cpo/2.1.1/tokens/${cc}/${pid}/TOK-P`, {
        token: emsp.token,
        body: { valid: false, last_updated: isoAt(999) },
      });
      expect(res.body.status_code).to.equal(1000);
      expect(dataOf<Obj>(res)).to.include({
        uid: 'TOK-P',
        valid: false,
        whitelist: 'ALLOWED',
        last_updated: isoAt(999),
      });
      const unknown = await api.request('PATCH', `/ocpi/cpo/2.1.1/tokens/${cc}/${pid}/TOK-NONE`, {
        token: emsp.token,
        body: { valid: false },
      });
      expect(unknown.status).to.equal(404);
      // 2004 is a 2.2.1 code: a 2.1.1 partner knows 2000-2003 only (2.1.1 status_codes.md)
      expect(unknown.body).to.include({ status_code: 2000, status_message: 'Unknown token' });
      const other = await api.request('PATCH', '/ocpi/cpo/2.1.1/tokens/NL/EVP/TOK-P', {
        token: emsp.token,
        body: { valid: false },
      });
      expect(other.body.status_code).to.equal(2001);
      expect((other.body.errors as Obj[])[0]).to.include({
        field: 'country_code',
        type: 'value_error.identity_mismatch',
      });
      const invalid = await api.request('PATCH', `/ocpi/cpo/2.1.1/tokens/${cc}/${pid}/TOK-P`, {
        token: emsp.token,
        body: { whitelist: 'SOMETIMES' },
      });
      expect(invalid.status).to.equal(422);
    });

    it('PUT and GET /tokens (CPO 2.1.1): the eMSP pushes its token and reads back what we hold', async () => {
      const { country_code: cc, party_id: pid } = emsp.party;
      const path = `/ocpi/cpo/2.1.1/tokens/${cc}/${pid}/TOK-PUSH`;
      const put = await api.request('PUT', path, {
        token: emsp.token,
        body: aToken({ uid: 'TOK-PUSH', auth_id: 'NL-EMY-C00001', last_updated: '2026-11-24T10:00:00+01:00' }),
      });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
      expect(dataOf<Obj>(put)).to.include({
        uid: 'TOK-PUSH',
        auth_id: 'NL-EMY-C00001',
        last_updated: '2026-11-24T09:00:00Z',
      });
      const got = await api.request('GET', path, { token: emsp.token });
      expect(got.status).to.equal(200);
      expect(dataOf<Obj>(got)).to.include({ uid: 'TOK-PUSH', valid: true, last_updated: '2026-11-24T09:00:00Z' });
      // the body's uid must be the path's; another party's path is 2001; unknown is 404 2000
      const mismatch = await api.request('PUT', path, { token: emsp.token, body: aToken({ uid: 'TOK-OTHER' }) });
      expect(mismatch.body.status_code).to.equal(2001);
      const foreign = await api.request('PUT', '/ocpi/cpo/2.1.1/tokens/NL/EVP/TOK-PUSH', {
        token: emsp.token,
        body: aToken({ uid: 'TOK-PUSH' }),
      });
      expect(foreign.body.status_code).to.equal(2001);
      const unknown = await api.request('GET', `/ocpi/cpo/2.1.1/tokens/${cc}/${pid}/TOK-NONE`, { token: emsp.token });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.status_code).to.equal(2000);
    });

    it('GET of one location, EVSE or connector on the Sender paths of both CPO mounts, in each version', async () => {
      const get = (path: string, version: '2.1.1' | '2.2.1', token = emsp.token) =>
        api.request('GET', path, { token, ...(version === '2.2.1' ? { encoding: 'base64' as const } : {}) });
      for (const version of ['2.1.1', '2.2.1'] as const) {
        const base = `/ocpi/cpo/${version}/locations`;
        const location = await get(`${base}/OWN-2`, version);
        expect(location.status, `${version} location`).to.equal(200);
        expect(location.body.status_code).to.equal(1000);
        const data = dataOf<Obj>(location);
        expect(data.id).to.equal('OWN-2');
        // the mount's version decides the shape: 2.1.1 has `type`, 2.2.1 `parking_type`-era fields
        if (version === '2.1.1') expect(data).to.have.property('type');
        else expect(data).to.not.have.property('type');
        const evse = dataOf<Obj>(await get(`${base}/OWN-2/OWN-2-E1`, version));
        expect(evse.uid).to.equal('OWN-2-E1');
        const connector = await get(`${base}/OWN-2/OWN-2-E1/1`, version);
        expect(connector.status).to.equal(200);
        const c = dataOf<Obj>(connector);
        expect(c.id).to.equal('1');
        if (version === '2.1.1') expect(c).to.include({ voltage: 230, amperage: 16, tariff_id: 'T-A' });
        else expect(c).to.include({ max_voltage: 230, max_amperage: 16 });
        for (const unknown of [`${base}/NOPE`, `${base}/OWN-2/NOPE`, `${base}/OWN-2/OWN-2-E1/9`]) {
          const res = await get(unknown, version);
          expect(res.status, unknown).to.equal(404);
          expect(res.body.status_code, unknown).to.equal(2003);
        }
      }
      // Token A of a partner that has not registered yet is refused (401)
      const fresh = await api.onboard({ country_code: 'DE', party_id: 'NEW' }, 'EMSP');
      expect((await get('/ocpi/cpo/2.2.1/locations/OWN-2', '2.2.1', fresh.token)).status).to.equal(401);
    });

    it('lists the module endpoints of the CPO mounts and offers both versions at /ocpi/cpo/versions', async () => {
      const v211 = dataOf<{ endpoints: Array<{ identifier: string }> }>(
        await api.request('GET', '/ocpi/cpo/2.1.1', { token: emsp.token }),
      );
      expect(v211.endpoints.map((e) => e.identifier)).to.deep.equal([
        'credentials',
        'locations',
        'sessions',
        'cdrs',
        'tariffs',
        'tokens',
        'commands',
      ]);
      const v221 = dataOf<{ endpoints: Array<{ identifier: string; role: string; url: string }> }>(
        await api.request('GET', '/ocpi/cpo/2.2.1', { token: emsp.token, encoding: 'base64' }),
      );
      expect(v221.endpoints.map(({ identifier, role }) => ({ identifier, role }))).to.deep.equal([
        { identifier: 'credentials', role: 'SENDER' },
        { identifier: 'locations', role: 'SENDER' },
        { identifier: 'sessions', role: 'SENDER' },
        { identifier: 'cdrs', role: 'SENDER' },
        { identifier: 'tariffs', role: 'SENDER' },
        { identifier: 'tokens', role: 'RECEIVER' },
        { identifier: 'commands', role: 'RECEIVER' },
      ]);
      expect(v221.endpoints[0]?.url).to.match(/\/ocpi\/cpo\/2\.2\.1\/credentials$/);
      const versions = dataOf<Array<{ version: string; url: string }>>(
        await api.request('GET', '/ocpi/cpo/versions', { token: emsp.token }),
      );
      expect(versions.map((v) => v.version)).to.deep.equal(['2.1.1', '2.2.1']);
      expect(versions[0]?.url).to.match(/\/ocpi\/cpo\/2\.1\.1$/);
      expect((await api.request('GET', '/ocpi/cpo/versions')).status).to.equal(401);
    });

    // last: it changes OWN-1, which the tests above expect as it was stored
    it('pages in the order the objects were first stored: one changed during the pull keeps its place', async () => {
      const page = async (offset: number) =>
        dataOf<Obj[]>(
          await api.request('GET', `/ocpi/cpo/2.2.1/locations?offset=${offset}&limit=2`, { token: emsp.token }),
        ).map((l) => l.id);
      const first = await page(0);
      expect(first).to.deep.equal(['OWN-1', 'OWN-2']);
      // a location already read changes while the eMSP pages on
      const changed = await api.request('PATCH', '/v1/ocpi/locations/OWN-1', {
        body: { name: 'Renamed', last_updated: new Date().toISOString() },
      });
      expect(changed.status).to.equal(200);
      const rest = [...(await page(2)), ...(await page(4))];
      // was OWN-4, OWN-5, OWN-1: ordered by last_updated, OWN-1 moved to the end and OWN-3 was never served
      expect([...first, ...rest]).to.deep.equal(ids);
    });

    // last: it adds a location to the lists the tests above count
    it("names an energy mix's environmental impact as each version does: 2.1.1 source, 2.2.1 category", async () => {
      const energy_mix = {
        is_green_energy: false,
        environ_impact: [{ category: 'CARBON_DIOXIDE', amount: 372 }],
      };
      const put = await api.request('PUT', '/v1/ocpi/locations/MIX-1', {
        body: aLocation({ id: 'MIX-1', energy_mix, last_updated: isoAt(600) }),
      });
      expect(put.status).to.equal(200);
      const get = (version: '2.1.1' | '2.2.1') =>
        api.request('GET', `/ocpi/cpo/${version}/locations/MIX-1`, {
          token: emsp.token,
          ...(version === '2.2.1' ? { encoding: 'base64' as const } : {}),
        });
      // 2.1.1 EnvironmentalImpact is {source, amount}: it was sent as 2.2.1's {category, amount}
      expect(dataOf<{ energy_mix: Obj }>(await get('2.1.1')).energy_mix.environ_impact).to.deep.equal([
        { source: 'CARBON_DIOXIDE', amount: 372 },
      ]);
      expect(dataOf<{ energy_mix: Obj }>(await get('2.2.1')).energy_mix.environ_impact).to.deep.equal([
        { category: 'CARBON_DIOXIDE', amount: 372 },
      ]);
      // a tariff put in 2.1.1 is stored in the 2.2.1 shape, and served back in each
      const tariff211 = {
        id: 'MIX-T',
        currency: 'EUR',
        elements: [{ price_components: [{ type: 'ENERGY', price: 0.3, step_size: 1 }] }],
        energy_mix: { is_green_energy: true, environ_impact: [{ source: 'NUCLEAR_WASTE', amount: 0 }] },
        last_updated: isoAt(600),
      };
      expect((await api.request('PUT', '/v1/ocpi/tariffs/MIX-T', { body: tariff211 })).status).to.equal(200);
      const stored = await api.request('GET', '/v1/ocpi/tariffs/MIX-T');
      expect((stored.body as { energy_mix: Obj }).energy_mix.environ_impact).to.deep.equal([
        { category: 'NUCLEAR_WASTE', amount: 0 },
      ]);
      const served = await api.request('GET', '/ocpi/cpo/2.1.1/tariffs', { token: emsp.token });
      const mixT = dataOf<Array<{ id: string; energy_mix?: Obj }>>(served).find((t) => t.id === 'MIX-T');
      expect(mixT?.energy_mix?.environ_impact).to.deep.equal([{ source: 'NUCLEAR_WASTE', amount: 0 }]);
      // a 2.2.1 body naming them as 2.1.1 does is stored as 2.2.1 names them (was stored and served as sent)
      const slip = { is_green_energy: false, environ_impact: [{ source: 'CARBON_DIOXIDE', amount: 10 }] };
      const again = await api.request('PUT', '/v1/ocpi/locations/MIX-1', {
        body: aLocation({ id: 'MIX-1', energy_mix: slip, last_updated: isoAt(660) }),
      });
      expect((again.body as { energy_mix: Obj }).energy_mix.environ_impact).to.deep.equal([
        { category: 'CARBON_DIOXIDE', amount: 10 },
      ]);
    });
  });
}
