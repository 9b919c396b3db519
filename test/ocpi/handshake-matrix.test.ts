import { expect } from 'chai';
import { OcpiApi, embeddedTarget, uniqueParty, type Answer, type OcpiTarget } from '../support/ocpi-harness.js';
import {
  authorizationFor,
  startSimulator,
  type OcpiSimulator,
  type OcpiVersion,
  type PartyRole,
  type SimulatedParty,
} from '../support/ocpi-simulator.js';

/**
 * The credentials handshake against an independent partner simulator written from the OCPI text
 * (test/support/ocpi-simulator.ts), over real loopback HTTP: partner version x partner role x who
 * registers x who then rotates and unregisters. Every cell proves the link by a module call with
 * the token the partner holds, and that the token is refused once the link is gone.
 */

interface Onboarded {
  id: string;
  token: string;
  versions_url: string;
}

/** The module a partner of `role` may call at our opposite mount: a Sender interface of ours. */
function moduleFor(role: PartyRole): { identifier: string; role: 'SENDER' } {
  // an eMSP pulls our CPO locations; a CPO pulls our eMSP tokens (both Sender interfaces)
  return { identifier: role === 'EMSP' ? 'locations' : 'tokens', role: 'SENDER' };
}

describe('OCPI handshake matrix (independent partner simulator on loopback)', function () {
  this.timeout(30_000);
  let target: OcpiTarget;
  let api: OcpiApi;
  const sims: OcpiSimulator[] = [];

  before(async () => {
    target = await embeddedTarget();
    api = new OcpiApi(target);
  });
  afterEach(async () => {
    await Promise.all(sims.splice(0).map((s) => s.close()));
  });
  after(async () => target.stop());

  async function simulator(version: OcpiVersion, parties: SimulatedParty[]): Promise<OcpiSimulator> {
    const sim = await startSimulator({ versions: [version], parties });
    sims.push(sim);
    return sim;
  }

  /** Onboards `party`; a platform's other parties are the ones the operator lets it speak for. */
  async function onboard(party: SimulatedParty, others: SimulatedParty[] = []): Promise<Onboarded> {
    const res = await api.request('POST', '/v1/partners', {
      body: {
        country_code: party.country_code,
        party_id: party.party_id,
        role: party.role,
        ...(others.length > 0 ? { parties: others } : {}),
      },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body as unknown as Onboarded;
  }

  async function partnerView(id: string): Promise<Answer> {
    const res = await api.request('GET', `/v1/partners/${id}`);
    expect(res.status).to.equal(200);
    return res;
  }

  /** The partner registers with us, from the versions URL and Token A of its onboarding. */
  async function partnerRegisters(sim: OcpiSimulator, created: Onboarded, version: OcpiVersion): Promise<void> {
    const result = await sim.registerWith(created.versions_url, created.token);
    expect(result.answer.status, JSON.stringify(result.answer.body)).to.equal(200);
    expect(result.answer.statusCode).to.equal(1000);
    expect(result.version).to.equal(version);
    expect(result.tokenReceived).to.be.a('string').and.not.equal(created.token);
    // the server fetched our versions and details with the token we posted (7.2.2), in the header form of the version
    const fetched = sim.received.filter((r) => r.token === result.tokenGiven && r.method === 'GET');
    expect(fetched.map((r) => r.path)).to.include.members(['/ocpi/versions', `/ocpi/${version}`]);
    for (const r of fetched) expect(r.headers.authorization).to.equal(authorizationFor(result.tokenGiven, version));
    // a second POST on a registered link is refused (7.2.2: 405)
    const again = await sim.request(
      'POST',
      `${versionBase(sim, version)}/credentials`,
      result.tokenReceived ?? '',
      version,
      sim.ownCredentials('B-again', version),
    );
    expect(again.status).to.equal(405);
    // GET answers our credentials, with the token the partner now holds (7.2.1)
    const mine = await sim.call('GET', 'credentials');
    expect(mine.statusCode).to.equal(1000);
    expect(mine.data).to.have.property('token', result.tokenReceived);
    // Token A has become invalid once the exchange is done (7.1.1, figure 22)
    const stale = await sim.request('GET', created.versions_url, created.token, version);
    expect(stale.status).to.equal(401);
  }

  function versionBase(sim: OcpiSimulator, version: OcpiVersion): string {
    const credentials = sim.link?.endpoints.find((e) => e.identifier === 'credentials');
    if (!credentials) throw new Error('no credentials endpoint discovered');
    expect(credentials.url.endsWith(`/${version}/credentials`)).to.equal(true);
    return credentials.url.slice(0, -'/credentials'.length);
  }

  /** We register with the partner: it handed us its versions URL and a Token A. */
  async function platformRegisters(sim: OcpiSimulator, created: Onboarded, version: OcpiVersion): Promise<void> {
    const tokenA = sim.issueTokenA();
    const since = sim.lastSeq;
    const res = await api.request('POST', `/v1/partners/${created.id}/register`, {
      body: { versions_url: sim.versionsUrl, token: tokenA },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    // what the partner accepted: versions, details, POST, each with Token A in the version's form
    // (a first try at the versions URL in another form is refused with 401: 2.2.1 4.1.2 NOTE)
    const calls = sim.receivedSince(since).filter((r) => r.status !== 401);
    expect(calls.map((r) => `${r.method} ${r.path}`)).to.deep.equal([
      'GET /ocpi/versions',
      `GET /ocpi/${version}`,
      `POST /ocpi/${version}/credentials`,
    ]);
    for (const r of calls) expect(r.headers.authorization).to.equal(authorizationFor(tokenA, version));
    const link = sim.link;
    expect(link?.registered).to.equal(true);
    expect(link?.version).to.equal(version);
    // our credentials name our opposite role (2.2.1) and a versions URL the partner could use
    if (version === '2.2.1') {
      const opposite = sim.party.role === 'CPO' ? 'EMSP' : 'CPO';
      expect(link?.credentials.roles?.map((r) => r.role)).to.include(opposite);
    } else {
      expect(link?.credentials.party_id).to.be.a('string');
    }
    const view = await partnerView(created.id);
    expect(view.body.status).to.equal('registered');
    expect(view.body.version).to.equal(version);
  }

  /** The partner calls a module of ours with the token it holds: 200 / 1000 and a list. */
  async function provesLink(sim: OcpiSimulator, tokenA: string): Promise<void> {
    const module = moduleFor(sim.party.role);
    const role = sim.link?.version === '2.2.1' ? module.role : undefined;
    const ok = await sim.call('GET', module.identifier, '', undefined, role ? { role } : {});
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
    expect(ok.statusCode).to.equal(1000);
    expect(ok.data).to.be.an('array');
    // 4.1.2: CREDENTIALS_TOKEN_A on another module than credentials or versions is a 401
    const withA = await sim.call('GET', module.identifier, '', undefined, { token: tokenA, ...(role ? { role } : {}) });
    expect(withA.status).to.equal(401);
  }

  async function refused(sim: OcpiSimulator, token: string): Promise<void> {
    const module = moduleFor(sim.party.role);
    const role = sim.link?.version === '2.2.1' ? module.role : undefined;
    const res = await sim.call('GET', module.identifier, '', undefined, { token, ...(role ? { role } : {}) });
    expect(res.status).to.equal(401);
  }

  async function partnerRotatesAndUnregisters(sim: OcpiSimulator, created: Onboarded, version: OcpiVersion) {
    const before = sim.link;
    if (!before) throw new Error('no link');
    const rotated = await sim.rotate();
    expect(rotated.answer.status, JSON.stringify(rotated.answer.body)).to.equal(200);
    expect(rotated.answer.statusCode).to.equal(1000);
    expect(rotated.version).to.equal(version);
    expect(rotated.tokenReceived).to.be.a('string').and.not.equal(before.tokenToThem);
    await provesLink(sim, created.token);
    await refused(sim, before.tokenToThem);

    const current = sim.link?.tokenToThem ?? '';
    const gone = await sim.unregister();
    expect(gone.status, JSON.stringify(gone.body)).to.equal(200);
    expect(gone.statusCode).to.equal(1000);
    await refused(sim, current);
    const view = await partnerView(created.id);
    expect(view.body.status).to.not.equal('registered');
  }

  async function platformRotatesAndUnregisters(sim: OcpiSimulator, created: Onboarded, version: OcpiVersion) {
    const before = sim.link;
    if (!before) throw new Error('no link');
    let since = sim.lastSeq;
    const rotated = await api.request('POST', `/v1/partners/${created.id}/rotate`);
    expect(rotated.status, JSON.stringify(rotated.body)).to.equal(200);
    const put = sim.receivedSince(since).filter((r) => r.method === 'PUT');
    expect(put.map((r) => r.path)).to.deep.equal([`/ocpi/${version}/credentials`]);
    expect(put[0]?.headers.authorization).to.equal(authorizationFor(before.tokenToUs, version));
    const after = sim.link;
    expect(after?.registered).to.equal(true);
    expect(after?.tokenToUs).to.not.equal(before.tokenToUs);
    expect(after?.tokenToThem).to.not.equal(before.tokenToThem);
    await provesLink(sim, created.token);
    await refused(sim, before.tokenToThem);

    since = sim.lastSeq;
    const gone = await api.request('POST', `/v1/partners/${created.id}/unregister`);
    expect(gone.status, JSON.stringify(gone.body)).to.equal(200);
    const del = sim.receivedSince(since).filter((r) => r.method === 'DELETE');
    expect(del.map((r) => r.path)).to.deep.equal([`/ocpi/${version}/credentials`]);
    // the DELETE carries the token of the rotated link
    expect(del[0]?.headers.authorization).to.equal(authorizationFor(after?.tokenToUs ?? '', version));
    expect(sim.link?.registered).to.equal(false);
    await refused(sim, after?.tokenToThem ?? '');
  }

  for (const version of ['2.1.1', '2.2.1'] as const)
    for (const role of ['CPO', 'EMSP'] as const)
      for (const registrar of ['partner', 'platform'] as const)
        for (const lifecycle of ['partner', 'platform'] as const) {
          const registers = registrar === 'partner' ? 'it registers with us' : 'we register with it';
          const ends = lifecycle === 'partner' ? 'it rotates and unregisters' : 'we rotate and unregister';
          const title = `${version} ${role} partner: ${registers}, then ${ends}`;
          it(title, async () => {
            const party: SimulatedParty = { role, ...uniqueParty() };
            const sim = await simulator(version, [party]);
            const created = await onboard(party);
            // a partner starts from the versions URL of our opposite role
            expect(new URL(created.versions_url).pathname).to.equal(
              role === 'CPO' ? '/ocpi/emsp/versions' : '/ocpi/cpo/versions',
            );
            if (registrar === 'partner') await partnerRegisters(sim, created, version);
            else await platformRegisters(sim, created, version);
            await provesLink(sim, created.token);
            if (lifecycle === 'partner') await partnerRotatesAndUnregisters(sim, created, version);
            else await platformRotatesAndUnregisters(sim, created, version);
            expect(sim.violations).to.deep.equal([]);
          });
        }

  describe('our rotation reads the partner again', () => {
    it('a 2.1.1 link whose partner has since added 2.2.1 moves to 2.2.1 when we rotate', async () => {
      const party: SimulatedParty = { role: 'EMSP', ...uniqueParty() };
      const sim = await simulator('2.1.1', [party]);
      const created = await onboard(party);
      await platformRegisters(sim, created, '2.1.1');
      // the partner upgrades: its versions endpoint lists 2.2.1 as well
      sim.options.versions.push('2.2.1');
      const before = sim.link;
      const since = sim.lastSeq;
      const rotated = await api.request('POST', `/v1/partners/${created.id}/rotate`);
      expect(rotated.status, JSON.stringify(rotated.body)).to.equal(200);
      expect(rotated.body).to.include({ status: 'registered', version: '2.2.1', rotated_with_version: '2.2.1' });
      // the update sequence: versions and the details of each shared version with the link's
      // token, then the PUT on the highest
      const calls = sim.receivedSince(since).filter((r) => r.status !== 401 && r.token === before?.tokenToUs);
      expect(calls.map((r) => `${r.method} ${r.path}`)).to.deep.equal([
        'GET /ocpi/versions',
        'GET /ocpi/2.2.1',
        'GET /ocpi/2.1.1',
        'PUT /ocpi/2.2.1/credentials',
      ]);
      expect(sim.link?.version).to.equal('2.2.1');
      // both sides speak 2.2.1 now: the partner calls our 2.2.1 mount with the token we gave it
      await provesLink(sim, created.token);
      // our record of its endpoints holds its 2.2.1 ones
      const view = await partnerView(created.id);
      const endpoints = view.body.endpoints as Array<{ version: string; identifier: string }>;
      expect(endpoints.some((e) => e.version === '2.2.1' && e.identifier === 'credentials')).to.equal(true);
      expect(sim.violations).to.deep.equal([]);
    });
  });

  describe('credentials server rules (405 and Token A)', () => {
    for (const version of ['2.1.1', '2.2.1'] as const) {
      it(`${version}: PUT and DELETE with Token A before registering answer 405`, async () => {
        const party: SimulatedParty = { role: 'CPO', ...uniqueParty() };
        const sim = await simulator(version, [party]);
        const created = await onboard(party);
        const credentials = `${new URL(created.versions_url).pathname.replace(/versions$/, '')}${version}/credentials`;
        const encoding = version === '2.2.1' ? 'base64' : 'raw';
        const body = sim.ownCredentials('B-early', version);
        const put = await api.request('PUT', credentials, { token: created.token, encoding, body });
        expect(put.status, JSON.stringify(put.body)).to.equal(405);
        const del = await api.request('DELETE', credentials, { token: created.token, encoding });
        expect(del.status, JSON.stringify(del.body)).to.equal(405);
        // Token A still registers afterwards
        const result = await sim.registerWith(created.versions_url, created.token);
        expect(result.answer.statusCode).to.equal(1000);
        expect(sim.violations).to.deep.equal([]);
      });
    }
  });

  describe('hub', () => {
    it('2.2.1 platform with a CPO and an eMSP party (DE*HA1, DE*HB1) registers with one handshake', async () => {
      const cpo: SimulatedParty = { role: 'CPO', country_code: 'DE', party_id: 'HA1' };
      const emsp: SimulatedParty = { role: 'EMSP', country_code: 'DE', party_id: 'HB1' };
      const sim = await simulator('2.2.1', [cpo, emsp]);
      // the operator onboards the platform by one party and names the other it may speak for
      const created = await onboard(cpo, [emsp]);
      const result = await sim.registerWith(created.versions_url, created.token);
      expect(result.answer.status, JSON.stringify(result.answer.body)).to.equal(200);
      expect(result.answer.statusCode, JSON.stringify(result.answer.body)).to.equal(1000);
      const view = await partnerView(created.id);
      expect(view.body.status).to.equal('registered');
      expect(view.body.parties).to.deep.include({ country_code: 'DE', party_id: 'HB1', role: 'EMSP' });
      // the CPO party calls our eMSP tokens (Sender) with the token of the link
      const asCpo = await sim.call('GET', 'tokens', '', undefined, { role: 'SENDER', from: cpo });
      expect(asCpo.status, JSON.stringify(asCpo.body)).to.equal(200);
      expect(asCpo.statusCode).to.equal(1000);
      const rotated = await sim.rotate();
      expect(rotated.answer.statusCode, JSON.stringify(rotated.answer.body)).to.equal(1000);
      const gone = await sim.unregister();
      expect(gone.statusCode).to.equal(1000);
      expect(sim.violations).to.deep.equal([]);
    });

    for (const version of ['2.1.1', '2.2.1'] as const)
      it(`${version}: a partner whose credentials name another party than the one onboarded is not linked (502)`, async () => {
        // the operator onboarded DE*HG1 (CPO) and was handed the versions URL of DE*HE1
        const sim = await simulator(version, [{ role: 'CPO', country_code: 'DE', party_id: 'HE1' }]);
        const created = await onboard({
          role: 'CPO',
          country_code: 'DE',
          party_id: `HG${version === '2.1.1' ? 1 : 2}`,
        });
        const res = await api.request('POST', `/v1/partners/${created.id}/register`, {
          body: { versions_url: sim.versionsUrl, token: sim.issueTokenA() },
        });
        expect(res.status, JSON.stringify(res.body)).to.equal(502);
        expect(JSON.stringify(res.body)).to.include('DE-HE1 (CPO)');
        const view = await partnerView(created.id);
        expect(view.body.status).to.not.equal('registered');
      });

    it('2.2.1 platform with a CPO and an eMSP party (DE*HC1, DE*HD1): we register with it', async () => {
      const cpo: SimulatedParty = { role: 'CPO', country_code: 'DE', party_id: 'HC1' };
      const emsp: SimulatedParty = { role: 'EMSP', country_code: 'DE', party_id: 'HD1' };
      const sim = await simulator('2.2.1', [cpo, emsp]);
      const created = await onboard(cpo, [emsp]);
      const res = await api.request('POST', `/v1/partners/${created.id}/register`, {
        body: { versions_url: sim.versionsUrl, token: sim.issueTokenA() },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(sim.link?.registered).to.equal(true);
      const view = await partnerView(created.id);
      expect(view.body.parties).to.deep.include({ country_code: 'DE', party_id: 'HD1', role: 'EMSP' });
      const asCpo = await sim.call('GET', 'tokens', '', undefined, { role: 'SENDER', from: cpo });
      expect(asCpo.status, JSON.stringify(asCpo.body)).to.equal(200);
      const gone = await api.request('POST', `/v1/partners/${created.id}/unregister`);
      expect(gone.status, JSON.stringify(gone.body)).to.equal(200);
      expect(sim.link?.registered).to.equal(false);
      expect(sim.violations).to.deep.equal([]);
    });
  });
});
