import type { ActorMessenger, WriteStep } from '../../src/runtime/types.js';

/**
 * What the partner-outbox actor is given by the OCPI module (src/ocpi/outbox/): the outbox rows,
 * and a courier that renders and sends one for the partner's link as it is now. The actor
 * imports no OCPI internals; it keeps order, retries, dead letters and the breaker.
 */
export interface PartnerOutboxDeps {
  /** the partner's rows due at `now`, oldest first */
  due(partnerKey: string, now: number, limit: number): Promise<OutboxEntry[]>;
  /** a courier for the partner's link, or why nothing can be sent to it (not registered) */
  courier(partnerKey: string, actors: ActorMessenger): Promise<Courier | { unavailable: string }>;
  /** the row was sent (or has nothing to send any more): it goes, unless a newer change came */
  delivered(entry: OutboxEntry): WriteStep;
  failed(
    entry: OutboxEntry,
    failure: { attempts: number; next_attempt_at: number; error: string; dead: boolean },
  ): WriteStep;
  policy: OutboxPolicy;
}

export interface OutboxEntry {
  id: number;
  version: number;
  attempts: number;
  object_key: string;
  kind: string;
  /** the object whose row, when it is sent in the same flush, goes first (a CDR's session) */
  follows?: string;
}

export interface Courier {
  deliver(entry: OutboxEntry): Promise<DeliveryOutcome>;
}

export type DeliveryOutcome =
  /** `version`: the row's version the call was made from, when it is newer than the entry's */
  | { outcome: 'sent'; version?: number }
  /** nothing to send any more (the object is gone, or the partner takes no such module) */
  | { outcome: 'skipped'; reason: string }
  | {
      outcome: 'failed';
      error: string;
      /** false: the partner refused this row (a 4xx, an OCPI 2xxx); sending it again cannot help */
      retryable: boolean;
      /** the partner as a whole did not answer (no connection, timeout, 5xx): counts for the breaker */
      partnerDown: boolean;
      /**
       * false: no call was made (the row waits for something of ours: a CDR not built yet, the
       * CDR a credit credits still on its way); the partner's breaker neither counts it nor
       * takes it for an answer
       */
      called?: false;
    };

export interface OutboxPolicy {
  /** rows sent per flush */
  batch: number;
  /** of those, sent at the same time */
  concurrency: number;
  /** attempts before a row becomes a dead letter */
  maxAttempts: number;
  /** the delay before the next attempt, after `attempts` failed ones */
  backoffMs(attempts: number): number;
  breakerThreshold: number;
  breakerCooldownMs: number;
  breakerMaxCooldownMs: number;
}
