import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { LogLimit } from '../log-limit.js';
import type { Static, TSchema } from '#typebox';
import { addressOf, type Address } from './address.js';
import type { DurableMailbox } from './durable-mailbox.js';
import { ActorLostError, ActorMovedError, ActorUnavailableError, AskTimeoutError, serializeError } from './errors.js';
import type { Activation } from './activation.js';
import type { ActivationLookup } from './local-activations.js';
import type { PendingAsks } from './pending-asks.js';
import type {
  ActorMessenger,
  ActorProtocol,
  AskOptions,
  DurableSendOptions,
  DurableSendResult,
  Inbox,
  ReplyTo,
  TypedRef,
} from './protocol.js';
import type { Envelope, Transport } from './transport.js';

export interface MessengerOptions {
  processId: string;
  transport: Transport;
  log: Logger;
  /** default timeout of an ask */
  askTimeoutMs: number;
}

/** The parts of the runtime the messenger sends through. */
export interface MessengerParts {
  activations: ActivationLookup;
  durable: Pick<DurableMailbox, 'send'>;
  pending: PendingAsks;
}

/**
 * The pause before an ask resolves its target again (moved, fenced, no owner yet). Every retry
 * path backs off: a fenced shard retried at once spun 1,238 commit transactions in a second
 * (see "Fenced owners" in docs/ARCHITECTURE.md).
 */
function retryDelayMs(attempt: number, remainingMs: number): number {
  return Math.max(1, Math.min(250, 10 * 2 ** attempt, remainingMs));
}

/**
 * An ask of an actor active in this process, failing with `onTimeout` after `ms`: the work item's
 * own callbacks settle it and clear the timer (one promise per ask, not one inside another).
 */
function askLocal(act: Activation, msg: unknown, ms: number, onTimeout: () => Error): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    act.enqueue({
      t: 'message',
      msg,
      resolve: (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      reject: (err) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    });
  });
}

/**
 * How long an ask waits for a pinned actor that has no pin. A charger's socket is open (and the
 * operator may already see it) a little before its actor is pinned: the pin's fence raise waits
 * for its group commit. An ask in that gap waits for the pin instead of answering "not
 * connected"; an actor that stays unpinned is refused after this long.
 */
const PIN_GRACE_MS = 200;

function withTimeout<T>(p: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/**
 * How code reaches an actor (`ActorMessenger`): `ref`/`inbox`, then `ask` (a reply within a
 * timeout), `tell` (no reply) and `sendDurable` (handed to the durable mailbox). An actor this
 * process owns gets the message on its queue; any other is reached through its owner's inbox
 * on the transport, resolving the owner again (with backoff) when it answers "moved" or is gone.
 */
export class Messenger implements ActorMessenger {
  constructor(
    private readonly opts: MessengerOptions,
    private readonly parts: MessengerParts,
  ) {}

  /** The actor `key` of a protocol's kind: its address is built here and nowhere else. */
  ref<MessageSchema extends TSchema, Replies, Discriminant extends string | undefined>(
    protocol: ActorProtocol<MessageSchema, Replies, Discriminant>,
    key: string,
  ): TypedRef<Static<MessageSchema>, Replies, Discriminant> {
    return new AddressRef<Static<MessageSchema>, Replies, Discriminant>(this.sender, addressOf(protocol.kind, key));
  }

  inbox<Msg>(address: Address): Inbox<Msg> {
    return new AddressRef<Msg, never, undefined>(this.sender, address);
  }

  /** What refs send through: this messenger's sends by address. */
  private readonly sender: AddressSender = {
    ask: (address, message, opts) => this.ask(address, message, opts),
    tell: (address, message) => this.tell(address, message),
    sendDurable: (address, message, opts) => this.parts.durable.send(address, message, opts),
  };

  /**
   * A tell is best effort (what must arrive goes through the durable mailbox or the outbox): one
   * not delivered is worth a line, not one per message while a process is gone or Redis is away
   * (a kill -9 wrote 63 lines with their stacks in 3 s). One line per kind of actor and error a
   * minute, with how many were left out.
   */
  private readonly tellFailures = new LogLimit({ perKey: 1, intervalMs: 60_000, capacity: 100 });

  private tell(address: Address, message: unknown): void {
    void this.deliverTell(address, message, 0).catch((err: unknown) => {
      const error = err instanceof Error ? err : new Error(String(err));
      const suppressed = this.tellFailures.admit(`${address.split('/', 1)[0] ?? ''}|${error.name}`);
      if (suppressed < 0) return;
      this.opts.log.warn(
        { address, error: error.message, error_name: error.name, ...(suppressed > 0 ? { suppressed } : {}) },
        'tell not delivered',
      );
    });
  }

  private async ask(address: Address, message: unknown, opts?: AskOptions): Promise<unknown> {
    const timeoutMs = opts?.timeoutMs ?? this.opts.askTimeoutMs;
    const startedAt = Date.now();
    const deadline = startedAt + timeoutMs;
    const { activations } = this.parts;
    const kind = activations.kindOf(address);
    const timeout = (): Error => new AskTimeoutError(`no reply from ${address} within ${timeoutMs} ms`);
    // one id for every send of this ask to another process: a process that sees it twice answers
    // from memory (made on the first remote send; a local ask needs none)
    let askId: string | undefined;
    /** a process it was sent to left the cluster before answering: it may have run it */
    let maybeRun = false;
    for (let attempt = 0; ; attempt++) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw timeout();
      const local = activations.local(address);
      if (local) {
        try {
          return await askLocal(local, message, remaining, timeout);
        } catch (err) {
          if (!(err instanceof ActorMovedError)) throw err;
          await sleep(retryDelayMs(attempt, deadline - Date.now()));
          continue;
        }
      }
      // the lookup reads Redis, whose commands wait while it reconnects: the ask's deadline bounds it
      const owner = await withTimeout(activations.ownerOf(address, kind.def), remaining, timeout);
      if (!owner || owner === this.opts.processId) {
        if (kind.def.placement === 'pinned') {
          // at most half the ask's timeout: an actor that stays unpinned is "not connected", not late
          const graceLeft = Math.min(PIN_GRACE_MS, timeoutMs / 2) - (Date.now() - startedAt);
          if (graceLeft <= 0) {
            // "not connected" says the message was not run; after a process that left, nobody knows
            if (maybeRun)
              throw new AskTimeoutError(
                `no reply from ${address}: the process asked left the cluster before it answered`,
              );
            throw new ActorUnavailableError(`${address} is not connected`, address);
          }
          await sleep(retryDelayMs(attempt, Math.min(remaining, graceLeft)));
          continue;
        }
        await sleep(retryDelayMs(attempt, remaining));
        continue;
      }
      try {
        askId ??= randomUUID();
        return await this.remoteAsk(askId, owner, address, message, remaining, timeout);
      } catch (err) {
        if (!(err instanceof ActorMovedError)) throw err;
        if (err instanceof ActorLostError) maybeRun = true;
        activations.forgetOwner(address, kind.def);
        await sleep(retryDelayMs(attempt, deadline - Date.now()));
      }
    }
  }

  private remoteAsk(
    id: string,
    owner: string,
    address: Address,
    msg: unknown,
    remaining: number,
    timeout: () => Error,
  ): Promise<unknown> {
    const { pending } = this.parts;
    const reply = pending.wait(id, owner, remaining, timeout);
    const env: Envelope = { t: 'call', id, from: this.opts.processId, to: address, msg, ask: true, hops: 0 };
    this.opts.transport.send(owner, env).then(
      (delivered) => {
        if (delivered) return;
        // nobody listens on that inbox: the process is gone; resolve the owner again
        pending.settle(id, { ok: false, error: { name: 'ActorMovedError', message: `${owner} is gone` } });
      },
      // the message never left this process (Redis unreachable): the actor is unavailable
      // for now, which the caller may retry; not an error of the actor's own
      (err: unknown) =>
        pending.settle(id, {
          ok: false,
          error: {
            name: 'ActorUnavailableError',
            message: `could not send to ${owner}: ${serializeError(err).message}`,
          },
        }),
    );
    return reply;
  }

  /** Delivers a tell here or to the owner; `hops` counts forwards by processes that were not it. */
  async deliverTell(address: Address, message: unknown, hops: number): Promise<void> {
    const { activations } = this.parts;
    const kind = activations.kindOf(address);
    for (let attempt = 0; attempt < 5; attempt++) {
      const local = activations.local(address);
      if (local) {
        local.enqueue({
          t: 'message',
          msg: message,
          resolve: () => undefined,
          reject: (err: unknown) => this.opts.log.debug({ err, address }, 'tell failed'),
        });
        return;
      }
      const owner = await activations.ownerOf(address, kind.def);
      if (owner && owner !== this.opts.processId) {
        const env: Envelope = {
          t: 'call',
          id: '',
          from: this.opts.processId,
          to: address,
          msg: message,
          ask: false,
          hops,
        };
        if (await this.opts.transport.send(owner, env)) return;
        activations.forgetOwner(address, kind.def);
      } else if (kind.def.placement === 'pinned') {
        return;
      }
      await sleep(50 * 2 ** attempt);
    }
    throw new ActorUnavailableError(`no owner for ${address}`);
  }
}

/** The sends a ref makes, by address (one per messenger, shared by all its refs). */
interface AddressSender {
  ask(address: Address, message: unknown, opts?: AskOptions): Promise<unknown>;
  tell(address: Address, message: unknown): void;
  sendDurable(address: Address, message: unknown, opts: DurableSendOptions): Promise<DurableSendResult>;
}

/**
 * A ref or inbox: the address and the messenger's sender, its methods on the prototype. A charger
 * connection keeps one for its lifetime; an object of closures would cost ~250 bytes more each.
 */
class AddressRef<Msg, Replies, Discriminant extends string | undefined> implements TypedRef<
  Msg,
  Replies,
  Discriminant
> {
  constructor(
    private readonly via: AddressSender,
    readonly address: Address,
  ) {}

  // The one cast of a reply: it crossed a queue or the wire as `unknown`. It is what the handler
  // of this protocol returned for this message, which `defineActor` types as a reply of the
  // protocol and `ReplyTo` narrows by the message's discriminant.
  ask<M extends Msg>(message: M, opts?: AskOptions): Promise<ReplyTo<Replies, Discriminant, M>> {
    return this.via.ask(this.address, message, opts) as Promise<ReplyTo<Replies, Discriminant, M>>;
  }

  tell(message: Msg): void {
    this.via.tell(this.address, message);
  }

  sendDurable(message: Msg, opts: DurableSendOptions): Promise<DurableSendResult> {
    return this.via.sendDurable(this.address, message, opts);
  }
}
