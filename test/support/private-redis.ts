import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { eventually } from './eventually.js';

const REDIS_SERVER = process.env.TEST_REDIS_SERVER ?? '/usr/bin/redis-server';

/** A port nobody listens on now (the kernel picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * A redis-server of the test's own, on its own port and without persistence, that a test may
 * stop and start again (an outage, a restart that forgets every key) without touching the
 * machine's Redis the other tests share.
 */
/**
 * Waits until a Redis at `url` answers PING (one short-lived client per try, no retries of its
 * own); `tls` for a rediss:// server.
 */
export async function redisAnswers(url: string, what: string, tls?: { ca: string }): Promise<void> {
  await eventually(
    async () => {
      const probe = new Redis(url, {
        ...(tls ? { tls } : {}),
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        return (await probe.ping()) === 'PONG' ? true : undefined;
      } catch {
        return undefined;
      } finally {
        probe.disconnect();
      }
    },
    { timeoutMs: 10_000, what },
  );
}

export class PrivateRedis {
  private child: ChildProcess | undefined;

  private constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.resume();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server (empty) and waits until it answers PING. */
  async resume(): Promise<void> {
    const child = spawn(
      REDIS_SERVER,
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    child.on('error', () => undefined);
    this.child = child;
    await redisAnswers(this.url, `redis-server on port ${this.port} answers`);
  }

  /** Stops the server without closing its connections (SIGSTOP): it takes them and answers nothing. */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  /** Lets a frozen server go on (SIGCONT). */
  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  /** Kills the server at once (its data is gone) and waits for it to exit. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }
}
