import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';

const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';

/**
 * A redis-server of our own on a loopback port, so that the chaos run can stop and restart
 * Redis without touching the one other tests share. Nothing is persisted (`--save ""`,
 * no AOF): a restart loses every key, as a crashed Redis without persistence would.
 */
export class PrivateRedis {
  private child: ChildProcess | undefined;

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    if (this.child) return;
    const child = spawn(
      REDIS_SERVER,
      ['--port', String(this.port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'],
      {
        stdio: 'ignore',
      },
    );
    // a missing binary, a failed spawn or an early exit (port taken) must fail the start, not crash the run
    const failed = new Promise<never>((_, reject) => {
      child.once('error', (err) => reject(err));
      child.once('exit', (code) => reject(new Error(`redis-server exited with ${String(code)} on port ${this.port}`)));
    });
    failed.catch(() => undefined);
    this.child = child;
    child.once('exit', () => {
      if (this.child === child) this.child = undefined;
    });
    await Promise.race([failed, waitForPort(this.port, 10_000)]);
    // the port may have answered for another process that took it first
    await Promise.race([failed, new Promise((r) => setTimeout(r, 100))]);
  }

  /** SIGTERM and wait for the exit (the port is free again afterwards). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
  }
}

/** Resolves once something accepts TCP connections on the port. */
async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
