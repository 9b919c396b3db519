import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchFleet } from './load-test/bench-fleet.js';
import { log, machineInfo, progress } from './load-test/console.js';
import type { ChargerSpec } from './load-test/protocol.js';
import { register, startEmbeddedServer, startPlatformServer, stopChild, type Target } from './load-test/servers.js';
import { clusterEnvironment, type TestEnvironment } from '../test/support/platforms.js';
import { commandLine, numberOption } from './cli.js';

/**
 * The operator console's requests against a large connected fleet (docs/CSMS.md "Fleet index"):
 * N chargers registered, connected and booted (OCPP 1.6, two connectors each, some Faulted, some
 * Charging), then the list and overview requests the console sends, each timed `--requests`
 * times one after the other, beside a baseline measured in the same round: bare Koa answering a
 * page of the same bytes, computed beforehand (load-test/koa-page-server.ts). After each round a
 * StatusNotification flood changes chargers' states, and the next overview and list are timed
 * alone: what a request costs that finds the fleet changed.
 *
 *   npm run build && node dist/scripts/bench-fleet.js --chargers 10000 --runs 3 [--cluster] [--json]
 *
 * Embedded (one process on SQLite in a temporary folder) by default; `--cluster` starts
 * `--web` processes on a fresh PostgreSQL schema and Redis prefix (TEST_DATABASE_URL,
 * TEST_REDIS_URL, as the tests) and sends the requests to them in turn. Bounded by
 * `--max-seconds`; everything it started is stopped and removed at the end.
 */
const { values: args } = commandLine({
  summary:
    'Console requests (fleet index, charge point lists) against a platform holding --chargers\n' +
    'connected chargers, embedded or --cluster.',
  options: {
    chargers: { type: 'string', default: '10000', help: 'connected chargers' },
    generators: { type: 'string', default: '2', help: 'load generator processes' },
    'max-connecting': { type: 'string', default: '100', help: 'connections being opened at once, per generator' },
    requests: { type: 'string', default: '50', help: 'requests per figure (at least 5)' },
    runs: { type: 'string', default: '3', help: 'rounds' },
    'churn-seconds': {
      type: 'string',
      default: '1',
      value: 'S',
      help: 'StatusNotification flood (32 in flight) before the "after changes" figures',
    },
    cluster: { type: 'boolean', default: false, help: 'web processes on PostgreSQL and Redis instead of one embedded' },
    web: { type: 'string', default: '2', help: 'with --cluster: web processes' },
    'max-seconds': { type: 'string', default: '1200', value: 'S', help: 'hard bound of the whole run' },
    json: { type: 'boolean', default: false, help: 'print the result as JSON' },
    out: { type: 'string', value: 'FILE', help: 'write the result as JSON to FILE' },
    'server-node-arg': {
      type: 'string',
      multiple: true,
      value: 'FLAG',
      help: 'node flag for the platform processes, e.g. --server-node-arg=--cpu-prof',
    },
  },
  notes: 'Figures: docs/PERFORMANCE.md "Console requests against 10,000 connected chargers".',
});

const N = numberOption('chargers', args.chargers, { min: 1, integer: true });
const RUNS = numberOption('runs', args.runs, { min: 1, integer: true });
const REQUESTS = numberOption('requests', args.requests, { min: 5, integer: true });
const GENERATORS = numberOption('generators', args.generators, { min: 1, max: 64, integer: true });
const MAX_CONNECTING = numberOption('max-connecting', args['max-connecting'], { min: 1, integer: true });
const CHURN_S = numberOption('churn-seconds', args['churn-seconds'], { min: 0 });
const WEB = numberOption('web', args.web, { min: 1, max: 16, integer: true });
const WARMUP = 3;
const API_KEY = 'bench-fleet-operator-key';
const deadline = Date.now() + numberOption('max-seconds', args['max-seconds'], { min: 1 }) * 1000;

/** Connector statuses by charger: every 10th has a Faulted connector, every 4th one Charging. */
function statusesOf(i: number): string[] {
  if (i % 10 === 0) return ['Faulted', 'Available'];
  if (i % 4 === 1) return ['Charging', 'Available'];
  if (i % 4 === 2) return ['Available', 'Preparing'];
  return ['Available', 'Available'];
}

interface Figure {
  p50: number;
  p95: number;
}

interface Round {
  figures: Record<string, Figure>;
  /** p50 of each request over the baseline's p50 in the same round */
  ratios: Record<string, number>;
  churn: { messages: number; fleetMs: number; listMs: number };
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
}

async function timedGet(url: string, auth: boolean): Promise<{ ms: number; body: string; total: string | null }> {
  const t0 = performance.now();
  const res = await fetch(url, {
    headers: auth ? { Authorization: `Bearer ${API_KEY}` } : {},
    signal: AbortSignal.timeout(60_000),
  });
  const body = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${body.slice(0, 200)}`);
  return { ms, body, total: res.headers.get('x-total-count') };
}

/** `REQUESTS` GETs one after the other (after a few not counted), spread over the bases in turn. */
async function measure(bases: string[], path: string, auth: boolean): Promise<Figure> {
  const samples: number[] = [];
  for (let i = 0; i < WARMUP + REQUESTS; i++) {
    const { ms } = await timedGet(`${bases[i % bases.length]}${path}`, auth);
    if (i >= WARMUP) samples.push(ms);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 0.5), p95: percentile(samples, 0.95) };
}

/** Forks the baseline with its page; resolves with its URL. */
async function startPageServer(body: string, total: string): Promise<{ url: string; child: ChildProcess }> {
  const child = fork(join(import.meta.dirname, 'load-test', 'koa-page-server.js'), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`koa-page-server exited with ${String(code)}`)));
    child.send({ type: 'page', body, total });
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

/** Polls GET /v1/fleet until every charger is online with its connectors reported (the index caught up). */
async function waitIndexed(base: string): Promise<void> {
  let last = '';
  while (Date.now() < deadline) {
    const { body } = await timedGet(`${base}/v1/fleet?alerts=0`, true);
    const o = JSON.parse(body) as { online: number; connectors_by_status: Record<string, number> };
    const connectors = Object.values(o.connectors_by_status).reduce((a, b) => a + b, 0);
    if (o.online >= N && connectors >= 2 * N) return;
    last = `online=${o.online} connectors=${connectors}`;
    progress(`waiting for the index: ${last}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`the index did not show the fleet before --max-seconds (${last})`);
}

const fmt = (ms: number): string => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));
const spread = (xs: number[]): string =>
  xs.length === 1 ? fmt(xs[0] ?? 0) : `${fmt(Math.min(...xs))}-${fmt(Math.max(...xs))}`;

/** What a run started, stopped and removed at its end whatever happened. */
interface Started {
  servers: Target[];
  env?: TestEnvironment;
  dir?: string;
  fleet?: BenchFleet;
  page?: { url: string; child: ChildProcess };
}

async function startServers(run: Started): Promise<void> {
  if (args.cluster) {
    run.env = await clusterEnvironment({ LOG_LEVEL: 'info' });
    for (let i = 0; i < WEB; i++)
      run.servers.push(await startPlatformServer(run.env.env, API_KEY, args['server-node-arg'] ?? []));
  } else {
    run.dir = mkdtempSync(join(tmpdir(), 'bench-fleet-'));
    run.servers.push(await startEmbeddedServer(run.dir, API_KEY, args['server-node-arg'] ?? []));
  }
  const where = args.cluster ? `cluster, ${run.servers.length} web processes` : 'embedded (SQLite)';
  log(`platform: ${where} at ${run.servers.map((s) => s.url).join(', ')}`);
}

/** Registers, connects and boots the fleet; its boot time in ms. */
async function bootFleet(run: Started): Promise<{ specs: ChargerSpec[]; bootMs: number }> {
  const registered = await register(run.servers, {
    count: N,
    apiKey: API_KEY,
    protocolOf: () => 'ocpp1.6',
    transactingOf: () => false,
  });
  const specs = registered.map((s, i) => ({ ...s, statuses: statusesOf(i) }));
  const bootStart = Date.now();
  const fleet = new BenchFleet(specs, GENERATORS, MAX_CONNECTING, false);
  run.fleet = fleet;
  const bootMs = await fleet.waitReady('connecting', N, bootStart, deadline);
  if (bootMs === undefined) throw new Error(`only ${fleet.sum('ready')} of ${N} chargers ready before --max-seconds`);
  log(`connected and booted ${N} chargers in ${(bootMs / 1000).toFixed(1)} s (errors ${fleet.sum('errors')})`);
  await waitIndexed(run.servers[0]?.url ?? '');
  return { specs, bootMs };
}

/** One round: the baseline and every request `REQUESTS` times, then a status flood and the next requests. */
async function round(
  fleet: BenchFleet,
  bases: string[],
  pageUrl: string,
  requests: Record<string, string>,
): Promise<Round> {
  const baseline = await measure([pageUrl], '/', false);
  const figures: Record<string, Figure> = { baseline };
  const ratios: Record<string, number> = {};
  for (const [name, path] of Object.entries(requests)) {
    progress(`${name}`);
    const figure = await measure(bases, path, true);
    figures[name] = figure;
    ratios[name] = figure.p50 / Math.max(0.001, baseline.p50);
  }
  progress('status changes');
  const flood = await fleet.flood('StatusNotification', 32, CHURN_S);
  const fleetAfter = await timedGet(`${bases[0]}${requests['GET /v1/fleet']}`, true);
  const listAfter = await timedGet(`${bases[bases.length - 1]}${requests['status=Faulted']}`, true);
  return { figures, ratios, churn: { messages: flood.messages, fleetMs: fleetAfter.ms, listMs: listAfter.ms } };
}

interface Result {
  mode: string;
  chargers: number;
  requestsPerFigure: number;
  bootSeconds: number;
  baselineBytes: number;
  machine: Record<string, unknown>;
  seconds: number;
  rounds: Round[];
}

function printSummary(result: Result, names: string[]): void {
  const { rounds } = result;
  log('');
  log(`console requests, ${result.mode}, ${N} chargers connected, ${RUNS} rounds of ${REQUESTS} each`);
  log('ms; a-b: lowest-highest of the rounds; ratio: p50 over the baseline p50 of the same round');
  log('');
  log(`${'request'.padEnd(26)} ${'p50'.padStart(12)} ${'p95'.padStart(12)} ${'ratio'.padStart(12)}`);
  for (const name of ['baseline', ...names]) {
    const p50 = rounds.map((x) => x.figures[name]?.p50 ?? 0);
    const p95 = rounds.map((x) => x.figures[name]?.p95 ?? 0);
    const ratio = name === 'baseline' ? '1' : spread(rounds.map((x) => x.ratios[name] ?? 0));
    log(`${name.padEnd(26)} ${spread(p50).padStart(12)} ${spread(p95).padStart(12)} ${ratio.padStart(12)}`);
  }
  log('');
  log(
    `after ${spread(rounds.map((x) => x.churn.messages))} status changes (${args['churn-seconds']} s flood), the next request:`,
  );
  log(`${'GET /v1/fleet'.padEnd(26)} ${spread(rounds.map((x) => x.churn.fleetMs)).padStart(12)}`);
  log(`${'status=Faulted'.padEnd(26)} ${spread(rounds.map((x) => x.churn.listMs)).padStart(12)}`);
  log(`(${result.seconds.toFixed(0)} s in all)`);
}

async function stopAll(run: Started): Promise<void> {
  await run.fleet?.stop();
  if (run.page) await stopChild(run.page.child);
  for (const s of run.servers) if (s.child) await stopChild(s.child);
  await run.env?.cleanup();
  if (run.dir) rmSync(run.dir, { recursive: true, force: true });
}

async function main(): Promise<void> {
  const started = Date.now();
  const run: Started = { servers: [] };
  const watchdog = setTimeout(() => {
    log('bench-fleet: --max-seconds reached, stopping');
    for (const s of run.servers) s.child?.kill('SIGKILL');
    run.page?.child.kill('SIGKILL');
    process.exit(2);
  }, deadline - Date.now());
  try {
    await startServers(run);
    const bases = run.servers.map((s) => s.url);
    const { specs, bootMs } = await bootFleet(run);
    const probe = specs[Math.floor(N / 2)]?.id ?? '';
    const requests: Record<string, string> = {
      'search by id': `/v1/charge-points?q=${encodeURIComponent(probe)}&limit=50`,
      'status=Faulted': '/v1/charge-points?status=Faulted&limit=50',
      'online, sort=last_seen': '/v1/charge-points?online=true&sort=last_seen&order=desc&limit=50',
      'far page (offset N-100)': `/v1/charge-points?offset=${Math.max(0, N - 100)}&limit=50`,
      'GET /v1/fleet': '/v1/fleet',
    };
    const model = await timedGet(`${bases[0]}${requests['online, sort=last_seen']}`, true);
    run.page = await startPageServer(model.body, model.total ?? '0');
    log(`baseline page: ${model.body.length} bytes (50 chargers), X-Total-Count ${model.total ?? '-'}`);
    const rounds: Round[] = [];
    for (let r = 0; r < RUNS; r++) {
      progress(`round ${r + 1}/${RUNS}`);
      if (run.fleet) rounds.push(await round(run.fleet, bases, run.page.url, requests));
    }
    const result: Result = {
      mode: args.cluster ? `cluster (${run.servers.length} web)` : 'embedded',
      chargers: N,
      requestsPerFigure: REQUESTS,
      bootSeconds: bootMs / 1000,
      baselineBytes: model.body.length,
      machine: machineInfo(),
      seconds: (Date.now() - started) / 1000,
      rounds,
    };
    if (args.out) writeFileSync(args.out, JSON.stringify(result, null, 2));
    if (args.json) process.stdout.write(`${JSON.stringify(result)}\n`);
    else printSummary(result, Object.keys(requests));
  } finally {
    clearTimeout(watchdog);
    await stopAll(run);
  }
}

main().catch((err: unknown) => {
  log(`bench-fleet failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
