import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { decodeEnvelope, type Envelope, type Transport } from '../transport.js';
import type { RedisKeys } from './redis-keys.js';

/** A publish waiting for the end of the tick (`RedisTransport.send`). */
interface QueuedPublish {
  channel: string;
  text: string;
  resolve(receivers: number): void;
  reject(err: unknown): void;
}
import { redisErrorListener } from '../../log-limit.js';

/**
 * Cluster transport: each process subscribes to its own inbox channel. Pub/sub loses what is
 * sent while nobody listens, so nothing that must survive travels only this way: durable
 * messages are rows, and this only wakes their owner.
 */
export class RedisTransport implements Transport {
  private sub: Redis | undefined;
  private channel = '';
  /** this tick's publishes, written together when it ends */
  private queued: QueuedPublish[] = [];

  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
    private readonly log: Logger,
  ) {}

  inboxOf(processId: string): string {
    return this.keys.inbox(processId);
  }

  async start(processId: string, onEnvelope: (env: Envelope) => void): Promise<void> {
    this.channel = this.inboxOf(processId);
    const sub = this.redis.duplicate();
    this.sub = sub;
    // without a listener ioredis prints every failed reconnect to stderr as an unhandled error
    sub.on('error', redisErrorListener(this.log, 'inbox subscriber error'));
    sub.on('message', (_channel: string, text: string) => {
      // another process wrote it (or anything that can publish to the channel): a message that
      // is not JSON or not an envelope is dropped here, never handed on
      let env: Envelope;
      try {
        env = decodeEnvelope(text);
      } catch (err) {
        this.log.warn({ err }, 'unreadable envelope dropped');
        return;
      }
      onEnvelope(env);
    });
    await sub.subscribe(this.channel);
  }

  /**
   * Publishes are written at the end of the tick that made them (`process.nextTick`, which runs
   * after the promise jobs of the tick too), several as one pipeline: the replies of a burst of
   * asks, read from one socket read, leave in one write instead of a system call each. Order is
   * kept (one connection, published in the order sent); a single publish goes out as before.
   */
  send(processId: string, env: Envelope): Promise<boolean> {
    const channel = this.inboxOf(processId);
    const text = JSON.stringify(env);
    return new Promise<number>((resolve, reject) => {
      if (this.queued.push({ channel, text, resolve, reject }) === 1) process.nextTick(this.flush);
    }).then((receivers) => receivers > 0);
  }

  private readonly flush = (): void => {
    const batch = this.queued;
    this.queued = [];
    const [only] = batch;
    if (batch.length === 1 && only) {
      this.redis.publish(only.channel, only.text).then(only.resolve, only.reject);
      return;
    }
    const pipeline = this.redis.pipeline();
    for (const p of batch) pipeline.publish(p.channel, p.text);
    pipeline.exec().then(
      (results) => {
        batch.forEach((p, i) => {
          const [err, receivers] = results?.[i] ?? [new Error('no reply to a pipelined publish'), 0];
          if (err) p.reject(err);
          else p.resolve(typeof receivers === 'number' ? receivers : Number(receivers));
        });
      },
      (err: unknown) => {
        for (const p of batch) p.reject(err);
      },
    );
  };

  async stop(): Promise<void> {
    const sub = this.sub;
    this.sub = undefined;
    if (sub) {
      await sub.unsubscribe(this.channel).catch(() => undefined);
      sub.disconnect();
    }
  }
}
