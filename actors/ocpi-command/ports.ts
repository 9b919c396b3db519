import type { WriteStep } from '../../src/runtime/types.js';

/**
 * What the command actor is given by the OCPI module: the outbox, through which the result goes
 * to the partner's `response_url` (durably, retried; docs/ROAMING.md "The outbox").
 */
export interface OcpiCommandDeps {
  /**
   * queues the POST of `body` to `url` for partner `partnerKey`, in the turn's transaction;
   * `command` (the command actor's key) keeps the results of two commands apart when a partner
   * gives them one `response_url`
   */
  queueResult(
    partnerKey: string,
    result: { url: string; version: '2.1.1' | '2.2.1'; body: Record<string, unknown>; command: string },
  ): WriteStep;
  /** after the turn committed: the outbox sends now */
  queued(): void;
}
