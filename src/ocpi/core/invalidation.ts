import { randomUUID } from 'node:crypto';
import Type, { type Static } from '#typebox';
import { compileLazily } from '../../lazy-compile.js';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { RedisKeys } from '../../runtime/cluster/redis-keys.js';
import type { PartyIdentity } from './auth.js';
import { redisErrorListener } from '../../log-limit.js';

const Notice = Type.Object({
  origin: Type.String(),
  /** token hashes that stopped working */
  tokens: Type.Optional(Type.Array(Type.String())),
  /** an OCPI module whose objects changed */
  module: Type.Optional(Type.String()),
  /** the party whose objects of `module` changed (absent: any party of the module) */
  party: Type.Optional(Type.Object({ country_code: Type.String(), party_id: Type.String() })),
});
const checkNotice = compileLazily(Notice);

export interface InvalidationHandlers {
  tokens(hashes: readonly string[]): void;
  /** objects of `module` changed: those of `party`, or of any party when it is absent */
  objects(module: string, party?: PartyIdentity): void;
}

/**
 * Cluster mode: tells the other processes at once that tokens were revoked or objects written,
 * so their caches drop them in milliseconds instead of waiting for the cache bound. Pub/sub
 * can lose a notice (a process away, Redis failing over): the bound (1 s, docs/OCPI.md "Tokens") stays
 * the guarantee, this only makes the usual case immediate. Embedded mode has one process and
 * needs none of it.
 */
export class CacheInvalidation {
  private readonly origin = randomUUID();
  private subscriber: Redis | undefined;
  private readonly channel: string;

  constructor(
    private readonly redis: Redis | undefined,
    keys: RedisKeys,
    private readonly log: Logger,
  ) {
    this.channel = keys.ocpiInvalidation();
  }

  async start(handlers: InvalidationHandlers): Promise<void> {
    if (!this.redis || this.subscriber) return;
    const sub = this.redis.duplicate();
    sub.on('error', redisErrorListener(this.log, 'ocpi invalidation subscriber error'));
    sub.on('message', (_channel: string, text: string) => {
      let notice: unknown;
      try {
        notice = JSON.parse(text);
      } catch {
        return;
      }
      if (!checkNotice.Check(notice) || notice.origin === this.origin) return;
      if (notice.tokens) handlers.tokens(notice.tokens);
      if (notice.module) handlers.objects(notice.module, notice.party);
    });
    await sub.subscribe(this.channel);
    this.subscriber = sub;
  }

  tokensRevoked(hashes: readonly string[]): void {
    if (hashes.length > 0) this.publish({ origin: this.origin, tokens: [...hashes] });
  }

  objectsWritten(module: string, party: PartyIdentity): void {
    this.publish({
      origin: this.origin,
      module,
      party: { country_code: party.country_code, party_id: party.party_id },
    });
  }

  async stop(): Promise<void> {
    const sub = this.subscriber;
    this.subscriber = undefined;
    if (sub) await sub.quit().catch(() => undefined);
  }

  private publish(notice: Static<typeof Notice>): void {
    if (!this.redis) return;
    this.redis
      .publish(this.channel, JSON.stringify(notice))
      .catch((err: unknown) => this.log.warn({ err }, 'ocpi invalidation not published'));
  }
}
