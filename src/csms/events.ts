import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { compileLazily } from '../lazy-compile.js';
import { CsmsEvent } from '../../actors/charge-point/ports.js';
import { redisErrorListener } from '../log-limit.js';

// the event type lives with the actor that publishes it (actors/ imports no CSMS internals)
export type { CsmsEvent };

const checkEvent = compileLazily(CsmsEvent);

/** How long a process stops publishing after a publish that no process received. */
const QUIET_MS = 5000;

export interface CsmsEventChannels {
  /** the events themselves */
  events: string;
  /** "a process started listening": ends every publisher's quiet period */
  listeners: string;
}

/**
 * Change notifications for live views. In cluster mode they travel over Redis pub/sub, because
 * the charger's socket and the operator's event stream are usually on different processes.
 * Losing one is harmless: a view refetches on the next one, and the /v1 API is the truth.
 *
 * Only what someone listens to is sent: a process subscribes to the events channel while it has
 * a listener (an open event stream), and a publish that no process received makes the publisher
 * quiet for a while. A process that gains its first listener announces it on the listeners
 * channel, which every process watches, and that ends the quiet at once. So a fleet of chargers
 * booting with no dashboard open costs no Redis traffic beyond one publish per process per
 * quiet period.
 */
export class CsmsEventBus {
  private readonly local = new EventEmitter();
  private subscriber: Redis | undefined;
  private listening = false;
  private quietUntil = 0;

  constructor(
    private readonly log: Logger,
    private readonly redis: Redis | undefined,
    private readonly channels: CsmsEventChannels,
  ) {
    this.local.setMaxListeners(0);
  }

  async start(): Promise<void> {
    if (!this.redis) return;
    const sub = this.redis.duplicate();
    this.subscriber = sub;
    sub.on('error', redisErrorListener(this.log, 'csms event subscriber error'));
    sub.on('message', (channel: string, text: string) => {
      if (channel === this.channels.listeners) this.quietUntil = 0;
      else this.received(text);
    });
    await sub.subscribe(this.channels.listeners);
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

  /**
   * Whether a publish now could reach anyone: embedded, while this process has a listener; in a
   * cluster, outside a quiet period. A turn that changed nothing anyone watches (the meter values
   * of a fleet with no console open) then builds and schedules no event at all.
   */
  listened(): boolean {
    if (!this.redis) return this.local.listenerCount('event') > 0;
    return Date.now() >= this.quietUntil;
  }

  publish(event: CsmsEvent): void {
    if (!this.redis) {
      this.local.emit('event', event);
      return;
    }
    if (Date.now() < this.quietUntil) return;
    this.redis.publish(this.channels.events, JSON.stringify(event)).then(
      (receivers) => {
        if (receivers === 0) this.quietUntil = Date.now() + QUIET_MS;
      },
      (err: unknown) => this.log.debug({ err }, 'csms event not published'),
    );
  }

  subscribe(fn: (event: CsmsEvent) => void): () => void {
    this.local.on('event', fn);
    this.updateSubscription();
    return () => {
      this.local.off('event', fn);
      this.updateSubscription();
    };
  }

  /** Subscribed to the events channel exactly while this process has a listener. */
  private updateSubscription(): void {
    const sub = this.subscriber;
    const redis = this.redis;
    if (!sub || !redis) return;
    const wanted = this.local.listenerCount('event') > 0;
    if (wanted === this.listening) return;
    this.listening = wanted;
    const failed = (err: unknown): void => this.log.warn({ err }, 'csms event subscription not changed');
    if (!wanted) {
      sub.unsubscribe(this.channels.events).catch(failed);
      return;
    }
    this.quietUntil = 0;
    sub
      .subscribe(this.channels.events)
      .then(() => redis.publish(this.channels.listeners, '1'))
      .catch(failed);
  }

  async stop(): Promise<void> {
    this.local.removeAllListeners();
    if (this.subscriber) {
      this.subscriber.disconnect();
      this.subscriber = undefined;
    }
  }
}
