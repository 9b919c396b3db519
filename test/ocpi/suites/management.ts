import { expect } from 'chai';
import { aLocation, aTariff, aTariff221, isoAt } from '../../support/ocpi-builders.js';
import { OcpiApi, dataOf, uniqueParty, type OcpiTarget } from '../../support/ocpi-harness.js';

type Obj = Record<string, unknown>;

/** The operator's partner and own-data routes on the management surface (/v1). */
export function managementSuite(makeTarget: () => Promise<OcpiTarget>): void {
  describe('OCPI partners and own data on /v1', function () {
    this.timeout(60_000);
    let target: OcpiTarget;
    let api: OcpiApi;

    before(async () => {
      target = await makeTarget();
      api = new OcpiApi(target);
    });
    after(async () => {
      await target.stop();
    });

    it('POST /v1/partners answers 201 {id, token, versions_url}; GET lists and reads partners', async () => {
      const party = uniqueParty();
      const res = await api.request('POST', '/v1/partners', { body: { ...party, role: 'EMSP' } });
      expect(res.status).to.equal(201);
      expect(res.body).to.include.keys('id', 'token', 'versions_url');
      expect(res.body.versions_url).to.match(/^http:\/\/.+\/ocpi\/cpo\/versions$/);
      const list = await api.request('GET', '/v1/partners');
      expect(list.status).to.equal(200);
      expect((list.body.value as Obj[]).map((p) => p.id)).to.include(res.body.id);
      const one = await api.request('GET', `/v1/partners/${String(res.body.id)}`);
      expect(one.body).to.include({ ...party, role: 'EMSP', status: 'unregistered' });
      expect(one.body).not.to.have.property('token');
      const unknown = await api.request('GET', '/v1/partners/00000000-0000-4000-8000-000000000000');
      expect(unknown.status).to.equal(404);
    });

    it('requires the Bearer key, validates the body, and refuses our own party and registered partners', async () => {
      expect((await api.request('GET', '/v1/partners', { bearer: false })).status).to.equal(401);
      expect(
        (
          await api.request('POST', '/v1/partners', {
            bearer: 'wrong-key-0123456789',
            body: { ...uniqueParty(), role: 'CPO' },
          })
        ).status,
      ).to.equal(401);
      const invalid = await api.request('POST', '/v1/partners', {
        body: { country_code: 'DE', party_id: 'AB', role: 'CPO' },
      });
      expect(invalid.status).to.equal(422);
      expect((invalid.body.detail as Array<{ loc: unknown[] }>)[0]?.loc).to.deep.equal(['body', 'party_id']);
      expect(
        (await api.request('POST', '/v1/partners', { body: { country_code: 'NL', party_id: 'EVP', role: 'CPO' } }))
          .status,
      ).to.equal(409);
      const registered = await api.register('CPO');
      expect(
        (await api.request('POST', '/v1/partners', { body: { ...registered.party, role: 'CPO' } })).status,
      ).to.equal(409);
    });

    it('refuses to pull locations from an eMSP partner (409) without calling it', async () => {
      const emsp = await api.register('EMSP');
      const callsBefore = emsp.fake.seen.length;
      const res = await api.request('POST', `/v1/partners/${emsp.id}/pull-locations`, { body: {} });
      expect(res.status).to.equal(409);
      expect(JSON.stringify(res.body)).to.include('only a CPO');
      expect(emsp.fake.seen.length).to.equal(callsBefore);
    });

    it('creates and edits our own locations through /v1/ocpi/locations', async () => {
      const created = await api.request('PUT', '/v1/ocpi/locations/MY-1', {
        body: aLocation({ id: 'MY-1', name: 'Depot' }),
      });
      expect(created.status).to.equal(200);
      expect(created.body).to.include({ id: 'MY-1', name: 'Depot' });
      const patched = await api.request('PATCH', '/v1/ocpi/locations/MY-1', {
        body: { name: 'Depot North', last_updated: isoAt(10) },
      });
      expect(patched.body).to.include({ name: 'Depot North', city: 'Utrecht' });
      const foreign = await api.request('PUT', '/v1/ocpi/locations/MY-2', {
        body: aLocation({ id: 'MY-2', country_code: 'DE', party_id: 'ABC' }),
      });
      expect(foreign.status).to.equal(400);
      const unknown = await api.request('PATCH', '/v1/ocpi/locations/NOPE', {
        body: { name: 'x', last_updated: isoAt() },
      });
      expect(unknown.status).to.equal(404);
      const emsp = await api.register('EMSP');
      const pulled = await api.request('GET', '/ocpi/cpo/2.1.1/locations', { token: emsp.token });
      expect(dataOf<Obj[]>(pulled).map((l) => l.name)).to.include('Depot North');
      // the operator reads them back: the ids an EVSE link and the chargers filter name
      const one = await api.request('GET', '/v1/ocpi/locations/MY-1');
      expect(one.status).to.equal(200);
      expect(one.body).to.include({ id: 'MY-1', name: 'Depot North', country_code: 'NL', party_id: 'EVP' });
      const all = await api.request('GET', '/v1/ocpi/locations?limit=1000');
      const ids = (all.body.value as Obj[]).map((l) => l.id);
      expect(ids).to.include('MY-1').and.not.include('MY-2');
      expect(Number(all.headers.get('x-total-count'))).to.equal(ids.length);
      expect((await api.request('GET', '/v1/ocpi/locations/NOPE')).status).to.equal(404);
      expect((await api.request('GET', '/v1/ocpi/locations?offset=-1')).status).to.equal(422);
      expect((await api.request('GET', '/v1/ocpi/locations', { bearer: 'wrong-key-0123456789' })).status).to.equal(401);
    });

    // a strict 2.1.1 receiver refused our location without it: 2.1.1 Location.postal_code is required
    it('serves our location stored without a postal_code to 2.1.1 with postal_code "", to 2.2.1 without one', async () => {
      const { postal_code: _none, ...body } = aLocation({ id: 'MY-NOPC' }) as Record<string, unknown>;
      expect((await api.request('PUT', '/v1/ocpi/locations/MY-NOPC', { body })).status).to.equal(200);
      const emsp = await api.register('EMSP');
      const v211 = await api.request('GET', '/ocpi/cpo/2.1.1/locations/MY-NOPC', { token: emsp.token });
      expect(dataOf<Obj>(v211)).to.include({ postal_code: '' });
      const v221 = await api.request('GET', '/ocpi/cpo/2.2.1/locations/MY-NOPC', {
        token: emsp.token,
        encoding: 'base64',
      });
      expect(dataOf<Obj>(v221)).to.not.have.property('postal_code');
    });

    // our CDRs are priced in the location's zone: one the pricing engine does not know left every
    // session there without a CDR
    it('refuses our own location with a time_zone that is no IANA zone (422 at body.time_zone), PUT and PATCH', async () => {
      const answers: string[] = [];
      for (const zone of ['Not/AZone', 'UTC+1', '\u{1F600}']) {
        const res = await api.request('PUT', '/v1/ocpi/locations/MY-TZ', {
          body: aLocation({ id: 'MY-TZ', time_zone: zone }),
        });
        const detail = (res.body.detail as Array<{ loc: unknown[]; type: string }> | undefined)?.[0];
        answers.push(`${res.status} ${JSON.stringify(detail?.loc)} ${detail?.type}`);
      }
      expect(answers).to.deep.equal(Array(3).fill('422 ["body","time_zone"] value_error.time_zone'));
      const ok = await api.request('PUT', '/v1/ocpi/locations/MY-TZ', {
        body: aLocation({ id: 'MY-TZ', time_zone: 'America/New_York' }),
      });
      expect(ok.status).to.equal(200);
      const patched = await api.request('PATCH', '/v1/ocpi/locations/MY-TZ', {
        body: { time_zone: 'Mars/Olympus_Mons', last_updated: isoAt(20) },
      });
      expect(patched.status).to.equal(422);
      // a zone in another letter case is priced right here, but sent to partners as given
      const lower = await api.request('PATCH', '/v1/ocpi/locations/MY-TZ', {
        body: { time_zone: 'europe/amsterdam', last_updated: isoAt(21) },
      });
      expect(lower.status).to.equal(422);
      expect(JSON.stringify(lower.body)).to.contain('spelled Europe/Amsterdam');
      const emsp = await api.register('EMSP');
      const shown = await api.request('GET', '/ocpi/cpo/2.2.1/locations/MY-TZ', {
        token: emsp.token,
        encoding: 'base64',
      });
      expect(dataOf<Obj>(shown)).to.include({ time_zone: 'America/New_York' });
    });

    it('lists and reads our own tariffs through /v1/ocpi/tariffs, paged, in the stored 2.2.1 shape', async () => {
      expect((await api.request('PUT', '/v1/ocpi/tariffs/MT-1', { body: aTariff221({ id: 'MT-1' }) })).status).to.equal(
        200,
      );
      // a 2.1.1 tariff is stored (and read back) in the 2.2.1 shape, with our party
      const put211 = await api.request('PUT', '/v1/ocpi/tariffs/MT-2', { body: aTariff({ id: 'MT-2' }) });
      expect(put211.status, JSON.stringify(put211.body)).to.equal(200);
      const one = await api.request('GET', '/v1/ocpi/tariffs/MT-2');
      expect(one.status).to.equal(200);
      expect(one.body).to.deep.include({ id: 'MT-2', country_code: 'NL', party_id: 'EVP', currency: 'EUR' });

      const all = await api.request('GET', '/v1/ocpi/tariffs?limit=1000');
      expect(all.status).to.equal(200);
      const ids = (all.body.value as Obj[]).map((t) => t.id);
      expect(ids).to.include.members(['MT-1', 'MT-2']);
      expect(Number(all.headers.get('x-total-count'))).to.equal(ids.length);
      const first = await api.request('GET', '/v1/ocpi/tariffs?limit=1');
      expect(first.body.value).to.have.length(1);
      expect(first.headers.get('x-total-count')).to.equal(String(ids.length));
      expect(String(first.headers.get('link'))).to.contain('rel="next"');

      expect((await api.request('GET', '/v1/ocpi/tariffs/NOPE')).status).to.equal(404);
      expect((await api.request('GET', '/v1/ocpi/tariffs?limit=0')).status).to.equal(422);
      // a restriction date the calendar does not have would price from the day after
      const feb30 = aTariff221({
        id: 'MT-3',
        elements: [
          {
            price_components: [{ type: 'ENERGY', price: 0.3, step_size: 1 }],
            restrictions: { start_date: '2024-02-30' },
          },
        ],
      });
      const refused = await api.request('PUT', '/v1/ocpi/tariffs/MT-3', { body: feb30 });
      expect(refused.status).to.equal(422);
      expect(JSON.stringify(refused.body)).to.contain('must be a day of the calendar');
      // a negative bound: was stored (taken as a 2.1.1 tariff by the union), and every CDR priced
      // with it then failed its own schema at each send
      const credit = await api.request('PUT', '/v1/ocpi/tariffs/MT-4', {
        body: aTariff221({ id: 'MT-4', max_price: { excl_vat: -5, incl_vat: -6 } }),
      });
      expect(credit.status, JSON.stringify(credit.body)).to.equal(422);
      expect(JSON.stringify(credit.body)).to.contain('max_price');
      // the places that are wrong, not also "must match a schema in anyOf" of the whole body
      const places = (credit.body as { detail: Array<{ loc: unknown[]; type: string }> }).detail;
      expect(places.filter((d) => d.type === 'anyOf' || d.type === 'none_required')).to.deep.equal([]);
      // a value that is none of an enumeration's: one entry that names them all
      const typed = await api.request('PUT', '/v1/ocpi/tariffs/MT-5', {
        body: aTariff221({ id: 'MT-5', type: 'CHEAP' }),
      });
      expect(typed.status).to.equal(422);
      const typeEntries = (
        typed.body as { detail: Array<{ loc: unknown[]; type: string; ctx: { expected?: unknown } }> }
      ).detail;
      expect(typeEntries.map((d) => `${d.loc.join('.')} ${d.type}`)).to.deep.equal(['body.type literal_error']);
      expect(typeEntries[0]?.ctx.expected).to.have.length(5);
      // a body that is neither version's tariff is told what the one it came closest to lacks:
      // a 2.1.1 tariff with a bad element is not told it needs a 2.2.1 country_code
      const places211 = async (body: Record<string, unknown>) => {
        const res = await api.request('PUT', '/v1/ocpi/tariffs/MT-7', { body });
        expect(res.status).to.equal(422);
        return (res.body as { detail: Array<{ loc: unknown[]; type: string }> }).detail.map(
          (d) => `${d.loc.join('.')} ${d.type}`,
        );
      };
      expect(
        await places211({ id: 'MT-7', currency: 'EUR', elements: [{}], last_updated: '2026-01-01T00:00:00Z' }),
      ).to.deep.equal(['body.elements.0.price_components missing']);
      // and every field it lacks, not the first only
      expect(await places211({ foo: 1 })).to.have.members([
        'body.id missing',
        'body.currency missing',
        'body.elements missing',
        'body.last_updated missing',
      ]);
      // a 2.1.1 tariff is stored as a 2.2.1 one, which has at least one element
      const empty = await api.request('PUT', '/v1/ocpi/tariffs/MT-6', {
        body: { ...aTariff({ id: 'MT-6' }), elements: [] },
      });
      expect(empty.status, JSON.stringify(empty.body)).to.equal(422);
      expect(JSON.stringify(empty.body)).to.contain('elements');
      expect((await api.request('GET', '/v1/ocpi/tariffs/MT-6')).status).to.equal(404);
      // a 2.2.1 tariff without our country_code and party_id is not taken as a 2.1.1 one: its VAT
      // rates (and min_price, type) would be dropped without a word
      const { country_code: _cc, party_id: _pid, ...partyless } = aTariff221({ id: 'MT-9' });
      const lost = await api.request('PUT', '/v1/ocpi/tariffs/MT-9', { body: partyless });
      expect(lost.status, JSON.stringify(lost.body)).to.equal(422);
      expect(
        (lost.body as { detail: Array<{ loc: unknown[] }> }).detail.map((d) => d.loc.join('.')),
      ).to.include.members(['body.country_code', 'body.party_id']);
      expect((await api.request('GET', '/v1/ocpi/tariffs/MT-9')).status).to.equal(404);
      // ending before it starts, it would be valid at no instant: every session on it left unpriced
      const backwards = await api.request('PUT', '/v1/ocpi/tariffs/MT-8', {
        body: aTariff221({
          id: 'MT-8',
          start_date_time: '2026-05-01T00:00:00Z',
          end_date_time: '2026-04-01T00:00:00Z',
        }),
      });
      expect(backwards.status, JSON.stringify(backwards.body)).to.equal(422);
      const backwardsAt = (backwards.body as { detail: Array<{ loc: unknown[] }> }).detail.map((d) => d.loc.join('.'));
      expect(backwardsAt).to.deep.equal(['body.end_date_time']);
      // an element valid on no day (end_date is exclusive) prices nothing
      const noDay = await api.request('PUT', '/v1/ocpi/tariffs/MT-9', {
        body: aTariff221({
          id: 'MT-9',
          elements: [
            {
              price_components: [{ type: 'ENERGY', price: 0.3, step_size: 1 }],
              restrictions: { start_date: '2026-02-01', end_date: '2026-01-01' },
            },
          ],
        }),
      });
      expect(noDay.status, JSON.stringify(noDay.body)).to.equal(422);
      const noDayAt = (noDay.body as { detail: Array<{ loc: unknown[] }> }).detail.map((d) => d.loc.join('.'));
      expect(noDayAt).to.deep.equal(['body.elements.0.restrictions.end_date']);
      // a bound whose incl_vat is below its excl_vat (a negative VAT), or a minimum above the maximum
      const slips: Array<[Record<string, unknown>, string]> = [
        [{ min_price: { excl_vat: 2, incl_vat: 1.8 } }, 'body.min_price.incl_vat'],
        [{ max_price: { excl_vat: 20, incl_vat: 2.42 } }, 'body.max_price.incl_vat'],
        [{ min_price: { excl_vat: 5 }, max_price: { excl_vat: 4, incl_vat: 4.84 } }, 'body.min_price.excl_vat'],
      ];
      for (const [bounds, at] of slips) {
        const slip = await api.request('PUT', '/v1/ocpi/tariffs/MT-10', {
          body: aTariff221({ id: 'MT-10', ...bounds }),
        });
        expect(slip.status, JSON.stringify(slip.body)).to.equal(422);
        expect((slip.body as { detail: Array<{ loc: unknown[] }> }).detail.map((d) => d.loc.join('.'))).to.deep.equal([
          at,
        ]);
      }
      expect((await api.request('GET', '/v1/ocpi/tariffs/MT-10')).status).to.equal(404);
      const bounded = { min_price: { excl_vat: 2, incl_vat: 2.42 }, max_price: { excl_vat: 20 } };
      const fine = await api.request('PUT', '/v1/ocpi/tariffs/MT-10', {
        body: aTariff221({ id: 'MT-10', ...bounded }),
      });
      expect(fine.status, JSON.stringify(fine.body)).to.equal(200);
      expect((await api.request('GET', '/v1/ocpi/tariffs/MT-8')).status).to.equal(404);
      expect((await api.request('GET', '/v1/ocpi/tariffs/MT-4')).status).to.equal(404);
      expect((await api.request('GET', '/v1/ocpi/tariffs', { bearer: 'wrong' })).status).to.equal(401);
    });

    it('refuses a tariff change stamped no later than the stored version, or stamped in the future', async () => {
      const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const now = Date.now();
      const priced = (price: number, stamp: string) =>
        aTariff221({
          id: 'MT-10',
          elements: [{ price_components: [{ type: 'ENERGY', price, step_size: 1 }] }],
          last_updated: stamp,
        });
      const put = (body: unknown) => api.request('PUT', '/v1/ocpi/tariffs/MT-10', { body });
      const refusedAt = (a: { status: number; body: unknown }) => {
        expect(a.status, JSON.stringify(a.body)).to.equal(422);
        return (a.body as { detail: Array<{ loc: unknown[]; msg: string }> }).detail.map((d) => d.loc.join('.'));
      };
      expect((await put(priced(0.3, at(now - 60_000)))).status).to.equal(200);
      // a change stamped before the stored version: eMSPs would keep the old price
      expect(refusedAt(await put(priced(0.99, at(now - 120_000))))).to.deep.equal(['body.last_updated']);
      // ...or with the same stamp
      expect(refusedAt(await put(priced(0.99, at(now - 60_000))))).to.deep.equal(['body.last_updated']);
      // the same tariff again (a retried PUT) is taken
      expect((await put(priced(0.3, at(now - 60_000)))).status).to.equal(200);
      // stamped in 2099, every session until then would keep the 0.30
      const future = await put(priced(0.6, '2099-01-01T00:00:00Z'));
      expect(refusedAt(future)).to.deep.equal(['body.last_updated']);
      expect(JSON.stringify(future.body)).to.contain('in the future');
      const stored = await api.request('GET', '/v1/ocpi/tariffs/MT-10');
      expect(JSON.stringify(stored.body)).to.contain('0.3').and.not.contain('0.99').and.not.contain('0.6');
      expect((await put(priced(0.6, at(now)))).status).to.equal(200);
      // the same instant written otherwise is the same stamp: a retry, taken
      const offset = new Date(now).toISOString().replace(/\.\d{3}Z$/, '.000+00:00');
      expect((await put(priced(0.6, offset))).status).to.equal(200);
      // deleted and put again: held against the version deleted last
      expect((await api.request('DELETE', '/v1/ocpi/tariffs/MT-10')).status).to.equal(200);
      const again = await put(priced(0.99, at(now - 120_000)));
      expect(refusedAt(again)).to.deep.equal(['body.last_updated']);
      expect(JSON.stringify(again.body)).to.contain('the version deleted last');
      expect((await put(priced(0.99, at(now + 1000)))).status).to.equal(200);
    });
  });
}
