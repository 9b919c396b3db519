import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { decodeEnvelope, type Envelope, type Transport } from '../transport.js';
import type { RedisKeys } from './redis-keys.js';
import { redisErrorListener } from '../../log-limit.js';

/**
 * Cluster transport: each process subscribes to its own inbox channel. Pub/sub loses what is
 * sent while nobody listens, so nothing that must survive travels only this way: durable
 * messages are rows, and this only wakes their owner.
 */
export class RedisTransport implements Transport {
  private sub: Redis | undefined;
  private channel = '';

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

  async send(processId: string, env: Envelope): Promise<boolean> {
    const receivers = await this.redis.publish(this.inboxOf(processId), JSON.stringify(env));
    return receivers > 0;
  }

  async stop(): Promise<void> {
    const sub = this.sub;
    this.sub = undefined;
    if (sub) {
      await sub.unsubscribe(this.channel).catch(() => undefined);
      sub.disconnect();
    }
  }
}
