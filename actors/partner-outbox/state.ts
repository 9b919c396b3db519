import Type, { type Static } from '#typebox';

/**
 * The breaker of one partner's sends (docs/ROAMING.md "The outbox"): after `threshold`
 * consecutive failures that say the partner is down (no connection, timeout, 5xx), nothing is
 * sent to it for a cool-down, doubled at every failed probe up to a ceiling; then one row is
 * sent as a probe (half-open), and a success closes the breaker. Other partners' actors never
 * wait for this one.
 */
export const PartnerOutboxState = Type.Object({
  breaker: Type.Union([Type.Literal('closed'), Type.Literal('open')]),
  consecutive_failures: Type.Integer({ minimum: 0 }),
  /** while open: nothing is sent before this (epoch ms) */
  open_until: Type.Integer(),
  /** the cool-down the breaker opens for next */
  cooldown_ms: Type.Integer({ minimum: 0 }),
  sent_total: Type.Integer({ minimum: 0 }),
  failed_total: Type.Integer({ minimum: 0 }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  /** when `last_error` happened (epoch ms); absent in a state stored before it was kept */
  last_failed_at: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  last_sent_at: Type.Union([Type.Integer(), Type.Null()]),
});
export type PartnerOutboxState = Static<typeof PartnerOutboxState>;

export function initialPartnerOutboxState(): PartnerOutboxState {
  return {
    breaker: 'closed',
    consecutive_failures: 0,
    open_until: 0,
    cooldown_ms: 0,
    sent_total: 0,
    failed_total: 0,
    last_error: null,
    last_failed_at: null,
    last_sent_at: null,
  };
}
