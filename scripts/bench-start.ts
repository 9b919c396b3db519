import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { request } from 'node:http';
import { freePort } from './load-test/inspector.js';
import { commandLine, numberOption } from './cli.js';

/**
 * Cold start: the time from spawning a process to its first 200 on /readyz, for the product's
 * entry (`npm start`: dist/server/main.js, embedded on an already migrated SQLite file), the
 * same code unbundled (dist/src/main.js), and bare `node:http` answering 200 at once, measured
 * in the same run. The three take turns start after start, so that the machine's load falls
 * on all of them alike; the first round warms the file cache and is not counted.
 *
 *   npm run build && node dist/scripts/bench-start.js [--starts=8]
 *     [--entry=/other/build/dist/server/main.js --entry=dist/server/main.js]
 *
 * `--entry` (repeatable) names the builds to compare instead of the product and its unbundled
 * code: each takes its turn beside bare `node:http`, on the same database (migrated by this
 * build's migrate script, so the builds compared must share their migrations).
 *
 * Bounded: each start is stopped (SIGKILL) as soon as it answered, or after --timeout seconds;
 * the temporary database is removed at the end.
 */
const { values: args } = commandLine({
  summary:
    'Cold start to /readyz 200: the product (dist/server/main.js), the same code unbundled\n' +
    '(dist/src/main.js) and bare node:http, taking turns in the same run.',
  options: {
    starts: { type: 'string', default: '8', value: 'N', help: 'counted starts of each (after one not counted)' },
    timeout: { type: 'string', default: '30', value: 'S', help: 'seconds a start may take before the run fails' },
    entry: {
      type: 'string',
      multiple: true,
      value: 'FILE',
      help: 'a build to start instead of the product and its unbundled code',
    },
  },
});
const STARTS = numberOption('starts', args.starts, { min: 1, max: 200, integer: true });
const TIMEOUT_MS = numberOption('timeout', args.timeout, { min: 1 }) * 1000;
const POLL_MS = 5;

const dist = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'evp-start-'));
const database = `sqlite:${join(dir, 'start.sqlite')}`;

interface Target {
  name: string;
  entry: string;
  times: number[];
}

const bareHttp: Target = { name: 'bare node:http', entry: join(dist, 'scripts/bench/bare-http.js'), times: [] };
const targets: Target[] = args.entry
  ? [...args.entry.map((e) => ({ name: e, entry: resolve(e), times: [] })), bareHttp]
  : [
      { name: 'product (dist/server/main.js)', entry: join(dist, 'server/main.js'), times: [] },
      { name: 'unbundled (dist/src/main.js)', entry: join(dist, 'src/main.js'), times: [] },
      bareHttp,
    ];

/** The status of GET /readyz on `port`, 0 while nothing answers. */
function readyz(port: number): Promise<number> {
  return new Promise((done) => {
    const req = request({ host: '127.0.0.1', port, path: '/readyz', timeout: 1000 }, (res) => {
      res.resume();
      done(res.statusCode ?? 0);
    });
    req.on('error', () => done(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Milliseconds from spawn to the first 200 on /readyz. */
async function start(entry: string): Promise<number> {
  const port = await freePort();
  const began = performance.now();
  const child = spawn(process.execPath, [entry], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      DATABASE_URL: database,
      REDIS_URL: '',
      LOG_LEVEL: 'warn',
      CSMS_API_KEY: 'bench-start-operator-key-0123456789',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  try {
    for (;;) {
      if ((await readyz(port)) === 200) return performance.now() - began;
      if (child.exitCode !== null) throw new Error(`${entry} exited with code ${child.exitCode} before it was ready`);
      if (performance.now() - began > TIMEOUT_MS) throw new Error(`${entry} not ready after ${TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

function median(sorted: number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}

try {
  const migrate = spawnSync(process.execPath, [join(dist, 'scripts/migrate.js')], {
    env: { PATH: process.env.PATH ?? '', DATABASE_URL: database, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (migrate.status !== 0) throw new Error('migrating the temporary database failed');
  console.log(`machine: ${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} CPUs, Node ${process.version}`);
  for (let round = 0; round <= STARTS; round++)
    for (const t of targets) {
      const ms = await start(t.entry);
      if (round > 0) t.times.push(ms);
    }
  const bare = median([...bareHttp.times].sort((a, b) => a - b));
  const width = Math.max(...targets.map((t) => t.name.length));
  for (const t of targets) {
    const sorted = [...t.times].sort((a, b) => a - b);
    const m = median(sorted);
    const spread = `${Math.round(sorted[0] ?? NaN)}-${Math.round(sorted[sorted.length - 1] ?? NaN)}`;
    console.log(
      `${t.name.padEnd(width)} median ${Math.round(m)} ms (${spread}), ${(m / bare).toFixed(2)}x bare node:http; all: ${t.times.map(Math.round).join(' ')}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
