import { expect } from 'chai';
import { shardOf } from '../../src/runtime/address.js';
import { startPlatform, clusterEnvironment, type StartedPlatform, type TestEnvironment } from '../support/platforms.js';
import { counterProtocol, testActorsModule } from '../support/test-actors.js';
import { runToExit, type NodeProcess } from '../support/processes.js';
import {
  CLUSTER_NODE,
  SteadyLoad,
  checkTurnLog,
  mailboxCounts,
  shardOwners,
  startWorker,
  turnsLoggedBy,
} from '../support/cluster-harness.js';
import { waitFor } from '../support/eventually.js';

const SHARDS = 64;
const TTL = 4000;
/** what a busy CI machine may add to a timing promise */
const CI_SLACK_MS = 1000;

/**
 * Three real worker processes own the shards; this test process routes load to them without
 * hosting shards itself. Processes are killed, stopped and paused under that load.
 */
describe('cluster: three processes under load (real Redis, PostgreSQL, processes)', function () {
  this.timeout(120_000);
  let env: TestEnvironment;
  let nodes: NodeProcess[];
  let client: StartedPlatform;
  let load: SteadyLoad;
  const schemaOf = () => env.env.DATABASE_SCHEMA!;
  const prefixOf = () => env.env.REDIS_PREFIX!;

  beforeEach(async () => {
    env = await clusterEnvironment({ ACTOR_SHARDS: String(SHARDS), LEASE_TTL_MS: String(TTL), ACTOR_IDLE_MS: '5000' });
    nodes = await Promise.all([startWorker(env.env), startWorker(env.env), startWorker(env.env)]);
    client = await startPlatform(env, [testActorsModule()], {
      hostShards: false,
      overrides: { PROCESS_ROLE: 'worker' },
    });
    const ids = new Set(nodes.map((n) => n.processId));
    await waitFor(
      'the three processes share the shards',
      async () => {
        const owners = await shardOwners(prefixOf(), SHARDS);
        return owners.every((o) => o !== undefined && ids.has(o)) && new Set(owners).size === 3;
      },
      20_000,
    );
    load = new SteadyLoad(client.platform.services.actors, 1000, 3, Math.random().toString(36).slice(2, 8));
  });

  afterEach(async () => {
    await load?.stop().catch(() => undefined);
    await client?.stop().catch(() => undefined);
    for (const n of nodes ?? []) {
      n.signal('SIGCONT');
      n.signal('SIGKILL');
      await n.exited;
    }
    await env.cleanup();
  });

  /** every acknowledged durable message took effect exactly once; no two activations overlapped */
  async function expectSafety(): Promise<void> {
    await waitFor(
      'every durable message is processed',
      async () => ((await mailboxCounts(schemaOf())).pending ?? 0) === 0,
      30_000,
      250,
    );
    const counts = await mailboxCounts(schemaOf());
    expect(counts.dead ?? 0, 'dead letters').to.equal(0);
    const report = await checkTurnLog(schemaOf(), SHARDS);
    expect(report.overlaps, 'overlapping activations').to.deep.equal([]);
    expect(report.epochRegressions, 'stale epochs committed').to.deep.equal([]);
    const missing = [...load.acked].filter((seq) => report.durableSeqs.get(seq) !== 1);
    expect(missing, 'acknowledged messages not applied exactly once').to.deep.equal([]);
    expect(load.acked.size).to.be.greaterThan(500);
    expect(report.activations).to.be.greaterThan(500);
  }

  it('keeps a single activation per key and loses no acknowledged message when a process is killed -9', async () => {
    load.start();
    const victim = nodes[0]!;
    await load.progressed('the load runs', 600);
    await waitFor(
      'the victim commits turns',
      async () => (await turnsLoggedBy(schemaOf(), victim.processId)) > 0,
      10_000,
    );
    const before = await shardOwners(prefixOf(), SHARDS);
    const victimShards = before.flatMap((o, s) => (o === victim.processId ? [s] : []));
    expect(victimShards.length).to.be.greaterThan(0);
    victim.signal('SIGKILL');
    const killedAt = Date.now();
    const survivors = new Set(nodes.slice(1).map((n) => n.processId));
    const tookMs = await waitFor(
      'the killed process shards are owned by survivors',
      async () => {
        const owners = await shardOwners(prefixOf(), SHARDS);
        return victimShards.every((s) => survivors.has(owners[s] ?? ''));
      },
      TTL + 5000,
      50,
    );
    console.log(`      failover of ${victimShards.length} shards after kill -9: ${tookMs} ms (lease TTL ${TTL} ms)`);
    expect(Date.now() - killedAt).to.be.at.most(TTL + 5000);
    await load.progressed('the load carries on after the failover', 600);
    await load.stop();
    await expectSafety();
  });

  it('re-sends asks in flight to a process killed -9 to the new owner within the lease TTL + 1 s', async () => {
    const victim = nodes[0]!;
    const owners = await shardOwners(prefixOf(), SHARDS);
    const actors = client.platform.services.actors;
    const addresses = [];
    for (let i = 0; addresses.length < 24; i++) {
      const counter = actors.ref(counterProtocol, `inflight-${i}`);
      if (owners[shardOf(counter.address, SHARDS)] === victim.processId) addresses.push(counter);
    }
    const WORK_MS = 1500;
    const outcomes = addresses.map((counter) => {
      const asked = counter.ask({ op: 'inc', announce: true, work_ms: WORK_MS }, { timeoutMs: 30_000 });
      return asked.then(
        (value) => ({ ok: true as const, value, at: Date.now() }),
        (err: unknown) => ({ ok: false as const, error: (err as Error).name, at: Date.now() }),
      );
    });
    await waitFor(
      'the victim runs every ask',
      async () => (await turnsLoggedBy(schemaOf(), victim.processId, { fenceKey: 'started' })) === addresses.length,
      10_000,
      20,
    );
    victim.signal('SIGKILL');
    const killedAt = Date.now();
    const reroutedMs = await waitFor(
      'the asks are re-sent',
      async () => actors.stats().reroutedAsks >= addresses.length,
      TTL + 5000,
      20,
    );
    const results = await Promise.all(outcomes);
    const doneMs = Math.max(...results.map((r) => r.at)) - killedAt;
    console.log(
      `      ${addresses.length} asks in flight at kill -9: re-sent after ${reroutedMs} ms, all answered ${doneMs} ms after the kill (TTL ${TTL} ms, turn ${WORK_MS} ms)`,
    );
    expect(
      results.filter((r) => !r.ok),
      'asks that failed',
    ).to.deep.equal([]);
    expect(results.map((r) => (r.ok ? r.value : 0))).to.deep.equal(addresses.map(() => 1));
    // membership lapses a TTL after the last heartbeat; the re-sent turn then runs once more
    expect(reroutedMs, 're-route after the kill').to.be.at.most(TTL + 1000 + CI_SLACK_MS);
    expect(doneMs, 'answers after the kill').to.be.at.most(TTL + 1000 + WORK_MS + CI_SLACK_MS);
  });

  // A hand-over, not a lapse: the shards must be owned by the survivors before the leaving
  // process's leases could have expired (TTL). How fast it is (aim 3 s, measured 0.3-1.7 s on a
  // quiet machine) is a figure the test prints, not a bound: on a loaded machine it has taken over 3 s.
  it('hands shards over on SIGTERM before their leases could lapse, and exits 0 within 25 s', async () => {
    load.start();
    await load.progressed('the load runs', 400);
    const leaving = nodes[1]!;
    const before = await shardOwners(prefixOf(), SHARDS);
    const moving = before.flatMap((o, s) => (o === leaving.processId ? [s] : []));
    const termAt = Date.now();
    leaving.signal('SIGTERM');
    const survivors = new Set([nodes[0]!.processId, nodes[2]!.processId]);
    const tookMs = await waitFor(
      'the leaving process shards are owned by the others',
      async () => {
        const owners = await shardOwners(prefixOf(), SHARDS);
        return moving.every((s) => survivors.has(owners[s] ?? ''));
      },
      TTL,
      25,
    );
    const code = await leaving.exited;
    const exitMs = Date.now() - termAt;
    console.log(
      `      hand-over of ${moving.length} shards on SIGTERM: ${tookMs} ms; exit ${String(code)} after ${exitMs} ms`,
    );
    expect(code).to.equal(0);
    expect(exitMs).to.be.below(25_000);
    await load.progressed('the load carries on after the hand-over', 300);
    await load.stop();
    await expectSafety();
  });

  it('hands shards to a process that joins under load, without overlap', async () => {
    load.start();
    await load.progressed('the load runs', 400);
    const joining = await startWorker(env.env);
    nodes.push(joining);
    const tookMs = await waitFor(
      'the new process owns its share of the shards',
      async () => {
        const owners = await shardOwners(prefixOf(), SHARDS);
        return (
          owners.filter((o) => o === joining.processId).length >= SHARDS / 8 && owners.every((o) => o !== undefined)
        );
      },
      10_000,
      50,
    );
    const owned = (await shardOwners(prefixOf(), SHARDS)).filter((o) => o === joining.processId).length;
    console.log(`      a fourth process joined and owns ${owned} of ${SHARDS} shards after ${tookMs} ms`);
    await load.progressed('the load carries on after the join', 300);
    await load.stop();
    await expectSafety();
  });

  it('fences a process paused past its lease: none of its writes after the pause commits, and it drops the shards', async () => {
    load.start();
    const paused = nodes[2]!;
    await load.progressed('the load runs', 400);
    await waitFor(
      'the process to pause commits turns',
      async () => (await turnsLoggedBy(schemaOf(), paused.processId)) > 0,
      10_000,
    );
    const before = await shardOwners(prefixOf(), SHARDS);
    const held = before.flatMap((o, s) => (o === paused.processId ? [s] : []));
    paused.signal('SIGSTOP');
    const pausedAt = Date.now();
    const others = new Set([nodes[0]!.processId, nodes[1]!.processId]);
    await waitFor(
      'the paused process shards are taken over',
      async () => {
        const owners = await shardOwners(prefixOf(), SHARDS);
        return held.every((s) => others.has(owners[s] ?? ''));
      },
      TTL + 5000,
      50,
    );
    // the new owners serve the shards before the paused process wakes up with its stale leases
    const takenAt = Date.now();
    await waitFor(
      'the new owners commit turns',
      async () =>
        (await turnsLoggedBy(schemaOf(), nodes[0]!.processId, { since: takenAt })) +
          (await turnsLoggedBy(schemaOf(), nodes[1]!.processId, { since: takenAt })) >=
        50,
      10_000,
    );
    const resumedAt = Date.now();
    paused.signal('SIGCONT');
    await waitFor(
      'the resumed process reports its shards lost',
      async () =>
        paused.logs.some(
          (l) => l.msg === 'shards lost' && typeof l.time === 'string' && Date.parse(l.time) >= pausedAt,
        ),
      10_000,
    );
    await load.progressed('the load carries on after the resume', 600);
    await load.stop();
    await expectSafety();
    const report = await checkTurnLog(schemaOf(), SHARDS);
    const epochsBefore = new Set(
      report.rows.filter((r) => r.process === paused.processId && r.recorded_at < pausedAt).map((r) => r.epoch),
    );
    const staleAfter = report.rows.filter(
      (r) => r.process === paused.processId && r.recorded_at >= resumedAt && epochsBefore.has(r.epoch),
    );
    expect(staleAfter, 'writes under pre-pause epochs committed after the pause').to.deep.equal([]);
    // the pause caught turns in flight, and their commits were refused after it
    const fenced = paused.logs.filter(
      (l) =>
        l.msg === 'turn fenced: a newer owner exists' && typeof l.time === 'string' && Date.parse(l.time) >= resumedAt,
    );
    const afterResume = report.rows.filter((r) => r.process === paused.processId && r.recorded_at >= resumedAt);
    console.log(
      `      paused ${held.length} shards' owner for ${resumedAt - pausedAt} ms: ${fenced.length} turn(s) refused by the fence after it, ${afterResume.length} row(s) committed after it under new epochs`,
    );
    expect(fenced.length, 'turns refused by the fence after the pause').to.be.greaterThan(0);
  });
});

describe('cluster: a process that cannot listen (its PORT taken)', function () {
  this.timeout(90_000);
  const LONG_TTL = 20_000;
  let env: TestEnvironment;
  let nodes: NodeProcess[] = [];

  before(async () => {
    env = await clusterEnvironment({ ACTOR_SHARDS: String(SHARDS), LEASE_TTL_MS: String(LONG_TTL) });
    nodes = await Promise.all([startWorker(env.env), startWorker(env.env)]);
  });
  after(async () => {
    for (const n of nodes) await n.stop();
    await env.cleanup();
  });

  const ownedByLive = async (): Promise<boolean> => {
    const ids = new Set(nodes.map((n) => n.processId));
    return (await shardOwners(env.env.REDIS_PREFIX!, SHARDS)).every((o) => o !== undefined && ids.has(o));
  };

  it('gives back what it joined as it fails: every shard has a live owner again long before the lease TTL', async () => {
    await waitFor('the two processes own every shard', ownedByLive, 30_000);
    const port = new URL(nodes[0]!.url).port;
    const failed = await runToExit(
      { ...env.env, PROCESS_ROLE: 'worker', PORT: port, OCPP_UNKNOWN_ID_TAGS: 'accept' },
      { entry: CLUSTER_NODE, timeoutMs: 40_000 },
    );
    expect(failed.code, failed.lines.slice(-5).join('\n')).to.equal(1);
    expect(failed.lines.some((l) => l.includes('EADDRINUSE'))).to.equal(true);
    // the live processes had handed shards to it when it joined; as it leaves, they take them
    // back at once (before, only once their leases lapsed: up to LEASE_TTL_MS without an owner)
    const exitedAt = Date.now();
    await waitFor('every shard owned by a live process again', ownedByLive, LONG_TTL / 2);
    console.log(`      every shard had a live owner ${Date.now() - exitedAt} ms after the failed start ended`);
  });
});
