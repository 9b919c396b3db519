import { fork, spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from './inspector.js';
import type { ChargerSpec } from './protocol.js';
import { log, progress } from './console.js';

/** The servers the load test starts, each in its own child process, and how it registers chargers. */
export interface Target {
  url: string;
  pid: number | undefined;
  child: ChildProcess | undefined;
  /** inspector port of a process this script started (memory after a forced GC) */
  inspectPort: number | undefined;
}

const dist = join(import.meta.dirname, '..');

/** One platform process (`npm start`'s dist/server/main.js) on SQLite in `dir`, without Redis. */
export async function startEmbeddedServer(dir: string, apiKey: string, nodeArgs: string[]): Promise<Target> {
  return startPlatformServer({ DATABASE_URL: `sqlite:${join(dir, 'load.sqlite')}`, REDIS_URL: '' }, apiKey, nodeArgs);
}

/**
 * One platform process (dist/server/main.js) with the database and Redis settings of `env` (cluster mode:
 * several of these on one PostgreSQL schema and Redis prefix).
 */
export async function startPlatformServer(
  env: Record<string, string>,
  apiKey: string,
  nodeArgs: string[],
): Promise<Target> {
  const inspectPort = await freePort();
  const child = spawn(
    process.execPath,
    [`--inspect=127.0.0.1:${inspectPort}`, ...nodeArgs, join(dist, '../server/main.js')],
    {
      env: {
        ...process.env,
        ...env,
        PORT: '0',
        HOST: '127.0.0.1',
        CSMS_API_KEY: apiKey,
        LOG_LEVEL: 'info',
        // the simulated fleet's id tags are no OCPI tokens: a private site's setting
        OCPP_UNKNOWN_ID_TAGS: 'accept',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  // the inspector announces every attach on stderr; pass on everything else
  child.stderr?.on('data', (d: Buffer) => {
    const text = d.toString().replace(/^(Debugger .*|For help, see: .*)\n/gm, '');
    if (text) process.stderr.write(text);
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      // a server that never said it listens must not outlive the run
      child.kill('SIGKILL');
      reject(new Error('server did not start'));
    }, 60_000);
    // the interface keeps reading the server's log until it exits: a pipe left unread would
    // block the server's logger once the pipe is full
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const port = listeningPort(line);
      if (port) {
        clearTimeout(timer);
        resolve({ url: `http://127.0.0.1:${port}`, pid: child.pid, child, inspectPort });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${String(code)}`));
    });
  });
}

/** The port of the platform's 'listening' log line, if `line` is that line. */
function listeningPort(line: string): number | undefined {
  try {
    const rec: unknown = JSON.parse(line);
    if (typeof rec !== 'object' || rec === null || !('msg' in rec) || !('port' in rec)) return undefined;
    return rec.msg === 'listening' && typeof rec.port === 'number' ? rec.port : undefined;
  } catch {
    return undefined; // not a log line
  }
}

/** A baseline server of this folder (bare-server.js, rpc-server.js) that reports its port over IPC. */
export async function startScriptServer(script: string): Promise<Target> {
  const inspectPort = await freePort();
  const child = fork(join(dist, 'load-test', script), [], {
    stdio: ['ignore', 'inherit', 'ignore', 'ipc'],
    execArgv: [`--inspect=127.0.0.1:${inspectPort}`],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${String(code)}`)));
  });
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, child, inspectPort };
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

/** CPU seconds (user + system) a local process has used so far, from /proc/<pid>/stat. */
export async function cpuSecondsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // the fields after the command name, which is in parentheses and may hold spaces
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name; clock ticks of 1/100 s
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export interface Registration {
  count: number;
  apiKey: string;
  protocolOf(i: number): ChargerSpec['protocol'];
  transactingOf(i: number): boolean;
}

/**
 * Removes the chargers a run registered (DELETE /v1/charge-points/{id}?force=true), 32 requests at
 * a time, so that a run against a long-lived platform leaves nothing behind. A failure is counted,
 * not thrown: the run's figures stand.
 */
export async function unregister(specs: ChargerSpec[], apiKey: string): Promise<{ removed: number; failed: number }> {
  leftovers.delete(specs);
  let next = 0;
  let removed = 0;
  let failed = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < specs.length; i = next++) {
      // a run interrupted while registering leaves holes
      const spec = specs[i];
      if (spec === undefined) continue;
      const base = spec.url.replace(/^ws/, 'http').replace(/\/ocpp\/[^/]+$/, '');
      const res = await fetch(`${base}/v1/charge-points/${encodeURIComponent(spec.id)}?force=true`, {
        method: 'DELETE',
        headers: { Authorization: `Bearer ${apiKey}` },
        signal: AbortSignal.timeout(30_000),
      }).catch(() => undefined);
      if (res?.status === 204 || res?.status === 404) removed += 1;
      else failed += 1;
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  log(`removed ${removed} chargers${failed > 0 ? `, ${failed} could not be removed` : ''}`);
  return { removed, failed };
}

/** The chargers of each run registered and not yet removed (`removeLeftovers`), with the key that removes them. */
const leftovers = new Map<ChargerSpec[], string>();

/**
 * Removes what runs registered and did not remove yet: on an interrupt (Ctrl-C, SIGTERM), whose
 * default would end the process and leave the chargers registered on a long-lived platform.
 */
export async function removeLeftovers(): Promise<void> {
  for (const [specs, apiKey] of [...leftovers]) await unregister(specs, apiKey);
}

/** Registers `count` chargers over /v1, spread over the targets, 32 requests at a time. */
export async function register(targets: Target[], r: Registration): Promise<ChargerSpec[]> {
  const specs: ChargerSpec[] = [];
  leftovers.set(specs, r.apiKey);
  const runId = Date.now().toString(36);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < r.count; i = next++) {
      const target = targets[i % targets.length]!;
      const protocol = r.protocolOf(i);
      const res = await fetch(`${target.url}/v1/charge-points`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${r.apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ id: `LT-${runId}-${i}`, protocol }),
        // bounded: a server that stops answering fails the run instead of stalling it
        signal: AbortSignal.timeout(60_000),
      });
      if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${await res.text()}`);
      // our own server's answer to the registration above
      const body = (await res.json()) as { id: string; password: string };
      const url = `${target.url.replace(/^http/, 'ws')}/ocpp/${body.id}`;
      specs[i] = { id: body.id, password: body.password, protocol, url, transacting: r.transactingOf(i) };
      if (i % 500 === 0) progress(`registering chargers: ${i}/${r.count}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  log(`registered ${r.count} chargers`);
  return specs;
}
