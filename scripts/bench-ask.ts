import { spawn } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import type { ActorSystem } from '../src/runtime/actor-system.js';
import { REDIS_URL } from '../test/support/databases.js';
import { clusterEnvironment, embeddedEnvironment, startPlatform } from '../test/support/platforms.js';
import { startWorker } from '../test/support/cluster-harness.js';
import { echoProtocol, testActorsModule } from '../test/support/test-actors.js';
import { commandLine, numberOption } from './cli.js';

/**
 * Ask round trips: embedded (one process), and across two processes in cluster mode, beside a
 * raw ioredis publish/subscribe round trip to a second process measured in the same run.
 *
 *   npm run build && node dist/scripts/bench-ask.js [--seconds=5] [--rounds=3]
 *
 * The raw round trip and the cross-process ask are measured in alternated rounds, each ratio
 * taken within its round; the median of the rounds is the figure.
 * Bounded: each phase runs a fixed number of sequential round trips and a fixed time of
 * concurrent ones, then everything it started is stopped and removed.
 */
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 3000);
const { values: args } = commandLine({
  summary:
    'Ask round trips: embedded, and across two processes in cluster mode, beside a raw ioredis\n' +
    'publish/subscribe round trip measured in the same run.',
  options: {
    seconds: { type: 'string', default: '4', value: 'S', help: 'length of the throughput phase (32 callers)' },
    rounds: {
      type: 'string',
      default: '3',
      value: 'N',
      help: 'rounds of the cross-process phases, the raw round trip and the ask alternated',
    },
  },
  notes: 'BENCH_SEQUENTIAL sets the sequential round trips (default 3000).',
});
const SECONDS = numberOption('seconds', args.seconds, { min: 0.1 });
const ROUNDS = numberOption('rounds', args.rounds, { min: 1, integer: true });
const CONCURRENCY = 32;

interface Result {
  name: string;
  p50: number;
  p99: number;
  perSecond: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/** `roundTrip` from CONCURRENCY callers until `until` (performance.now()); how many were done. */
async function concurrently(roundTrip: () => Promise<unknown>, until: number): Promise<number> {
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        await roundTrip();
        done++;
      }
    }),
  );
  return done;
}

async function measure(name: string, roundTrip: () => Promise<unknown>): Promise<Result> {
  // warmed up both ways: a process just started (the raw echo) is slower for its first second
  for (let i = 0; i < 300; i++) await roundTrip();
  await concurrently(roundTrip, performance.now() + Math.min(1, SECONDS) * 1000);
  const samples: number[] = [];
  for (let i = 0; i < SEQUENTIAL; i++) {
    const t = performance.now();
    await roundTrip();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  const done = await concurrently(roundTrip, performance.now() + SECONDS * 1000);
  return { name, p50: percentile(samples, 50), p99: percentile(samples, 99), perSecond: done / SECONDS };
}

/** A second process echoing on raw Redis pub/sub, and a round trip to it. */
async function rawEcho(prefix: string): Promise<{ roundTrip: () => Promise<void>; stop: () => void }> {
  const child = spawn(process.execPath, [resolve(import.meta.dirname, 'bench/redis-echo.js'), REDIS_URL, prefix], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((r) => createInterface({ input: child.stdout! }).once('line', () => r()));
  const pub = new Redis(REDIS_URL);
  const sub = new Redis(REDIS_URL);
  const waiting = new Map<string, () => void>();
  sub.on('message', (_c: string, text: string) => {
    const id = (JSON.parse(text) as { id: string }).id;
    waiting.get(id)?.();
    waiting.delete(id);
  });
  await sub.subscribe(`${prefix}:raw:rep`);
  let n = 0;
  return {
    roundTrip: () => {
      const id = String(n++);
      return new Promise<void>((r) => {
        waiting.set(id, r);
        void pub.publish(`${prefix}:raw:req`, JSON.stringify({ id, echo: 'ping' }));
      });
    },
    stop: () => {
      child.kill('SIGTERM');
      pub.disconnect();
      sub.disconnect();
    },
  };
}

async function askLoop(name: string, actors: ActorSystem): Promise<Result> {
  let n = 0;
  return measure(name, () => actors.ref(echoProtocol, `k${n++ % 100}`).ask({ echo: 'ping' }));
}

/** The table of the phases, and the cross-process ratios: each round's and their median. */
function report(results: Result[]): void {
  const raws = results.filter((r) => r.name.startsWith('raw'));
  const crosses = results.filter((r) => r.name.startsWith('ask, cluster'));
  console.log(
    `\nmachine: ${cpus().length} x ${cpus()[0]?.model ?? '?'}, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}`,
  );
  console.log(
    `sequential round trips: ${SEQUENTIAL}; concurrent: ${CONCURRENCY} callers for ${SECONDS} s; cross-process rounds: ${ROUNDS}\n`,
  );
  console.log('| what | p50 ms | p99 ms | round trips/s (32 concurrent) |');
  console.log('|---|---|---|---|');
  for (const r of results)
    console.log(`| ${r.name} | ${r.p50.toFixed(3)} | ${r.p99.toFixed(3)} | ${Math.round(r.perSecond)} |`);
  const pairs = crosses.flatMap((cross, i) => {
    const raw = raws[i];
    return raw ? [{ latency: cross.p50 / raw.p50, throughput: cross.perSecond / raw.perSecond }] : [];
  });
  if (pairs.length > 0) {
    const list = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ');
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? NaN;
    const latency = pairs.map((p) => p.latency);
    const throughput = pairs.map((p) => p.throughput);
    console.log(
      `\ncross-process ask p50 / raw Redis round trip p50 = ${median(latency).toFixed(2)}x median (rounds: ${list(latency)}; aim: <= 2x)`,
    );
    console.log(
      `cross-process ask throughput / raw Redis throughput = ${median(throughput).toFixed(2)} median (rounds: ${list(throughput)}; aim: >= 0.8)`,
    );
  }
}

async function main(): Promise<void> {
  const results: Result[] = [];

  const embedded = await embeddedEnvironment();
  const local = await startPlatform(embedded, [testActorsModule()]);
  results.push(await askLoop('ask, embedded (one process)', local.platform.services.actors));
  await local.stop();
  await embedded.cleanup();

  const cluster = await clusterEnvironment({ LEASE_TTL_MS: '6000' });
  const worker = await startWorker(cluster.env);
  const client = await startPlatform(cluster, [testActorsModule()], {
    hostShards: false,
    overrides: { PROCESS_ROLE: 'worker' },
  });
  try {
    // wait until the worker owns every shard
    for (let i = 0; i < 100; i++) {
      try {
        await client.platform.services.actors.ref(echoProtocol, 'k0').ask({ echo: 1 }, { timeoutMs: 500 });
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    // alternated, so that a shared machine's slower seconds fall on both sides alike
    const raw = await rawEcho(cluster.env.REDIS_PREFIX ?? 'bench');
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        const of = ROUNDS > 1 ? `, round ${round}` : '';
        results.push(await measure(`raw ioredis pub/sub round trip (2 processes)${of}`, raw.roundTrip));
        results.push(
          await askLoop(
            `ask, cluster (client process -> worker process via Redis)${of}`,
            client.platform.services.actors,
          ),
        );
      }
    } finally {
      raw.stop();
    }
  } finally {
    await client.stop();
    await worker.stop();
    await cluster.cleanup();
  }

  report(results);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
