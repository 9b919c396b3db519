import { shardOf } from '../../src/runtime/address.js';
import { eventually } from '../../test/support/eventually.js';
import { clusterEnvironment, type TestEnvironment } from '../../test/support/platforms.js';
import { freePort } from '../load-test/inspector.js';
import { ApiPoller, type PollRequest } from './api-poller.js';
import { ChaosCluster, LeaseReader, type Member } from './chaos-cluster.js';
import { FirmwareCharger, type ChargerIdentity, type OcppProtocol } from './firmware-charger.js';
import { PrivateRedis } from './private-redis.js';
import { summariseHttp, type ChaosReport, type FaultFigures, type VictimWindow } from './report.js';
import { checkLedger, emptyLedgerCheck, type SessionView } from './verify.js';
import { seededRandom } from '../prng.js';

export interface ChaosOptions {
  chargers: number;
  seed: number;
  /** whether to start another round of faults (kill -9, SIGSTOP, Redis restart) after `round` rounds */
  another(roundsDone: number): boolean;
  leaseTtlMs: number;
  /** load before the first fault and between rounds */
  warmupMs: number;
  redisDownMs: number;
  log(line: string): void;
}

const API_KEY = 'chaos-operator-key-0123456789abcdef';
const SHARDS = 64;
/** an HTTP call or an ask not answered within this is a hang (ASK_TIMEOUT_MS + a margin) */
const HTTP_BOUND_MS = 12_000;
/** a paused process is paused past its lease TTL by this much */
const PAUSE_PAST_TTL_MS = 2000;
/** chargers give up on a CALL after this and reconnect */
const CALL_TIMEOUT_MS = 4000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function api<T>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${API_KEY}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(HTTP_BOUND_MS),
  });
  const text = await res.text();
  // our own server's answer, read by the harness only: the checks that use it fail loudly if its shape is off
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/** A private redis-server on a free port; another process may take the port first, so a few tries. */
async function startPrivateRedis(): Promise<PrivateRedis> {
  for (let attempt = 1; ; attempt++) {
    const redis = new PrivateRedis(await freePort());
    try {
      await redis.start();
      return redis;
    } catch (err) {
      await redis.stop();
      if (attempt >= 3) throw err;
    }
  }
}

/** Polls until `done` holds; the time it took, or undefined when the bound ran out. */
async function timeUntil(check: () => Promise<boolean> | boolean, boundMs: number): Promise<number | undefined> {
  const t0 = Date.now();
  try {
    await eventually(async () => ((await check()) ? true : undefined), { timeoutMs: boundMs, everyMs: 50 });
    return Date.now() - t0;
  } catch {
    return undefined;
  }
}

/**
 * The chaos run: a private redis-server, a fresh PostgreSQL schema, two `web` processes and
 * one `worker`; firmware-like chargers run transactions while one web is killed (kill -9, then
 * restarted), the other is paused past the lease TTL (SIGSTOP/SIGCONT) and Redis is restarted.
 * Afterwards every acknowledged transaction message is looked up in /v1/sessions. One
 * implementation for the cluster test and for `scripts/chaos.ts`.
 */
export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const random = seededRandom(o.seed);
  const redis = await startPrivateRedis();
  let env: TestEnvironment | undefined;
  let leases: LeaseReader | undefined;
  let cluster: ChaosCluster | undefined;
  const chargers: FirmwareCharger[] = [];
  let poller: ApiPoller | undefined;
  try {
    env = await clusterEnvironment({
      CSMS_API_KEY: API_KEY,
      REDIS_URL: redis.url,
      LEASE_TTL_MS: String(o.leaseTtlMs),
      ACTOR_SHARDS: String(SHARDS),
    });
    leases = new LeaseReader(redis.url, env.env.REDIS_PREFIX ?? '', SHARDS);
    const c = new ChaosCluster(env.env);
    cluster = c;
    await Promise.all([c.add('web'), c.add('web'), c.add('worker')]);
    o.log(
      `cluster up: ${c.members.map((m) => `${m.name} ${m.node.url || `pid ${m.node.pid}`}`).join(', ')}; private redis on ${redis.port}`,
    );

    const [first] = c.httpTargets();
    if (first === undefined) throw new Error('no web process');
    const identities: ChargerIdentity[] = [];
    for (let i = 0; i < o.chargers; i++) {
      const protocol: OcppProtocol = i % 2 === 0 ? 'ocpp1.6' : 'ocpp2.0.1';
      const res = await api<{ id: string; password: string }>(first, 'POST', '/v1/charge-points', {
        id: `CHAOS-${o.seed}-${i}`,
        protocol,
      });
      if (res.status !== 201) throw new Error(`registering a charger answered ${res.status}`);
      identities.push({ id: res.body.id, password: res.body.password, protocol });
    }
    const partners: Array<{ id: string; token: string; address: string }> = [];
    // a dozen partner actors, so that every process owns the shards of a few
    for (let i = 0; i < 12; i++) {
      const party = `C${String(i).padStart(2, '0')}`;
      const res = await api<{ id: string; token: string }>(first, 'POST', '/v1/partners', {
        country_code: 'DE',
        party_id: party,
        role: 'EMSP',
      });
      if (res.status !== 201) throw new Error(`onboarding a partner answered ${res.status}`);
      partners.push({ id: res.body.id, token: res.body.token, address: `partner/DE-${party}` });
    }

    const startWs = c.wsTargets();
    identities.forEach((identity, i) => {
      const charger = new FirmwareCharger(identity, {
        targets: () => c.wsTargets(),
        firstTarget: startWs[i % startWs.length] ?? '',
        callTimeoutMs: CALL_TIMEOUT_MS,
        meterEveryMs: 500,
        meterValuesPerTransaction: 6,
        random,
      });
      chargers.push(charger);
      charger.start();
    });
    await timeUntil(() => chargers.every((ch) => ch.onlineAt.length > 0), 20_000);
    o.log(`${chargers.filter((ch) => ch.onlineAt.length > 0).length}/${chargers.length} chargers booted`);

    // the index is below the length of a list that is never empty here
    const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)] as T;
    const auth = { Authorization: `Bearer ${API_KEY}` };
    const partnerAsk = (partner: { id: string; address: string }): PollRequest => ({
      route: 'GET /v1/partners/{id}',
      method: 'GET',
      path: `/v1/partners/${partner.id}`,
      headers: auth,
      needs: partner.address,
    });
    const remoteStart = (id: string): PollRequest => ({
      route: 'POST /v1/charge-points/{id}/remote-start',
      method: 'POST',
      path: `/v1/charge-points/${id}/remote-start`,
      headers: auth,
      body: { id_tag: 'POLLER' },
      needs: `charge-point/${id}`,
    });
    const requests = (): PollRequest[] => {
      const cp = pick(identities);
      const partner = pick(partners);
      return [
        { route: 'GET /healthz', method: 'GET', path: '/healthz' },
        { route: 'GET /v1/charge-points', method: 'GET', path: '/v1/charge-points?limit=50', headers: auth },
        { route: 'GET /v1/sessions', method: 'GET', path: '/v1/sessions?limit=20', headers: auth },
        { route: 'GET /v1/charge-points/{id}', method: 'GET', path: `/v1/charge-points/${cp.id}`, headers: auth },
        remoteStart(cp.id),
        partnerAsk(partner),
        {
          route: 'GET /ocpi/cpo/versions',
          method: 'GET',
          path: '/ocpi/cpo/versions',
          headers: { Authorization: `Token ${partner.token}` },
        },
      ];
    };
    const pauseMs = o.leaseTtlMs + PAUSE_PAST_TTL_MS;
    // a request that reached a web just before it was paused waits for SIGCONT: not a hang
    const boundMs = Math.max(HTTP_BOUND_MS, pauseMs + 5000);
    const p = new ApiPoller({ targets: () => c.httpTargets(), requests, boundMs, everyMs: 100, random });
    poller = p;
    const loadStarted = Date.now();
    p.start();

    const faults: FaultFigures[] = [];
    const timeline: Array<{ at: number; what: string }> = [{ at: Date.now(), what: 'load started' }];
    const mark = (what: string): number => {
      const at = Date.now();
      timeline.push({ at, what });
      return at;
    };
    const connects = (): number => chargers.reduce((n, ch) => n + ch.counters.connects, 0);
    /** asks that needed an actor of a victim while it was not yet re-owned */
    const victimWindows: VictimWindow[] = [];
    const redisOutages: Array<{ from: number; to: number }> = [];
    const recoveryBoundMs = o.leaseTtlMs * 2 + 6000;
    const allOwnedBy = (owners: Array<string | undefined> | undefined, alive: Set<string>): boolean =>
      !!owners && owners.every((x) => x !== undefined && alive.has(x));
    const liveIds = (): Set<string> => new Set(c.members.filter((m) => m.state === 'up').map((m) => m.node.processId));
    const reader = leases;

    /** victims back online: each got a CALLRESULT on a socket opened after `since` */
    const chargersBack = async (
      victims: FirmwareCharger[],
      since: number,
    ): Promise<{ back: number; ms: number | undefined }> => {
      const backAt = (ch: FirmwareCharger): number | undefined => ch.onlineAt.find((t) => t > since);
      await timeUntil(() => victims.every((ch) => backAt(ch) !== undefined), recoveryBoundMs);
      const times = victims.map(backAt).filter((t): t is number => t !== undefined);
      return {
        back: times.length,
        ms: times.length === victims.length ? Math.max(0, ...times.map((t) => t - since)) : undefined,
      };
    };

    const processFault = async (fault: 'kill -9' | 'SIGSTOP', victim: Member): Promise<void> => {
      const victimUrl = victim.node.url.replace(/^http/, 'ws');
      const victims = chargers.filter((ch) => ch.target === victimUrl);
      const shardOwners = (await reader.owners()) ?? [];
      const connectsBefore = connects();
      const since = mark(`${fault} ${victim.name}`);
      const window: VictimWindow = {
        from: since,
        to: Number.POSITIVE_INFINITY,
        processId: victim.node.processId,
        shardOwners,
        chargers: new Set(victims.map((v) => v.identity.id)),
      };
      victimWindows.push(window);
      let shardsReownedMs: number | undefined;
      let back: { back: number; ms: number | undefined };
      // asks aimed at the victim's actors around the fault: they must reach the new owner
      const burst = (): void =>
        p.burst([
          ...partners.filter((x) => shardOwners[shardOf(x.address, SHARDS)] === victim.node.processId).map(partnerAsk),
          ...victims.slice(0, 6).map((v) => remoteStart(v.identity.id)),
        ]);
      if (fault === 'kill -9') {
        // some in flight when the victim dies, some sent after
        burst();
        await c.kill(victim);
        burst();
        // the replacement starts while the cluster fails over, as a supervisor would restart it
        const [b, reowned] = await Promise.all([
          chargersBack(victims, since),
          timeUntil(async () => allOwnedBy(await reader.owners(), liveIds()), recoveryBoundMs),
          c.add('web'),
        ]);
        back = b;
        shardsReownedMs = reowned;
      } else {
        burst();
        c.pause(victim);
        burst();
        // only while it is paused: after SIGCONT it may rightly take shards back
        const reowned = timeUntil(async () => allOwnedBy(await reader.owners(), liveIds()), pauseMs);
        const b = chargersBack(victims, since);
        await sleep(pauseMs);
        mark(`SIGCONT ${victim.name}`);
        c.resume(victim);
        shardsReownedMs = await reowned;
        back = await b;
      }
      window.to = since + Math.max(shardsReownedMs ?? recoveryBoundMs, back.ms ?? recoveryBoundMs);
      faults.push({
        fault: `${fault} ${victim.name}`,
        victims: victims.length,
        back: back.back,
        chargersBackMs: back.ms,
        shardsReownedMs,
        reconnects: connects() - connectsBefore,
      });
      o.log(
        `${fault} ${victim.name}: ${back.back}/${victims.length} chargers back in ${String(back.ms)} ms; shards re-owned in ${String(shardsReownedMs)} ms`,
      );
    };

    const redisFault = async (): Promise<void> => {
      const connectsBefore = connects();
      const from = mark('redis stopped');
      await redis.stop();
      await sleep(o.redisDownMs);
      await redis.start();
      const restarted = mark('redis started');
      const outage = { from, to: Number.POSITIVE_INFINITY };
      redisOutages.push(outage);
      const [back, reowned] = await Promise.all([
        timeUntil(() => chargers.every((ch) => ch.lastAckAt > restarted), recoveryBoundMs),
        timeUntil(async () => allOwnedBy(await reader.owners(), liveIds()), recoveryBoundMs),
      ]);
      // degraded answers are fair until the cluster owns its shards again
      outage.to = restarted + (reowned ?? recoveryBoundMs) + 1000;
      const backCount = chargers.filter((ch) => ch.lastAckAt > restarted).length;
      faults.push({
        fault: `redis restart (${o.redisDownMs} ms down)`,
        victims: chargers.length,
        back: backCount,
        chargersBackMs: back,
        shardsReownedMs: reowned,
        reconnects: connects() - connectsBefore,
      });
      o.log(
        `redis restart: ${backCount}/${chargers.length} chargers answered again in ${String(back)} ms; shards re-owned in ${String(reowned)} ms`,
      );
    };

    let rounds = 0;
    do {
      await sleep(o.warmupMs);
      const [a, b] = c.webs();
      if (!a || !b) throw new Error('fewer than two web processes up');
      await processFault('kill -9', rounds % 2 === 0 ? a : b);
      await sleep(1000);
      // the survivor of the kill, which now holds most chargers
      const survivor = c.webs().find((m) => m === (rounds % 2 === 0 ? b : a));
      if (survivor) await processFault('SIGSTOP', survivor);
      await sleep(1000);
      await redisFault();
      rounds += 1;
    } while (o.another(rounds));

    // the end of the run: half the chargers stop their transaction, half leave it open
    mark('chargers finishing');
    chargers.forEach((ch, i) => ch.finish(i % 2 === 0));
    await timeUntil(() => chargers.every((ch) => ch.drained), 30_000);
    const loadMs = Date.now() - loadStarted;
    await p.stop();

    const ledger = emptyLedgerCheck();
    const base = c.httpTargets()[0] ?? first;
    for (const ch of chargers) {
      const res = await api<SessionView[]>(
        base,
        'GET',
        `/v1/sessions?charge_point_id=${encodeURIComponent(ch.identity.id)}&limit=1000`,
      );
      if (res.status !== 200) throw new Error(`GET /v1/sessions answered ${res.status}`);
      checkLedger(ch, res.body, ledger);
    }
    let onlineAtEnd = 0;
    await timeUntil(async () => {
      const res = await api<unknown[]>(base, 'GET', '/v1/charge-points?online=true&limit=1000');
      onlineAtEnd = res.status === 200 ? res.body.length : 0;
      return onlineAtEnd === chargers.length;
    }, 10_000);

    const http = summariseHttp(p.records, redisOutages, victimWindows, timeline);
    const counters: ChaosReport['chargerCounters'] = { connects: 0, refused: {}, callErrors: {}, callTimeouts: 0 };
    for (const ch of chargers) {
      counters.connects += ch.counters.connects;
      counters.callTimeouts += ch.counters.callTimeouts;
      for (const [k, v] of Object.entries(ch.counters.refused)) counters.refused[k] = (counters.refused[k] ?? 0) + v;
      for (const [k, v] of Object.entries(ch.counters.callErrors))
        counters.callErrors[k] = (counters.callErrors[k] ?? 0) + v;
    }
    await Promise.all(chargers.map((ch) => ch.close()));
    const crashes = [...c.crashes];
    const exitCodes = await c.stopAll();
    return {
      seed: o.seed,
      chargers: chargers.length,
      rounds,
      loadMs,
      faults,
      crashes,
      exitCodes,
      http,
      ledger,
      notDrained: chargers.filter((ch) => !ch.drained).map((ch) => `${ch.identity.id} (${ch.queued} queued)`),
      onlineAtEnd,
      chargerCounters: counters,
    };
  } finally {
    await poller?.stop();
    await Promise.all(chargers.map((ch) => ch.close()));
    await cluster?.stopAll();
    leases?.close();
    await redis.stop();
    await env?.cleanup();
  }
}
