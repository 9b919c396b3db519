import type { Static, TSchema } from '#typebox';
import type { Address } from './address.js';

/**
 * What callers of an actor need to know, and nothing of its implementation: its kind (so that
 * `ref` builds the address, the one place addresses are made), the schema every message is
 * checked against, and, at the type level only, what each message is answered with. Modelled on
 * Temporal's `defineQuery<Ret, Args>`: the definition carries the reply type, so a caller never
 * names (or casts to) it.
 *
 * `Replies` is either a map from the value of the message's `discriminant` field (`type`, `op`)
 * to that message's reply, or, when there is no discriminant, the one reply of every message.
 */
export interface ActorProtocol<
  MessageSchema extends TSchema = TSchema,
  Replies = unknown,
  Discriminant extends string | undefined = string | undefined,
> {
  readonly kind: string;
  /** Every message is checked against this before a turn. */
  readonly messages: MessageSchema;
  /** the field whose value picks the reply in `Replies`; undefined: one reply for every message */
  readonly discriminant: Discriminant;
  /** Type-level only (never set): carries `Replies` from the definition to `ref(...).ask`. */
  readonly replies?: Replies;
}

/** A message `Msg` of a protocol with these type arguments is answered with this. */
export type ReplyTo<Replies, Discriminant extends string | undefined, Msg> = Discriminant extends string
  ? Msg extends { readonly [K in Discriminant]: infer V }
    ? V extends keyof Replies
      ? Replies[V]
      : never
    : never
  : Replies;

/** Any reply of the protocol: what its handler may return (each branch returns its own). */
export type AnyReply<Replies, Discriminant extends string | undefined> = Discriminant extends string
  ? Replies[keyof Replies]
  : Replies;

/** The discriminant values of the messages that `Replies` does not answer (never when complete). */
type Unanswered<MessageSchema extends TSchema, Replies, Discriminant extends string> = Exclude<
  Static<MessageSchema>[Discriminant & keyof Static<MessageSchema>],
  keyof Replies
>;

/**
 * Declares an actor's protocol: `defineProtocol<Replies>()({ kind, discriminant, messages })`.
 * Curried because TypeScript infers all of a call's type arguments or none: `Replies` is named,
 * the schema is inferred. A message kind missing from `Replies` does not compile.
 */
export function defineProtocol<Replies>() {
  function define<MessageSchema extends TSchema, Discriminant extends string>(
    spec: {
      kind: string;
      discriminant: Discriminant;
      messages: MessageSchema;
    } & ([Unanswered<MessageSchema, Replies, Discriminant>] extends [never]
      ? unknown
      : { missingReplies: Unanswered<MessageSchema, Replies, Discriminant> }),
  ): ActorProtocol<MessageSchema, Replies, Discriminant>;
  function define<MessageSchema extends TSchema>(spec: {
    kind: string;
    messages: MessageSchema;
  }): ActorProtocol<MessageSchema, Replies, undefined>;
  function define(spec: { kind: string; messages: TSchema; discriminant?: string }): ActorProtocol<TSchema, Replies> {
    return { kind: spec.kind, messages: spec.messages, discriminant: spec.discriminant };
  }
  return define;
}

export interface AskOptions {
  /** milliseconds; default ASK_TIMEOUT_MS */
  timeoutMs?: number;
}

export interface DurableSendOptions {
  /** The same key for the same address is accepted once; a repeated send answers `duplicate: true`. */
  dedupeKey: string;
  /** earliest time to deliver (epoch ms); default now */
  notBefore?: number;
}

export interface DurableSendResult {
  id: string;
  duplicate: boolean;
}

/**
 * Where messages of type `Msg` may be sent with no answer expected: an actor of a known protocol
 * (through `TypedRef`), or an address received in a message whose sender promised it accepts
 * `Msg` (a `notify` address; see `ActorMessenger.inbox`).
 */
export interface Inbox<Msg> {
  readonly address: Address;
  tell(message: Msg): void;
  /**
   * Commits the message to the database before resolving; it is then delivered at least once,
   * whatever process dies, and its effect (state, entities, writes of the turn) commits once.
   */
  sendDurable(message: Msg, opts: DurableSendOptions): Promise<DurableSendResult>;
}

/** One actor (kind and key) of a protocol: its messages are typed, and so is each one's reply. */
export interface TypedRef<Msg, Replies, Discriminant extends string | undefined> extends Inbox<Msg> {
  ask<M extends Msg>(message: M, opts?: AskOptions): Promise<ReplyTo<Replies, Discriminant, M>>;
}

/** What any code (a gateway handler, another actor) uses to reach actors. */
export interface ActorMessenger {
  ref<MessageSchema extends TSchema, Replies, Discriminant extends string | undefined>(
    protocol: ActorProtocol<MessageSchema, Replies, Discriminant>,
    key: string,
  ): TypedRef<Static<MessageSchema>, Replies, Discriminant>;
  /** An address handed over in a message, typed by what its sender promised it accepts. */
  inbox<Msg>(address: Address): Inbox<Msg>;
}
