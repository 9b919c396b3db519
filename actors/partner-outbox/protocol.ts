import Type, { type Static } from '#typebox';
import { defineProtocol } from '../../src/runtime/protocol.js';

/**
 * The partner-outbox actor's protocol (actor.ts): `partner-outbox/<country_code>-<party_id>`,
 * one per roaming partner, sends what the outbox holds for that partner. Anyone who queued rows
 * for it (in their own transaction) tells it `flush`; a sweep of every web process does too, for
 * rows that are due again after a back-off.
 */
export const PartnerOutboxMessage = Type.Object({ op: Type.Literal('flush') });
export type PartnerOutboxMessage = Static<typeof PartnerOutboxMessage>;

export interface FlushReply {
  sent: number;
  failed: number;
  breaker: 'closed' | 'open' | 'half-open';
}

export const partnerOutboxProtocol = defineProtocol<FlushReply>()({
  kind: 'partner-outbox',
  messages: PartnerOutboxMessage,
});
