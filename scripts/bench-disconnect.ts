import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import WebSocket from 'ws';
import { PG_URL, REDIS_URL, tempSchema } from '../test/support/databases.js';
import { freePort } from './load-test/inspector.js';
import { commandLine, numberOption } from './cli.js';

/**
 * A mass disconnect: N OCPP 1.6 chargers connect and boot, then every socket drops at once (a
 * site's network, a load balancer's restart). Measured: the time until the fleet overview shows
 * none online, and the platform process's CPU from the drop to 500 ms after that. Each `--entry`
 * (a build's dist/server/main.js; default this build's) is started afresh per run, and the
 * entries take turns, so that two builds are compared under the same load of the machine.
 *
 *   npm run build && node dist/scripts/bench-disconnect.js [--chargers=5000] [--runs=3] [--cluster]
 *     [--entry=/other/build/dist/server/main.js --entry=dist/server/main.js]
 *
 * Embedded on a fresh SQLite file by default; `--cluster` runs one web process on a fresh
 * PostgreSQL schema with Redis (TEST_DATABASE_URL, TEST_REDIS_URL; the schema is migrated with
 * the entry's own migrate script and dropped after). Bounded: every process is stopped and every
 * temporary database removed at the end of its run.
 */
const { values: args } = commandLine({
  summary:
    'A mass disconnect: chargers boot, every socket drops at once; the time until none shows\n' +
    'online and the CPU it cost, per entry, the entries taking turns.',
  options: {
    chargers: { type: 'string', default: '5000', value: 'N', help: 'chargers that connect, boot and drop' },
    runs: { type: 'string', default: '3', value: 'N', help: 'runs of every entry, taking turns' },
    cluster: { type: 'boolean', default: false, help: 'a web process on PostgreSQL and Redis instead of SQLite' },
    entry: { type: 'string', multiple: true, value: 'FILE', help: 'a build to start (default: this one)' },
  },
});
const CHARGERS = numberOption('chargers', args.chargers, { min: 1, max: 20_000, integer: true });
const RUNS = numberOption('runs', args.runs, { min: 1, max: 20, integer: true });
const ENTRIES = (args.entry ?? [resolve(import.meta.dirname, '../server/main.js')]).map((e) => resolve(e));
const KEY = 'bench-disconnect-operator-key-0123456789';

interface Result {
  offlineMs: number;
  cpuMs: number;
}

/** User and system CPU of a process so far (ms), from /proc. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * (1000 / 100);
}

async function ready(base: string, child: ChildProcess): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the platform exited with code ${child.exitCode}`);
    const status = await fetch(`${base}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Registers and boots the chargers: the open sockets, each answered its BootNotification. */
async function bootFleet(base: string): Promise<WebSocket[]> {
  const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
  const sockets: WebSocket[] = [];
  for (let i = 0; i < CHARGERS; i += 100) {
    const batch = Array.from({ length: Math.min(100, CHARGERS - i) }, (_, k) => `BD-${i + k}`);
    await Promise.all(
      batch.map(async (id) => {
        const res = await fetch(`${base}/v1/charge-points`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ id, protocol: 'ocpp1.6' }),
        });
        if (res.status !== 201) throw new Error(`registering ${id}: ${res.status}`);
        const { password } = (await res.json()) as { password: string };
        const auth = `Basic ${Buffer.from(`${id}:${password}`).toString('base64')}`;
        const ws = new WebSocket(`${base.replace('http', 'ws')}/ocpp/${id}`, ['ocpp1.6'], {
          headers: { Authorization: auth },
        });
        await new Promise<void>((done, fail) => {
          ws.once('error', fail);
          ws.once('open', () =>
            ws.send(JSON.stringify([2, 'b', 'BootNotification', { chargePointVendor: 'V', chargePointModel: 'M' }])),
          );
          ws.once('message', () => done());
        });
        sockets.push(ws);
      }),
    );
  }
  return sockets;
}

async function onlineCount(base: string): Promise<number> {
  const res = await fetch(`${base}/v1/fleet?alerts=0`, { headers: { Authorization: `Bearer ${KEY}` } });
  return ((await res.json()) as { online: number }).online;
}

async function run(entry: string): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'evp-disconnect-'));
  const schema = args.cluster ? await tempSchema() : undefined;
  const env: Record<string, string> = schema
    ? { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema.schema, REDIS_URL, REDIS_PREFIX: `${schema.schema}:` }
    : { DATABASE_URL: `sqlite:${join(dir, 'disconnect.sqlite')}`, REDIS_URL: '' };
  let child: ChildProcess | undefined;
  try {
    if (schema) {
      const migrate = spawnSync(process.execPath, [join(dirname(entry), '../scripts/migrate.js')], {
        env: { PATH: process.env.PATH ?? '', ...env, LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      if (migrate.status !== 0) throw new Error('migrating the temporary schema failed');
    }
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, [entry], {
      env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port), LOG_LEVEL: 'warn', CSMS_API_KEY: KEY },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await ready(base, child);
    const sockets = await bootFleet(base);
    // the boots' own writes settle first
    await new Promise((r) => setTimeout(r, 1500));
    const pid = child.pid ?? 0;
    const cpu0 = cpuMs(pid);
    const dropped = performance.now();
    for (const ws of sockets) ws.terminate();
    while ((await onlineCount(base)) > 0) await new Promise((r) => setTimeout(r, 10));
    const offlineMs = performance.now() - dropped;
    await new Promise((r) => setTimeout(r, 500));
    return { offlineMs, cpuMs: cpuMs(pid) - cpu0 };
  } finally {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child?.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    }
    await schema?.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `machine: ${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} CPUs, Node ${process.version}; ` +
    `${CHARGERS} chargers, ${args.cluster ? 'a web process on PostgreSQL and Redis' : 'embedded on SQLite'}`,
);
const results = new Map<string, Result[]>(ENTRIES.map((e) => [e, []]));
for (let i = 0; i < RUNS; i++)
  for (const entry of ENTRIES) {
    const r = await run(entry);
    results.get(entry)?.push(r);
    console.log(
      `run ${i + 1}, ${entry}: none online after ${Math.round(r.offlineMs)} ms, CPU ${Math.round(r.cpuMs)} ms`,
    );
  }
for (const [entry, rs] of results)
  console.log(
    `${entry}: none online after ${rs.map((r) => Math.round(r.offlineMs)).join(', ')} ms; ` +
      `CPU ${rs.map((r) => Math.round(r.cpuMs)).join(', ')} ms (from the drop to 500 ms after)`,
  );
