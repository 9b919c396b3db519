import { expect } from 'chai';
import { aCdr221, aLocation, aSession221, aTariff221, aToken221, isoAt } from '../../support/ocpi-builders.js';
import { useOcpiTarget, dataOf, type OcpiTarget } from '../../support/ocpi-harness.js';
import type { ReceivedRequest } from '../../support/ocpi-partners.js';
import { OcpiContext } from '../../../src/ocpi/core/context.js';
import type { StoredCdr, StoredSession } from '../../../src/ocpi/sessions/stored.js';

type Obj = Record<string, unknown>;
const b64 = { encoding: 'base64' as const };
const SENDERS = ['locations', 'tariffs', 'sessions', 'cdrs'].map((identifier) => ({
  identifier,
  role: 'SENDER' as const,
}));
const RECEIVERS = ['locations', 'tariffs', 'sessions', 'cdrs'].map((identifier) => ({
  identifier,
  role: 'RECEIVER' as const,
}));

/**
 * Our client on every module a partner lists (docs/OCPI.md "Pull and push"): we pull a CPO's
 * locations, tariffs, sessions and CDRs and an eMSP's tokens from their Senders, and push ours
 * to their Receivers, in the shape of the partner's version.
 */
export function exchangeSuite(makeTarget: () => Promise<OcpiTarget>): void {
  describe('OCPI pull and push of every module', function () {
    this.timeout(60_000);
    const t = useOcpiTarget(makeTarget);

    it("pulls a 2.2.1 CPO's tariffs, sessions and CDRs: objects of its party are stored, others and invalid ones rejected", async () => {
      let party = { country_code: '', party_id: '' };
      const pages: Record<string, Obj[]> = {};
      const cpo = await t.api.register('CPO', undefined, {
        versions: ['2.2.1'],
        modules: SENDERS,
        answer: (req) => pages[req.path.split('?')[0]?.slice(1) ?? ''] ?? [],
      });
      party = cpo.party;
      pages.tariffs = [
        aTariff221({ ...party, id: 'P-TAR-1' }),
        aTariff221({ country_code: 'FR', party_id: 'ZZZ', id: 'P-TAR-2' }),
        { ...aTariff221({ ...party, id: 'P-TAR-3' }), currency: undefined },
      ];
      pages.sessions = [aSession221({ ...party, id: 'P-SES-1' })];
      pages.cdrs = [aCdr221({ ...party, id: 'P-CDR-1' })];

      const tariffs = await t.api.request('POST', `/v1/partners/${cpo.id}/pull/tariffs`, { body: {} });
      expect(tariffs.status, JSON.stringify(tariffs.body)).to.equal(200);
      expect(tariffs.body).to.deep.include({ module: 'tariffs', version: '2.2.1', stored: 1, rejected: 2 });
      // the routing headers went with the pull
      const asked = cpo.fake.received.find((r: ReceivedRequest) => r.path.startsWith('/tariffs'));
      expect(asked?.headers['ocpi-to-party-id']).to.equal(party.party_id);
      for (const module of ['sessions', 'cdrs']) {
        const res = await t.api.request('POST', `/v1/partners/${cpo.id}/pull/${module}`);
        expect(res.body, module).to.deep.include({ stored: 1, rejected: 0 });
      }
      // what was pulled is what the partner reads back from our Receivers
      const base = `/ocpi/emsp/2.2.1`;
      const at = `${party.country_code}/${party.party_id}`;
      expect(
        dataOf<Obj>(await t.api.request('GET', `${base}/tariffs/${at}/P-TAR-1`, { token: cpo.token, ...b64 })).id,
      ).to.equal('P-TAR-1');
      expect(
        dataOf<Obj>(await t.api.request('GET', `${base}/sessions/${at}/P-SES-1`, { token: cpo.token, ...b64 })).id,
      ).to.equal('P-SES-1');
      expect(
        dataOf<Obj>(await t.api.request('GET', `${base}/cdrs/${at}/P-CDR-1`, { token: cpo.token, ...b64 })).id,
      ).to.equal('P-CDR-1');
      // a CPO has no tokens Sender: nothing is called
      const before = cpo.fake.received.length;
      const tokens = await t.api.request('POST', `/v1/partners/${cpo.id}/pull/tokens`);
      expect([tokens.status, (tokens.body.error as { code: string }).code]).to.deep.equal([409, 'not_an_emsp']);
      expect(cpo.fake.received.length).to.equal(before);
      expect((await t.api.request('POST', `/v1/partners/${cpo.id}/pull/commands`)).status).to.equal(422);
    });

    it('stops a pull whose Sender links back to a page already read: 502, the pages before it kept', async () => {
      let party = { country_code: '', party_id: '' };
      let first: string | undefined;
      const page = (path: string): string =>
        `<${cpo.fake.versionsUrl.replace(/versions$/, '')}2.2.1${path}>; rel="next"`;
      const cpo = await t.api.register('CPO', '/ocpi/emsp/2.2.1/credentials', {
        versions: ['2.2.1'],
        modules: SENDERS,
        // page 2 names page 1 as its next: the Sender's links loop
        link: (r) => (r.path.includes('offset=1') ? page(first ?? '') : page('/tariffs?offset=1')),
        answer: (r) => {
          first ??= r.path;
          return [aTariff221({ ...party, id: r.path.includes('offset=1') ? 'LOOP-TAR-2' : 'LOOP-TAR-1' })];
        },
      });
      party = cpo.party;
      const res = await t.api.request('POST', `/v1/partners/${cpo.id}/pull/tariffs`, { body: {} });
      expect(res.status, `pages read: ${String(res.body.pages)}`).to.equal(502);
      const gets = cpo.fake.received.filter((r: ReceivedRequest) => r.path.startsWith('/tariffs'));
      expect(gets.map((r: ReceivedRequest) => r.path)).to.deep.equal([first, '/tariffs?offset=1']);
      const at = `${party.country_code}/${party.party_id}`;
      for (const id of ['LOOP-TAR-1', 'LOOP-TAR-2']) {
        const back = await t.api.request('GET', `/ocpi/emsp/2.2.1/tariffs/${at}/${id}`, { token: cpo.token, ...b64 });
        expect(dataOf<Obj>(back).id, id).to.equal(id);
      }
    });

    it("follows a Sender's relative Link (RFC 8288 URI-Reference) to every page; one that does not resolve says so", async () => {
      let party = { country_code: '', party_id: '' };
      let broken = false;
      // page 1 links by absolute path, page 2 by a path relative to its own URL, page 3 is the last
      const links: Record<string, string> = {
        '': '</ocpi/2.2.1/tariffs?offset=1&limit=1>; rel="next"',
        '1': '<tariffs?offset=2&limit=1>; rel="next"',
      };
      const offsetOf = (r: ReceivedRequest) => /offset=(\d+)/.exec(r.path)?.[1] ?? '';
      const cpo = await t.api.register('CPO', '/ocpi/emsp/2.2.1/credentials', {
        versions: ['2.2.1'],
        modules: SENDERS,
        link: (r) => (broken ? '<http://[bad>; rel="next"' : links[offsetOf(r)]),
        answer: (r) => [aTariff221({ ...party, id: `REL-TAR-${offsetOf(r) || '0'}` })],
      });
      party = cpo.party;
      const res = await t.api.request('POST', `/v1/partners/${cpo.id}/pull/tariffs`, { body: {} });
      // was 502 "partner unreachable: destination refused" after page 1
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.deep.include({ stored: 3, rejected: 0 });
      const gets = cpo.fake.received.filter((r: ReceivedRequest) => r.path.startsWith('/tariffs'));
      expect(gets.map(offsetOf)).to.deep.equal(['', '1', '2']);

      broken = true;
      const stopped = await t.api.request('POST', `/v1/partners/${cpo.id}/pull/tariffs`, { body: {} });
      expect(stopped.status).to.equal(502);
      const message = (stopped.body.error as { message: string }).message;
      expect(message)
        .to.match(/Link/)
        .and.not.to.match(/destination refused/);
    });

    it('a pull leaves what we hold when it is newer: a token blocked and a session completed by pushes since', async () => {
      let party = { country_code: '', party_id: '' };
      const emsp = await t.api.register('EMSP', '/ocpi/cpo/2.2.1/credentials', {
        versions: ['2.2.1'],
        modules: [{ identifier: 'tokens', role: 'SENDER' }],
        // the eMSP's list still holds the copy of before its block
        answer: () => [aToken221({ ...party, uid: 'STALE-TOK', valid: true, last_updated: isoAt(-3600) })],
      });
      party = emsp.party;
      const tokenAt = `/ocpi/cpo/2.2.1/tokens/${party.country_code}/${party.party_id}/STALE-TOK`;
      const blocked = aToken221({ ...party, uid: 'STALE-TOK', valid: false, last_updated: isoAt() });
      expect((await t.api.request('PUT', tokenAt, { token: emsp.token, ...b64, body: blocked })).status).to.equal(200);
      const res = await t.api.request('POST', `/v1/partners/${emsp.id}/pull/tokens`);
      // was stored: 1, and the card valid again
      expect(res.body).to.deep.include({ stored: 0, kept: 1, rejected: 0 });
      expect(dataOf<Obj>(await t.api.request('GET', tokenAt, { token: emsp.token, ...b64 }))).to.include({
        valid: false,
        last_updated: isoAt(),
      });

      let cpoParty = { country_code: '', party_id: '' };
      const cpo = await t.api.register('CPO', undefined, {
        versions: ['2.2.1'],
        modules: SENDERS,
        answer: (req) =>
          req.path.startsWith('/sessions')
            ? [aSession221({ ...cpoParty, id: 'STALE-SES', status: 'ACTIVE', last_updated: isoAt(-60) })]
            : [],
      });
      cpoParty = cpo.party;
      const sessionAt = `/ocpi/emsp/2.2.1/sessions/${cpoParty.country_code}/${cpoParty.party_id}/STALE-SES`;
      const completed = aSession221({
        ...cpoParty,
        id: 'STALE-SES',
        status: 'COMPLETED',
        end_date_time: isoAt(),
        last_updated: isoAt(),
      });
      expect((await t.api.request('PUT', sessionAt, { token: cpo.token, ...b64, body: completed })).status).to.equal(
        200,
      );
      const sessions = await t.api.request('POST', `/v1/partners/${cpo.id}/pull/sessions`);
      expect(sessions.body).to.deep.include({ stored: 0, kept: 1, rejected: 0 });
      expect(dataOf<Obj>(await t.api.request('GET', sessionAt, { token: cpo.token, ...b64 }))).to.include({
        status: 'COMPLETED',
      });
    });

    it("pulls a 2.1.1 eMSP's tokens into the 2.2.1 shape under its party", async () => {
      const emsp = await t.api.register('EMSP', '/ocpi/cpo/2.1.1/credentials', {
        versions: ['2.1.1'],
        modules: [{ identifier: 'tokens', role: 'SENDER' }],
        answer: () => [
          {
            uid: 'P-TOK-1',
            type: 'RFID',
            auth_id: 'DE-ABC-C1',
            issuer: 'Them',
            valid: true,
            whitelist: 'ALLOWED',
            last_updated: isoAt(),
          },
        ],
      });
      const res = await t.api.request('POST', `/v1/partners/${emsp.id}/pull/tokens`);
      expect(res.body).to.deep.include({ module: 'tokens', version: '2.1.1', stored: 1, rejected: 0 });
      const { country_code: cc, party_id: pid } = emsp.party;
      const back = await t.api.request('GET', `/ocpi/cpo/2.2.1/tokens/${cc}/${pid}/P-TOK-1`, {
        token: emsp.token,
        ...b64,
      });
      expect(dataOf<Obj>(back)).to.include({
        uid: 'P-TOK-1',
        contract_id: 'DE-ABC-C1',
        country_code: cc,
        party_id: pid,
      });
    });

    it("shows the operator what it holds of a partner: a CPO's pushed locations and pulled tariffs, an eMSP's tokens", async () => {
      let party = { country_code: '', party_id: '' };
      const cpo = await t.api.register('CPO', undefined, {
        versions: ['2.2.1'],
        modules: SENDERS,
        answer: (req) => (req.path.startsWith('/tariffs') ? [aTariff221({ ...party, id: 'HELD-TAR' })] : []),
      });
      party = cpo.party;
      const at = `${party.country_code}/${party.party_id}`;
      // the partner pushes two locations to our Receiver, as it would; we pull its tariffs
      for (const id of ['HELD-LOC-1', 'HELD-LOC-2']) {
        const put = await t.api.request('PUT', `/ocpi/emsp/2.2.1/locations/${at}/${id}`, {
          token: cpo.token,
          ...b64,
          body: aLocation({ ...party, id, last_updated: isoAt(id.endsWith('1') ? 0 : 60) }),
        });
        expect(put.status, JSON.stringify(put.body)).to.equal(200);
      }
      expect((await t.api.request('POST', `/v1/partners/${cpo.id}/pull/tariffs`)).body).to.deep.include({ stored: 1 });

      // was: nowhere in /v1; the operator of an eMSP could not see where a partner's chargers are
      const locations = await t.api.request('GET', `/v1/partners/${cpo.id}/objects/locations?limit=1`);
      expect(locations.status, JSON.stringify(locations.body)).to.equal(200);
      expect((locations.body.value as Obj[]).map((l) => l.id)).to.deep.equal(['HELD-LOC-2']);
      expect(locations.headers.get('x-total-count')).to.equal('2');
      expect(locations.headers.get('link')).to.match(/offset=1/);
      const tariffs = await t.api.request('GET', `/v1/partners/${cpo.id}/objects/tariffs`);
      expect((tariffs.body.value as Obj[]).map((x) => x.id)).to.deep.equal(['HELD-TAR']);
      const one = await t.api.request('GET', `/v1/partners/${cpo.id}/objects/locations/${at}/HELD-LOC-1`);
      expect(one.body).to.include({ id: 'HELD-LOC-1', country_code: party.country_code });
      // another party's object, or one never held: 404; a module the partner does not send: 409
      expect(
        (await t.api.request('GET', `/v1/partners/${cpo.id}/objects/locations/FR/ZZZ/HELD-LOC-1`)).status,
      ).to.equal(404);
      expect((await t.api.request('GET', `/v1/partners/${cpo.id}/objects/locations/${at}/NOPE`)).status).to.equal(404);
      const tokens = await t.api.request('GET', `/v1/partners/${cpo.id}/objects/tokens`);
      expect([tokens.status, (tokens.body.error as { code: string }).code]).to.deep.equal([409, 'not_an_emsp']);
      expect((await t.api.request('GET', `/v1/partners/${cpo.id}/objects/commands`)).status).to.equal(422);
      expect(
        (await t.api.request('GET', '/v1/partners/00000000-0000-4000-8000-000000000000/objects/locations')).status,
      ).to.equal(404);

      // an eMSP's tokens pushed to our CPO Receiver (2.1.1: kept in the 2.2.1 shape)
      const emsp = await t.api.register('EMSP', '/ocpi/cpo/2.1.1/credentials', { versions: ['2.1.1'], modules: [] });
      const { country_code: cc, party_id: pid } = emsp.party;
      const token = {
        uid: 'HELD-TOK',
        type: 'RFID',
        auth_id: 'DE-ABC-C9',
        issuer: 'Them',
        valid: true,
        whitelist: 'ALLOWED',
      };
      const pushed = await t.api.request('PUT', `/ocpi/cpo/2.1.1/tokens/${cc}/${pid}/HELD-TOK`, {
        token: emsp.token,
        body: { ...token, last_updated: isoAt() },
      });
      expect(pushed.status, JSON.stringify(pushed.body)).to.equal(200);
      const held = await t.api.request('GET', `/v1/partners/${emsp.id}/objects/tokens`);
      expect(held.body.value as Obj[]).to.have.length(1);
      expect((held.body.value as Obj[])[0]).to.include({
        uid: 'HELD-TOK',
        contract_id: 'DE-ABC-C9',
        country_code: cc,
      });
      expect((await t.api.request('GET', `/v1/partners/${emsp.id}/objects/locations`)).status).to.equal(409);
    });

    it("pushes our locations and tariffs to an eMSP's Receivers in its version, and our tokens to a CPO's", async () => {
      await t.api.request('PUT', '/v1/ocpi/locations/PUSH-LOC', {
        body: aLocation({ id: 'PUSH-LOC', coordinates: { latitude: '52.0900049', longitude: '5.12100' } }),
      });
      await t.api.request('PUT', '/v1/ocpi/locations/PUSH-HIDDEN', {
        body: aLocation({ id: 'PUSH-HIDDEN', publish: false }),
      });
      await t.api.request('PUT', '/v1/ocpi/tariffs/PUSH-TAR', { body: aTariff221({ id: 'PUSH-TAR' }) });
      await t.api.request('PUT', '/v1/ocpi/tokens/NL/EVP/PUSH-TOK', { body: aToken221({ uid: 'PUSH-TOK' }) });

      const emsp221 = await t.api.register('EMSP', '/ocpi/2.2.1/credentials', {
        versions: ['2.2.1'],
        modules: RECEIVERS,
      });
      const pushed = await t.api.request('POST', `/v1/partners/${emsp221.id}/push/locations`);
      expect(pushed.status, JSON.stringify(pushed.body)).to.equal(200);
      expect(pushed.body).to.deep.include({ module: 'locations', version: '2.2.1', failed: [] });
      const puts = emsp221.fake.received.filter((r) => r.path.startsWith('/locations'));
      expect(puts.map((r) => `${r.method} ${r.path}`)).to.include('PUT /locations/NL/EVP/PUSH-LOC');
      expect(puts.map((r) => r.path)).to.not.include('/locations/NL/EVP/PUSH-HIDDEN');
      const sent = puts.find((r) => r.path === '/locations/NL/EVP/PUSH-LOC');
      expect(sent?.body).to.deep.include({ id: 'PUSH-LOC', country_code: 'NL', party_id: 'EVP', publish: true });
      expect(sent?.headers['ocpi-from-party-id']).to.equal('EVP');
      const tariffs = await t.api.request('POST', `/v1/partners/${emsp221.id}/push/tariffs`);
      expect(tariffs.body.pushed).to.be.greaterThan(0);
      expect(emsp221.fake.received.map((r) => `${r.method} ${r.path}`)).to.include('PUT /tariffs/NL/EVP/PUSH-TAR');
      // an eMSP has no tokens Receiver
      expect((await t.api.request('POST', `/v1/partners/${emsp221.id}/push/tokens`)).status).to.equal(409);

      // a 2.1.1 eMSP gets the 2.1.1 shapes: a location type, coordinates with 6 decimals
      const emsp211 = await t.api.register('EMSP', '/ocpi/cpo/2.1.1/credentials', {
        versions: ['2.1.1'],
        modules: RECEIVERS,
      });
      await t.api.request('POST', `/v1/partners/${emsp211.id}/push/locations`);
      const sent211 = emsp211.fake.received.find((r) => r.path === '/locations/NL/EVP/PUSH-LOC');
      expect(sent211?.body).to.deep.include({
        type: 'ON_STREET',
        coordinates: { latitude: '52.090005', longitude: '5.121000' },
      });
      expect(sent211?.body).to.not.have.property('publish');

      const cpo = await t.api.register('CPO', undefined, {
        versions: ['2.2.1'],
        modules: [{ identifier: 'tokens', role: 'RECEIVER' }],
      });
      const tokens = await t.api.request('POST', `/v1/partners/${cpo.id}/push/tokens`);
      expect(tokens.body).to.deep.include({ module: 'tokens', failed: [] });
      expect(cpo.fake.received.map((r) => `${r.method} ${r.path}`)).to.include('PUT /tokens/NL/EVP/PUSH-TOK?type=RFID');
    });

    it('pushes our sessions and CDRs only to the eMSP of their tokens, in its version', async function () {
      // our sessions and CDRs come from the charge points' side (a later issue); the test writes
      // them where that side does, through the stores of the running platform (embedded only)
      if (!t.target.platform) this.skip();
      const ctx = new OcpiContext(t.target.platform.platform.services);
      const emsp = await t.api.register('EMSP', '/ocpi/2.2.1/credentials', { versions: ['2.2.1'], modules: RECEIVERS });
      const other = await t.api.register('EMSP', '/ocpi/cpo/2.1.1/credentials', {
        versions: ['2.1.1'],
        modules: RECEIVERS,
      });
      await t.api.request('PUT', '/v1/ocpi/locations/PUSH-SL', { body: aLocation({ id: 'PUSH-SL' }) });
      const own = { country_code: 'NL', party_id: 'EVP' };
      for (const [id, who] of [
        ['PUSH-S1', emsp],
        ['PUSH-S2', other],
      ] as const) {
        const token = { ...who.party, uid: `U-${id}`, type: 'RFID', contract_id: `C-${id}` };
        const at = { location_id: 'PUSH-SL', evse_uid: 'E', connector_id: '1', cdr_token: token };
        await ctx.stores.sessions.put({ ...own, id }, aSession221({ id, ...at }) as unknown as StoredSession, {
          audience: who.party,
        });
        const cdr = aCdr221({ id: `CDR-${id}`, cdr_token: token });
        await ctx.stores.cdrs.put({ ...own, id: `CDR-${id}` }, cdr as unknown as StoredCdr, { audience: who.party });
      }
      for (const module of ['sessions', 'cdrs'])
        for (const p of [emsp, other])
          expect((await t.api.request('POST', `/v1/partners/${p.id}/push/${module}`)).body, module).to.deep.include({
            pushed: 1,
            failed: [],
          });
      const sent = (p: typeof emsp) => p.fake.received.map((r) => `${r.method} ${r.path}`);
      expect(sent(emsp)).to.include.members(['PUT /sessions/NL/EVP/PUSH-S1', 'POST /cdrs']);
      expect(sent(emsp)).to.not.include('PUT /sessions/NL/EVP/PUSH-S2');
      expect(sent(other)).to.include('PUT /sessions/NL/EVP/PUSH-S2');
      // the 2.1.1 eMSP gets 2.1.1 shapes: the session embeds its location, the CDR has stop_date_time
      const session211 = other.fake.received.find((r) => r.path === '/sessions/NL/EVP/PUSH-S2')?.body as Obj;
      expect(session211).to.have.property('start_datetime');
      expect((session211.location as Obj).id).to.equal('PUSH-SL');
      const cdr211 = other.fake.received.find((r) => r.path === '/cdrs')?.body as Obj;
      expect(cdr211).to.include({ id: 'CDR-PUSH-S2' }).and.to.have.property('stop_date_time');
    });
  });
}
