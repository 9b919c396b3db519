import type { Address } from './address.js';
import type { SerializedError } from './errors.js';

/** What travels between processes. Every payload is JSON. */
export type Envelope =
  | { t: 'call'; id: string; from: string; to: Address; msg: unknown; ask: boolean; hops: number }
  | { t: 'reply'; id: string; ok: true; value: unknown }
  | { t: 'reply'; id: string; ok: false; error: SerializedError }
  /** a durable message for `to` was committed: drain its mailbox */
  | { t: 'wake'; to: Address }
  /** a newer connection claimed the pinned actor elsewhere */
  | { t: 'unpin'; to: Address; epoch: number };

/** Moves envelopes to a process's inbox. The in-process bus and Redis pub/sub implement it. */
export interface Transport {
  start(processId: string, onEnvelope: (env: Envelope) => void): Promise<void>;
  /** false when no process listens on that inbox (it is gone) */
  send(processId: string, env: Envelope): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * Embedded mode: one process, so the only inbox is our own. Envelopes are cloned the way JSON
 * would so that embedded and cluster modes see the same values.
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
    const copy = JSON.parse(JSON.stringify(env)) as Envelope;
    setImmediate(() => deliver(copy));
    return true;
  }

  async stop(): Promise<void> {
    this.onEnvelope = undefined;
  }
}
