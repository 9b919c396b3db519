import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchFleet, type FloodTotals } from './bench-fleet.js';
import { log, machineInfo } from './console.js';
import { memoryAfterGc, type MemorySample } from './inspector.js';
import type { ChargerSpec } from './protocol.js';
import { cpuSecondsOf, register, startEmbeddedServer, startScriptServer, stopChild, type Target } from './servers.js';
import { quantile } from './stats.js';
import { markdownReport, ratiosOf, type RunFigures, type ServerFigures } from './compare-report.js';

/**
 * The comparison of issue 9's benchmark: the same OCPP 1.6 workloads from the same generator
 * processes against the platform, an ocpp-rpc strict server with trivial handlers and a bare
 * `ws` server, each in its own child process, one after the other; ratios from the same run.
 */
export type ServerKind = 'platform' | 'ocpp-rpc' | 'bare-ws';
export type Workload = 'boot-storm' | 'meter-values' | 'heartbeat' | 'memory' | 'status-notification';

export interface CompareOptions {
  servers: ServerKind[];
  workloads: Set<Workload>;
  /** chargers connected during the MeterValues and Heartbeat floods */
  chargers: number;
  /** chargers of the boot storm (and of the memory figure) */
  bootChargers: number;
  inFlight: number;
  floodSeconds: number;
  generators: number;
  maxConnecting: number;
  runs: number;
  /** platform URLs to use instead of starting one (no CPU or memory figures then) */
  targets: string[];
  apiKey: string;
  serverNodeArgs: string[];
  /** bound of one boot or connect step */
  stepTimeoutS: number;
  out: string | undefined;
}

async function startServer(kind: ServerKind, o: CompareOptions, dir: string): Promise<Target[]> {
  if (kind === 'bare-ws') return [await startScriptServer('bare-server.js')];
  if (kind === 'ocpp-rpc') return [await startScriptServer('rpc-server.js')];
  if (o.targets.length === 0) return [await startEmbeddedServer(dir, o.apiKey, o.serverNodeArgs)];
  return o.targets.map((url) => ({
    url: url.replace(/\/+$/, ''),
    pid: undefined,
    child: undefined,
    inspectPort: undefined,
  }));
}

/** Chargers for the baselines, which accept any identity: one URL per charger, no registration. */
function syntheticSpecs(target: Target, prefix: string, count: number): ChargerSpec[] {
  const ws = target.url.replace(/^http/, 'ws');
  return Array.from({ length: count }, (_, i) => ({
    id: `${prefix}-${i}`,
    password: 'load-test',
    protocol: 'ocpp1.6',
    url: `${ws}/ocpp/${prefix}-${i}`,
    transacting: false,
  }));
}

/** The floods, in the order they run, and where their figures go. */
const FLOODS = [
  { action: 'MeterValues', workload: 'meter-values', figure: 'meterValues' },
  { action: 'Heartbeat', workload: 'heartbeat', figure: 'heartbeat' },
  // connector 1 Unavailable and Available by turns: a state write per message
  { action: 'StatusNotification', workload: 'status-notification', figure: 'statusNotification' },
] as const;

/** The chargers of the boot storm and of the floods: disjoint, so that no step reconnects an identity. */
async function chargersFor(kind: ServerKind, targets: Target[], o: CompareOptions): Promise<ChargerSpec[][]> {
  const boot = o.workloads.has('boot-storm') || o.workloads.has('memory') ? o.bootChargers : 0;
  const flood = FLOODS.some((f) => o.workloads.has(f.workload)) ? o.chargers : 0;
  if (kind !== 'platform') {
    const target = targets[0]!;
    return [syntheticSpecs(target, 'BOOT', boot), syntheticSpecs(target, 'FLOOD', flood)];
  }
  const specs = await register(targets, {
    count: boot + flood,
    apiKey: o.apiKey,
    protocolOf: () => 'ocpp1.6',
    transactingOf: () => false,
  });
  return [specs.slice(0, boot), specs.slice(boot)];
}

async function cpuOf(targets: Target[]): Promise<number | undefined> {
  const pid = targets.length === 1 ? targets[0]?.pid : undefined;
  return pid ? cpuSecondsOf(pid) : undefined;
}

async function settled(targets: Target[]): Promise<MemorySample | undefined> {
  const port = targets.length === 1 ? targets[0]?.inspectPort : undefined;
  return port ? memoryAfterGc(port) : undefined;
}

function cpuDelta(before: number | undefined, after: number | undefined): number | undefined {
  return before === undefined || after === undefined ? undefined : after - before;
}

/** Boot storm: every charger connects at once (up to max-connecting per generator), boots and reports status. */
async function bootStorm(
  label: string,
  targets: Target[],
  specs: ChargerSpec[],
  o: CompareOptions,
): Promise<Partial<ServerFigures>> {
  const idle = await settled(targets);
  const cpu0 = await cpuOf(targets);
  const started = Date.now();
  const fleet = new BenchFleet(specs, o.generators, o.maxConnecting, false);
  try {
    const ms = await fleet.waitReady(`${label} boot storm`, specs.length, started, started + o.stepTimeoutS * 1000);
    const cpu = cpuDelta(cpu0, await cpuOf(targets));
    log(
      `${label}: boot storm of ${specs.length}: ${ms === undefined ? 'not all ready' : `${(ms / 1000).toFixed(2)} s`}`,
    );
    const loaded = await settled(targets);
    const connected = Math.max(1, fleet.sum('connected'));
    return {
      bootStormSeconds: ms === undefined ? undefined : ms / 1000,
      bootStormReady: fleet.sum('ready'),
      bootStormCpuMsPerCharger: cpu === undefined ? undefined : (cpu * 1000) / specs.length,
      bytesPerConnection: idle && loaded ? (loaded.rss - idle.rss) / connected : undefined,
      heapBytesPerConnection: idle && loaded ? (loaded.heapUsed - idle.heapUsed) / connected : undefined,
      bootStormErrors: fleet.sum('errors'),
      lastError: fleet.lastError(),
    };
  } finally {
    await fleet.stop();
  }
}

function floodFigures(t: FloodTotals, cpu: number | undefined): ServerFigures['meterValues'] {
  return {
    messagesPerSecond: t.seconds > 0 ? t.messages / t.seconds : 0,
    p50Ms: quantile(t.histogram, 0.5),
    p99Ms: quantile(t.histogram, 0.99),
    cpuMsPerMessage: cpu === undefined || t.messages === 0 ? undefined : (cpu * 1000) / t.messages,
    messages: t.messages,
    errors: t.errors,
    lastError: t.lastError,
  };
}

/** The floods: chargers connect, boot and (for MeterValues) open a transaction; then each action back to back. */
async function floods(
  label: string,
  targets: Target[],
  specs: ChargerSpec[],
  o: CompareOptions,
): Promise<Partial<ServerFigures>> {
  const withMeter = o.workloads.has('meter-values');
  const fleet = new BenchFleet(specs, o.generators, o.maxConnecting, withMeter);
  const figures: Partial<ServerFigures> = {};
  try {
    const started = Date.now();
    const ready = await fleet.waitReady(`${label} connect`, specs.length, started, started + o.stepTimeoutS * 1000);
    if (ready === undefined)
      throw new Error(
        `${label}: only ${fleet.sum('ready')} of ${specs.length} chargers ready (${fleet.lastError() ?? 'no error'})`,
      );
    for (const { action, workload, figure } of FLOODS) {
      if (!o.workloads.has(workload)) continue;
      const cpu0 = await cpuOf(targets);
      const totals = await fleet.flood(action, o.inFlight, o.floodSeconds);
      const f = floodFigures(totals, cpuDelta(cpu0, await cpuOf(targets)));
      log(
        `${label}: ${action} ${f?.messagesPerSecond.toFixed(0)} msg/s, p50 ${f?.p50Ms.toFixed(1)} ms, p99 ${f?.p99Ms.toFixed(1)} ms, errors ${f?.errors}`,
      );
      figures[figure] = f;
    }
    return figures;
  } finally {
    await fleet.stop();
  }
}

async function measureServer(kind: ServerKind, o: CompareOptions, dir: string): Promise<ServerFigures> {
  const targets = await startServer(kind, o, dir);
  try {
    log(`${kind}: ${targets.map((t) => t.url).join(', ')}`);
    const [bootSpecs = [], floodSpecs = []] = await chargersFor(kind, targets, o);
    const boot = bootSpecs.length > 0 ? await bootStorm(kind, targets, bootSpecs, o) : {};
    const flood = floodSpecs.length > 0 ? await floods(kind, targets, floodSpecs, o) : {};
    return { server: kind, ...boot, ...flood };
  } finally {
    await Promise.all(targets.flatMap((t) => (t.child ? [stopChild(t.child)] : [])));
  }
}

export async function runCompare(o: CompareOptions): Promise<void> {
  const machine = machineInfo();
  const runs: RunFigures[] = [];
  for (let run = 1; run <= o.runs; run++) {
    const dir = mkdtempSync(join(tmpdir(), 'evp-compare-'));
    try {
      const servers: ServerFigures[] = [];
      for (const kind of o.servers) servers.push(await measureServer(kind, o, dir));
      runs.push({ run, servers, ratios: ratiosOf(servers) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const { workloads, ...rest } = o;
  const result = { machine, options: { ...rest, workloads: [...workloads] }, runs };
  if (o.out) writeFileSync(o.out, `${JSON.stringify(result, null, 2)}\n`);
  log(markdownReport(o, runs));
}
