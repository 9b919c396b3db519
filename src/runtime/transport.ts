import Type, { type Static } from '#typebox';
import { compileLazily } from '../lazy-compile.js';
import type { SerializedError } from './errors.js';

const SerializedErrorSchema = Type.Object({
  name: Type.String(),
  code: Type.Optional(Type.String()),
  message: Type.String(),
});

/**
 * What travels between processes. Every payload is JSON. `msg` and `value` are optional because
 * JSON drops a property whose value is undefined (a tell of `undefined`, a handler returning
 * nothing is sent as null); the message itself is checked against its kind's schema in the turn.
 */
const EnvelopeSchema = Type.Union([
  Type.Object({
    t: Type.Literal('call'),
    id: Type.String(),
    from: Type.String(),
    to: Type.String(),
    msg: Type.Optional(Type.Unknown()),
    ask: Type.Boolean(),
    hops: Type.Number(),
  }),
  Type.Object({
    t: Type.Literal('reply'),
    id: Type.String(),
    ok: Type.Literal(true),
    value: Type.Optional(Type.Unknown()),
  }),
  Type.Object({ t: Type.Literal('reply'), id: Type.String(), ok: Type.Literal(false), error: SerializedErrorSchema }),
  /** a durable message for `to` was committed: drain its mailbox */
  Type.Object({ t: Type.Literal('wake'), to: Type.String() }),
  /** a newer connection claimed the pinned actor elsewhere */
  Type.Object({ t: Type.Literal('unpin'), to: Type.String(), epoch: Type.Number() }),
]);
const checkEnvelope = compileLazily(EnvelopeSchema);

export type Envelope = Static<typeof EnvelopeSchema>;
export type CallEnvelope = Extract<Envelope, { t: 'call' }>;

/** The outcome of an ask, as the reply envelope carries it. */
export type Reply = { ok: true; value: unknown } | { ok: false; error: SerializedError };

export function replyEnvelope(id: string, r: Reply): Envelope {
  return r.ok ? { t: 'reply', id, ok: true, value: r.value } : { t: 'reply', id, ok: false, error: r.error };
}

/**
 * Reads an envelope from its JSON text. The text may come from another process (or anything
 * else that publishes to our inbox channel), so it is checked; throws naming what is wrong.
 */
export function decodeEnvelope(text: string): Envelope {
  const value: unknown = JSON.parse(text);
  if (checkEnvelope.Check(value)) return value;
  const first = checkEnvelope.Errors(value)[0];
  throw new TypeError(`not an envelope: ${first?.instancePath || '/'} ${first?.message ?? ''}`);
}

/** Moves envelopes to a process's inbox. The in-process bus and Redis pub/sub implement it. */
export interface Transport {
  start(processId: string, onEnvelope: (env: Envelope) => void): Promise<void>;
  /** false when no process listens on that inbox (it is gone) */
  send(processId: string, env: Envelope): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * Embedded mode: one process, so the only inbox is our own. Envelopes go through JSON (and the
 * same check as the Redis transport's) so that embedded and cluster modes see the same values.
 */
export class InProcessTransport implements Transport {
  private processId = '';
  private onEnvelope: ((env: Envelope) => void) | undefined;

  async start(processId: string, onEnvelope: (env: Envelope) => void): Promise<void> {
    this.processId = processId;
    this.onEnvelope = onEnvelope;
  }

  async send(processId: string, env: Envelope): Promise<boolean> {
    const deliver = this.onEnvelope;
    if (processId !== this.processId || !deliver) return false;
    const copy = decodeEnvelope(JSON.stringify(env));
    setImmediate(() => deliver(copy));
    return true;
  }

  async stop(): Promise<void> {
    this.onEnvelope = undefined;
  }
}
