import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

const DIST = resolve(import.meta.dirname, '../..');

/** The product's entry as `npm start` and the Procfile run it: the bundle of dist/src (scripts/bundle-server.mjs). */
export const MAIN = resolve(DIST, 'server/main.js');

/** every child still running; killed when the test process exits, so none outlives a failed run */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface NodeProcess {
  child: ChildProcess;
  pid: number;
  /** http://127.0.0.1:<port> (a worker serves /healthz, /readyz and /metrics there) */
  url: string;
  /** the runtime's process id (as in shard leases), from the start-up log line */
  processId: string;
  /** every JSON log line so far */
  logs: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
  signal(sig: NodeJS.Signals): void;
  /** SIGTERM and wait for the exit code */
  stop(): Promise<number | null>;
}

/**
 * Starts a real platform process from dist/ (`entry` defaults to the product's main) with the
 * given environment, and resolves once it logged that it is listening (web) or started (worker).
 */
export async function startNode(
  env: Record<string, string>,
  opts: { entry?: string; startTimeoutMs?: number } = {},
): Promise<NodeProcess> {
  const entry = opts.entry ?? MAIN;
  const child = spawn(process.execPath, [entry], {
    // the start-up line is read from the log, so the child always logs at info or finer
    env: {
      ...process.env,
      // the cluster suites' chargers use made-up id tags (token checks: test/roaming/tokens.test.ts)
      OCPP_UNKNOWN_ID_TAGS: 'accept',
      ...env,
      LOG_LEVEL: env.LOG_LEVEL === 'debug' || env.LOG_LEVEL === 'trace' ? env.LOG_LEVEL : 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  running.add(child);
  const exited = new Promise<number | null>((r) =>
    child.once('exit', (code) => {
      running.delete(child);
      r(code);
    }),
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const ready = new Promise<{ url: string; processId: string }>((resolveReady, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`process did not start in time\n${stderr}`));
    }, opts.startTimeoutMs ?? 30_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      logs.push(rec);
      if (rec.msg === 'listening' || rec.msg === 'worker started') {
        clearTimeout(timer);
        resolveReady({
          url: rec.port !== undefined ? `http://127.0.0.1:${String(rec.port)}` : '',
          processId: String(rec.processId),
        });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`process exited with ${String(code)} before it started\n${stderr}`));
    });
  });
  const { url, processId } = await ready;
  return {
    child,
    pid: child.pid ?? 0,
    url,
    processId,
    logs,
    exited,
    signal: (sig) => {
      child.kill(sig);
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

export interface FailedStart {
  code: number | null;
  /** stdout's lines, as written */
  lines: string[];
  stderr: string;
  ms: number;
}

/**
 * Starts a platform process that is expected not to start, and resolves when it exits (or kills it
 * after `timeoutMs`: `code` is then null). Nothing of the environment is added but the settings.
 */
export async function runToExit(
  env: Record<string, string>,
  opts: { entry?: string; timeoutMs?: number } = {},
): Promise<FailedStart> {
  const started = Date.now();
  const child = spawn(process.execPath, [opts.entry ?? MAIN], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 15_000);
  // 'close': the exit and every line written before it
  const code = await new Promise<number | null>((r) => child.once('close', (c) => r(c)));
  clearTimeout(timer);
  running.delete(child);
  return { code, lines: stdout.split('\n').filter((l) => l !== ''), stderr, ms: Date.now() - started };
}
