import { shardOf } from '../../src/runtime/address.js';
import type { PollRecord } from './api-poller.js';
import type { LedgerCheck } from './verify.js';

export interface FaultFigures {
  fault: string;
  /** chargers whose socket was on the victim (all of them for Redis) */
  victims: number;
  /** victims that answered again on a new socket (Redis: that got a CALLRESULT after the restart) */
  back: number;
  /** from the fault (Redis: from its restart) until the last victim was back */
  chargersBackMs: number | undefined;
  /** from the fault (Redis: from its restart) until every shard had a live owner again */
  shardsReownedMs: number | undefined;
  /** charger connections opened while the fault lasted and the cluster recovered */
  reconnects: number;
}

/** While a killed or paused process's actors were not yet re-owned: asks to them must be re-routed. */
export interface VictimWindow {
  from: number;
  to: number;
  processId: string;
  /** the process id holding each shard when the fault began */
  shardOwners: Array<string | undefined>;
  /** charge points whose socket was on the victim */
  chargers: Set<string>;
}

export interface ChaosReport {
  seed: number;
  chargers: number;
  rounds: number;
  loadMs: number;
  faults: FaultFigures[];
  crashes: string[];
  exitCodes: string[];
  http: {
    total: number;
    byOutcome: Record<string, number>;
    /** 5xx answers outside a Redis outage, and any 5xx other than 503 inside one */
    serverErrors: string[];
    /** 503 answered while Redis was down (degraded mode) */
    degraded503: number;
    /**
     * 503 charge_point_unreachable for a charger whose socket was on the killed or paused process
     * (the operation may have reached it: docs/CSMS.md "Cluster behaviour")
     */
    unreachable503: number;
    hangs: string[];
    slowestMs: number;
    /** asks to an actor whose owner was killed or paused, sent before it was re-owned, answered 2xx */
    reRouted: number;
  };
  ledger: LedgerCheck;
  /** chargers that still had unacknowledged messages when the drain bound ran out */
  notDrained: string[];
  onlineAtEnd: number;
  chargerCounters: {
    connects: number;
    refused: Record<string, number>;
    callErrors: Record<string, number>;
    callTimeouts: number;
  };
}

/** The poller's outcomes against the run's timeline: what was a fault, what was fair. */
export function summariseHttp(
  records: PollRecord[],
  redisOutages: Array<{ from: number; to: number }>,
  victimWindows: VictimWindow[],
  timeline: Array<{ at: number; what: string }>,
): ChaosReport['http'] {
  /** "1.2 s after redis stopped": when a request was sent, in the run's own terms */
  const when = (t: number): string => {
    const last = timeline.filter((e) => e.at <= t).at(-1);
    return last ? `${((t - last.at) / 1000).toFixed(1)} s after ${last.what}` : 'before the load';
  };
  const byOutcome: Record<string, number> = {};
  const serverErrors: string[] = [];
  const hangs: string[] = [];
  let degraded503 = 0;
  let unreachable503 = 0;
  let reRouted = 0;
  let slowestMs = 0;
  for (const r of records) {
    const key = String(r.outcome);
    byOutcome[key] = (byOutcome[key] ?? 0) + 1;
    slowestMs = Math.max(slowestMs, r.ms);
    const at = `${r.route} on ${r.target}, sent ${when(r.startedAt)}, answered after ${r.ms} ms`;
    if (r.outcome === 'timeout') hangs.push(at);
    if (typeof r.outcome === 'number' && r.outcome >= 500) {
      const inOutage = redisOutages.some((w) => r.startedAt + r.ms >= w.from && r.startedAt <= w.to);
      const onVictim = (needs: string | undefined) =>
        needs !== undefined &&
        victimWindows.some(
          (w) =>
            r.startedAt + r.ms >= w.from && r.startedAt <= w.to && w.chargers.has(needs.replace(/^charge-point\//, '')),
        );
      if (r.outcome === 503 && inOutage) degraded503 += 1;
      else if (r.outcome === 503 && r.code === 'charge_point_unreachable' && onVictim(r.needs)) unreachable503 += 1;
      else serverErrors.push(`${r.outcome} ${at}`);
    }
    if (typeof r.outcome === 'number' && r.outcome < 300 && r.needs) {
      const needs = r.needs;
      const owned = victimWindows.some(
        (w) =>
          r.startedAt >= w.from &&
          r.startedAt <= w.to &&
          (w.chargers.has(needs.replace(/^charge-point\//, '')) ||
            w.shardOwners[shardOf(needs, w.shardOwners.length || 1)] === w.processId),
      );
      if (owned) reRouted += 1;
    }
  }
  return { total: records.length, byOutcome, serverErrors, degraded503, unreachable503, hangs, slowestMs, reRouted };
}

/** What the run must show: an empty list is a pass. */
export function violations(r: ChaosReport): string[] {
  return [
    ...r.crashes.map((x) => `crash: ${x}`),
    ...r.http.serverErrors.map((x) => `5xx: ${x}`),
    ...r.http.hangs.map((x) => `hang: ${x}`),
    ...r.ledger.lost.map((x) => `lost: ${x}`),
    ...r.ledger.duplicates.map((x) => `duplicate: ${x}`),
    ...r.notDrained.map((x) => `wedged charger: ${x}`),
    ...r.faults
      .filter((f) => f.back < f.victims)
      .map((f) => `not back: ${f.fault}: ${f.back}/${f.victims} chargers answered again within the bound`),
    ...(r.onlineAtEnd === r.chargers ? [] : [`offline: ${r.onlineAtEnd}/${r.chargers} chargers online at the end`]),
    ...r.faults
      .filter((f) => f.fault.startsWith('redis') && f.reconnects > f.victims)
      .map((f) => `reconnect loop: ${f.fault}: ${f.reconnects} reconnects of ${f.victims} chargers`),
  ];
}

/** The figures, one per line, as the test and the script print them. */
export function formatReport(r: ChaosReport): string[] {
  const ms = (v: number | undefined): string =>
    v === undefined ? 'not within the bound' : `${(v / 1000).toFixed(1)} s`;
  const entries = (rec: Record<string, number>): string =>
    Object.entries(rec)
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ') || 'none';
  const l = r.ledger;
  return [
    `chaos run: seed ${r.seed}, ${r.chargers} chargers (half ocpp1.6, half ocpp2.0.1), ${r.rounds} round(s), ${(r.loadMs / 1000).toFixed(0)} s of load`,
    ...r.faults.map(
      (f) =>
        `  ${f.fault}: chargers back ${f.back}/${f.victims} in ${ms(f.chargersBackMs)} (${f.reconnects} reconnects); shards re-owned in ${ms(f.shardsReownedMs)}`,
    ),
    `  crashes: ${r.crashes.length}; exit codes at the final SIGTERM: ${r.exitCodes.join(', ')}`,
    `  HTTP poller: ${r.http.total} requests (${entries(r.http.byOutcome)}); 5xx outside degraded mode: ${r.http.serverErrors.length}; 503 while Redis was down: ${r.http.degraded503}; 503 unreachable for a charger on the victim: ${r.http.unreachable503}; hangs: ${r.http.hangs.length}; slowest ${r.http.slowestMs} ms`,
    `  asks re-routed (to an actor of a killed or paused owner, answered 2xx): ${r.http.reRouted}`,
    `  transactions acknowledged/found: starts ${l.startsAcked}/${l.startsFound}, stops ${l.stopsAcked}/${l.stopsFound}; meter values ${l.metersAcked}/${l.metersFound}; lost ${l.lost.length}; duplicate sessions ${l.duplicates.length}`,
    `  chargers: ${r.chargerCounters.connects} connects, refused upgrades (${entries(r.chargerCounters.refused)}), CALLERRORs (${entries(r.chargerCounters.callErrors)}), call timeouts ${r.chargerCounters.callTimeouts}; not drained ${r.notDrained.length}; online at the end ${r.onlineAtEnd}/${r.chargers}`,
  ];
}
