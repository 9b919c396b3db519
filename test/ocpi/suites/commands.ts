import { expect } from 'chai';
import { aLocation, aToken221, anEvse } from '../../support/ocpi-builders.js';
import {
  useOcpiTarget,
  base64,
  dataOf,
  uniqueParty,
  type OcpiTarget,
  type RegisteredPartner,
} from '../../support/ocpi-harness.js';
import type { ReceivedRequest } from '../../support/ocpi-partners.js';

type Obj = Record<string, unknown>;
const b64 = { encoding: 'base64' as const };

/**
 * The commands module in both directions (docs/OCPI.md "Commands"): a partner eMSP finds our CPO
 * commands endpoint from the versions URL it was handed and sends each command; our eMSP sends
 * commands to a partner CPO through /v1 and receives the result the CPO POSTs to response_url.
 */
export function commandsSuite(makeTarget: () => Promise<OcpiTarget>): void {
  describe('OCPI commands, both directions', function () {
    this.timeout(60_000);
    const t = useOcpiTarget(makeTarget);

    /** The commands endpoint of `version`, found as a partner finds it: versions URL, then details. */
    async function commandsEndpoint(versionsPath: string, version: string, token: string): Promise<string> {
      const versions = dataOf<Array<{ version: string; url: string }>>(
        await t.api.request('GET', versionsPath, { token, ...(version === '2.2.1' ? b64 : {}) }),
      );
      const detailsUrl = versions.find((v) => v.version === version)?.url;
      if (!detailsUrl) throw new Error(`no ${version} at ${versionsPath}`);
      const details = dataOf<{ endpoints: Array<{ identifier: string; role?: string; url: string }> }>(
        await t.api.request('GET', new URL(detailsUrl).pathname, { token, ...(version === '2.2.1' ? b64 : {}) }),
      );
      const found = details.endpoints.find(
        (e) => e.identifier === 'commands' && (version === '2.1.1' || e.role === 'RECEIVER'),
      );
      if (!found) throw new Error(`no commands endpoint in ${JSON.stringify(details.endpoints)}`);
      return new URL(found.url).pathname;
    }

    it('a 2.2.1 eMSP sends each command to our CPO and is told why it cannot be carried out', async () => {
      const emsp = await t.api.register('EMSP', '/ocpi/cpo/2.2.1/credentials');
      const as = { token: emsp.token, ...b64 };
      const commands = await commandsEndpoint('/ocpi/cpo/versions', '2.2.1', emsp.token);
      const location = aLocation({ evses: [anEvse({ uid: 'CMD-E1' })] });
      expect(
        (await t.api.request('PUT', `/v1/ocpi/locations/${String(location.id)}`, { body: location })).status,
      ).to.equal(200);
      const token = aToken221({ ...emsp.party, uid: 'CMD-T1' });
      const start = (over: Obj) => ({
        response_url: 'https://emsp.example.com/ocpi/2.2.1/commands/START_SESSION/1',
        token,
        location_id: location.id,
        evse_uid: 'CMD-E1',
        ...over,
      });

      const notLinked = dataOf<Obj>(
        await t.api.request('POST', `${commands}/START_SESSION`, { ...as, body: start({}) }),
      );
      expect(notLinked).to.include({ result: 'REJECTED', timeout: 0 });
      expect(JSON.stringify(notLinked.message)).to.match(/no charge point is linked|is not linked to a charge point/);
      // an unknown place is 2003 "Unknown location", OCPI's own example of it (it was REJECTED)
      const elsewhere = await t.api.request('POST', `${commands}/START_SESSION`, {
        ...as,
        body: start({ location_id: 'NOWHERE' }),
      });
      expect(elsewhere.status).to.equal(200);
      expect(elsewhere.body).to.include({ status_code: 2003, status_message: 'Unknown location NOWHERE' });
      expect(elsewhere.body).to.not.have.property('data');
      const noEvse = await t.api.request('POST', `${commands}/START_SESSION`, {
        ...as,
        body: start({ evse_uid: 'NO-EVSE' }),
      });
      expect(noEvse.body).to.include({
        status_code: 2003,
        status_message: `Unknown EVSE NO-EVSE at location ${String(location.id)}`,
      });
      const invalid = dataOf<Obj>(
        await t.api.request('POST', `${commands}/START_SESSION`, {
          ...as,
          body: start({ token: { ...token, valid: false } }),
        }),
      );
      expect(JSON.stringify(invalid.message)).to.match(/not valid/);

      const stop = await t.api.request('POST', `${commands}/STOP_SESSION`, {
        ...as,
        body: { response_url: 'https://emsp.example.com/r/2', session_id: 'NO-SUCH-SESSION' },
      });
      expect(dataOf<Obj>(stop)).to.include({ result: 'UNKNOWN_SESSION' });
      const cancel = await t.api.request('POST', `${commands}/CANCEL_RESERVATION`, {
        ...as,
        body: { response_url: 'https://emsp.example.com/r/3', reservation_id: 'R-1' },
      });
      expect(dataOf<Obj>(cancel)).to.include({ result: 'REJECTED' });
      const unlock = await t.api.request('POST', `${commands}/UNLOCK_CONNECTOR`, {
        ...as,
        body: {
          response_url: 'https://emsp.example.com/r/4',
          location_id: location.id,
          evse_uid: 'CMD-E1',
          connector_id: '9',
        },
      });
      expect(unlock.body).to.include({ status_code: 2003, status_message: 'Unknown connector 9 of EVSE CMD-E1' });

      // a response_url we could not POST to, a body without the token, a command OCPI lacks
      const badUrl = await t.api.request('POST', `${commands}/START_SESSION`, {
        ...as,
        body: start({ response_url: 'ftp://emsp.example.com/x' }),
      });
      expect(badUrl.body.status_code).to.equal(2001);
      const noToken = await t.api.request('POST', `${commands}/START_SESSION`, { ...as, body: start({ token: 1 }) });
      expect(noToken.status).to.equal(422);
      expect(noToken.body.detail).to.be.an('array');
      const unknown = await t.api.request('POST', `${commands}/SELF_DESTRUCT`, { ...as, body: start({}) });
      expect(dataOf<Obj>(unknown)).to.include({ result: 'NOT_SUPPORTED' });
      expect(JSON.stringify(dataOf<Obj>(unknown).message)).to.match(/no command SELF_DESTRUCT/);
      // a CPO partner has no business with our CPO commands
      const cpo = await t.api.register('CPO');
      const asCpo = await t.api.request('POST', `${commands}/START_SESSION`, {
        token: cpo.token,
        ...b64,
        body: start({}),
      });
      expect(asCpo.status).to.equal(403);
    });

    it('a 2.1.1 eMSP gets the 2.1.1 CommandResponse, and CANCEL_RESERVATION (not in 2.1.1) is NOT_SUPPORTED', async () => {
      const emsp = await t.api.register('EMSP', '/ocpi/cpo/2.1.1/credentials', { versions: ['2.1.1'] });
      const commands = await commandsEndpoint('/ocpi/cpo/versions', '2.1.1', emsp.token);
      expect(commands).to.equal('/ocpi/cpo/2.1.1/commands');
      const as = { token: emsp.token };
      const location = aLocation({ evses: [anEvse({ uid: 'CMD-OLD-E1' })] });
      expect(
        (await t.api.request('PUT', `/v1/ocpi/locations/${String(location.id)}`, { body: location })).status,
      ).to.equal(200);
      const answer = await t.api.request('POST', `${commands}/START_SESSION`, {
        ...as,
        body: {
          response_url: 'https://emsp.example.com/ocpi/2.1.1/commands/START_SESSION/1',
          token: {
            uid: 'CMD-OLD',
            type: 'RFID',
            auth_id: 'NL-OLD-1',
            issuer: 'Old eMSP',
            valid: true,
            whitelist: 'ALLOWED',
            last_updated: new Date().toISOString(),
          },
          location_id: location.id,
        },
      });
      // no charger is linked to the location: REJECTED, with no reason in 2.1.1's shape
      expect(dataOf<Obj>(answer)).to.deep.equal({ result: 'REJECTED' });
      const cancel = await t.api.request('POST', `${commands}/CANCEL_RESERVATION`, {
        ...as,
        body: { response_url: 'https://emsp.example.com/r', reservation_id: 'R-1' },
      });
      expect(dataOf<Obj>(cancel)).to.deep.equal({ result: 'NOT_SUPPORTED' });
    });

    /** A partner CPO whose commands Receiver answers with `answer`. */
    async function partnerCpo(versions: string[], answer: (r: ReceivedRequest) => unknown): Promise<RegisteredPartner> {
      const path = versions.includes('2.2.1') ? '/ocpi/emsp/2.2.1/credentials' : '/ocpi/emsp/2.1.1/credentials';
      return t.api.register('CPO', path, { versions, modules: [{ identifier: 'commands', role: 'RECEIVER' }], answer });
    }

    /** POSTs a result to the response_url we gave, as the CPO. */
    async function postResult(responseUrl: string, token: string, body: unknown) {
      const url = new URL(responseUrl);
      return t.api.request('POST', url.pathname, { token, ...b64, body });
    }

    it('refuses (409) to send START_SESSION or RESERVE_NOW with a token of ours that is not valid, without calling the CPO', async () => {
      const cpo = await partnerCpo(['2.2.1'], () => ({ result: 'ACCEPTED', timeout: 30 }));
      const token = aToken221({ uid: 'OUR-BLOCKED-1', valid: false });
      expect((await t.api.request('PUT', '/v1/ocpi/tokens/NL/EVP/OUR-BLOCKED-1', { body: token })).status).to.equal(
        200,
      );
      const before = cpo.fake.received.length;
      for (const [command, fields] of [
        ['START_SESSION', { location_id: 'THEIR-LOC' }],
        ['RESERVE_NOW', { location_id: 'THEIR-LOC', expiry_date: '2030-01-01T00:00:00Z', reservation_id: 'R-1' }],
      ] as const) {
        const sent = await t.api.request('POST', `/v1/partners/${cpo.id}/commands/${command}`, {
          body: { token_uid: 'OUR-BLOCKED-1', ...fields },
        });
        // was 201: the CPO was asked to charge on a card we had blocked
        expect([sent.status, (sent.body.error as { code: string }).code], command).to.deep.equal([
          409,
          'token_not_valid',
        ]);
      }
      // the same card given whole, said valid: was sent
      const inline = await t.api.request('POST', `/v1/partners/${cpo.id}/commands/START_SESSION`, {
        body: { token: { ...token, valid: true }, location_id: 'THEIR-LOC' },
      });
      expect([inline.status, (inline.body.error as { code: string }).code]).to.deep.equal([409, 'token_not_valid']);
      expect(cpo.fake.received.length).to.equal(before);
    });

    it("addresses a command to a platform's CPO party that holds the location (OCPI-to), not to its onboarded party", async () => {
      const main = uniqueParty();
      const other = uniqueParty();
      const onboarded = await t.api.request('POST', '/v1/partners', {
        body: { ...main, role: 'CPO', parties: [{ ...other, role: 'CPO' }] },
      });
      const { id, token: tokenA } = onboarded.body as { id: string; token: string };
      const fake = await t.target.partner(`PL-${main.party_id}-${Date.now()}`, ['2.2.1'], {
        modules: [{ identifier: 'commands', role: 'RECEIVER' }],
        answer: () => ({ result: 'ACCEPTED', timeout: 30 }),
      });
      const roles = [main, other].map((p) => ({ role: 'CPO', ...p, business_details: { name: `CPO ${p.party_id}` } }));
      const reg = await t.api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
        token: tokenA,
        ...b64,
        body: { token: fake.token, url: fake.versionsUrl, roles },
      });
      const token = String((reg.body.data as { token?: string } | undefined)?.token);
      // the second CPO pushes its location
      const loc = aLocation({ ...other, id: 'PL-M1' });
      const put = await t.api.request(
        'PUT',
        `/ocpi/emsp/2.2.1/locations/${other.country_code}/${other.party_id}/PL-M1`,
        {
          token,
          ...b64,
          body: loc,
        },
      );
      expect(put.body.status_code, JSON.stringify(put.body)).to.equal(1000);
      const ours = aToken221({ uid: 'OUR-PL-1' });
      expect((await t.api.request('PUT', '/v1/ocpi/tokens/NL/EVP/OUR-PL-1', { body: ours })).status).to.equal(200);
      const start = async (location_id: string) => {
        const sent = await t.api.request('POST', `/v1/partners/${id}/commands/START_SESSION`, {
          body: { token_uid: 'OUR-PL-1', location_id },
        });
        expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
        const last = fake.received.at(-1);
        return [last?.headers['ocpi-to-country-code'], last?.headers['ocpi-to-party-id']];
      };
      // was the onboarded party: the platform looked PL-M1 up under the wrong CPO
      expect(await start('PL-M1')).to.deep.equal([other.country_code, other.party_id]);
      expect(await start('pl-m1')).to.deep.equal([other.country_code, other.party_id]);
      // a location we do not hold: the onboarded party, as before
      expect(await start('NOT-OURS')).to.deep.equal([main.country_code, main.party_id]);
    });

    it('refuses a token given whole of another party or of a uid we do not have, and a RESERVE_NOW whose expiry has passed, without calling the CPO', async () => {
      const cpo = await partnerCpo(['2.2.1'], () => ({ result: 'ACCEPTED', timeout: 30 }));
      const cpo211 = await partnerCpo(['2.1.1'], () => ({ result: 'ACCEPTED' }));
      const token = aToken221({ uid: 'OUR-CMD-4' });
      expect((await t.api.request('PUT', '/v1/ocpi/tokens/NL/EVP/OUR-CMD-4', { body: token })).status).to.equal(200);
      const before = [cpo.fake.received.length, cpo211.fake.received.length];
      const code = async (partner: RegisteredPartner, command: string, body: Obj) => {
        const res = await t.api.request('POST', `/v1/partners/${partner.id}/commands/${command}`, { body });
        const error = res.body.error as { code?: string } | undefined;
        return [
          res.status,
          error?.code ?? (res.body.detail as Array<{ loc: unknown[] }> | undefined)?.[0]?.loc.join('.'),
        ];
      };
      // our uid, another party's token: was 201, and the CPO started a session for XX*YYY on our word
      const foreign = { ...token, country_code: 'XX', party_id: 'YYY' };
      expect(await code(cpo, 'START_SESSION', { token: foreign, location_id: 'L1' })).to.deep.equal([
        404,
        'token_not_found',
      ]);
      // our party, a uid we have no token of: was 201
      const unknown = { ...token, uid: 'NOPE9' };
      expect(await code(cpo, 'START_SESSION', { token: unknown, location_id: 'L1' })).to.deep.equal([
        404,
        'token_not_found',
      ]);
      const unknown211 = {
        uid: 'NOPE9',
        type: 'RFID',
        auth_id: 'NL-EVP-C1',
        issuer: 'I',
        valid: true,
        whitelist: 'ALLOWED',
        last_updated: '2026-01-01T00:00:00Z',
      };
      expect(await code(cpo211, 'START_SESSION', { token: unknown211, location_id: 'L1' })).to.deep.equal([
        404,
        'token_not_found',
      ]);
      // an expiry that has passed reserves nothing: was 201
      const past = {
        token_uid: 'OUR-CMD-4',
        location_id: 'L1',
        reservation_id: 'R1',
        expiry_date: '2020-01-01T00:00:00Z',
      };
      expect(await code(cpo, 'RESERVE_NOW', past)).to.deep.equal([422, 'body.expiry_date']);
      expect([cpo.fake.received.length, cpo211.fake.received.length]).to.deep.equal(before);
      // ours, given whole: sent as given
      const sent = await t.api.request('POST', `/v1/partners/${cpo.id}/commands/START_SESSION`, {
        body: { token, location_id: 'L1' },
      });
      expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
      expect((cpo.fake.received.at(-1)?.body as { token: Obj }).token).to.deep.equal(token);
    });

    it('our eMSP sends START_SESSION to a 2.2.1 CPO and keeps its answer and the result it POSTs', async () => {
      const cpo = await partnerCpo(['2.2.1'], () => ({ result: 'ACCEPTED', timeout: 30 }));
      const token = aToken221({ uid: 'OUR-CMD-1' });
      expect((await t.api.request('PUT', '/v1/ocpi/tokens/NL/EVP/OUR-CMD-1', { body: token })).status).to.equal(200);

      const sent = await t.api.request('POST', `/v1/partners/${cpo.id}/commands/START_SESSION`, {
        body: { token_uid: 'OUR-CMD-1', location_id: 'THEIR-LOC', evse_uid: 'THEIR-EVSE' },
      });
      expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
      const command = sent.body as { uid: string; response: Obj; result: unknown; request: { response_url: string } };
      expect(command.response).to.deep.equal({ result: 'ACCEPTED', timeout: 30 });
      expect(command.result).to.equal(null);

      // what the CPO received: the token as we hold it, our response_url, its token, the routing headers
      const received = cpo.fake.received.at(-1);
      expect(received?.method).to.equal('POST');
      expect(received?.path).to.equal('/commands/START_SESSION');
      const body = received?.body as { token: Obj; response_url: string; location_id: string };
      expect(body.token).to.include({ uid: 'OUR-CMD-1', contract_id: 'NL-EVP-C12345678' });
      expect(body.location_id).to.equal('THEIR-LOC');
      expect(body.response_url).to.match(new RegExp(`/ocpi/emsp/2\\.2\\.1/commands/START_SESSION/${command.uid}$`));
      expect(received?.headers.authorization).to.equal(`Token ${base64(cpo.fake.token)}`);
      expect(received?.headers).to.include({
        'ocpi-to-country-code': cpo.party.country_code,
        'ocpi-to-party-id': cpo.party.party_id,
      });

      // the result, as the CPO POSTs it with the token we gave it
      const posted = await postResult(body.response_url, cpo.token, { result: 'ACCEPTED' });
      expect([posted.status, posted.body.status_code]).to.deep.equal([200, 1000]);
      const read = await t.api.request('GET', `/v1/commands/${command.uid}`);
      expect(read.body).to.deep.include({ uid: command.uid, command: 'START_SESSION', result: { result: 'ACCEPTED' } });
      expect(read.body.result_at).to.be.a('string');

      // another CPO cannot report on it; a path naming another command or uid is unknown; a bad body is 422
      const other = await partnerCpo(['2.2.1'], () => ({ result: 'ACCEPTED', timeout: 30 }));
      expect((await postResult(body.response_url, other.token, { result: 'FAILED' })).status).to.equal(404);
      const wrongCommand = body.response_url.replace('START_SESSION', 'STOP_SESSION');
      expect((await postResult(wrongCommand, cpo.token, { result: 'FAILED' })).status).to.equal(404);
      expect((await postResult(body.response_url, cpo.token, { result: 'MAYBE' })).status).to.equal(422);
      // the response_url is on the mount of the command's version: the other version's knows it not
      const otherVersion = new URL(body.response_url.replace('/2.2.1/', '/2.1.1/')).pathname;
      const onOther = await t.api.request('POST', otherVersion, { token: cpo.token, body: { result: 'REJECTED' } });
      expect(onOther.status, JSON.stringify(onOther.body)).to.equal(404);
      const still = await t.api.request('GET', `/v1/commands/${command.uid}`);
      expect(still.body.result).to.deep.equal({ result: 'ACCEPTED' });
    });

    it("a command whose result has not come within the CPO's timeout is shown overdue; a late result still lands", async () => {
      const cpo = await partnerCpo(['2.2.1'], () => ({ result: 'ACCEPTED', timeout: 1 }));
      const sent = await t.api.request('POST', `/v1/partners/${cpo.id}/commands/UNLOCK_CONNECTOR`, {
        body: { location_id: 'L', evse_uid: 'E', connector_id: '1' },
      });
      expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
      const command = sent.body as { uid: string; result_due_at: string; result_overdue: boolean };
      expect(command.result_overdue).to.equal(false);
      expect(Date.parse(command.result_due_at)).to.be.within(Date.now(), Date.now() + 1_500);
      await new Promise((r) => setTimeout(r, 1_200));
      // was result null for ever, nothing to tell a late result from a pending one
      const late = await t.api.request('GET', `/v1/commands/${command.uid}`);
      expect(late.body).to.include({ result: null, result_overdue: true });
      const listed = await t.api.request('GET', '/v1/commands?limit=5');
      const items = listed.body.value as Obj[];
      expect(items.find((c) => c.uid === command.uid)).to.include({ result_overdue: true });
      const body = cpo.fake.received.at(-1)?.body as { response_url: string };
      expect((await postResult(body.response_url, cpo.token, { result: 'ACCEPTED' })).status).to.equal(200);
      const done = await t.api.request('GET', `/v1/commands/${command.uid}`);
      expect(done.body).to.include({ result_due_at: null, result_overdue: false });
    });

    it('a result for a command its CPO answered REJECTED is refused (409), and the command keeps no result', async () => {
      const cpo = await partnerCpo(['2.2.1'], () => ({ result: 'REJECTED', timeout: 0 }));
      const sent = await t.api.request('POST', `/v1/partners/${cpo.id}/commands/UNLOCK_CONNECTOR`, {
        body: { location_id: 'L', evse_uid: 'E', connector_id: '1' },
      });
      expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
      const body = cpo.fake.received.at(-1)?.body as { response_url: string };
      const posted = await postResult(body.response_url, cpo.token, { result: 'ACCEPTED' });
      // was 200/1000, and the operator saw a command both REJECTED and ACCEPTED
      expect([posted.status, posted.body.status_code]).to.deep.equal([409, 2000]);
      expect(posted.body.status_message).to.contain('REJECTED');
      const read = await t.api.request('GET', `/v1/commands/${String(sent.body.uid)}`);
      expect(read.body).to.deep.include({ response: { result: 'REJECTED', timeout: 0 }, result: null });

      // fields refused before any call: the 422 echoes what the operator sent, not a response_url
      const refused = await t.api.request('POST', `/v1/partners/${cpo.id}/commands/STOP_SESSION`, { body: {} });
      expect(refused.status).to.equal(422);
      expect(JSON.stringify(refused.body)).not.to.contain('response_url');
    });

    it("refuses (422) a field the partner's version of the command lacks, or an unknown one, before any call", async () => {
      type Detail = { loc: unknown[]; msg: string; type: string };
      const cpo211 = await partnerCpo(['2.1.1'], () => ({ result: 'ACCEPTED' }));
      const cpo221 = await partnerCpo(['2.2.1'], () => ({ result: 'ACCEPTED', timeout: 30 }));
      await t.api.request('PUT', '/v1/ocpi/tokens/NL/EVP/OUR-CMD-3', { body: aToken221({ uid: 'OUR-CMD-3' }) });
      const expiry = new Date(Date.now() + 900_000).toISOString();
      const before = [cpo211.fake.received.length, cpo221.fake.received.length];
      const refused = async (cpo: RegisteredPartner, command: string, fields: Obj, field: string) => {
        const res = await t.api.request('POST', `/v1/partners/${cpo.id}/commands/${command}`, { body: fields });
        // was 201, and the field went to the CPO as sent
        expect(res.status, `${command} ${JSON.stringify(res.body)}`).to.equal(422);
        const detail = (res.body as { detail: Detail[] }).detail;
        expect(
          detail.map((d) => [d.loc.join('.'), d.type]),
          command,
        ).to.deep.equal([[`body.${field}`, 'extra_forbidden']]);
        return detail[0]?.msg;
      };
      // 2.1.1 StartSession has response_url, token, location_id and evse_uid only (connector_id came in 2.2)
      const start = { token_uid: 'OUR-CMD-3', location_id: 'L1', evse_uid: 'E1' };
      expect(await refused(cpo211, 'START_SESSION', { ...start, connector_id: '1' }, 'connector_id')).to.contain(
        '2.1.1',
      );
      await refused(cpo211, 'START_SESSION', { ...start, foo: 1 }, 'foo');
      await refused(cpo211, 'RESERVE_NOW', { ...start, expiry_date: expiry, reservation_id: 1, foo: 1 }, 'foo');
      await refused(
        cpo211,
        'RESERVE_NOW',
        { ...start, expiry_date: expiry, reservation_id: 1, authorization_reference: 'A' },
        'authorization_reference',
      );
      await refused(cpo211, 'STOP_SESSION', { session_id: 'S1', foo: 1 }, 'foo');
      await refused(
        cpo211,
        'UNLOCK_CONNECTOR',
        { location_id: 'L1', evse_uid: 'E1', connector_id: '1', foo: 1 },
        'foo',
      );
      await refused(cpo221, 'START_SESSION', { ...start, foo: 'bar', authorization_reference: 'AR1' }, 'foo');
      await refused(cpo221, 'RESERVE_NOW', { ...start, expiry_date: expiry, reservation_id: 'R1', foo: 1 }, 'foo');
      await refused(cpo221, 'STOP_SESSION', { session_id: 'S1', foo: 1 }, 'foo');
      await refused(cpo221, 'CANCEL_RESERVATION', { reservation_id: 'R1', foo: 1 }, 'foo');
      await refused(
        cpo221,
        'UNLOCK_CONNECTOR',
        { location_id: 'L1', evse_uid: 'E1', connector_id: '1', foo: 1 },
        'foo',
      );
      expect([cpo211.fake.received.length, cpo221.fake.received.length]).to.deep.equal(before);
      // the 2.2.1 StartSession has connector_id: sent
      const sent = await t.api.request('POST', `/v1/partners/${cpo221.id}/commands/START_SESSION`, {
        body: { ...start, connector_id: '1', authorization_reference: 'AR1' },
      });
      expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
      expect(cpo221.fake.received.at(-1)?.body).to.include({ connector_id: '1', authorization_reference: 'AR1' });
    });

    it('commands to a 2.1.1 CPO go in 2.1.1 shapes; what cannot be sent is refused before any call', async () => {
      const cpo = await partnerCpo(['2.1.1'], (r) =>
        (r.body as { session_id?: string }).session_id === 'GARBLED' ? { nonsense: true } : { result: 'ACCEPTED' },
      );
      await t.api.request('PUT', '/v1/ocpi/tokens/NL/EVP/OUR-CMD-2', { body: aToken221({ uid: 'OUR-CMD-2' }) });
      const sent = await t.api.request('POST', `/v1/partners/${cpo.id}/commands/RESERVE_NOW`, {
        body: {
          token_uid: 'OUR-CMD-2',
          expiry_date: new Date(Date.now() + 900_000).toISOString(),
          reservation_id: 7,
          location_id: 'THEIR-LOC',
        },
      });
      expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
      expect(sent.body.response).to.deep.equal({ result: 'ACCEPTED' });
      const body = cpo.fake.received.at(-1)?.body as { token: Obj; response_url: string };
      expect(body.token).to.include({ uid: 'OUR-CMD-2', auth_id: 'NL-EVP-C12345678' });
      expect(body.token).not.to.have.any.keys('contract_id', 'country_code');
      expect(body.response_url).to.match(/\/ocpi\/emsp\/2\.1\.1\/commands\/RESERVE_NOW\//);
      const posted = await t.api.request('POST', new URL(body.response_url).pathname, {
        token: cpo.token,
        body: { result: 'TIMEOUT' },
      });
      expect(posted.body.status_code).to.equal(1000);
      const read = await t.api.request('GET', `/v1/commands/${String(sent.body.uid)}`);
      expect(read.body.result).to.deep.equal({ result: 'TIMEOUT' });

      const calls = cpo.fake.received.length;
      const refuse = async (command: string, fields: Obj, status: number, code?: string) => {
        const res = await t.api.request('POST', `/v1/partners/${cpo.id}/commands/${command}`, { body: fields });
        expect(res.status, `${command} ${JSON.stringify(res.body)}`).to.equal(status);
        if (code) expect((res.body.error as { code: string }).code).to.equal(code);
      };
      await refuse('CANCEL_RESERVATION', { reservation_id: 'R-1' }, 422);
      await refuse('STOP_SESSION', {}, 422);
      await refuse('START_SESSION', { token_uid: 'NO-SUCH-TOKEN', location_id: 'L' }, 404, 'token_not_found');
      await refuse('LAUNCH', { session_id: 'S' }, 422);
      const emsp = await t.api.register('EMSP');
      const asEmsp = await t.api.request('POST', `/v1/partners/${emsp.id}/commands/STOP_SESSION`, {
        body: { session_id: 'S' },
      });
      expect([asEmsp.status, (asEmsp.body.error as { code: string }).code]).to.deep.equal([409, 'not_a_cpo']);
      expect(cpo.fake.received.length).to.equal(calls);

      // an answer that is no CommandResponse: 502, and the command is kept with the error
      const garbled = await t.api.request('POST', `/v1/partners/${cpo.id}/commands/STOP_SESSION`, {
        body: { session_id: 'GARBLED' },
      });
      expect(garbled.status).to.equal(502);
      expect(cpo.fake.received.length).to.equal(calls + 1);
      const uid = (cpo.fake.received.at(-1)?.body as { response_url: string }).response_url.split('/').at(-1);
      // the 502 names the command kept, so that the operator can follow it
      expect((garbled.body.error as { details: Obj }).details).to.include({ uid, ocpi_status_code: 3001 });
      const kept = await t.api.request('GET', `/v1/commands/${String(uid)}`);
      expect(kept.body).to.include({ command: 'STOP_SESSION', response: null });
      expect(kept.body.error).to.match(/CommandResponse/);

      // GET /v1/commands: the latest change first, paged
      const recent = await t.api.request('GET', '/v1/commands?limit=2');
      expect(recent.status).to.equal(200);
      const listed = recent.body.value as Obj[];
      expect(listed.map((c) => c.uid)).to.deep.equal([uid, sent.body.uid]);
      expect(listed[0]).to.deep.include({ command: 'STOP_SESSION', response: null });
      expect(listed[1]).to.deep.include({ command: 'RESERVE_NOW', result: { result: 'TIMEOUT' } });
      expect(Number(recent.headers.get('x-total-count'))).to.be.at.least(2);
      const one = await t.api.request('GET', '/v1/commands?limit=1');
      expect((one.body.value as Obj[]).map((c) => c.uid)).to.deep.equal([uid]);
      expect(String(one.headers.get('link'))).to.contain('offset=1');
      expect((await t.api.request('GET', '/v1/commands?offset=-1')).status).to.equal(422);
    });
  });
}
