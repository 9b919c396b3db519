import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadConfig, type Config } from '../config/index.js';
import { compileLazily } from '../src/lazy-compile.js';
import { createLogger } from '../src/logger.js';
import { platformModules } from '../src/modules.js';
import { Platform, withoutPretenuring } from '../src/platform/platform.js';
import { priceCdr } from '../src/tariffs/engine.js';
import type { PricingHandle, PricingModule } from '../src/tariffs/module.js';
import { PricingPool, type PricingTask } from '../src/tariffs/pool.js';
import { PriceRequest, type PriceOutcome, type PricingCdr, type PricingTariff } from '../src/tariffs/types.js';
import type { FromChargers, SamplesReport, ToChargers } from './bench/pricing-chargers.js';
import { benchCdrs, complexTariff, implausible, PERIODS_PER_CDR, TIME_ZONE } from './bench/pricing-fixture.js';
import { log, progress } from './load-test/console.js';
import { register, stopChild } from './load-test/servers.js';
import { commandLine, numberOption, usageError } from './cli.js';

/**
 * Tariff pricing (issue 12): CDRs priced per second on the main thread and through the pricing
 * threads, and the OCPP latency of an embedded platform process while it prices a batch.
 *
 *   npm run build && node dist/scripts/bench-pricing.js [--cdrs=100000] [--runs=3]
 *
 * 1. One 8-element 2.2.1 tariff and `--distinct` CDRs of 20 periods (scripts/bench/pricing-fixture.ts),
 *    every one schema-checked and priced once with its breakdown: totals plausible, every element used.
 * 2. Main thread: `priceCdr(..., { breakdown: false })` over `--cdrs` CDRs (at most 5 s a run).
 * 3. `PricingPool` (one thread per core, batches of 256, the platform's defaults; `--batch-size`
 *    sets the batch) over `--cdrs` CDRs
 *    with `each()`, every outcome compared with the main thread's. For 2 and 3 also the CPU per CDR
 *    of the main thread (Linux /proc) and of the whole process.
 * 4. An embedded platform in this process (SQLite in a temporary folder) with `--chargers` OCPP 1.6
 *    chargers in a child process (scripts/bench/pricing-chargers.ts), each sending one message per
 *    `--interval-ms` (MeterValues for `--meter-share` of them, Heartbeat for the rest). Per run: the
 *    latency of the calls sent during `--quiet-seconds` without pricing (a), during as long again
 *    (q: how much two windows without pricing differ), and while the platform's own pricing pool
 *    prices `--cdrs` CDRs in this process with `each()`, each batch checked and let go (c, as a bulk
 *    job that stores or sends its CDRs would), whose p99 is set against that of (a) and (q)
 *    together. Then, per run, a quiet window and the same pricing
 *    through `price()`, every outcome held to the end (b; last, see latencyRuns).
 * Each figure `--runs` times: median and min-max. Bounded by `--max-seconds`; removes what it made.
 * `--pricing-threads`, `--max-queue` and `--thread-policy` set PRICING_THREADS, PRICING_MAX_QUEUE
 * and PRICING_THREAD_POLICY for 3 and 4; `--bulk-share` sets PRICING_BULK_SHARE_PERCENT, which
 * only 4 feels (the platform serves chargers there; the pool of 3 serves nothing, so it is never
 * paced). `--heap-growing` sets HEAP_GROWING_PERCENT, which takes effect when 4 makes its platform.
 * `--pool-only` stops after 3.
 * Figures and their reading: docs/PERFORMANCE.md "Tariff pricing".
 */
const { values: args } = commandLine({
  summary:
    'Tariff pricing: CDRs per second on the main thread and through the pricing threads, and the\n' +
    'OCPP latency of an embedded platform while it prices a batch.',
  options: {
    cdrs: { type: 'string', default: '100000', help: 'CDRs priced per figure' },
    runs: { type: 'string', default: '3', help: 'runs of every figure (median and min-max)' },
    distinct: { type: 'string', default: '4096', help: 'distinct CDRs of 20 periods, cycled over' },
    seed: { type: 'string', default: '12', help: 'seed of the CDRs' },
    chargers: { type: 'string', default: '400', help: 'OCPP 1.6 chargers loading the platform' },
    'interval-ms': { type: 'string', default: '1000', value: 'MS', help: "each charger's interval between messages" },
    'meter-share': { type: 'string', default: '0.5', value: 'SHARE', help: 'share of chargers sending MeterValues' },
    'quiet-seconds': { type: 'string', default: '5', value: 'S', help: 'length of each window without pricing' },
    'max-seconds': { type: 'string', default: '480', value: 'S', help: 'hard bound of the whole run' },
    'pricing-threads': { type: 'string', help: "PRICING_THREADS (default: the platform's)" },
    'max-queue': { type: 'string', help: "PRICING_MAX_QUEUE (default: the platform's)" },
    'thread-policy': {
      type: 'string',
      value: 'POLICY',
      help: "PRICING_THREAD_POLICY, nice or idle (default: the platform's)",
    },
    'bulk-share': {
      type: 'string',
      value: 'PERCENT',
      help: "PRICING_BULK_SHARE_PERCENT: a bulk job's share of the event loop while chargers are served (default: the platform's)",
    },
    'batch-size': { type: 'string', value: 'N', help: "CDRs per batch of the pool's runs (default: the pool's)" },
    'heap-growing': {
      type: 'string',
      value: 'PERCENT',
      help: "HEAP_GROWING_PERCENT of the process, set when its platform starts (default: the platform's)",
    },
    'pool-only': { type: 'boolean', help: 'the throughput runs only, without the chargers and the latency windows' },
    out: { type: 'string', value: 'FILE', help: 'write the figures as JSON to FILE' },
  },
  notes: 'Figures and their reading: docs/PERFORMANCE.md "Tariff pricing".',
});
const CDRS = numberOption('cdrs', args.cdrs, { min: 1, integer: true });
const RUNS = numberOption('runs', args.runs, { min: 1, integer: true });
const CHARGERS = numberOption('chargers', args.chargers, { min: 1, integer: true });
const INTERVAL_MS = numberOption('interval-ms', args['interval-ms'], { min: 1 });
const DISTINCT = numberOption('distinct', args.distinct, { min: 1, integer: true });
const SEED = numberOption('seed', args.seed, { integer: true });
const METER_SHARE = numberOption('meter-share', args['meter-share'], { min: 0, max: 1 });
const QUIET_MS = numberOption('quiet-seconds', args['quiet-seconds'], { min: 0.1 }) * 1000;
const MAX_MS = numberOption('max-seconds', args['max-seconds'], { min: 1 }) * 1000;
const BATCH_SIZE =
  args['batch-size'] === undefined
    ? undefined
    : numberOption('batch-size', args['batch-size'], { min: 1, integer: true });
// as the platform's processes from their start (Platform.create): this one prices before it makes its platform
withoutPretenuring();
const MAIN_THREAD_CAP_MS = 5_000;
const API_KEY = 'bench-pricing-operator-key';
// the pool's settings are checked before anything runs: loadConfig names a bad one
try {
  settings(tmpdir());
} catch (err) {
  usageError(err instanceof Error ? err.message : String(err));
}
const POOL_AIM = 50_000;
/** p99 while pricing at most this many times p99 without: "unchanged" on this noisy machine */
const UNCHANGED = 1.2;

const cleanups: (() => Promise<void>)[] = [];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let cleaning: Promise<void> | undefined;
/** Stops and removes what the run started, once, in reverse order; every caller waits for all of it. */
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  })();
  return cleaning;
}
/** the first reason to stop decides the exit status */
let exitCode = 0;

interface Spread {
  median: number;
  min: number;
  max: number;
}

function spread(values: readonly number[]): Spread {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
  return { median, min: s[0] ?? NaN, max: s[s.length - 1] ?? NaN };
}

/** Nearest-rank quantile of sorted values. */
function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)] ?? NaN;
}

/** What every phase prices: the tariff, the distinct CDRs, each one's total as the main thread prices it. */
interface Fixture {
  tariff: PricingTariff;
  cdrs: PricingCdr[];
  /** total_cost.excl_vat of each distinct CDR */
  reference: number[];
  /** `--cdrs` tasks cycling over the distinct CDRs */
  tasks: PricingTask[];
}

function cdrAt(cdrs: readonly PricingCdr[], i: number): PricingCdr {
  const cdr = cdrs[i % cdrs.length];
  if (!cdr) throw new Error('no CDRs');
  return cdr;
}

/** The tariff and CDRs, schema-checked, each priced once with its breakdown and checked for plausibility. */
function prepare(): Fixture {
  const tariff = complexTariff();
  const cdrs = benchCdrs(DISTINCT, SEED);
  const check = compileLazily(PriceRequest);
  const used = new Map<number, number>();
  let clamped = 0;
  const reference = cdrs.map((cdr, i) => {
    if (!check.Check({ tariff, cdr, time_zone: TIME_ZONE })) throw new Error(`CDR ${i} does not match the schema`);
    const full = priceCdr(tariff, cdr, TIME_ZONE);
    const totals = priceCdr(tariff, cdr, TIME_ZONE, { breakdown: false });
    if (!full.ok || !totals.ok) throw new Error(`CDR ${i} not priced: ${JSON.stringify(full)}`);
    const why = implausible(cdr, totals.priced);
    if (why) throw new Error(`CDR ${i} implausible: ${why}`);
    if (JSON.stringify({ ...full.priced, breakdown: 0 }) !== JSON.stringify({ ...totals.priced, breakdown: 0 }))
      throw new Error(`CDR ${i}: totals differ with and without the breakdown`);
    for (const p of full.priced.breakdown.periods)
      for (const d of p.dimensions) if (d.element) used.set(d.element, (used.get(d.element) ?? 0) + 1);
    const flat = full.priced.breakdown.flat?.element;
    if (flat) used.set(flat, (used.get(flat) ?? 0) + 1);
    if (full.priced.breakdown.clamped.length > 0) clamped++;
    return totals.priced.total_cost.excl_vat;
  });
  const missing = tariff.elements.map((_, i) => i + 1).filter((e) => !used.has(e));
  if (missing.length > 0) throw new Error(`elements never used: ${missing.join(', ')}`);
  const costs = spread(reference);
  log(
    `${cdrs.length} distinct CDRs of ${PERIODS_PER_CDR} periods: all priced and plausible; total excl. VAT ` +
      `median ${costs.median.toFixed(2)} (${costs.min.toFixed(2)}-${costs.max.toFixed(2)}) EUR, ${clamped} clamped ` +
      `to min/max_price; dimensions priced per element ${[...used]
        .sort((a, b) => a[0] - b[0])
        .map(([e, n]) => `${e}:${n}`)
        .join(' ')}`,
  );
  const tasks = Array.from({ length: CDRS }, (_, i): PricingTask => ({
    tariff,
    cdr: cdrAt(cdrs, i),
    time_zone: TIME_ZONE,
  }));
  return { tariff, cdrs, reference, tasks };
}

/** Whether `outcomes` are the main thread's totals for the tasks, in order; throws otherwise. */
function verify(f: Fixture, outcomes: readonly PriceOutcome[], what: string): void {
  if (outcomes.length !== f.tasks.length) throw new Error(`${what}: ${outcomes.length} outcomes for ${f.tasks.length}`);
  verifyBatch(f, outcomes, 0, what);
}

/** One batch of outcomes, from `offset` in `f.tasks`, against the main thread's totals. */
function verifyBatch(f: Fixture, outcomes: readonly PriceOutcome[], offset: number, what: string): void {
  outcomes.forEach((o, k) => {
    const i = offset + k;
    if (!o.ok) throw new Error(`${what}: CDR ${i} not priced: ${o.message}`);
    if (o.priced.total_cost.excl_vat !== f.reference[i % f.cdrs.length])
      throw new Error(
        `${what}: CDR ${i} priced ${o.priced.total_cost.excl_vat}, main thread ${f.reference[i % f.cdrs.length]}`,
      );
  });
}

/**
 * `f.tasks` through `each`, every batch checked against the main thread's totals and let go, as a
 * bulk caller does (see latencyRuns on holding them); throws unless every outcome was handed over.
 */
async function eachChecked(pricer: Pick<PricingHandle, 'each'>, f: Fixture, what: string): Promise<void> {
  let handed = 0;
  await pricer.each(f.tasks, (batch, offset) => {
    verifyBatch(f, batch, offset, what);
    handed += batch.length;
  });
  if (handed !== f.tasks.length) throw new Error(`${what}: ${handed} outcomes for ${f.tasks.length}`);
}

/** A throughput run: CDRs per second, and microseconds of CPU per CDR of the main thread and of the whole process. */
interface Rate {
  perSecond: number;
  mainCpuUs: number;
  processCpuUs: number;
}

/** CPU seconds of the main thread (Linux /proc; NaN elsewhere) and of the whole process, every thread. */
function cpuNow(): { main: number; all: number } {
  let main = NaN;
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    // utime and stime, fields 14 and 15, in clock ticks of 1/100 s (as load-test/servers.ts reads them)
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    main = (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    // no /proc: the main thread's share is not known
  }
  const usage = process.cpuUsage();
  return { main, all: (usage.user + usage.system) / 1e6 };
}

async function measured(n: () => number, work: () => Promise<void> | void): Promise<Rate> {
  const cpu0 = cpuNow();
  const t0 = performance.now();
  await work();
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = cpuNow();
  const count = n();
  return {
    perSecond: count / seconds,
    mainCpuUs: ((cpu1.main - cpu0.main) / count) * 1e6,
    processCpuUs: ((cpu1.all - cpu0.all) / count) * 1e6,
  };
}

/** CDRs per second on this thread, totals only, checked against the reference as it goes. */
function mainThreadRun(f: Fixture, limit: number): Promise<Rate> {
  let n = 0;
  return measured(
    () => n,
    () => {
      const deadline = performance.now() + MAIN_THREAD_CAP_MS;
      for (; n < limit; n++) {
        if ((n & 255) === 0 && performance.now() > deadline) break;
        const o = priceCdr(f.tariff, cdrAt(f.cdrs, n), TIME_ZONE, { breakdown: false });
        if (!o.ok || o.priced.total_cost.excl_vat !== f.reference[n % f.cdrs.length])
          throw new Error(`main thread: CDR ${n} priced differently`);
      }
    },
  );
}

/**
 * Threads started and their code and caches (time-zone offsets) warm before the clock runs, as
 * on the main thread, which has priced every distinct CDR for the reference.
 */
async function warmUp(f: Fixture, pool: PricingHandle): Promise<void> {
  const tasks = f.tasks.slice(0, 4 * f.cdrs.length);
  await pool.each(tasks, (batch, offset) => verifyBatch(f, batch, offset, 'warm-up'));
}

async function poolRuns(f: Fixture, config: Config): Promise<Rate[]> {
  const pool = new PricingPool({
    threads: config.PRICING_THREADS,
    idleTimeoutMs: config.PRICING_IDLE_TIMEOUT_MS,
    maxQueue: config.PRICING_MAX_QUEUE,
    threadPolicy: config.PRICING_THREAD_POLICY,
    ...(BATCH_SIZE === undefined ? {} : { batchSize: BATCH_SIZE }),
  });
  cleanups.push(() => pool.close());
  await warmUp(f, pool);
  const rates: Rate[] = [];
  for (let run = 1; run <= RUNS; run++) {
    const rate = await measured(
      () => f.tasks.length,
      () => eachChecked(pool, f, 'pool'),
    );
    rates.push(rate);
    log(`pool (${pool.stats().threads} threads), run ${run}: ${describeRate(rate)}`);
  }
  await pool.close();
  return rates;
}

const describeRate = (r: Rate): string =>
  `${fmt(r.perSecond)} CDRs/s; CPU per CDR ${fmt(r.mainCpuUs)} us main thread, ${fmt(r.processCpuUs)} us process`;

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** The embedded platform's settings, as test/support/platforms.ts gives them, and the pool's. */
function settings(dir: string): Config {
  return loadConfig({
    DATABASE_URL: `sqlite:${join(dir, 'bench.sqlite')}`,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    NODE_ENV: 'test',
    CSMS_API_KEY: API_KEY,
    OCPP_UNKNOWN_ID_TAGS: 'accept',
    PRICING_THREADS: args['pricing-threads'],
    PRICING_MAX_QUEUE: args['max-queue'],
    PRICING_THREAD_POLICY: args['thread-policy'],
    PRICING_BULK_SHARE_PERCENT: args['bulk-share'],
    HEAP_GROWING_PERCENT: args['heap-growing'],
  });
}

async function startPlatform(config: Config): Promise<{ platform: Platform; pricing: PricingHandle }> {
  const modules = platformModules();
  const tariffs = modules.find((m): m is PricingModule => m.name === 'tariffs' && 'pricing' in m);
  if (!tariffs) throw new Error('platformModules() has no tariffs module');
  const platform = await Platform.create({ config, log: createLogger(config.LOG_LEVEL), modules });
  cleanups.push(() => platform.stop());
  await platform.start();
  return { platform, pricing: tariffs.pricing };
}

/** The charger child process and its answers. */
class ChargerProcess {
  private readonly child: ChildProcess;
  private readonly waiting: { resolve(m: FromChargers): void; reject(err: Error): void }[] = [];

  constructor() {
    this.child = fork(join(import.meta.dirname, 'bench/pricing-chargers.js'), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (m: FromChargers) => this.waiting.shift()?.resolve(m));
    this.child.once('exit', (code) => {
      for (const w of this.waiting.splice(0)) w.reject(new Error(`the charger process exited with ${String(code)}`));
    });
    cleanups.push(() => stopChild(this.child));
  }

  private ask(order: ToChargers): Promise<FromChargers> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.child.send(order);
    });
  }

  async start(url: string): Promise<void> {
    const specs = await register([{ url, pid: undefined, child: undefined, inspectPort: undefined }], {
      count: CHARGERS,
      apiKey: API_KEY,
      protocolOf: () => 'ocpp1.6',
      transactingOf: () => false,
    });
    const ready = await this.ask({
      type: 'start',
      chargers: specs,
      intervalMs: INTERVAL_MS,
      meterShare: METER_SHARE,
      maxConnecting: 50,
    });
    if (ready.type !== 'ready' || ready.ready !== CHARGERS)
      throw new Error(`chargers not ready: ${JSON.stringify(ready)}`);
  }

  async samples(from: number, to: number): Promise<SamplesReport> {
    const m = await this.ask({ type: 'samples', from, to });
    if (m.type !== 'samples') throw new Error('the charger process answered out of turn');
    return m;
  }

  stop(): Promise<void> {
    return stopChild(this.child);
  }
}

/** One window of the latency phase: when, the event-loop delay of this process, and the pricing rate if priced. */
interface Window {
  from: number;
  to: number;
  loopP99Ms: number;
  loopMaxMs: number;
  cdrsPerSecond?: number;
  /** batches of `--cdrs` priced one after the other in the window */
  passes?: number;
}

async function windowOf(work: () => Promise<{ rate: number; passes: number } | undefined>): Promise<Window> {
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const from = Date.now();
  const priced = await work();
  const to = Date.now();
  loop.disable();
  const w: Window = { from, to, loopP99Ms: loop.percentile(99) / 1e6, loopMaxMs: loop.max / 1e6 };
  if (priced) {
    w.cdrsPerSecond = priced.rate;
    w.passes = priced.passes;
  }
  return w;
}

interface LatencyRun {
  quiet: Latency;
  /** (q): a second quiet window, right after (a) */
  quietAgain: Latency;
  /**
   * (a) and (q) as one window of ~4,000 calls, the baseline of (c): twice the calls of either, so
   * a steadier p99 (two quiet windows' p99s differed by 0.3-2x here, the first mostly the slower)
   */
  quietBoth: Latency;
  /** the quiet window before (b) */
  heldQuiet: Latency;
  /** (b): outcomes held to the end */
  pricing: Latency;
  cdrsPerSecond: number;
  /** (c): outcomes taken per batch */
  streamed: Latency;
  streamedPerSecond: number;
}

interface Latency {
  p50: number;
  p99: number;
  calls: number;
  unanswered: number;
  errors: number;
  loopP99Ms: number;
  loopMaxMs: number;
}

function latencyOf(s: SamplesReport, w: Window): Latency {
  const sorted = s.latencies.sort((a, b) => a - b);
  return {
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    calls: sorted.length,
    unanswered: s.unanswered,
    errors: s.errors,
    loopP99Ms: w.loopP99Ms,
    loopMaxMs: w.loopMaxMs,
  };
}

/**
 * Prices the batch of `--cdrs` again and again until as long as a quiet window has passed, so that
 * the p99 of the window while pricing stands on as many calls as a quiet window's: one pass of
 * 100,000 took 0.7-0.9 s here, about 350 calls, whose p99 is the fourth slowest call. Answers
 * CDRs per second over the passes and how many there were.
 */
async function passes(pass: () => Promise<void>): Promise<{ rate: number; passes: number }> {
  const t0 = performance.now();
  const until = t0 + QUIET_MS;
  let n = 0;
  do {
    await pass();
    n += 1;
  } while (performance.now() < until);
  return { rate: (n * CDRS) / ((performance.now() - t0) / 1000), passes: n };
}

const quietWindow = (): Promise<Window> =>
  windowOf(async () => {
    await sleep(QUIET_MS);
    return undefined;
  });

const seconds = (w: Window): string => ((w.to - w.from) / 1000).toFixed(1);

const describeWindow = (name: string, l: Latency, w: Window): string =>
  `(${name}) p50 ${l.p50.toFixed(2)} p99 ${l.p99.toFixed(2)} ms over ${l.calls} calls` +
  (w.cdrsPerSecond === undefined
    ? ''
    : ` in ${seconds(w)} s, ${w.passes ?? 1} x ${fmt(CDRS)} CDRs (${fmt(w.cdrsPerSecond)} CDRs/s)`) +
  `, event-loop delay p99 ${w.loopP99Ms.toFixed(1)} ms`;

type StreamedRun = Pick<LatencyRun, 'quiet' | 'quietAgain' | 'quietBoth' | 'streamed' | 'streamedPerSecond'>;

/** (a) quiet, (q) quiet again, (c) pricing with each(), each batch checked and let go. */
async function streamedRun(
  f: Fixture,
  pricing: PricingHandle,
  chargers: ChargerProcess,
  run: number,
): Promise<StreamedRun> {
  const quiet = await quietWindow();
  const again = await quietWindow();
  await sleep(1000);
  const streamed = await windowOf(() => passes(() => eachChecked(pricing, f, 'platform pool, each')));
  // late answers in before the samples are read
  await sleep(3000);
  const a = latencyOf(await chargers.samples(quiet.from, quiet.to), quiet);
  const q = latencyOf(await chargers.samples(again.from, again.to), again);
  const both = latencyOf(await chargers.samples(quiet.from, again.to), {
    from: quiet.from,
    to: again.to,
    loopP99Ms: Math.max(quiet.loopP99Ms, again.loopP99Ms),
    loopMaxMs: Math.max(quiet.loopMaxMs, again.loopMaxMs),
  });
  const c = latencyOf(await chargers.samples(streamed.from, streamed.to), streamed);
  log(
    `latency run ${run}: ${describeWindow('a', a, quiet)}; ${describeWindow('q', q, again)}; (a)+(q) p99 ${both.p99.toFixed(2)} ms; ${describeWindow('c', c, streamed)}`,
  );
  return { quiet: a, quietAgain: q, quietBoth: both, streamed: c, streamedPerSecond: streamed.cdrsPerSecond ?? NaN };
}

type HeldRun = Pick<LatencyRun, 'heldQuiet' | 'pricing' | 'cdrsPerSecond'>;

/** (a) quiet, then (b) pricing with price(), every outcome held until the whole batch is back. */
async function heldRun(f: Fixture, pricing: PricingHandle, chargers: ChargerProcess, run: number): Promise<HeldRun> {
  const quiet = await quietWindow();
  await sleep(1000);
  const priced = await windowOf(() =>
    passes(async () => {
      // every outcome of the pass held until the whole batch is back, then checked and let go
      verify(f, await pricing.price(f.tasks), 'platform pool');
    }),
  );
  await sleep(3000);
  const a = latencyOf(await chargers.samples(quiet.from, quiet.to), quiet);
  const b = latencyOf(await chargers.samples(priced.from, priced.to), priced);
  log(`held run ${run}: ${describeWindow('a', a, quiet)}; ${describeWindow('b', b, priced)}`);
  return { heldQuiet: a, pricing: b, cdrsPerSecond: priced.cdrsPerSecond ?? NaN };
}

/**
 * The latency windows against one platform in this process, the chargers in a child: `--runs`
 * streamed runs, then `--runs` held runs. The held ones come last because they change the
 * process: V8 sees the outcomes' allocation sites survive and allocates later outcomes in the old
 * generation (pretenuring), which makes every later young-generation collection slower.
 */
async function latencyRuns(f: Fixture, config: Config): Promise<LatencyRun[]> {
  const { platform, pricing } = await startPlatform(config);
  const chargers = new ChargerProcess();
  await chargers.start(platform.url);
  log(`${CHARGERS} chargers connected and booted; one message each every ${INTERVAL_MS} ms`);
  // the platform's pricing threads started (they live PRICING_IDLE_TIMEOUT_MS without work)
  await warmUp(f, pricing);
  await sleep(3000);
  const streamed: StreamedRun[] = [];
  for (let run = 1; run <= RUNS; run++) streamed.push(await streamedRun(f, pricing, chargers, run));
  const all: LatencyRun[] = [];
  for (let run = 1; run <= RUNS; run++) {
    const held = await heldRun(f, pricing, chargers, run);
    const first = streamed[run - 1];
    if (!first) throw new Error(`no streamed run ${run}`);
    all.push({ ...first, ...held });
  }
  await chargers.stop();
  await platform.stop();
  return all;
}

const r2 = (values: number[]): string => show(spread(values), 1);

/** A count over every latency window of every run. */
const sum = (lat: LatencyRun[], pick: (l: Latency) => number): number =>
  lat.reduce(
    (n, r) => n + pick(r.quiet) + pick(r.quietAgain) + pick(r.streamed) + pick(r.heldQuiet) + pick(r.pricing),
    0,
  );

const show = (s: Spread, digits = 0): string =>
  `${fmt(s.median, digits)} (${fmt(s.min, digits)}-${fmt(s.max, digits)})`;

/** The throughput rows: main thread and pool, CDRs a second and CPU per CDR. */
function rateRows(threads: number, mainRates: Rate[], poolRates: Rate[]): [string, string][] {
  const main = spread(mainRates.map((r) => r.perSecond));
  const pool = spread(poolRates.map((r) => r.perSecond));
  return [
    ['main thread, priceCdr totals only, CDRs/s', show(main)],
    [`PricingPool (${threads} threads), ${fmt(CDRS)} CDRs, CDRs/s`, show(pool)],
    ['pool / main thread (medians)', (pool.median / main.median).toFixed(2)],
    ['CPU us per CDR, priceCdr on the main thread, process', show(spread(mainRates.map((r) => r.processCpuUs)))],
    ['CPU us per CDR, pool: event-loop thread', show(spread(poolRates.map((r) => r.mainCpuUs)))],
    ['CPU us per CDR, pool: whole process', show(spread(poolRates.map((r) => r.processCpuUs)))],
  ];
}

function printRows(rows: [string, string][]): void {
  const width = Math.max(...rows.map(([k]) => k.length));
  log('');
  log(`${'figure'.padEnd(width)}  median (min-max) of ${RUNS} runs`);
  for (const [k, v] of rows) log(`${k.padEnd(width)}  ${v}`);
}

const poolVerdict = (poolRates: Rate[]): string => {
  const pool = spread(poolRates.map((r) => r.perSecond));
  return `pool ${fmt(pool.median)} CDRs/s, aim >= ${fmt(POOL_AIM)}: ${pool.median >= POOL_AIM ? 'met' : 'not met'}`;
};

function report(threads: number, mainRates: Rate[], poolRates: Rate[], lat: LatencyRun[]): Record<string, unknown> {
  const held = spread(lat.map((r) => r.pricing.p99 / r.heldQuiet.p99));
  const streamedRatio = spread(lat.map((r) => r.streamed.p99 / r.quietBoth.p99));
  const streamedToFirst = spread(lat.map((r) => r.streamed.p99 / r.quiet.p99));
  const noise = spread(lat.map((r) => r.quietAgain.p99 / r.quiet.p99));
  const ms = (pick: (r: LatencyRun) => number): string => show(spread(lat.map(pick)), 2);
  const rows: [string, string][] = [
    ...rateRows(threads, mainRates, poolRates),
    ['OCPP p50 / p99 ms, (a) no pricing', `${ms((r) => r.quiet.p50)} / ${ms((r) => r.quiet.p99)}`],
    ['OCPP p50 / p99 ms, (q) no pricing, again', `${ms((r) => r.quietAgain.p50)} / ${ms((r) => r.quietAgain.p99)}`],
    ['p99(q) / p99(a), per run: the noise', show(noise, 2)],
    ['OCPP p99 ms, (a) and (q) together', ms((r) => r.quietBoth.p99)],
    ['OCPP p50 / p99 ms, (c) while pricing, each()', `${ms((r) => r.streamed.p50)} / ${ms((r) => r.streamed.p99)}`],
    ['p99(c) / p99 of (a) and (q) together, per run', show(streamedRatio, 2)],
    ['p99(c) / p99(a), per run', show(streamedToFirst, 2)],
    ['pool CDRs/s while serving chargers (c)', show(spread(lat.map((r) => r.streamedPerSecond)))],
    ['OCPP p50 / p99 ms, (b) while pricing, price() held', `${ms((r) => r.pricing.p50)} / ${ms((r) => r.pricing.p99)}`],
    ['p99(b) / p99 of its own quiet window, per run', show(held, 2)],
    ['pool CDRs/s while serving chargers (b)', show(spread(lat.map((r) => r.cdrsPerSecond)))],
    [
      'event-loop delay p99 ms, (a) / (c) / (b)',
      [
        r2(lat.map((r) => r.quiet.loopP99Ms)),
        r2(lat.map((r) => r.streamed.loopP99Ms)),
        r2(lat.map((r) => r.pricing.loopP99Ms)),
      ].join(' / '),
    ],
    [
      'event-loop delay max ms, (a) / (c) / (b)',
      [
        r2(lat.map((r) => r.quiet.loopMaxMs)),
        r2(lat.map((r) => r.streamed.loopMaxMs)),
        r2(lat.map((r) => r.pricing.loopMaxMs)),
      ].join(' / '),
    ],
    ['unanswered / failed calls, all windows', `${sum(lat, (l) => l.unanswered)} / ${sum(lat, (l) => l.errors)}`],
  ];
  printRows(rows);
  const verdict = (r: Spread): string =>
    `${r.median.toFixed(2)}x of without (${r.min.toFixed(2)}-${r.max.toFixed(2)}): ${r.median <= UNCHANGED ? 'unchanged' : 'changed'}`;
  log(
    `verdict: ${poolVerdict(poolRates)}; OCPP p99 while pricing, ` +
      `aim unchanged (<= ${UNCHANGED}x): each() ${verdict(streamedRatio)}; price() held ${verdict(held)}; ` +
      `two quiet windows ${noise.median.toFixed(2)}x (${noise.min.toFixed(2)}-${noise.max.toFixed(2)})`,
  );
  return { mainRates, poolRates, latency: lat, rows: Object.fromEntries(rows) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'evp-bench-pricing-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const config = settings(dir);
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  log(
    `Node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${fmt(totalmem() / 2 ** 30, 1)} GiB, ` +
      `load average ${load}; ${fmt(CDRS)} CDRs, ${RUNS} runs; PRICING_THREADS=${config.PRICING_THREADS} ` +
      `PRICING_MAX_QUEUE=${config.PRICING_MAX_QUEUE}`,
  );
  const f = prepare();
  await mainThreadRun(f, 2000);
  const mainRates: Rate[] = [];
  for (let run = 1; run <= RUNS; run++) {
    const rate = await mainThreadRun(f, CDRS);
    mainRates.push(rate);
    log(`main thread, run ${run}: ${describeRate(rate)}`);
  }
  const poolRates = await poolRuns(f, config);
  const threads = config.PRICING_THREADS || availableParallelism();
  if (args['pool-only']) {
    printRows(rateRows(threads, mainRates, poolRates));
    log(`verdict: ${poolVerdict(poolRates)}`);
    if (args.out) writeFileSync(args.out, `${JSON.stringify({ load: loadavg(), mainRates, poolRates }, null, 2)}\n`);
    return;
  }
  const lat = await latencyRuns(f, config);
  const result = report(threads, mainRates, poolRates, lat);
  if (args.out) writeFileSync(args.out, `${JSON.stringify({ load: loadavg(), ...result }, null, 2)}\n`);
}

/** Stops the run: everything it started is stopped and removed before the process exits. */
function stop(code: number, why: string): void {
  exitCode ||= code;
  if (why) process.stderr.write(`bench-pricing: ${why}\n`);
  void cleanUp().finally(() => process.exit(exitCode));
}

const limit = setTimeout(() => stop(2, `stopped after --max-seconds=${args['max-seconds']}`), MAX_MS);
limit.unref();
process.once('SIGINT', () => stop(130, 'interrupted'));

main().then(
  () => stop(0, ''),
  (err: unknown) => {
    progress('');
    // after the time limit or an interrupt, the run's own failure is the consequence, not the cause
    stop(1, exitCode ? '' : `failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  },
);
