import type { Logger } from 'pino';
import type { Address } from './address.js';
import type { Activation } from './activation.js';
import { serializeError } from './errors.js';
import type { ActivationLookup } from './local-activations.js';
import { replyEnvelope, type CallEnvelope, type Reply, type Transport } from './transport.js';

export interface IncomingCallsOptions {
  processId: string;
  transport: Transport;
  log: Logger;
}

/** Sends a tell on to the owner this process is not (the messenger does). */
export interface TellForwarder {
  deliverTell(address: Address, message: unknown, hops: number): Promise<void>;
}

/** An ask this process received, by its id: answered again from here if it is re-sent. */
interface ReceivedAsk {
  at: number;
  reply: Reply | undefined;
  /** calls with this id waiting for the turn (the first one and any re-send) */
  waiting: CallEnvelope[];
}

const MAX_FORWARD_HOPS = 3;

/**
 * How long, and how many, received ask ids are remembered: a re-send comes after the sender saw
 * our membership lapse (a lease TTL) and within its ask timeout. Past the count the oldest
 * answered ones go first, so a busy process does not hold a minute of replies.
 */
const RECEIVED_ASK_MEMORY_MS = 60_000;
const RECEIVED_ASK_MEMORY_MAX = 10_000;

/**
 * Calls that other processes sent to this one (`call` envelopes): run on the local activation
 * and answered on the sender's inbox, answered "moved" when this process does not own the
 * address, and, for a tell, forwarded to the owner a few hops at most.
 */
export class IncomingCalls {
  private readonly received = new Map<string, ReceivedAsk>();
  /**
   * The same entries oldest first, consumed from `head`. Eviction reads this instead of iterating
   * `received` from its start: a Map keeps the slots of deleted keys until it grows, and every
   * iteration from the start steps over them (at 10,000 remembered asks, thousands per ask).
   */
  private order: Array<{ id: string; entry: ReceivedAsk }> = [];
  private head = 0;

  constructor(
    private readonly opts: IncomingCallsOptions,
    private readonly activations: ActivationLookup,
    private readonly forwarder: TellForwarder,
  ) {}

  handle(env: CallEnvelope): void {
    let act: Activation | undefined;
    try {
      act = this.activations.local(env.to);
    } catch (err) {
      if (env.ask) this.reply(env, { ok: false, error: serializeError(err) });
      return;
    }
    if (!act) this.notOwned(env);
    else if (!env.ask) {
      act.enqueue({
        t: 'message',
        msg: env.msg,
        resolve: () => undefined,
        reject: (err: unknown) => this.opts.log.debug({ err }, 'tell failed'),
      });
    } else this.runAsk(act, env);
  }

  private notOwned(env: CallEnvelope): void {
    if (env.ask)
      this.reply(env, {
        ok: false,
        error: { name: 'ActorMovedError', message: `${env.to} is not owned by ${this.opts.processId}` },
      });
    else if (env.hops < MAX_FORWARD_HOPS) {
      void this.forwarder
        .deliverTell(env.to, env.msg, env.hops + 1)
        .catch((err: unknown) => this.opts.log.debug({ err }, 'forward failed'));
    }
  }

  private runAsk(act: Activation, env: CallEnvelope): void {
    // A sender re-sends an ask (same id) when it believes the owner gone; if that owner was us
    // after all, the turn must not run twice: answer from memory, or join the running turn.
    const seen = this.received.get(env.id);
    if (seen) {
      if (seen.reply) this.reply(env, seen.reply);
      else seen.waiting.push(env);
      return;
    }
    const entry: ReceivedAsk = { at: Date.now(), reply: undefined, waiting: [env] };
    this.remember(env.id, entry);
    const answer = (r: Reply): void => {
      // "moved" is not an answer to remember: the re-send must run where the actor is now
      if (r.ok || r.error.name !== 'ActorMovedError') entry.reply = r;
      else this.received.delete(env.id);
      for (const w of entry.waiting.splice(0)) this.reply(w, r);
    };
    act.enqueue({
      t: 'message',
      msg: env.msg,
      resolve: (value) => answer({ ok: true, value: value ?? null }),
      reject: (err) => answer({ ok: false, error: serializeError(err) }),
    });
  }

  private remember(id: string, entry: ReceivedAsk): void {
    const oldest = Date.now() - RECEIVED_ASK_MEMORY_MS;
    while (this.head < this.order.length) {
      const first = this.order[this.head];
      if (!first) break;
      // an entry already forgotten ("moved") or replaced by a later ask of the same id
      const current = this.received.get(first.id) === first.entry;
      if (current) {
        const v = first.entry;
        if (v.reply === undefined || (v.at >= oldest && this.received.size < RECEIVED_ASK_MEMORY_MAX)) break;
        this.received.delete(first.id);
      }
      this.head++;
    }
    if (this.head >= 1024 && this.head * 2 >= this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    } else if (this.order.length - this.head > 2 * RECEIVED_ASK_MEMORY_MAX) {
      // entries forgotten out of order ("moved" answers) keep their place in the queue; keep
      // only the current ones, so the queue stays as bounded as the Map
      this.order = this.order.slice(this.head).filter((o) => this.received.get(o.id) === o.entry);
      this.head = 0;
    }
    this.received.set(id, entry);
    this.order.push({ id, entry });
  }

  private reply(env: CallEnvelope, r: Reply): void {
    void this.opts.transport
      .send(env.from, replyEnvelope(env.id, r))
      .catch((err: unknown) => this.opts.log.debug({ err }, 'reply not sent'));
  }
}
