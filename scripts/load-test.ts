import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChargerSpec, GeneratorPlan, GeneratorReport, ToGenerator } from './load-test/protocol.js';
import { memoryAfterGc, type MemorySample } from './load-test/inspector.js';
import { emptyHistogram, merge, quantile, rssOf } from './load-test/stats.js';
import { log, machineInfo, progress } from './load-test/console.js';
import { runCompare, type CompareOptions, type ServerKind, type Workload } from './load-test/compare.js';
import {
  register,
  startEmbeddedServer,
  startScriptServer,
  stopChild,
  removeLeftovers,
  unregister,
  type Target,
} from './load-test/servers.js';
import { summaryLines, verdicts, type SummaryInput } from './load-test/summary.js';
import { stopGenerators } from './load-test/bench-fleet.js';
import { commandLine, numberOption, usageError } from './cli.js';

/**
 * Load test of the OCPP endpoint: N simulated chargers (a mix of 1.6 and 2.0.1) register over
 * /v1, connect with their keys, boot, report status, heartbeat, and some run transactions with
 * meter values. Spread over several generator processes and one or more target web processes.
 * Bounded: it stops after the ramp plus --hold seconds, or --max-seconds, whichever is first.
 *
 *   node dist/scripts/load-test.js --chargers 10000 --generators 2 --ramp 0 --hold 30 --baseline
 *
 * Without --target it starts one embedded platform process itself (SQLite in a temp folder)
 * and reads its memory from /proc; --baseline also measures a bare `ws` server holding the
 * same number of idle sockets, in the same run, for the memory ratio.
 *
 * --compare runs issue 9's benchmark instead (load-test/compare.ts): the same OCPP 1.6 workloads
 * against the platform, an ocpp-rpc strict server and a bare ws server, with ratios:
 *
 *   node dist/scripts/load-test.js --compare --chargers 2000 --in-flight 64 --boot-chargers 10000 --runs 3
 */
const { values: args } = commandLine({
  summary:
    'Load test of the OCPP endpoint (simulated chargers against the platform), or with --compare the\n' +
    'hot-path comparison: the platform beside an ocpp-rpc strict server and a bare ws server.',
  options: {
    chargers: { type: 'string', help: 'simulated chargers (default 1000; 200 with --compare)' },
    'share-201': { type: 'string', default: '0.5', value: 'SHARE', help: 'share of chargers speaking OCPP 2.0.1' },
    'share-transacting': {
      type: 'string',
      default: '0.05',
      value: 'SHARE',
      help: 'share of chargers running transactions with meter values',
    },
    target: { type: 'string', multiple: true, value: 'URL', help: 'a running platform to load (default: start one)' },
    'api-key': {
      type: 'string',
      value: 'KEY',
      help: 'operator key of the target (default: CSMS_API_KEY, else load-test-operator-key)',
    },
    generators: { type: 'string', default: '2', help: 'load generator processes' },
    ramp: { type: 'string', default: '20', value: 'S', help: 'seconds to connect everyone; 0 = at once (boot storm)' },
    'max-connecting': { type: 'string', default: '100', help: 'connections being opened at once, per generator' },
    hold: { type: 'string', default: '30', value: 'S', help: 'seconds to hold the load after the ramp' },
    'max-seconds': { type: 'string', default: '600', value: 'S', help: 'hard bound of the whole run' },
    heartbeat: { type: 'string', default: '30', value: 'S', help: 'heartbeat interval of each charger' },
    'meter-every': { type: 'string', default: '10', value: 'S', help: 'seconds between meter values in a transaction' },
    'transaction-seconds': { type: 'string', default: '30', value: 'S', help: 'length of each transaction' },
    baseline: { type: 'boolean', default: false, help: 'also measure a bare ws server holding as many sockets' },
    out: { type: 'string', value: 'FILE', help: 'write the result as JSON to FILE' },
    json: { type: 'boolean', default: false, help: 'print the result as JSON instead of the summary table' },
    'server-node-arg': {
      type: 'string',
      multiple: true,
      value: 'FLAG',
      help: 'node flag for the started servers, e.g. --server-node-arg=--cpu-prof',
    },
    compare: { type: 'boolean', default: false, help: 'run the comparison of docs/PERFORMANCE.md instead' },
    server: { type: 'string', multiple: true, value: 'NAME', help: 'with --compare: platform, ocpp-rpc or bare-ws' },
    workload: {
      type: 'string',
      multiple: true,
      value: 'NAME',
      help: 'with --compare: boot-storm, meter-values, heartbeat, memory or status-notification',
    },
    'boot-chargers': { type: 'string', default: '1000', help: 'with --compare: chargers of the boot storm' },
    'in-flight': { type: 'string', default: '64', help: 'with --compare: calls in flight during a flood' },
    'flood-seconds': { type: 'string', default: '10', value: 'S', help: 'with --compare: length of each flood' },
    runs: { type: 'string', default: '1', help: 'with --compare: rounds of every server and workload' },
    'step-timeout': { type: 'string', default: '300', value: 'S', help: 'with --compare: bound of each step' },
  },
  notes: 'Figures and how to read them: docs/PERFORMANCE.md.',
});

const N = numberOption('chargers', args.chargers ?? (args.compare ? '200' : '1000'), { min: 1, integer: true });
const GENERATORS = numberOption('generators', args.generators, { min: 1, max: 64, integer: true });
const RAMP_S = numberOption('ramp', args.ramp, { min: 0 });
const HOLD_S = numberOption('hold', args.hold, { min: 0 });
const MAX_S = numberOption('max-seconds', args['max-seconds'], { min: 1 });
// every number is checked here, before anything is started: a usage error exits at once
const MAX_CONNECTING = numberOption('max-connecting', args['max-connecting'], { min: 1, integer: true });
const HEARTBEAT_S = numberOption('heartbeat', args.heartbeat, { min: 1 });
const METER_EVERY_S = numberOption('meter-every', args['meter-every'], { min: 1 });
const TRANSACTION_S = numberOption('transaction-seconds', args['transaction-seconds'], { min: 0 });
const SHARE_201 = numberOption('share-201', args['share-201'], { min: 0, max: 1 });
const SHARE_TRANSACTING = numberOption('share-transacting', args['share-transacting'], { min: 0, max: 1 });
// read from the environment here, not as the option's default: --help would print it
const API_KEY = args['api-key'] ?? process.env.CSMS_API_KEY ?? 'load-test-operator-key';
const dist = import.meta.dirname;
const deadline = Date.now() + MAX_S * 1000;

/** Memory after a forced GC for processes started here; RSS from /metrics for external targets. */
async function settledMemory(target: Target): Promise<MemorySample | undefined> {
  return target.inspectPort ? memoryAfterGc(target.inspectPort) : undefined;
}

async function memoryOf(target: Target): Promise<number> {
  if (target.pid) return rssOf(target.pid);
  const text = await fetch(`${target.url}/metrics`).then((r) => r.text());
  const m = /^process_resident_memory_bytes\s+(\d+(\.\d+)?)/m.exec(text);
  return m?.[1] ? Number(m[1]) : 0;
}

/** A phase's totals: the generators' reports summed, with when every charger was ready and the rate held. */
interface Phase extends Omit<GeneratorReport, 'type'> {
  label: string;
  readyAtMs: number | undefined;
  messagesPerSecond: number;
}

type Counter = 'connected' | 'ready' | 'booted' | 'errors' | 'disconnects' | 'transactions' | 'refused' | 'retries';

/** The generator processes of one phase and the reports they send once a second. */
class GeneratorFleet {
  readonly histogram = emptyHistogram();
  messages = 0;
  holdMessages = 0;
  holdStartedAt = 0;
  private readonly gens: ChildProcess[] = [];
  private readonly latest = new Map<ChildProcess, GeneratorReport>();

  constructor(specs: ChargerSpec[], idle: boolean) {
    const rate = RAMP_S > 0 ? N / RAMP_S / GENERATORS : 0;
    for (let g = 0; g < GENERATORS; g++) {
      const child = fork(join(dist, 'load-test/generator.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      child.on('message', (r: GeneratorReport) => {
        this.latest.set(child, r);
        merge(this.histogram, r.histogram);
        this.messages += r.messages;
        if (this.holdStartedAt) this.holdMessages += r.messages;
      });
      const plan: GeneratorPlan = {
        type: 'plan',
        chargers: specs.filter((_, i) => i % GENERATORS === g),
        connectRate: rate,
        maxConnecting: MAX_CONNECTING,
        heartbeatS: HEARTBEAT_S,
        meterEveryS: METER_EVERY_S,
        transactionS: TRANSACTION_S,
        idle,
      };
      child.send(plan satisfies ToGenerator);
      this.gens.push(child);
    }
  }

  sum(k: Counter): number {
    return [...this.latest.values()].reduce((a, r) => a + r[k], 0);
  }

  snapshot(): Omit<Phase, 'label' | 'readyAtMs' | 'messages' | 'histogram' | 'messagesPerSecond'> {
    const reports = [...this.latest.values()];
    return {
      connected: this.sum('connected'),
      ready: this.sum('ready'),
      booted: this.sum('booted'),
      errors: this.sum('errors'),
      disconnects: this.sum('disconnects'),
      transactions: this.sum('transactions'),
      refused: this.sum('refused'),
      retries: this.sum('retries'),
      lastError: reports.map((r) => r.lastError).find((e) => e !== undefined),
      lastRetryReason: reports.map((r) => r.lastRetryReason).find((e) => e !== undefined),
    };
  }

  async stop(): Promise<void> {
    await stopGenerators(this.gens);
  }
}

/** Runs one phase: generators connect `specs`, hold, then stop. */
async function phase(
  label: string,
  specs: ChargerSpec[],
  idle: boolean,
  holdS: number,
  onHeld: () => Promise<void>,
): Promise<Phase> {
  const started = Date.now();
  const fleet = new GeneratorFleet(specs, idle);
  const readyAtMs = await watchPhase(label, fleet, specs.length, idle, holdS, started);
  const heldFor = fleet.holdStartedAt ? (Date.now() - fleet.holdStartedAt) / 1000 : 0;
  await onHeld();
  const snapshot = fleet.snapshot();
  await fleet.stop();
  log('');
  return {
    label,
    readyAtMs,
    ...snapshot,
    messages: fleet.messages,
    histogram: fleet.histogram,
    messagesPerSecond: heldFor > 0 ? fleet.holdMessages / heldFor : 0,
  };
}

/** Prints progress once a second until the phase has held for `holdS`; when every charger was ready. */
async function watchPhase(
  label: string,
  fleet: GeneratorFleet,
  chargers: number,
  idle: boolean,
  holdS: number,
  started: number,
): Promise<number | undefined> {
  let readyAtMs: number | undefined;
  let lastMessages = 0;
  let lastTick = Date.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = Date.now();
    const mps = ((fleet.messages - lastMessages) * 1000) / (now - lastTick);
    lastMessages = fleet.messages;
    lastTick = now;
    if (readyAtMs === undefined && fleet.sum(idle ? 'connected' : 'ready') >= chargers) {
      readyAtMs = now - started;
      const what = idle ? 'connected' : 'connected, booted and reported status';
      log(`${label}: all ${chargers} chargers ${what} in ${(readyAtMs / 1000).toFixed(1)} s`);
      fleet.holdStartedAt = now;
    }
    const h = fleet.histogram;
    progress(
      `${label} ${((now - started) / 1000).toFixed(0)}s connected=${fleet.sum('connected')} ready=${fleet.sum('ready')} msg/s=${mps.toFixed(0)} ` +
        `p50=${quantile(h, 0.5).toFixed(1)}ms p99=${quantile(h, 0.99).toFixed(1)}ms errors=${fleet.sum('errors')} retries=${fleet.sum('retries')} tx=${fleet.sum('transactions')}`,
    );
    const rampOver = now - started > RAMP_S * 1000 + 120_000;
    if ((fleet.holdStartedAt && now - fleet.holdStartedAt >= holdS * 1000) || now > deadline || rampOver) break;
  }
  return readyAtMs;
}

function perConnection(
  idle: MemorySample | undefined,
  loaded: MemorySample | undefined,
  connected: number,
): Record<string, number> {
  if (!idle || !loaded) return {};
  const n = Math.max(1, connected);
  return {
    settledIdleRssMb: idle.rss / 2 ** 20,
    settledLoadedRssMb: loaded.rss / 2 ** 20,
    settledRssBytesPerConnection: (loaded.rss - idle.rss) / n,
    settledHeapBytesPerConnection: (loaded.heapUsed - idle.heapUsed) / n,
  };
}

interface BaselineFigures {
  connected: number;
  idleRssMb: number;
  loadedRssMb: number;
  bytesPerConnection: number;
  settledRssBytesPerConnection?: number;
}

/** The bare `ws` server under the same idle connections: the memory baseline of this run. */
async function baselinePhase(): Promise<BaselineFigures> {
  const bare = await startScriptServer('bare-server.js');
  const pid = bare.pid ?? 0;
  try {
    const idleRss = await rssOf(pid);
    const idleSettled = await settledMemory(bare);
    let loadedSettled: MemorySample | undefined;
    const specs: ChargerSpec[] = Array.from({ length: N }, (_, i) => ({
      id: `B-${i}`,
      password: 'x',
      protocol: 'ocpp1.6',
      url: bare.url.replace(/^http/, 'ws'),
      transacting: false,
    }));
    let loadedRss = 0;
    // idle sockets do nothing: a short hold is enough to read the memory
    const p = await phase('bare ws baseline', specs, true, Math.min(HOLD_S, 5), async () => {
      loadedRss = await rssOf(pid);
      loadedSettled = await settledMemory(bare);
    });
    return {
      connected: p.connected,
      idleRssMb: idleRss / 2 ** 20,
      loadedRssMb: loadedRss / 2 ** 20,
      bytesPerConnection: (loadedRss - idleRss) / Math.max(1, p.connected),
      ...perConnection(idleSettled, loadedSettled, p.connected),
    };
  } finally {
    if (bare.child) await stopChild(bare.child);
  }
}

/** The platform under the OCPP workload. */
async function ocppPhase(targets: Target[]): Promise<SummaryInput['ocpp'] & Record<string, unknown>> {
  const specs = await register(targets, {
    count: N,
    apiKey: API_KEY,
    protocolOf: (i) => ((i % 100) / 100 < SHARE_201 ? 'ocpp2.0.1' : 'ocpp1.6'),
    transactingOf: (i) => (i * 7919) % 10_000 < SHARE_TRANSACTING * 10_000,
  });
  const idleMemory = await Promise.all(targets.map(memoryOf));
  const single = targets.length === 1 ? targets[0] : undefined;
  const idleSettled = single ? await settledMemory(single) : undefined;
  let loadedSettled: MemorySample | undefined;
  const memory: number[] = [];
  const p = await phase('ocpp', specs, false, HOLD_S, async () => {
    memory.push(...(await Promise.all(targets.map(memoryOf))));
    if (single) loadedSettled = await settledMemory(single);
  }).finally(() => unregister(specs, API_KEY));
  const idleTotal = idleMemory.reduce((a, b) => a + b, 0);
  const loadedTotal = memory.reduce((a, b) => a + b, 0);
  return {
    chargers: N,
    connected: p.connected,
    ready: p.ready,
    bootStormSeconds: p.readyAtMs === undefined ? null : p.readyAtMs / 1000,
    messagesPerSecondWhileHeld: Math.round(p.messagesPerSecond),
    messages: p.messages,
    latencyMs: { p50: quantile(p.histogram, 0.5), p99: quantile(p.histogram, 0.99) },
    errors: p.errors,
    connectRetries: p.retries,
    lastRetryReason: p.lastRetryReason ?? null,
    disconnects: p.disconnects,
    transactionsCompleted: p.transactions,
    startsRefused: p.refused,
    lastError: p.lastError ?? null,
    serverIdleRssMb: idleTotal / 2 ** 20,
    serverLoadedRssMb: loadedTotal / 2 ** 20,
    serverBytesPerCharger: (loadedTotal - idleTotal) / Math.max(1, p.connected),
    ...perConnection(idleSettled, loadedSettled, p.connected),
  };
}

/** Exit code of a run whose summary says an aim applying to it was not met. */
const AIM_NOT_MET = 1;

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'evp-load-'));
  const external = (args.target ?? []).map((url): Target => ({
    url: url.replace(/\/+$/, ''),
    pid: undefined,
    child: undefined,
    inspectPort: undefined,
  }));
  const targets =
    external.length > 0 ? external : [await startEmbeddedServer(dir, API_KEY, args['server-node-arg'] ?? [])];
  const children: ChildProcess[] = targets.flatMap((t) => (t.child ? [t.child] : []));
  const machine = machineInfo();
  // the key is a secret: never in the output
  const { 'api-key': _key, ...shown } = args;
  const result: Record<string, unknown> = { machine, options: { ...shown, target: targets.map((t) => t.url) } };
  try {
    log(`targets: ${targets.map((t) => t.url).join(', ')}; ${N} chargers over ${GENERATORS} generator process(es)`);
    const base = args.baseline ? await baselinePhase() : undefined;
    if (base) result.baseline = base;
    const ocpp = await ocppPhase(targets);
    result.ocpp = ocpp;
    if (base) {
      result.memoryRatio = ocpp.serverBytesPerCharger / base.bytesPerConnection;
      const settled = ocpp.settledRssBytesPerConnection;
      if (base.settledRssBytesPerConnection && typeof settled === 'number') {
        result.memoryRatioAfterGc = settled / base.settledRssBytesPerConnection;
      }
    }
    const summary: SummaryInput = {
      chargers: N,
      rampS: RAMP_S,
      ocpp,
      ...(typeof result.memoryRatio === 'number' ? { memoryRatio: result.memoryRatio } : {}),
      ...(typeof result.memoryRatioAfterGc === 'number' ? { memoryRatioAfterGc: result.memoryRatioAfterGc } : {}),
    };
    if (args.json) log(JSON.stringify(result, null, 2));
    else for (const line of summaryLines(summary)) log(line);
    if (args.out) writeFileSync(String(args.out), `${JSON.stringify(result, null, 2)}\n`);
    // a FAIL is the run's exit code too: a script or CI reading it sees what the summary says
    return verdicts(summary).some((v) => v.outcome === 'FAIL') ? AIM_NOT_MET : 0;
  } finally {
    // wait for the processes started here to exit (their logs are still being read meanwhile)
    await Promise.all(children.map((c) => stopChild(c)));
    rmSync(dir, { recursive: true, force: true });
  }
}

const SERVERS: ServerKind[] = ['platform', 'ocpp-rpc', 'bare-ws'];
const WORKLOADS: Workload[] = ['boot-storm', 'meter-values', 'heartbeat', 'memory', 'status-notification'];
/** run when no --workload is given (a StatusNotification flood only when named) */
const DEFAULT_WORKLOADS: Workload[] = ['boot-storm', 'meter-values', 'heartbeat', 'memory'];

/** The --compare flags, checked against the names compare.ts knows. */
function compareOptions(): CompareOptions {
  const servers = SERVERS.filter((s) => (args.server ?? SERVERS).includes(s));
  const workloads = new Set(WORKLOADS.filter((w) => (args.workload ?? DEFAULT_WORKLOADS).includes(w)));
  const unknown = [...(args.server ?? []), ...(args.workload ?? [])].filter(
    (n) => !(SERVERS as string[]).includes(n) && !(WORKLOADS as string[]).includes(n),
  );
  if (unknown.length > 0) usageError(`unknown --server or --workload: ${unknown.join(', ')}`);
  const inFlight = numberOption('in-flight', args['in-flight'], { min: 1, integer: true });
  if (inFlight > N) usageError('--in-flight must not exceed --chargers (one call in flight per charger)');
  return {
    servers,
    workloads,
    chargers: N,
    bootChargers: numberOption('boot-chargers', args['boot-chargers'], { min: 0, integer: true }),
    inFlight,
    floodSeconds: numberOption('flood-seconds', args['flood-seconds'], { min: 0.1 }),
    generators: GENERATORS,
    maxConnecting: MAX_CONNECTING,
    runs: numberOption('runs', args.runs, { min: 1, integer: true }),
    targets: args.target ?? [],
    apiKey: API_KEY,
    serverNodeArgs: args['server-node-arg'] ?? [],
    stepTimeoutS: numberOption('step-timeout', args['step-timeout'], { min: 1 }),
    out: args.out,
  };
}

// an interrupt removes the chargers registered so far before it ends the run (exit 130): its
// default left them on the target, a long-lived platform
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: removing the chargers this run registered, then stopping`);
    void removeLeftovers().finally(() => process.exit(130));
  });
}

(args.compare ? runCompare(compareOptions()).then(() => 0) : main()).then(
  (code) => process.exit(code),
  (err: unknown) => {
    // a refusal the run met (a wrong API key, a target that is down) is one line; a bug keeps its stack
    const known = err instanceof Error && /^(registration failed|fetch failed)/.test(err.message);
    process.stderr.write(
      `load test failed: ${err instanceof Error ? (known ? err.message : (err.stack ?? err.message)) : String(err)}\n`,
    );
    process.exit(1);
  },
);
