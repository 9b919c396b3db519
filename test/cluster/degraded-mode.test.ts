import { expect } from 'chai';
import { Redis } from 'ioredis';
import pg from 'pg';
import { connect, type TestCharger } from '../ocpp/support/charger.js';
import { API_KEY, apiClient, uniqueChargePointId, type RegisteredChargePoint } from '../ocpp/support/csms.js';
import { v16 } from '../ocpp/support/messages.js';
import { eventsOf, openEventStream } from '../support/event-stream.js';
import { waitFor } from '../support/eventually.js';
import { PG_URL } from '../support/databases.js';
import { clusterEnvironment, type TestEnvironment } from '../support/platforms.js';
import { PrivateRedis } from '../support/private-redis.js';
import { startNode, type NodeProcess } from '../support/processes.js';

const CHARGERS = 5;
const TTL = 3000;

/** GET a path, bounded: a readiness check that hangs is as bad as one that lies. */
async function probe(url: string, path: string): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  const res = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(5000) });
  await res.arrayBuffer();
  return { status: res.status, ms: Date.now() - started };
}

/**
 * Issue 7, degraded mode: a web process that loses Redis keeps its connected chargers (their
 * pins do not depend on Redis answering), says so on /readyz at once, and takes up its pins
 * again when Redis is back, even a Redis that restarted with no data.
 */
describe('degraded mode: Redis goes away under a web process with chargers connected', function () {
  this.timeout(90_000);
  let redis: PrivateRedis;
  let env: TestEnvironment;
  let web: NodeProcess;
  const chargers: Array<{ cp: RegisteredChargePoint; charger: TestCharger }> = [];

  before(async () => {
    redis = await PrivateRedis.start();
    env = await clusterEnvironment({
      CSMS_API_KEY: API_KEY,
      PROCESS_ROLE: 'web',
      REDIS_URL: redis.url,
      LEASE_TTL_MS: String(TTL),
    });
    web = await startNode(env.env);
  });

  after(async () => {
    for (const { charger } of chargers) charger.ws.terminate();
    await web?.stop();
    await redis?.kill();
    await env?.cleanup();
  });

  it('keeps connected chargers through an outage, answers /readyz 503 quickly, and serves them again after it', async () => {
    const api = apiClient(web.url);
    for (let i = 0; i < CHARGERS; i++) {
      const cp = (
        await api<RegisteredChargePoint>('POST', '/v1/charge-points', {
          id: uniqueChargePointId('DG'),
          protocol: 'ocpp1.6',
        })
      ).body;
      const charger = await connect({
        url: `${web.url.replace(/^http/, 'ws')}/ocpp/${cp.id}`,
        username: cp.username,
        password: cp.password,
        protocols: ['ocpp1.6'],
      });
      charger.answers = { RemoteStartTransaction: { status: 'Accepted' } };
      await charger.call('BootNotification', v16.boot());
      chargers.push({ cp, charger });
    }
    // one that never connected: who is connected elsewhere is what an outage hides
    await api('POST', '/v1/charge-points', { id: uniqueChargePointId('DG'), protocol: 'ocpp1.6' });
    await waitFor('ready before the outage', async () => (await probe(web.url, '/readyz')).status === 200, 10_000);

    await redis.kill();
    const downAt = Date.now();
    const notReadyMs = await waitFor(
      '/readyz answers 503',
      async () => (await probe(web.url, '/readyz')).status === 503,
      5000,
      50,
    );
    // past the local trust of every lease (75% of the TTL): before the fix, pins lapsed here and
    // the next charger message closed its socket (4000), then every reconnect failed (1011)
    await waitFor(
      'the process gave its shard leases up',
      async () =>
        web.logs.some((l) => l.msg === 'shards lost' && typeof l.time === 'string' && Date.parse(l.time) >= downAt),
      TTL + 5000,
    );
    // a StatusNotification is a turn of the charge-point actor (a Heartbeat is answered without it)
    const statuses = await Promise.allSettled(
      chargers.map(({ charger }) => charger.call('StatusNotification', v16.status(1, 'Available'))),
    );
    const droppedDuring = chargers
      .filter(({ charger }) => charger.closeCode !== undefined)
      .map(({ charger }) => charger.closeCode);
    expect(droppedDuring, 'close codes of chargers dropped during the outage').to.deep.equal([]);
    expect(statuses.map((s) => s.status)).to.deep.equal(chargers.map(() => 'fulfilled'));
    // a poller asking one readiness check after another: each is answered from the probe that
    // found Redis away. Was: a check that came between two background probes probed again and
    // waited out its 1 s bound (954-1,004 ms, four times in 4 s)
    const checks: Array<{ status: number; ms: number }> = [];
    for (const until = Date.now() + 3000; Date.now() < until;) checks.push(await probe(web.url, '/readyz'));
    expect(new Set(checks.map((c) => c.status))).to.deep.equal(new Set([503]));
    expect(Math.max(...checks.map((c) => c.ms)), 'the slowest /readyz of a poller during the outage').to.be.below(500);
    const [readyz, healthz] = [await probe(web.url, '/readyz'), await probe(web.url, '/healthz')];
    // the operator still sees the fleet: online as this process knows it, and told so (was 503
    // after up to 3.9 s, on the very process holding the chargers)
    const listedAt = Date.now();
    const [list, fleet] = await Promise.all([
      api<Array<{ id: string; online: boolean }>>('GET', '/v1/charge-points?limit=100'),
      api<{ online: number; online_scope: string }>('GET', '/v1/fleet'),
    ]);
    const listMs = Date.now() - listedAt;
    expect(list.status, JSON.stringify(list.body)).to.equal(200);
    expect(list.headers.get('x-online-scope')).to.equal('this_process');
    const ours = new Set(chargers.map(({ cp }) => cp.id));
    expect(list.body.filter((c) => ours.has(c.id)).map((c) => c.online)).to.deep.equal(chargers.map(() => true));
    expect(fleet.status, JSON.stringify(fleet.body)).to.equal(200);
    expect(fleet.body).to.include({ online: CHARGERS, online_scope: 'this_process' });
    expect(listMs, 'the lists during the outage').to.be.below(2000);
    const outageMs = Date.now() - downAt;

    await redis.resume();
    const readyMs = await waitFor(
      '/readyz answers 200 again',
      async () => (await probe(web.url, '/readyz')).status === 200,
      15_000,
      100,
    );
    // the restarted Redis had no data: the pins were written again by their holder
    const direct = new Redis(redis.url);
    try {
      await waitFor(
        'the pins are re-asserted',
        async () => {
          const values = await direct.mget(
            ...chargers.map(({ cp }) => `${env.env.REDIS_PREFIX}:pin:charge-point/${cp.id}`),
          );
          return values.every((v) => v?.startsWith(`${web.processId}|`));
        },
        5000,
      );
    } finally {
      direct.disconnect();
    }
    const after = await api<{ online_scope: string }>('GET', '/v1/fleet');
    expect(after.body.online_scope).to.equal('cluster');
    expect((await api('GET', '/v1/charge-points')).headers.get('x-online-scope')).to.equal(null);
    const target = chargers[0]!;
    expect((await api('POST', `/v1/charge-points/${target.cp.id}/remote-start`, { id_tag: 'TAG-DG' })).status).to.equal(
      200,
    );
    expect((await target.charger.csmsCall('RemoteStartTransaction', 10_000)).payload).to.deep.equal({
      idTag: 'TAG-DG',
    });

    const closed = chargers
      .filter(({ charger }) => charger.closeCode !== undefined)
      .map(({ charger }) => charger.closeCode);
    console.log(
      `      Redis down ${outageMs} ms: /readyz 503 after ${notReadyMs} ms (later ${readyz.ms} ms), ` +
        `${closed.length} of ${CHARGERS} chargers closed, ready again ${readyMs} ms after Redis came back`,
    );
    expect(closed, 'close codes of chargers dropped by the outage').to.deep.equal([]);
    expect(notReadyMs, '/readyz says 503 within 2 s').to.be.at.most(2000);
    expect(readyz.status).to.equal(503);
    expect(readyz.ms, '/readyz during the outage').to.be.below(2000);
    expect(healthz.status).to.equal(200);
  });

  it('a PostgreSQL that answers while a lock keeps writers out of the turn tables: /readyz 503 until it is released', async () => {
    await waitFor('ready', async () => (await probe(web.url, '/readyz')).status === 200, 15_000);
    // an operator's CREATE INDEX (not CONCURRENTLY) takes this lock: SELECT 1 still answers, no turn commits
    const operator = new pg.Client({ connectionString: PG_URL });
    await operator.connect();
    try {
      await operator.query(`SET search_path TO "${env.env.DATABASE_SCHEMA}"`);
      await operator.query('BEGIN');
      await operator.query('LOCK TABLE actor_state IN SHARE MODE');
      // was: 200 for as long as the lock was held, while chargers' calls waited and failed
      await waitFor(
        '/readyz 503 while the lock is held',
        async () => (await probe(web.url, '/readyz')).status === 503,
        5000,
      );
      await operator.query('COMMIT');
      await waitFor(
        '/readyz 200 once it is released',
        async () => (await probe(web.url, '/readyz')).status === 200,
        5000,
      );
    } finally {
      await operator.end();
    }
  });

  it("a Redis that stops answering: the lists and a charger's page answer within 2 s with what this process knows", async () => {
    const api = apiClient(web.url);
    const never = (
      await api<RegisteredChargePoint>('POST', '/v1/charge-points', {
        id: uniqueChargePointId('DG'),
        protocol: 'ocpp1.6',
      })
    ).body;
    await waitFor('ready', async () => (await probe(web.url, '/readyz')).status === 200, 15_000);
    const stream = await openEventStream(web.url, API_KEY);
    redis.freeze();
    try {
      // was: no answer at all while it lasted (the read of the pins waited on a connection that took it)
      const asked = Date.now();
      const [list, fleet, connected, offline] = await Promise.all([
        api<Array<{ id: string; online: boolean }>>('GET', '/v1/charge-points?limit=100'),
        api<{ online: number; online_scope: string }>('GET', '/v1/fleet'),
        api<{ online: boolean }>('GET', `/v1/charge-points/${chargers[0]!.cp.id}`),
        api<{ online: boolean }>('GET', `/v1/charge-points/${never.id}`),
      ]);
      expect(Date.now() - asked, 'the answers while Redis does not answer').to.be.below(2000);
      expect([list.status, fleet.status, connected.status, offline.status]).to.deep.equal([200, 200, 200, 200]);
      expect(list.headers.get('x-online-scope')).to.equal('this_process');
      expect(fleet.body).to.include({ online: CHARGERS, online_scope: 'this_process' });
      // its own charger is known online without Redis; another is shown offline, and said to be a guess
      expect([connected.body.online, connected.headers.get('x-online-scope')]).to.deep.equal([true, null]);
      expect([offline.body.online, offline.headers.get('x-online-scope')]).to.deep.equal([false, 'this_process']);
      // the operator's event stream says so, and the console reads its views again (was: at their
      // next timed read, up to 30 s later)
      await waitFor('a health event naming Redis', async () => eventsOf(stream, 'health').length > 0, 5000);
      expect(eventsOf(stream, 'health')).to.deep.equal([{ type: 'health', degraded_by: 'redis' }]);
    } finally {
      redis.thaw();
    }
    await waitFor(
      'the lists count every process again',
      async () => (await api<{ online_scope: string }>('GET', '/v1/fleet')).body.online_scope === 'cluster',
      15_000,
    );
    await waitFor('a health event: all reachable again', async () => eventsOf(stream, 'health').length === 2, 5000);
    expect(eventsOf(stream, 'health')[1]).to.deep.equal({ type: 'health', degraded_by: null });
    await stream.close();
  });
});
