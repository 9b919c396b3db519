import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Compile } from 'typebox/compile';
import { CsmsEvent } from '../../actors/charge-point/ports.js';

// the event type lives with the actor that publishes it (actors/ imports no CSMS internals)
export type { CsmsEvent };

const checkEvent = Compile(CsmsEvent);

/**
 * Change notifications for live views. In cluster mode they travel over Redis pub/sub, because
 * the charger's socket and the operator's event stream are usually on different processes.
 * Losing one is harmless: a view refetches on the next one, and the /v1 API is the truth.
 */
export class CsmsEventBus {
  private readonly local = new EventEmitter();
  private subscriber: Redis | undefined;

  constructor(
    private readonly log: Logger,
    private readonly redis: Redis | undefined,
    private readonly channel: string,
  ) {
    this.local.setMaxListeners(0);
  }

  async start(): Promise<void> {
    if (!this.redis) return;
    const sub = this.redis.duplicate();
    this.subscriber = sub;
    sub.on('error', (err: Error) => this.log.warn({ err: err.message }, 'csms event subscriber error'));
    sub.on('message', (_channel: string, text: string) => this.received(text));
    await sub.subscribe(this.channel);
  }

  /**
   * An event from some process over Redis: passed on only when it is one (a process of another
   * release, or anything else publishing on the channel, could send something else).
   */
  private received(text: string): void {
    let event: unknown;
    try {
      event = JSON.parse(text);
    } catch {
      this.log.debug('csms event not JSON');
      return;
    }
    if (!checkEvent.Check(event)) {
      this.log.warn({ event: text.slice(0, 200) }, 'csms event dropped: not a CsmsEvent');
      return;
    }
    try {
      this.local.emit('event', event);
    } catch (err) {
      // a listener's failure must not reach the Redis client's message handler
      this.log.warn({ err }, 'csms event listener failed');
    }
  }

  publish(event: CsmsEvent): void {
    if (this.local.listenerCount('event') === 0 && !this.redis) return;
    if (this.redis) {
      this.redis
        .publish(this.channel, JSON.stringify(event))
        .catch((err: unknown) => this.log.debug({ err }, 'csms event not published'));
    } else {
      this.local.emit('event', event);
    }
  }

  subscribe(fn: (event: CsmsEvent) => void): () => void {
    this.local.on('event', fn);
    return () => this.local.off('event', fn);
  }

  async stop(): Promise<void> {
    this.local.removeAllListeners();
    if (this.subscriber) {
      this.subscriber.disconnect();
      this.subscriber = undefined;
    }
  }
}
