import { commandsSuite } from '../ocpi/suites/commands.js';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { REDIS_URL } from '../support/databases.js';
import { aLocation, anEvse, credentials211, credentials221, isoAt } from '../support/ocpi-builders.js';
import { OcpiApi, clusterTarget, dataOf, uniqueParty, type OcpiTarget } from '../support/ocpi-harness.js';
import { authAndErrorsSuite } from '../ocpi/suites/auth-and-errors.js';
import { cpoAndListsSuite } from '../ocpi/suites/cpo-and-lists.js';
import { credentialsSuite } from '../ocpi/suites/credentials.js';
import { emspSuite } from '../ocpi/suites/emsp.js';
import { managementSuite } from '../ocpi/suites/management.js';
import { modulesSuite } from '../ocpi/suites/modules.js';
import { overviewSuite } from '../ocpi/suites/overview.js';
import { platformsSuite } from '../ocpi/suites/platforms.js';
import { exchangeSuite } from '../ocpi/suites/exchange.js';

/** How long another process may still accept a revoked token (TokenDirectory cacheMs, docs/OCPI.md). */
const TOKEN_CACHE_BOUND_MS = 1000;

/**
 * The OCPI suite against two `web` processes on different ports sharing Redis and PostgreSQL;
 * requests alternate between the processes. Partners are loopback servers (nock cannot reach
 * into the platform's processes).
 */
describe('OCPI, cluster mode (two web processes, Redis, PostgreSQL)', () => {
  const target = () => clusterTarget();
  authAndErrorsSuite(target);
  credentialsSuite(target);
  emspSuite(target);
  cpoAndListsSuite(target);
  overviewSuite(target);
  managementSuite(target);
  modulesSuite(target);
  commandsSuite(target);
  platformsSuite(target);
  exchangeSuite(target);

  describe('partner state lives in the partner actor, not in a process', function () {
    this.timeout(60_000);
    let cluster: OcpiTarget;
    let api: OcpiApi;

    before(async () => {
      cluster = await clusterTarget();
      api = new OcpiApi(cluster);
    });
    after(async () => cluster.stop());

    it('continues on one process a handshake started on the other, and retires rotated tokens on both', async () => {
      const party = uniqueParty();
      const onboarded = await api.request('POST', '/v1/partners', { on: 0, body: { ...party, role: 'CPO' } });
      expect(onboarded.status).to.equal(201);
      const tokenA = String(onboarded.body.token);
      expect((await api.request('GET', '/ocpi/emsp/versions', { token: tokenA, on: 0 })).status).to.equal(200);

      const fake = await cluster.partner('cluster-token-B');
      const registered = await api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
        token: tokenA,
        encoding: 'base64',
        on: 1,
        body: credentials221(party, fake.token, fake.versionsUrl),
      });
      expect(registered.body.status_code).to.equal(1000);
      const tokenC = dataOf<{ token: string }>(registered).token;
      const seen = await api.request('GET', `/v1/partners/${String(onboarded.body.id)}`, { on: 0 });
      expect(seen.body).to.include({ status: 'registered', version: '2.2.1' });
      for (const on of [0, 1])
        expect(
          (await api.request('GET', '/ocpi/emsp/2.1.1/tokens', { token: tokenC, on })).status,
          `process ${on}`,
        ).to.equal(200);

      const fresh = await cluster.partner('cluster-token-B2');
      const rotated = await api.request('PUT', '/ocpi/emsp/2.1.1/credentials', {
        token: tokenC,
        on: 1,
        body: credentials211(party, fresh.token, fresh.versionsUrl),
      });
      expect(rotated.body.status_code).to.equal(1000);
      const tokenC2 = dataOf<{ token: string }>(rotated).token;
      expect((await api.request('GET', '/ocpi/emsp/2.1.1/tokens', { token: tokenC, on: 1 })).status).to.equal(401);
      await sleep(TOKEN_CACHE_BOUND_MS + 100);
      for (const on of [0, 1]) {
        expect(
          (await api.request('GET', '/ocpi/emsp/2.1.1/tokens', { token: tokenC, on })).status,
          `old token, process ${on}`,
        ).to.equal(401);
        expect(
          (await api.request('GET', '/ocpi/emsp/2.1.1/tokens', { token: tokenC2, on })).status,
          `new token, process ${on}`,
        ).to.equal(200);
      }
    });

    it('tells the other processes over Redis which tokens a rotation revoked', async () => {
      const party = uniqueParty();
      const onboarded = await api.request('POST', '/v1/partners', { on: 0, body: { ...party, role: 'CPO' } });
      const fake = await cluster.partner('cluster-token-notice');
      const registered = await api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
        token: String(onboarded.body.token),
        on: 0,
        body: credentials221(party, fake.token, fake.versionsUrl),
      });
      const tokenC = dataOf<{ token: string }>(registered).token;
      const sub = new Redis(REDIS_URL);
      try {
        const notices: string[] = [];
        sub.on('message', (_channel: string, text: string) => notices.push(text));
        await sub.subscribe(`${String(cluster.redisPrefix)}:ocpi:invalidate`);
        const rotated = await api.request('PUT', '/ocpi/emsp/2.1.1/credentials', {
          token: tokenC,
          on: 1,
          body: credentials211(party, fake.token, fake.versionsUrl),
        });
        expect(rotated.body.status_code).to.equal(1000);
        const revoked = createHash('sha256').update(tokenC).digest('hex');
        for (let i = 0; i < 50 && !notices.some((n) => n.includes(revoked)); i++) await sleep(20);
        const notice = notices
          .map((n) => JSON.parse(n) as { tokens?: string[] })
          .find((n) => n.tokens?.includes(revoked));
        expect(notice, JSON.stringify(notices)).to.not.equal(undefined);
      } finally {
        sub.disconnect();
      }
    });

    it('keeps every change of concurrent EVSE PATCHes to one location, spread over both processes', async () => {
      const cpo = await api.register('CPO');
      const { country_code: cc, party_id: pid } = cpo.party;
      const uids = ['R1', 'R2', 'R3', 'R4', 'R5', 'R6', 'R7', 'R8'];
      const put = await api.request('PUT', `/ocpi/emsp/2.2.1/locations/${cc}/${pid}/LOC-RACE`, {
        token: cpo.token,
        body: aLocation({
          country_code: cc,
          party_id: pid,
          id: 'LOC-RACE',
          evses: uids.map((uid) => anEvse({ uid, status: 'AVAILABLE' })),
        }),
      });
      expect(put.body.status_code).to.equal(1000);
      const answers = await Promise.all(
        uids.map((uid, i) =>
          api.request('PATCH', `/ocpi/emsp/2.2.1/locations/${cc}/${pid}/LOC-RACE/${uid}`, {
            token: cpo.token,
            on: i % 2,
            body: { status: 'CHARGING', last_updated: isoAt(1000 + i) },
          }),
        ),
      );
      for (const a of answers) expect(a.body.status_code, JSON.stringify(a.body)).to.equal(1000);
      const location = dataOf<{ evses: Array<{ status: string }>; last_updated: string }>(
        await api.request('GET', `/ocpi/2.2.1/locations/${cc}/${pid}/LOC-RACE`, { token: cpo.token }),
      );
      expect(location.evses.map((e) => e.status)).to.deep.equal(uids.map(() => 'CHARGING'));
      expect(location.last_updated).to.equal(isoAt(1000 + uids.length - 1));
    });

    it('lets exactly one of two concurrent registrations with the same Token A through', async () => {
      const party = uniqueParty();
      const onboarded = await api.request('POST', '/v1/partners', { on: 1, body: { ...party, role: 'CPO' } });
      const tokenA = String(onboarded.body.token);
      const fake = await cluster.partner('cluster-token-race');
      const answers = await Promise.all(
        [0, 1].map((on) =>
          api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
            token: tokenA,
            encoding: 'base64',
            on,
            body: credentials221(party, fake.token, fake.versionsUrl),
          }),
        ),
      );
      const ok = answers.filter((a) => a.status === 200 && a.body.status_code === 1000);
      expect(ok, JSON.stringify(answers.map((a) => [a.status, a.body.status_code]))).to.have.length(1);
      const other = answers.find((a) => a !== ok[0]);
      expect([401, 405]).to.include(other?.status);
    });
  });
});
