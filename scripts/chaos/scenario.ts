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

interface Partner {
  id: string;
  token: string;
  address: string;
}

type Recovery = { back: number; ms: number | undefined };

/** the process a fault hits, the chargers on it, when it was hit, and asks aimed at its actors */
interface FaultTarget {
  victim: Member;
  victims: FirmwareCharger[];
  since: number;
  burst: () => void;
}

interface FaultOutcome {
  back: Recovery;
  shardsReownedMs: number | undefined;
}

/**
 * The chaos run: a private redis-server, a fresh PostgreSQL schema, two `web` processes and
 * one `worker`; firmware-like chargers run transactions while one web is killed (kill -9, then
 * restarted), the other is paused past the lease TTL (SIGSTOP/SIGCONT) and Redis is restarted.
 * Afterwards every acknowledged transaction message is looked up in /v1/sessions. One
 * implementation for the cluster test and for `scripts/chaos.ts`.
 */
export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const run = new ChaosRun(o, await startPrivateRedis());
  try {
    await run.start();
    await run.faultRounds();
    return await run.finish();
  } finally {
    await run.teardown();
  }
}

/** One chaos run's resources and records; `runChaos` drives it from start to teardown. */
class ChaosRun {
  private readonly random: () => number;
  private env: TestEnvironment | undefined;
  private leases: LeaseReader | undefined;
  private cluster: ChaosCluster | undefined;
  private poller: ApiPoller | undefined;
  private readonly chargers: FirmwareCharger[] = [];
  private readonly identities: ChargerIdentity[] = [];
  private readonly partners: Partner[] = [];
  private readonly faults: FaultFigures[] = [];
  private readonly timeline: Array<{ at: number; what: string }> = [];
  /** asks that needed an actor of a victim while it was not yet re-owned */
  private readonly victimWindows: VictimWindow[] = [];
  private readonly redisOutages: Array<{ from: number; to: number }> = [];
  private readonly auth = { Authorization: `Bearer ${API_KEY}` };
  private readonly pauseMs: number;
  private readonly recoveryBoundMs: number;
  private first = '';
  private rounds = 0;
  private loadStarted = 0;

  constructor(
    private readonly o: ChaosOptions,
    private readonly redis: PrivateRedis,
  ) {
    this.random = seededRandom(o.seed);
    this.pauseMs = o.leaseTtlMs + PAUSE_PAST_TTL_MS;
    this.recoveryBoundMs = o.leaseTtlMs * 2 + 6000;
  }

  private get c(): ChaosCluster {
    if (!this.cluster) throw new Error('the chaos cluster is not started');
    return this.cluster;
  }

  private get reader(): LeaseReader {
    if (!this.leases) throw new Error('the lease reader is not started');
    return this.leases;
  }

  private get p(): ApiPoller {
    if (!this.poller) throw new Error('the load is not started');
    return this.poller;
  }

  async start(): Promise<void> {
    await this.startCluster();
    await this.registerChargers();
    await this.onboardPartners();
    await this.startChargers();
    this.startLoad();
  }

  private async startCluster(): Promise<void> {
    const env = await clusterEnvironment({
      CSMS_API_KEY: API_KEY,
      REDIS_URL: this.redis.url,
      LEASE_TTL_MS: String(this.o.leaseTtlMs),
      ACTOR_SHARDS: String(SHARDS),
    });
    this.env = env;
    this.leases = new LeaseReader(this.redis.url, env.env.REDIS_PREFIX ?? '', SHARDS);
    const c = new ChaosCluster(env.env);
    this.cluster = c;
    await Promise.all([c.add('web'), c.add('web'), c.add('worker')]);
    const members = c.members.map((m) => `${m.name} ${m.node.url || `pid ${m.node.pid}`}`).join(', ');
    this.o.log(`cluster up: ${members}; private redis on ${this.redis.port}`);
    const [first] = c.httpTargets();
    if (first === undefined) throw new Error('no web process');
    this.first = first;
  }

  private async registerChargers(): Promise<void> {
    for (let i = 0; i < this.o.chargers; i++) {
      const protocol: OcppProtocol = i % 2 === 0 ? 'ocpp1.6' : 'ocpp2.0.1';
      const res = await api<{ id: string; password: string }>(this.first, 'POST', '/v1/charge-points', {
        id: `CHAOS-${this.o.seed}-${i}`,
        protocol,
      });
      if (res.status !== 201) throw new Error(`registering a charger answered ${res.status}`);
      this.identities.push({ id: res.body.id, password: res.body.password, protocol });
    }
  }

  /** a dozen partner actors, so that every process owns the shards of a few */
  private async onboardPartners(): Promise<void> {
    for (let i = 0; i < 12; i++) {
      const party = `C${String(i).padStart(2, '0')}`;
      const res = await api<{ id: string; token: string }>(this.first, 'POST', '/v1/partners', {
        country_code: 'DE',
        party_id: party,
        role: 'EMSP',
      });
      if (res.status !== 201) throw new Error(`onboarding a partner answered ${res.status}`);
      this.partners.push({ id: res.body.id, token: res.body.token, address: `partner/DE-${party}` });
    }
  }

  private async startChargers(): Promise<void> {
    const startWs = this.c.wsTargets();
    this.identities.forEach((identity, i) => {
      const charger = new FirmwareCharger(identity, {
        targets: () => this.c.wsTargets(),
        firstTarget: startWs[i % startWs.length] ?? '',
        callTimeoutMs: CALL_TIMEOUT_MS,
        meterEveryMs: 500,
        meterValuesPerTransaction: 6,
        random: this.random,
      });
      this.chargers.push(charger);
      charger.start();
    });
    await timeUntil(() => this.chargers.every((ch) => ch.onlineAt.length > 0), 20_000);
    const booted = this.chargers.filter((ch) => ch.onlineAt.length > 0).length;
    this.o.log(`${booted}/${this.chargers.length} chargers booted`);
  }

  private startLoad(): void {
    // a request that reached a web just before it was paused waits for SIGCONT: not a hang
    const boundMs = Math.max(HTTP_BOUND_MS, this.pauseMs + 5000);
    this.poller = new ApiPoller({
      targets: () => this.c.httpTargets(),
      requests: () => this.requests(),
      boundMs,
      everyMs: 100,
      random: this.random,
    });
    this.loadStarted = Date.now();
    this.poller.start();
    this.timeline.push({ at: Date.now(), what: 'load started' });
  }

  /** an element of a list that is never empty here */
  private pick<T>(list: T[]): T {
    const item = list[Math.floor(this.random() * list.length)];
    if (item === undefined) throw new Error('picked from an empty list');
    return item;
  }

  private partnerAsk(partner: Partner): PollRequest {
    const path = `/v1/partners/${partner.id}`;
    return { route: 'GET /v1/partners/{id}', method: 'GET', path, headers: this.auth, needs: partner.address };
  }

  private remoteStart(id: string): PollRequest {
    return {
      route: 'POST /v1/charge-points/{id}/remote-start',
      method: 'POST',
      path: `/v1/charge-points/${id}/remote-start`,
      headers: this.auth,
      body: { id_tag: 'POLLER' },
      needs: `charge-point/${id}`,
    };
  }

  private requests(): PollRequest[] {
    const cp = this.pick(this.identities);
    const partner = this.pick(this.partners);
    const auth = this.auth;
    return [
      { route: 'GET /healthz', method: 'GET', path: '/healthz' },
      { route: 'GET /v1/charge-points', method: 'GET', path: '/v1/charge-points?limit=50', headers: auth },
      { route: 'GET /v1/sessions', method: 'GET', path: '/v1/sessions?limit=20', headers: auth },
      { route: 'GET /v1/charge-points/{id}', method: 'GET', path: `/v1/charge-points/${cp.id}`, headers: auth },
      this.remoteStart(cp.id),
      this.partnerAsk(partner),
      {
        route: 'GET /ocpi/cpo/versions',
        method: 'GET',
        path: '/ocpi/cpo/versions',
        headers: { Authorization: `Token ${partner.token}` },
      },
    ];
  }

  private mark(what: string): number {
    const at = Date.now();
    this.timeline.push({ at, what });
    return at;
  }

  private connects(): number {
    return this.chargers.reduce((n, ch) => n + ch.counters.connects, 0);
  }

  /** every shard owned by a process that is up */
  private async allOwnedByLive(): Promise<boolean> {
    const owners = await this.reader.owners();
    const alive = new Set(this.c.members.filter((m) => m.state === 'up').map((m) => m.node.processId));
    return !!owners && owners.every((x) => x !== undefined && alive.has(x));
  }

  /** victims back online: each got a CALLRESULT on a socket opened after `since` */
  private async chargersBack(victims: FirmwareCharger[], since: number): Promise<Recovery> {
    const backAt = (ch: FirmwareCharger): number | undefined => ch.onlineAt.find((t) => t > since);
    await timeUntil(() => victims.every((ch) => backAt(ch) !== undefined), this.recoveryBoundMs);
    const times = victims.map(backAt).filter((t): t is number => t !== undefined);
    return {
      back: times.length,
      ms: times.length === victims.length ? Math.max(0, ...times.map((t) => t - since)) : undefined,
    };
  }

  async faultRounds(): Promise<void> {
    do {
      await sleep(this.o.warmupMs);
      const [a, b] = this.c.webs();
      if (!a || !b) throw new Error('fewer than two web processes up');
      await this.processFault('kill -9', this.rounds % 2 === 0 ? a : b);
      await sleep(1000);
      // the survivor of the kill, which now holds most chargers
      const survivor = this.c.webs().find((m) => m === (this.rounds % 2 === 0 ? b : a));
      if (survivor) await this.processFault('SIGSTOP', survivor);
      await sleep(1000);
      await this.redisFault();
      this.rounds += 1;
    } while (this.o.another(this.rounds));
  }

  private async processFault(fault: 'kill -9' | 'SIGSTOP', victim: Member): Promise<void> {
    const victimUrl = victim.node.url.replace(/^http/, 'ws');
    const victims = this.chargers.filter((ch) => ch.target === victimUrl);
    const shardOwners = (await this.reader.owners()) ?? [];
    const connectsBefore = this.connects();
    const since = this.mark(`${fault} ${victim.name}`);
    const window: VictimWindow = {
      from: since,
      to: Number.POSITIVE_INFINITY,
      processId: victim.node.processId,
      shardOwners,
      chargers: new Set(victims.map((v) => v.identity.id)),
    };
    this.victimWindows.push(window);
    // asks aimed at the victim's actors around the fault: they must reach the new owner
    const burst = (): void =>
      this.p.burst([
        ...this.partners
          .filter((x) => shardOwners[shardOf(x.address, SHARDS)] === victim.node.processId)
          .map((x) => this.partnerAsk(x)),
        ...victims.slice(0, 6).map((v) => this.remoteStart(v.identity.id)),
      ]);
    const { back, shardsReownedMs } =
      fault === 'kill -9'
        ? await this.killAndReplace({ victim, victims, since, burst })
        : await this.pauseAndResume({ victim, victims, since, burst });
    window.to = since + Math.max(shardsReownedMs ?? this.recoveryBoundMs, back.ms ?? this.recoveryBoundMs);
    this.faults.push({
      fault: `${fault} ${victim.name}`,
      victims: victims.length,
      back: back.back,
      chargersBackMs: back.ms,
      shardsReownedMs,
      reconnects: this.connects() - connectsBefore,
    });
    this.o.log(
      `${fault} ${victim.name}: ${back.back}/${victims.length} chargers back in ${String(back.ms)} ms; shards re-owned in ${String(shardsReownedMs)} ms`,
    );
  }

  /** kill -9; the replacement starts while the cluster fails over, as a supervisor would restart it */
  private async killAndReplace({ victim, victims, since, burst }: FaultTarget): Promise<FaultOutcome> {
    // some in flight when the victim dies, some sent after
    burst();
    await this.c.kill(victim);
    burst();
    const [back, shardsReownedMs] = await Promise.all([
      this.chargersBack(victims, since),
      timeUntil(() => this.allOwnedByLive(), this.recoveryBoundMs),
      this.c.add('web'),
    ]);
    return { back, shardsReownedMs };
  }

  /** SIGSTOP past the lease TTL, then SIGCONT */
  private async pauseAndResume({ victim, victims, since, burst }: FaultTarget): Promise<FaultOutcome> {
    burst();
    this.c.pause(victim);
    burst();
    // only while it is paused: after SIGCONT it may rightly take shards back
    const reowned = timeUntil(() => this.allOwnedByLive(), this.pauseMs);
    const back = this.chargersBack(victims, since);
    await sleep(this.pauseMs);
    this.mark(`SIGCONT ${victim.name}`);
    this.c.resume(victim);
    const shardsReownedMs = await reowned;
    return { back: await back, shardsReownedMs };
  }

  private async redisFault(): Promise<void> {
    const connectsBefore = this.connects();
    const from = this.mark('redis stopped');
    await this.redis.stop();
    await sleep(this.o.redisDownMs);
    await this.redis.start();
    const restarted = this.mark('redis started');
    const outage = { from, to: Number.POSITIVE_INFINITY };
    this.redisOutages.push(outage);
    const [back, reowned] = await Promise.all([
      timeUntil(() => this.chargers.every((ch) => ch.lastAckAt > restarted), this.recoveryBoundMs),
      timeUntil(() => this.allOwnedByLive(), this.recoveryBoundMs),
    ]);
    // degraded answers are fair until the cluster owns its shards again
    outage.to = restarted + (reowned ?? this.recoveryBoundMs) + 1000;
    const backCount = this.chargers.filter((ch) => ch.lastAckAt > restarted).length;
    this.faults.push({
      fault: `redis restart (${this.o.redisDownMs} ms down)`,
      victims: this.chargers.length,
      back: backCount,
      chargersBackMs: back,
      shardsReownedMs: reowned,
      reconnects: this.connects() - connectsBefore,
    });
    this.o.log(
      `redis restart: ${backCount}/${this.chargers.length} chargers answered again in ${String(back)} ms; shards re-owned in ${String(reowned)} ms`,
    );
  }

  /** half the chargers stop their transaction, half leave it open; then everything is checked */
  async finish(): Promise<ChaosReport> {
    this.mark('chargers finishing');
    this.chargers.forEach((ch, i) => ch.finish(i % 2 === 0));
    await timeUntil(() => this.chargers.every((ch) => ch.drained), 30_000);
    const loadMs = Date.now() - this.loadStarted;
    await this.p.stop();
    const base = this.c.httpTargets()[0] ?? this.first;
    const ledger = await this.checkLedgers(base);
    const onlineAtEnd = await this.onlineAtEnd(base);
    const http = summariseHttp(this.p.records, this.redisOutages, this.victimWindows, this.timeline);
    const chargerCounters = this.chargerCounters();
    await Promise.all(this.chargers.map((ch) => ch.close()));
    const crashes = [...this.c.crashes];
    const exitCodes = await this.c.stopAll();
    return {
      seed: this.o.seed,
      chargers: this.chargers.length,
      rounds: this.rounds,
      loadMs,
      faults: this.faults,
      crashes,
      exitCodes,
      http,
      ledger,
      notDrained: this.chargers.filter((ch) => !ch.drained).map((ch) => `${ch.identity.id} (${ch.queued} queued)`),
      onlineAtEnd,
      chargerCounters,
    };
  }

  /** every acknowledged transaction message of every charger, looked up in /v1/sessions */
  private async checkLedgers(base: string): Promise<ChaosReport['ledger']> {
    const ledger = emptyLedgerCheck();
    for (const ch of this.chargers) {
      const path = `/v1/sessions?charge_point_id=${encodeURIComponent(ch.identity.id)}&limit=1000`;
      const res = await api<SessionView[]>(base, 'GET', path);
      if (res.status !== 200) throw new Error(`GET /v1/sessions answered ${res.status}`);
      checkLedger(ch, res.body, ledger);
    }
    return ledger;
  }

  private async onlineAtEnd(base: string): Promise<number> {
    let online = 0;
    await timeUntil(async () => {
      const res = await api<unknown[]>(base, 'GET', '/v1/charge-points?online=true&limit=1000');
      online = res.status === 200 ? res.body.length : 0;
      return online === this.chargers.length;
    }, 10_000);
    return online;
  }

  private chargerCounters(): ChaosReport['chargerCounters'] {
    const counters: ChaosReport['chargerCounters'] = { connects: 0, refused: {}, callErrors: {}, callTimeouts: 0 };
    const add = (into: Record<string, number>, from: Record<string, number>): void => {
      for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
    };
    for (const ch of this.chargers) {
      counters.connects += ch.counters.connects;
      counters.callTimeouts += ch.counters.callTimeouts;
      add(counters.refused, ch.counters.refused);
      add(counters.callErrors, ch.counters.callErrors);
    }
    return counters;
  }

  async teardown(): Promise<void> {
    await this.poller?.stop();
    await Promise.all(this.chargers.map((ch) => ch.close()));
    await this.cluster?.stopAll();
    this.leases?.close();
    await this.redis.stop();
    await this.env?.cleanup();
  }
}
