import type { TSchema, Static } from 'typebox';
import type { SqlEntityManager } from '@mikro-orm/knex';
import type { Logger } from 'pino';
import type { Address } from './address.js';

export type Placement = 'sharded' | 'pinned';

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

/** What any code (a gateway handler, another actor) uses to reach actors. */
export interface ActorRef {
  tell(address: Address, message: unknown): void;
  ask<R = unknown>(address: Address, message: unknown, opts?: AskOptions): Promise<R>;
  /**
   * Commits the message to the database before resolving; it is then delivered at least once,
   * whatever process dies, and its effect (state, entities, writes of the turn) commits once.
   */
  sendDurable(address: Address, message: unknown, opts: DurableSendOptions): Promise<DurableSendResult>;
}

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
  readonly actors: ActorRef;
  /** set when the message came through sendDurable (or a reminder) */
  readonly durable: DurableDelivery | undefined;
  /** true for the first turn after an activation with no stored state */
  readonly isNew: boolean;

  readonly state: S;
  /** Replaces the state; it is written, fenced, when the turn commits. */
  setState(next: S): void;
  /**
   * An EntityManager for this turn. Persisted entities are flushed inside the turn's fenced
   * transaction; do not flush yourself.
   */
  readonly em: SqlEntityManager;
  /** A write that runs inside the turn's fenced transaction (after the fence check). */
  write(step: (em: SqlEntityManager) => Promise<void>): void;
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

export interface ActorDefinition<StateSchema extends TSchema = TSchema, MessageSchema extends TSchema = TSchema> {
  kind: string;
  placement: Placement;
  /** Stored state is checked against this when an actor is activated. */
  state: StateSchema;
  /** Every message is checked against this before a turn. */
  messages: MessageSchema;
  initialState(key: string): Static<StateSchema>;
  handle(ctx: ActorContext<Static<StateSchema>>, message: Static<MessageSchema>): Promise<unknown> | unknown;
  onActivate?(ctx: ActorContext<Static<StateSchema>>): Promise<void> | void;
  /** Called once when the activation ends; not a turn (nothing it does is committed). */
  onDeactivate?(address: Address, reason: DeactivationReason): void;
  /** Passivate after this many idle milliseconds; null = never (pinned actors end with their pin). */
  idleMs?: number | null;
  /** Attempts before a durable message goes to the dead letters; default 10 */
  maxAttempts?: number;
}

/** Identity helper that keeps the schema types for `handle`. */
export function defineActor<S extends TSchema, M extends TSchema>(def: ActorDefinition<S, M>): ActorDefinition<S, M> {
  return def;
}
