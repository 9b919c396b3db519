import type { TSchema, Static } from '#typebox';
import type { SqlEntityManager } from '@mikro-orm/knex';
import type { Logger } from 'pino';
import type { WriteStep } from '../db/merged-write.js';
import type { SqlRunner } from '../db/sql.js';

/** What a turn's `ctx.write` step writes with (actors reach it through this module). */
export type { SqlRunner, WriteStep };
import type { Address } from './address.js';
import type { ActorMessenger, ActorProtocol, AnyReply } from './protocol.js';

export type {
  ActorMessenger,
  ActorProtocol,
  AskOptions,
  DurableSendOptions,
  DurableSendResult,
  Inbox,
  TypedRef,
} from './protocol.js';
export { defineProtocol } from './protocol.js';

export type Placement = 'sharded' | 'pinned';

export interface DurableDelivery {
  id: string;
  dedupeKey: string;
  /** 1 for the first delivery */
  attempt: number;
}

export interface ActorContext<S> {
  readonly address: Address;
  readonly kind: string;
  readonly key: string;
  readonly processId: string;
  /** lease epoch this turn runs under */
  readonly epoch: number;
  readonly log: Logger;
  readonly actors: ActorMessenger;
  /** set when the message came through sendDurable (or a reminder) */
  readonly durable: DurableDelivery | undefined;
  /** true for the first turn after an activation with no stored state */
  readonly isNew: boolean;

  readonly state: S;
  /** Replaces the state; it is written, fenced, when the turn commits. */
  setState(next: S): void;
  /**
   * An EntityManager for this turn (only for actors whose definition sets `entityManager: true`).
   * Persisted entities are flushed inside the turn's fenced transaction; do not flush yourself.
   */
  readonly em: SqlEntityManager;
  /**
   * A write that runs inside the turn's fenced transaction, on the driver's connection
   * (`src/db/sql.ts`: `?` placeholders, values bound, statements prepared once), or a row of a
   * `MergeableStatement`, which a batch of turns runs as one statement (`src/db/merged-write.ts`).
   */
  write(step: WriteStep): void;
  /** Runs after the turn committed (or at once when it had nothing to commit). */
  afterCommit(fn: () => void | Promise<void>): void;

  /** An in-memory timer; it dies with the activation. The message arrives as a normal turn. */
  setTimer(name: string, delayMs: number, message: unknown, opts?: { repeat?: boolean }): void;
  cancelTimer(name: string): void;
  /**
   * A persisted reminder: survives passivation and process death, fires as a durable message.
   * Written in the turn's transaction.
   */
  setReminder(name: string, dueAt: number, message: unknown, opts?: { periodMs?: number }): void;
  cancelReminder(name: string): void;
  /** Ends the activation after this turn. */
  passivate(): void;
}

export type DeactivationReason = 'idle' | 'shard-lost' | 'pin-lost' | 'pin-released' | 'shutdown' | 'failed';

/** The implementation of a protocol: placement, state and the handler of its messages. */
export interface ActorImplementation<StateSchema extends TSchema, Message, Reply> {
  placement: Placement;
  /** Stored state is checked against this when an actor is activated. */
  state: StateSchema;
  initialState(key: string): Static<StateSchema>;
  /**
   * Returns the reply of the message it got; the type allows any reply of the protocol, and
   * `ReplyTo` on the asking side relies on each branch returning its own (see
   * docs/ARCHITECTURE.md, "How to add an actor").
   */
  handle(ctx: ActorContext<Static<StateSchema>>, message: Message): Promise<Reply> | Reply;
  onActivate?(ctx: ActorContext<Static<StateSchema>>): Promise<void> | void;
  /** Called once when the activation ends; not a turn (nothing it does is committed). */
  onDeactivate?(address: Address, reason: DeactivationReason): void;
  /** Passivate after this many idle milliseconds; null = never (pinned actors end with their pin). */
  idleMs?: number | null;
  /** Attempts before a durable message goes to the dead letters; default 10 */
  maxAttempts?: number;
  /**
   * The turns use `ctx.em`: the process loads MikroORM when it starts (otherwise it never does;
   * `ctx.write` on the drivers is the fast path). Such a turn commits alone, not in a group.
   */
  entityManager?: boolean;
}

export interface ActorDefinition<
  StateSchema extends TSchema = TSchema,
  MessageSchema extends TSchema = TSchema,
  Replies = unknown,
  Discriminant extends string | undefined = string | undefined,
>
  extends
    ActorProtocol<MessageSchema, Replies, Discriminant>,
    ActorImplementation<StateSchema, Static<MessageSchema>, AnyReply<Replies, Discriminant>> {}

/**
 * An actor: its protocol (what callers import) and its implementation. The handler is typed by
 * both: its message by the protocol's schema, its return by the protocol's replies.
 */
export function defineActor<S extends TSchema, M extends TSchema, R, D extends string | undefined>(
  protocol: ActorProtocol<M, R, D>,
  impl: ActorImplementation<S, Static<M>, AnyReply<R, D>>,
): ActorDefinition<S, M, R, D> {
  return { ...protocol, ...impl };
}

/**
 * An actor as the runtime holds it once registered: it checks messages against the schema at run
 * time, and the reply types, which only callers need, are erased (an `ActorDefinition` with its
 * own replies is not assignable to one with `unknown` replies: conditional types make TypeScript
 * measure them as invariant).
 */
export type RegisteredActor = ActorImplementation<TSchema, unknown, unknown> & {
  readonly kind: string;
  readonly messages: TSchema;
};
