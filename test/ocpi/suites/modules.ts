import { expect } from 'chai';
import { OcpiContext } from '../../../src/ocpi/core/context.js';
import type { StoredCdr, StoredSession } from '../../../src/ocpi/sessions/stored.js';
import {
  aConnector,
  aConnector211,
  aCdr211,
  aCdr221,
  aLocation,
  aSession221,
  aTariff221,
  aToken,
  aToken221,
  anEvse,
  isoAt,
} from '../../support/ocpi-builders.js';
import { OcpiApi, dataOf, type OcpiTarget, type RegisteredPartner } from '../../support/ocpi-harness.js';

type Obj = Record<string, unknown>;
const b64 = { encoding: 'base64' as const };

/**
 * The modules of both roles and versions as partners use them (docs/OCPI.md "Mounts"): tokens,
 * tariffs, sessions and CDRs, each through the interface of the side that calls it, and read back
 * in the shape of the version it is read in.
 */
export function modulesSuite(makeTarget: () => Promise<OcpiTarget>): void {
  describe('OCPI modules of both versions, as partners use them', function () {
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

    it('an eMSP pushes a token to our CPO in 2.2.1, reads it back by type, and sees it in 2.1.1 too', async () => {
      const { country_code: cc, party_id: pid } = emsp.party;
      const path = `/ocpi/cpo/2.2.1/tokens/${cc}/${pid}/TK-1`;
      const as = { token: emsp.token, ...b64 };
      const body = aToken221({ country_code: cc, party_id: pid, uid: 'TK-1', type: 'APP_USER', contract_id: 'C-1' });
      expect(dataOf<Obj>(await api.request('PUT', path, { ...as, body }))).to.include({
        uid: 'TK-1',
        type: 'APP_USER',
      });
      // the Receiver's type is RFID unless ?type= says otherwise
      const rfid = await api.request('GET', path, as);
      expect([rfid.status, rfid.body.status_code]).to.deep.equal([404, 2004]);
      expect(dataOf<Obj>(await api.request('GET', `${path}?type=APP_USER`, as))).to.include({ contract_id: 'C-1' });
      const patched = await api.request('PATCH', `${path}?type=APP_USER`, {
        ...as,
        body: { valid: false, last_updated: isoAt(60) },
      });
      expect(dataOf<Obj>(patched)).to.include({ valid: false, contract_id: 'C-1', last_updated: isoAt(60) });
      expect((await api.request('PATCH', `${path}?type=APP_USER`, { ...as, body: { valid: true } })).status).to.equal(
        422,
      );
      // the same token through the 2.1.1 Receiver: auth_id, and OTHER for a type 2.1.1 lacks
      const old = dataOf<Obj>(
        await api.request('GET', `/ocpi/cpo/2.1.1/tokens/${cc}/${pid}/TK-1`, { token: emsp.token }),
      );
      expect(old).to.include({ uid: 'TK-1', type: 'OTHER', auth_id: 'C-1', valid: false });
      expect(old).not.to.have.any.keys('contract_id', 'country_code', 'party_id');
      // another party in the body, a type other than the query's, a CPO partner
      const foreign = await api.request('PUT', path, { ...as, body: { ...body, party_id: 'ZZZ' } });
      expect(foreign.body.status_code).to.equal(2001);
      expect((await api.request('PUT', `${path}?type=RFID`, { ...as, body })).body.status_code).to.equal(2001);
      expect((await api.request('GET', path, { token: cpo.token, ...b64 })).status).to.equal(403);
    });

    it('our tokens reach CPO partners in the shape of each version; authorize answers with the token as we hold it', async () => {
      const put221 = await api.request('PUT', '/v1/ocpi/tokens/NL/EVP/OT-1', { body: aToken221({ uid: 'OT-1' }) });
      expect(put221.body).to.include({ contract_id: 'NL-EVP-C12345678', country_code: 'NL' });
      // a 2.2.1 token with one bad field is told of it as a 2.2.1 token: the values of 2.2.1's
      // TokenType, not a 2.1.1 auth_id missing (an enumeration's values count as one field)
      const wristband = await api.request('PUT', '/v1/ocpi/tokens/NL/EVP/OT-W', {
        body: aToken221({ uid: 'OT-W', type: 'WRISTBAND' }),
      });
      expect(wristband.status).to.equal(422);
      const entries = (wristband.body as { detail: Array<{ loc: unknown[]; type: string; ctx: Obj }> }).detail;
      expect(entries.map((d) => `${d.loc.join('.')} ${d.type}`)).to.deep.equal(['body.type literal_error']);
      expect(entries[0]?.ctx.expected).to.include('APP_USER');
      const put211 = await api.request('PUT', '/v1/ocpi/tokens/NL/EVP/OT-2', {
        body: aToken({ uid: 'OT-2', type: 'OTHER', auth_id: 'A-2' }),
      });
      expect(put211.body).to.include({ auth_id: 'A-2' }).and.not.to.have.property('contract_id');
      const listed = dataOf<Obj[]>(
        await api.request('GET', '/ocpi/emsp/2.2.1/tokens?limit=1000', { token: cpo.token, ...b64 }),
      );
      expect(listed.find((t) => t.uid === 'OT-2')).to.include({
        contract_id: 'A-2',
        country_code: 'NL',
        party_id: 'EVP',
      });
      const listed211 = dataOf<Obj[]>(
        await api.request('GET', '/ocpi/emsp/2.1.1/tokens?limit=1000', { token: cpo.token }),
      );
      expect(listed211.find((t) => t.uid === 'OT-1')).to.include({ auth_id: 'NL-EVP-C12345678' });
      expect(listed211.every((t) => !('contract_id' in t))).to.equal(true);

      const where = { location_id: 'L-1', evse_uids: ['E-1'] };
      const auth = dataOf<Obj>(
        await api.request('POST', '/ocpi/emsp/2.2.1/tokens/OT-1/authorize', { token: cpo.token, ...b64, body: where }),
      );
      expect(auth).to.deep.include({ allowed: 'ALLOWED', location: where });
      expect(auth.token).to.include({ uid: 'OT-1', contract_id: 'NL-EVP-C12345678' });
      // a 2.2.1 LocationReferences has no connector_ids (2.1.1 had): sent along, it is not echoed
      const withConnectors = dataOf<Obj>(
        await api.request('POST', '/ocpi/emsp/2.2.1/tokens/OT-1/authorize', {
          token: cpo.token,
          ...b64,
          body: { ...where, connector_ids: ['1'] },
        }),
      );
      expect(withConnectors.location).to.deep.equal(where);
      const other = await api.request('POST', '/ocpi/emsp/2.2.1/tokens/OT-2/authorize?type=OTHER', {
        token: cpo.token,
        ...b64,
      });
      expect(dataOf<Obj>(other)).to.include({ allowed: 'ALLOWED' });
      const wrongType = await api.request('POST', '/ocpi/emsp/2.2.1/tokens/OT-2/authorize', {
        token: cpo.token,
        ...b64,
      });
      expect([wrongType.status, wrongType.body.status_code]).to.deep.equal([404, 2004]);
      await api.request('PUT', '/v1/ocpi/tokens/NL/EVP/OT-1', { body: aToken221({ uid: 'OT-1', valid: false }) });
      const blocked = await api.request('POST', '/ocpi/emsp/2.2.1/tokens/OT-1/authorize', {
        token: cpo.token,
        ...b64,
        body: where,
      });
      expect(dataOf<Obj>(blocked)).to.include({ allowed: 'BLOCKED' });
      // the location comes back only where the driver may charge (AuthorizationInfo); it was echoed
      expect(dataOf<Obj>(blocked)).to.not.have.property('location');
    });

    it('authorize takes a JSON null body as no body (LocationReferences is optional), on both versions', async () => {
      await api.request('PUT', '/v1/ocpi/tokens/NL/EVP/OT-NULL', { body: aToken221({ uid: 'OT-NULL' }) });
      for (const [version, auth] of [
        ['2.1.1', {}],
        ['2.2.1', b64],
      ] as const) {
        const path = `/ocpi/emsp/${version}/tokens/OT-NULL/authorize?type=RFID`;
        // was 422 "Input should be a valid object": serializers write an absent optional body as null
        const none = await api.request('POST', path, { token: cpo.token, ...auth, rawBody: 'null' });
        expect([none.status, none.body.status_code], version).to.deep.equal([200, 1000]);
        expect(dataOf<Obj>(none), version).to.include({ allowed: 'ALLOWED' }).and.not.to.have.property('location');
        // any other body that is no object is still refused
        for (const rawBody of ['[]', '1', '"L-1"', 'false']) {
          const bad = await api.request('POST', path, { token: cpo.token, ...auth, rawBody });
          expect(bad.status, `${version} ${rawBody}`).to.equal(422);
        }
      }
    });

    it('our 2.2.1 tariff is served whole on 2.2.1 and as 2.1.1 has it on 2.1.1 (no VAT, no reservation element)', async () => {
      const put = await api.request('PUT', '/v1/ocpi/tariffs/TF-221', { body: aTariff221({ id: 'TF-221' }) });
      expect(put.status).to.equal(200);
      const foreign = await api.request('PUT', '/v1/ocpi/tariffs/TF-X', {
        body: aTariff221({ id: 'TF-X', party_id: 'ZZZ' }),
      });
      expect(foreign.status).to.equal(400);
      const find = (list: Obj[]) => list.find((t) => t.id === 'TF-221') ?? {};
      const t221 = find(
        dataOf<Obj[]>(await api.request('GET', '/ocpi/cpo/2.2.1/tariffs?limit=1000', { token: emsp.token, ...b64 })),
      );
      expect(t221).to.deep.include({ country_code: 'NL', type: 'REGULAR', min_price: { excl_vat: 1, incl_vat: 1.21 } });
      expect(t221.elements).to.have.length(3);
      const t211 = find(
        dataOf<Obj[]>(await api.request('GET', '/ocpi/cpo/2.1.1/tariffs?limit=1000', { token: emsp.token })),
      );
      expect(t211).not.to.have.any.keys('country_code', 'party_id', 'type', 'min_price');
      expect(t211.elements).to.deep.equal([
        { price_components: [{ type: 'ENERGY', price: 0.35, step_size: 1 }] },
        {
          price_components: [{ type: 'PARKING_TIME', price: 2, step_size: 300 }],
          restrictions: { start_time: '18:00', end_time: '08:00' },
        },
      ]);

      // an element for low currents only, with an unrestricted fallback after it: left out. It was
      // kept without its restriction and read as the price of every kWh (0.20, beside CDRs at 0.40)
      const energy = (price: number) => ({ type: 'ENERGY', price, vat: 21, step_size: 1 });
      const daytime = { start_time: '07:00', end_time: '22:00' };
      const byCurrent = aTariff221({
        id: 'TF-CUR',
        elements: [
          { price_components: [energy(0.2)], restrictions: { max_current: 16 } },
          { price_components: [energy(0.4)], restrictions: daytime },
          { price_components: [energy(0.3), { type: 'PARKING_TIME', price: 2, vat: 21, step_size: 300 }] },
        ],
      });
      expect((await api.request('PUT', '/v1/ocpi/tariffs/TF-CUR', { body: byCurrent })).status).to.equal(200);
      const cur211 = dataOf<Obj[]>(
        await api.request('GET', '/ocpi/cpo/2.1.1/tariffs?limit=1000', { token: emsp.token }),
      ).find((t) => t.id === 'TF-CUR');
      expect(cur211?.elements).to.deep.equal([
        { price_components: [{ type: 'ENERGY', price: 0.4, step_size: 1 }], restrictions: daytime },
        {
          price_components: [
            { type: 'ENERGY', price: 0.3, step_size: 1 },
            { type: 'PARKING_TIME', price: 2, step_size: 300 },
          ],
        },
      ]);
    });

    it('a CPO pushes its tariff to our eMSP in 2.2.1 (PUT, GET in both versions, DELETE); another party is 2001', async () => {
      const { country_code: cc, party_id: pid } = cpo.party;
      const path = `/ocpi/emsp/2.2.1/tariffs/${cc}/${pid}/PT-1`;
      const as = { token: cpo.token, ...b64 };
      const body = aTariff221({ country_code: cc, party_id: pid, id: 'PT-1' });
      expect((await api.request('PUT', path, { ...as, body })).body.status_code).to.equal(1000);
      expect(dataOf<Obj>(await api.request('GET', path, as))).to.deep.equal(body);
      const old = dataOf<Obj>(
        await api.request('GET', `/ocpi/emsp/2.1.1/tariffs/${cc}/${pid}/PT-1`, { token: cpo.token }),
      );
      expect(old.elements).to.have.length(2);
      expect(
        (await api.request('PUT', path, { ...as, body: { ...body, country_code: 'BE' } })).body.status_code,
      ).to.equal(2001);
      const empty = await api.request('PUT', path, { ...as, body: { ...body, elements: [{ price_components: [] }] } });
      expect(empty.status).to.equal(422);
      expect((await api.request('DELETE', path, as)).body.status_code).to.equal(1000);
      expect((await api.request('GET', path, as)).status).to.equal(404);
      expect((await api.request('PUT', path, { token: emsp.token, ...b64, body })).status).to.equal(403);
    });

    it('a CPO posts a CDR and reads it back where our Location header points; a CDR never changes', async () => {
      const { country_code: cc, party_id: pid } = cpo.party;
      const as = { token: cpo.token, ...b64 };
      const id = `C${'X'.repeat(38)}`;
      const cdr = aCdr221({ country_code: cc, party_id: pid, id });
      const posted = await api.request('POST', '/ocpi/emsp/2.2.1/cdrs', { ...as, body: cdr });
      expect(posted.body.status_code).to.equal(1000);
      const location = posted.headers.get('location') ?? '';
      expect(location).to.match(new RegExp(`/ocpi/emsp/2\\.2\\.1/cdrs/${cc}/${pid}/${id}$`));
      const readBack = await api.request('GET', new URL(location).pathname, as);
      expect(dataOf<Obj>(readBack)).to.deep.equal(cdr);
      // the same CDR again (a retry) is fine; another one under its id is not
      expect((await api.request('POST', '/ocpi/emsp/2.2.1/cdrs', { ...as, body: cdr })).body.status_code).to.equal(
        1000,
      );
      const changed = await api.request('POST', '/ocpi/emsp/2.2.1/cdrs', { ...as, body: { ...cdr, total_energy: 99 } });
      expect(changed.body.status_code).to.equal(2001);
      expect(dataOf<Obj>(await api.request('GET', new URL(location).pathname, as))).to.include({ total_energy: 12.5 });
      // a retry whose members come in another order is the same CDR (was 2001 value_error.cdr_exists)
      const reordered = Object.fromEntries(Object.entries(cdr).reverse());
      expect(
        (await api.request('POST', '/ocpi/emsp/2.2.1/cdrs', { ...as, body: reordered })).body.status_code,
      ).to.equal(1000);
      // several CDRs of one new id sent at once: one is taken, the others refused, and the one
      // taken is the one stored (all were taken before, the last one kept)
      const raced = `R${'Y'.repeat(20)}`;
      const answers = await Promise.all(
        [1, 2, 3, 4].map((n) =>
          api.request('POST', '/ocpi/emsp/2.2.1/cdrs', {
            ...as,
            body: aCdr221({ country_code: cc, party_id: pid, id: raced, total_energy: n }),
          }),
        ),
      );
      const codes = answers.map((a) => a.body.status_code);
      expect(
        codes.filter((c) => c === 1000),
        JSON.stringify(codes),
      ).to.have.length(1);
      expect(codes.filter((c) => c === 2001)).to.have.length(3);
      const stored = dataOf<Obj>(await api.request('GET', `/ocpi/emsp/2.2.1/cdrs/${cc}/${pid}/${raced}`, as));
      expect(stored.total_energy).to.equal(codes.indexOf(1000) + 1);

      const old = aCdr211({ id: 'CDR-211' });
      const posted211 = await api.request('POST', '/ocpi/emsp/2.1.1/cdrs', { token: cpo.token, body: old });
      const location211 = new URL(posted211.headers.get('location') ?? '').pathname;
      expect(location211).to.equal(`/ocpi/emsp/2.1.1/cdrs/${cc}/${pid}/CDR-211`);
      expect(dataOf<Obj>(await api.request('GET', location211, { token: cpo.token }))).to.deep.equal(old);
      const as221 = dataOf<Obj>(await api.request('GET', `/ocpi/emsp/2.2.1/cdrs/${cc}/${pid}/CDR-211`, as));
      expect(as221)
        .to.include({ end_date_time: old.stop_date_time })
        .and.to.deep.include({
          total_cost: { excl_vat: 4.38 },
        });
      expect(as221.cdr_token).to.include({ contract_id: old.auth_id });
      const unknown = await api.request('GET', `/ocpi/emsp/2.2.1/cdrs/${cc}/${pid}/NONE`, as);
      expect(unknown.status).to.equal(404);
      expect(
        (await api.request('POST', '/ocpi/emsp/2.2.1/cdrs', { token: emsp.token, ...b64, body: cdr })).status,
      ).to.equal(403);
    });

    it('a CPO pushes a location, its EVSEs and connectors at every level of the Receiver, in both versions', async () => {
      const { country_code: cc, party_id: pid } = cpo.party;
      const base221 = `/ocpi/emsp/2.2.1/locations/${cc}/${pid}/RCV-1`;
      const base211 = `/ocpi/emsp/2.1.1/locations/${cc}/${pid}/RCV-1`;
      const as221 = { token: cpo.token, ...b64 };
      const as211 = { token: cpo.token };
      const put = await api.request('PUT', base221, {
        ...as221,
        body: aLocation({ country_code: cc, party_id: pid, id: 'RCV-1', evses: [anEvse({ uid: 'E1' })] }),
      });
      expect(put.body.status_code).to.equal(1000);
      expect(dataOf<Obj>(await api.request('GET', base221, as221))).to.include({ id: 'RCV-1', country_code: cc });
      // a second EVSE (PUT), its status (PATCH), a second connector (PUT) and its power (PATCH), in 2.2.1
      const evse2 = anEvse({ uid: 'E2', last_updated: isoAt(10) });
      expect(dataOf<Obj>(await api.request('PUT', `${base221}/E2`, { ...as221, body: evse2 }))).to.include({
        uid: 'E2',
      });
      const patchedEvse = await api.request('PATCH', `${base221}/E2`, {
        ...as221,
        body: { status: 'CHARGING', last_updated: isoAt(20) },
      });
      expect(dataOf<Obj>(patchedEvse)).to.include({ status: 'CHARGING' });
      const connector2 = aConnector({ id: '2', max_voltage: 230, last_updated: isoAt(30) });
      expect((await api.request('PUT', `${base221}/E2/2`, { ...as221, body: connector2 })).body.status_code).to.equal(
        1000,
      );
      await api.request('PATCH', `${base221}/E2/2`, {
        ...as221,
        body: { max_electric_power: 11000, last_updated: isoAt(40) },
      });
      expect(dataOf<Obj>(await api.request('GET', `${base221}/E2/2`, as221))).to.include({
        id: '2',
        max_voltage: 230,
        max_electric_power: 11000,
      });
      expect(dataOf<Obj>(await api.request('GET', base221, as221))).to.include({ last_updated: isoAt(40) });

      // the same location through the 2.1.1 Receiver: read, patched, a connector replaced
      const old = dataOf<Obj>(await api.request('GET', base211, as211));
      expect(old).to.include({ id: 'RCV-1', type: 'ON_STREET' });
      expect(old).not.to.have.any.keys('country_code', 'parking_type');
      const renamed = await api.request('PATCH', base211, {
        ...as211,
        body: { name: 'Renamed', type: 'PARKING_LOT', last_updated: isoAt(50) },
      });
      expect(dataOf<Obj>(renamed)).to.include({ name: 'Renamed', type: 'PARKING_LOT' });
      await api.request('PATCH', `${base211}/E1`, { ...as211, body: { status: 'BLOCKED', last_updated: isoAt(60) } });
      const old2 = aConnector211({ id: '2', voltage: 400, amperage: 16, last_updated: isoAt(70) });
      expect(dataOf<Obj>(await api.request('PUT', `${base211}/E2/2`, { ...as211, body: old2 }))).to.include({
        voltage: 400,
      });
      const now = dataOf<{
        parking_type: string;
        name: string;
        evses: Array<{ uid: string; status: string; connectors: Obj[] }>;
      }>(await api.request('GET', base221, as221));
      expect(now).to.include({ parking_type: 'PARKING_LOT', name: 'Renamed' });
      expect(now.evses.find((e) => e.uid === 'E1')?.status).to.equal('BLOCKED');
      expect(now.evses.find((e) => e.uid === 'E2')?.connectors.find((c) => c.id === '2')).to.include({
        max_voltage: 400,
        max_amperage: 16,
      });
      expect(now.evses.find((e) => e.uid === 'E2')?.connectors.find((c) => c.id === '2')).not.to.have.key(
        'max_electric_power',
      );

      // what we do not hold is 404 2003; another party is 2001; an id that differs from the path 2001
      for (const path of [`${base221}/NO-EVSE`, `${base221}/E2/9`]) {
        const res = await api.request('GET', path, as221);
        expect([res.status, res.body.status_code], path).to.deep.equal([404, 2003]);
      }
      const noEvse = await api.request('PUT', `${base221}/NO-EVSE/1`, { ...as221, body: aConnector() });
      expect([noEvse.status, noEvse.body.status_code]).to.deep.equal([404, 2003]);
      const foreign = await api.request('GET', `/ocpi/emsp/2.2.1/locations/${cc}/ZZZ/RCV-1/E1`, as221);
      expect(foreign.body.status_code).to.equal(2001);
      const otherId = await api.request('PUT', `${base221}/E2/2`, { ...as221, body: aConnector({ id: '3' }) });
      expect(otherId.body.status_code).to.equal(2001);
    });

    it('a CPO pushes its sessions to our eMSP in 2.2.1: PUT, PATCH, GET; unknown is 404, another party 2001', async () => {
      const { country_code: cc, party_id: pid } = cpo.party;
      const path = `/ocpi/emsp/2.2.1/sessions/${cc}/${pid}/ES-1`;
      const as = { token: cpo.token, ...b64 };
      const body = aSession221({ country_code: cc, party_id: pid, id: 'ES-1' });
      expect(dataOf<Obj>(await api.request('PUT', path, { ...as, body }))).to.deep.equal(body);
      const patch = {
        charging_periods: [{ start_date_time: isoAt(600), dimensions: [{ type: 'ENERGY', volume: 3 }] }],
      };
      const patched = dataOf<Obj>(
        await api.request('PATCH', path, { ...as, body: { ...patch, last_updated: isoAt(600) } }),
      );
      // the PATCH's periods are added to the session's (mod_sessions PATCH)
      expect(patched.charging_periods).to.deep.equal([
        ...(body.charging_periods as unknown[]),
        ...patch.charging_periods,
      ]);
      expect(dataOf<Obj>(await api.request('GET', path, as))).to.include({ last_updated: isoAt(600) });
      const missing = await api.request('GET', `/ocpi/emsp/2.2.1/sessions/${cc}/${pid}/ES-NONE`, as);
      expect(missing.status).to.equal(404);
      const foreign = await api.request('PUT', path, { ...as, body: { ...body, party_id: 'ZZZ' } });
      expect(foreign.body.status_code).to.equal(2001);
    });

    it("2.2.1: a session PATCH adds its charging periods to the session's (mod_sessions PATCH); a PUT replaces them", async () => {
      const { country_code: cc, party_id: pid } = cpo.party;
      const path = `/ocpi/emsp/2.2.1/sessions/${cc}/${pid}/ES-PERIODS`;
      const as = { token: cpo.token, ...b64 };
      const period = (minute: number, kwh: number) => ({
        start_date_time: isoAt(minute * 60),
        dimensions: [{ type: 'ENERGY', volume: kwh }],
      });
      const body = aSession221({ country_code: cc, party_id: pid, id: 'ES-PERIODS', charging_periods: [period(0, 2)] });
      await api.request('PUT', path, { ...as, body });
      const periodsAfter = async (patch: Obj): Promise<unknown> => {
        const res = await api.request('PATCH', path, { ...as, body: patch });
        expect(res.body.status_code, JSON.stringify(res.body)).to.equal(1000);
        return dataOf<Obj>(await api.request('GET', path, as)).charging_periods;
      };
      expect(await periodsAfter({ charging_periods: [period(15, 3)], last_updated: isoAt(900) })).to.deep.equal([
        period(0, 2),
        period(15, 3),
      ]);
      // sent again (its answer was lost): not added twice; an empty list and no list change nothing
      const again = { charging_periods: [period(15, 3)], last_updated: isoAt(900) };
      expect(await periodsAfter(again)).to.have.length(2);
      // nor when its members come in another order (was added a second time)
      const reordered = { dimensions: period(15, 3).dimensions, start_date_time: period(15, 3).start_date_time };
      expect(await periodsAfter({ charging_periods: [reordered], last_updated: isoAt(930) })).to.have.length(2);
      expect(await periodsAfter({ charging_periods: [], last_updated: isoAt(960) })).to.have.length(2);
      expect(await periodsAfter({ kwh: 5, last_updated: isoAt(1020) })).to.have.length(2);
      // the running period sent again with its volume grown replaces it (two of one start were kept)
      expect(await periodsAfter({ charging_periods: [period(15, 4)], last_updated: isoAt(1080) })).to.deep.equal([
        period(0, 2),
        period(15, 4),
      ]);
      await api.request('PUT', path, {
        ...as,
        body: { ...body, charging_periods: [period(30, 1)], last_updated: isoAt(1800) },
      });
      expect(dataOf<Obj>(await api.request('GET', path, as)).charging_periods).to.deep.equal([period(30, 1)]);
    });

    it('2.2.1: a session PATCH that arrives after a newer one still adds its periods, in time order, and nothing else', async () => {
      const { country_code: cc, party_id: pid } = cpo.party;
      const path = `/ocpi/emsp/2.2.1/sessions/${cc}/${pid}/ES-LATE`;
      const as = { token: cpo.token, ...b64 };
      const period = (minute: number, kwh: number) => ({
        start_date_time: isoAt(minute * 60),
        dimensions: [{ type: 'ENERGY', volume: kwh }],
      });
      const body = aSession221({ country_code: cc, party_id: pid, id: 'ES-LATE', charging_periods: [], kwh: 0 });
      await api.request('PUT', path, { ...as, body: { ...body, last_updated: isoAt(0) } });
      const patch = async (minute: number, kwh: number, periods: unknown[]) => {
        const res = await api.request('PATCH', path, {
          ...as,
          body: { kwh, charging_periods: periods, last_updated: isoAt(minute * 60) },
        });
        expect(res.body.status_code, JSON.stringify(res.body)).to.equal(1000);
      };
      await patch(30, 10, [period(15, 5)]);
      // the PATCH of 10:15 arrives after that of 10:30: before, its period was answered 1000 and lost
      await patch(15, 5, [period(0, 5)]);
      const held = dataOf<Obj>(await api.request('GET', path, as));
      expect(held.charging_periods).to.deep.equal([period(0, 5), period(15, 5)]);
      // its other fields are older than what we hold
      expect(held).to.include({ kwh: 10, last_updated: isoAt(1800) });
      // a late period of a start the session has is the older word on it: not added
      await patch(20, 7, [{ ...period(15, 4) }]);
      expect(dataOf<Obj>(await api.request('GET', path, as)).charging_periods).to.deep.equal([
        period(0, 5),
        period(15, 5),
      ]);

      // thirty PATCHes of one period each, sent at once: every period is kept
      const many = `/ocpi/emsp/2.2.1/sessions/${cc}/${pid}/ES-MANY`;
      await api.request('PUT', many, {
        ...as,
        body: { ...body, id: 'ES-MANY', charging_periods: [], last_updated: isoAt(0) },
      });
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          api.request('PATCH', many, {
            ...as,
            body: { charging_periods: [period(i, 1)], last_updated: isoAt((i + 1) * 60) },
          }),
        ),
      );
      expect(answers.map((a) => a.body.status_code)).to.deep.equal(answers.map(() => 1000));
      const kept = dataOf<Obj>(await api.request('GET', many, as)).charging_periods as { start_date_time: string }[];
      expect(kept.map((p) => p.start_date_time)).to.deep.equal(Array.from({ length: 30 }, (_, i) => isoAt(i * 60)));
    });

    it('a PUT or PATCH older than what we hold is answered with the object as held and not applied, in every module', async () => {
      const cpoAs = { token: cpo.token, ...b64 };
      const { country_code: cc, party_id: pid } = cpo.party;
      const send = async (method: string, path: string, as: typeof cpoAs, body: Obj) => {
        const res = await api.request(method, path, { ...as, body });
        expect(res.body.status_code, `${method} ${path}`).to.equal(1000);
        return dataOf<Obj>(res);
      };
      const get = async (path: string, as: typeof cpoAs) => dataOf<Obj>(await api.request('GET', path, as));

      // a session completed at 11:00, then the ACTIVE update of 10:10 that arrived late
      const session = `/ocpi/emsp/2.2.1/sessions/${cc}/${pid}/STALE-S`;
      const done = aSession221({ country_code: cc, party_id: pid, id: 'STALE-S', status: 'COMPLETED' });
      await send('PUT', session, cpoAs, { ...done, kwh: 20, last_updated: isoAt(3600) });
      const late = await send('PATCH', session, cpoAs, { status: 'ACTIVE', kwh: 1, last_updated: isoAt(600) });
      expect(late).to.include({ status: 'COMPLETED', kwh: 20, last_updated: isoAt(3600) });
      await send('PUT', session, cpoAs, { ...done, status: 'ACTIVE', kwh: 2, last_updated: isoAt(1200) });
      expect(await get(session, cpoAs)).to.include({ status: 'COMPLETED', kwh: 20 });
      // the same time again is applied (a repeated push, or a correction within the second)
      await send('PATCH', session, cpoAs, { kwh: 21, last_updated: isoAt(3600) });
      expect(await get(session, cpoAs)).to.include({ kwh: 21 });

      // a location, an EVSE and a connector each keep their newer state
      const loc = `/ocpi/emsp/2.2.1/locations/${cc}/${pid}/STALE-L`;
      const evse = anEvse({
        uid: 'E1',
        status: 'CHARGING',
        connectors: [aConnector({ id: '1', last_updated: isoAt(3000) })],
        last_updated: isoAt(3000),
      });
      const location = aLocation({ country_code: cc, party_id: pid, id: 'STALE-L', name: 'New', evses: [evse] });
      await send('PUT', loc, cpoAs, { ...location, last_updated: isoAt(3000) });
      expect(await send('PATCH', loc, cpoAs, { name: 'Old', last_updated: isoAt(60) })).to.include({
        name: 'New',
        last_updated: isoAt(3000),
      });
      expect(await send('PATCH', `${loc}/E1`, cpoAs, { status: 'AVAILABLE', last_updated: isoAt(60) })).to.include({
        status: 'CHARGING',
      });
      const connector = aConnector({ id: '1', max_amperage: 16, last_updated: isoAt(60) });
      expect(await send('PUT', `${loc}/E1/1`, cpoAs, connector)).to.not.include({ max_amperage: 16 });
      await send('PUT', loc, cpoAs, { ...location, name: 'Older', evses: [], last_updated: isoAt(120) });
      const held = await get(loc, cpoAs);
      expect(held).to.include({ name: 'New', last_updated: isoAt(3000) });
      expect((held.evses as Obj[])[0]).to.include({ uid: 'E1', status: 'CHARGING' });

      // a tariff, and a token of an eMSP pushed to our CPO
      const tariff = `/ocpi/emsp/2.2.1/tariffs/${cc}/${pid}/STALE-T`;
      const current = aTariff221({ country_code: cc, party_id: pid, id: 'STALE-T', last_updated: isoAt(3000) });
      await send('PUT', tariff, cpoAs, current);
      await send('PUT', tariff, cpoAs, { ...current, currency: 'CHF', last_updated: isoAt(60) });
      expect(await get(tariff, cpoAs)).to.include({ currency: 'EUR' });
      const emspAs = { token: emsp.token, ...b64 };
      const { country_code: ec, party_id: ep } = emsp.party;
      const token = `/ocpi/cpo/2.2.1/tokens/${ec}/${ep}/STALE-TK`;
      const blocked = aToken221({ country_code: ec, party_id: ep, uid: 'STALE-TK', valid: false });
      await send('PUT', token, emspAs, { ...blocked, last_updated: isoAt(3000) });
      // a late update from before the block must not let the card charge again
      expect(await send('PATCH', token, emspAs, { valid: true, last_updated: isoAt(60) })).to.include({ valid: false });
      await send('PUT', token, emspAs, { ...blocked, valid: true, last_updated: isoAt(60) });
      expect(await get(token, emspAs)).to.include({ valid: false });
    });

    it('a last_updated held from ahead of our clock orders nothing: the next update of the token is applied', async () => {
      const emspAs = { token: emsp.token, ...b64 };
      const { country_code: ec, party_id: ep } = emsp.party;
      const path = `/ocpi/cpo/2.2.1/tokens/${ec}/${ep}/AHEAD-TK`;
      const token = aToken221({ country_code: ec, party_id: ep, uid: 'AHEAD-TK', valid: true, whitelist: 'ALWAYS' });
      const send = async (method: string, body: Obj) => {
        const res = await api.request(method, path, { ...emspAs, body });
        expect(res.body.status_code, `${method} ${JSON.stringify(body)}`).to.equal(1000);
        return dataOf<Obj>(res);
      };
      const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
      // one push from a clock far ahead, then the eMSP blocks the card with a correct clock
      await send('PUT', { ...token, last_updated: '2099-01-01T00:00:00Z' });
      // was answered 1000 and not applied: the blocked card kept charging
      expect(await send('PATCH', { valid: false, last_updated: now() })).to.include({ valid: false });
      await send('PUT', { ...token, last_updated: new Date(Date.now() + 7 * 60_000).toISOString() });
      expect(await send('PUT', { ...token, valid: false, last_updated: now() })).to.include({ valid: false });
      // a stamp a few seconds ahead (two clocks not quite together) still orders what follows
      await send('PUT', { ...token, valid: true, last_updated: new Date(Date.now() + 3_000).toISOString() });
      expect(await send('PATCH', { valid: false, last_updated: isoAt(60) })).to.include({ valid: true });
    });

    it('our sessions and CDRs reach only the eMSP of their token, in each version; charging preferences are NOT_POSSIBLE', async function () {
      // our sessions and CDRs are written by the charge points' side (the roaming bridge); here
      // the test writes them where that side does, through the stores of the running platform
      if (!target.platform) this.skip();
      const ctx = new OcpiContext(target.platform.platform.services);
      const other = await api.register('EMSP');
      const evse = anEvse({ uid: 'OUR-E', capabilities: ['CHARGING_PROFILE_CAPABLE'] });
      await api.request('PUT', '/v1/ocpi/locations/OUR-L', {
        body: aLocation({ id: 'OUR-L', evses: [evse, anEvse({ uid: 'OUR-E2' })] }),
      });
      const own = { country_code: 'NL', party_id: 'EVP' };
      const write = async (id: string, who: RegisteredPartner, evseUid = 'OUR-E') => {
        const token = { ...who.party, uid: `U-${id}`, type: 'RFID', contract_id: `C-${id}` };
        const at = { location_id: 'OUR-L', evse_uid: evseUid, connector_id: '1', cdr_token: token };
        await ctx.stores.sessions.put({ ...own, id }, aSession221({ id, ...at }) as unknown as StoredSession, {
          audience: who.party,
        });
        const cdr = aCdr221({
          id: `CDR-${id}`,
          cdr_token: token,
          cdr_location: { ...(aCdr221().cdr_location as Obj), id: 'OUR-L', evse_uid: evseUid },
        });
        await ctx.stores.cdrs.put({ ...own, id: `CDR-${id}` }, cdr as unknown as StoredCdr, { audience: who.party });
      };
      await write('OUR-S1', emsp);
      await write('OUR-S2', other);
      await write('OUR-S3', emsp, 'OUR-E2');

      const ids = async (path: string, who: RegisteredPartner, encoding?: 'base64') =>
        dataOf<Obj[]>(await api.request('GET', path, { token: who.token, ...(encoding ? { encoding } : {}) })).map(
          (o) => o.id,
        );
      expect(await ids('/ocpi/cpo/2.2.1/sessions', emsp, 'base64')).to.have.members(['OUR-S1', 'OUR-S3']);
      expect(await ids('/ocpi/cpo/2.2.1/sessions', other, 'base64')).to.deep.equal(['OUR-S2']);
      expect(await ids('/ocpi/cpo/2.2.1/cdrs', other, 'base64')).to.deep.equal(['CDR-OUR-S2']);
      expect(await ids('/ocpi/2.2.1/cdrs', other, 'base64')).to.deep.equal(['CDR-OUR-S2']);
      // 2.1.1: the location we hold, with only the EVSE and connector used
      const s211 = dataOf<Obj[]>(await api.request('GET', '/ocpi/cpo/2.1.1/sessions', { token: other.token }));
      expect(s211[0]).to.include({ id: 'OUR-S2', auth_id: 'C-OUR-S2' });
      const loc = s211[0]?.location as Obj;
      expect(loc).to.include({ id: 'OUR-L', type: 'ON_STREET' });
      expect((loc.evses as Obj[]).map((e) => e.uid)).to.deep.equal(['OUR-E']);
      const c211 = dataOf<Obj[]>(await api.request('GET', '/ocpi/cpo/2.1.1/cdrs', { token: other.token }));
      expect(c211[0]).to.include({ id: 'CDR-OUR-S2', total_cost: 4.38, stop_date_time: isoAt(3600) });

      const prefs = (id: string, who: RegisteredPartner) =>
        api.request('PUT', `/ocpi/cpo/2.2.1/sessions/${id}/charging_preferences`, {
          token: who.token,
          ...b64,
          body: { profile_type: 'FAST', departure_time: isoAt(7200) },
        });
      expect(dataOf(await prefs('OUR-S1', emsp))).to.equal('NOT_POSSIBLE');
      // another eMSP's session, and an EVSE that takes no charging preferences
      const others = await prefs('OUR-S2', emsp);
      expect([others.status, others.body.status_message]).to.deep.equal([404, 'Unknown session']);
      // was "Unknown session" too, for a session the eMSP holds
      const incapable = await prefs('OUR-S3', emsp);
      expect(incapable.status).to.equal(404);
      expect(incapable.body.status_message).to.contain('OUR-S3').and.contain('CHARGING_PROFILE_CAPABLE');
    });
  });
}
