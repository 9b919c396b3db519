import type { SqlEntityManager } from '@mikro-orm/knex';
import type { Logger } from 'pino';
import type { WriteStep } from '../db/merged-write.js';
import type { MailboxPayload } from './runtime-store.js';
import type { ActorContext, ActorMessenger, DurableDelivery } from './types.js';

/** What a turn asks the runtime to commit. */
export interface TurnEffects {
  nextState: unknown;
  stateDirty: boolean;
  writes: WriteStep[];
  reminders: Array<{ name: string; set?: { dueAt: number; payload: MailboxPayload } }>;
  emUsed: boolean;
  em: SqlEntityManager | undefined;
  afterCommit: Array<() => void | Promise<void>>;
  passivate: boolean;
}

/** What a turn's context reads from its activation (`Activation` is one). */
export interface TurnOwner {
  readonly address: string;
  readonly def: { readonly kind: string };
  readonly key: string;
  readonly epoch: number;
  readonly log: Logger;
  readonly isNew: boolean;
  readonly host: { readonly processId: string; readonly actors: ActorMessenger; fork(): SqlEntityManager };
  setTimer(name: string, delayMs: number, message: unknown, repeat: boolean): void;
  cancelTimer(name: string): void;
}

/**
 * The `ctx` a handler gets for one turn: what it reads comes from its activation, what it does is
 * recorded in the turn's effects for `TurnCommitter` to commit. A class rather than an object of
 * closures: one allocation per turn, on a path that runs for every message a charger sends.
 */
export class TurnContext implements ActorContext<unknown> {
  constructor(
    private readonly act: TurnOwner,
    private readonly effects: TurnEffects,
    readonly durable: DurableDelivery | undefined,
  ) {}

  get address(): string {
    return this.act.address;
  }
  get kind(): string {
    return this.act.def.kind;
  }
  get key(): string {
    return this.act.key;
  }
  get processId(): string {
    return this.act.host.processId;
  }
  get epoch(): number {
    return this.act.epoch;
  }
  get log(): Logger {
    return this.act.log;
  }
  get actors(): ActorMessenger {
    return this.act.host.actors;
  }
  get isNew(): boolean {
    return this.act.isNew;
  }

  get state(): unknown {
    return this.effects.nextState;
  }
  setState(next: unknown): void {
    this.effects.nextState = next;
    this.effects.stateDirty = true;
  }

  get em(): SqlEntityManager {
    this.effects.emUsed = true;
    this.effects.em ??= this.act.host.fork();
    return this.effects.em;
  }
  write(step: WriteStep): void {
    this.effects.writes.push(step);
  }
  afterCommit(fn: () => void | Promise<void>): void {
    this.effects.afterCommit.push(fn);
  }

  setTimer(name: string, delayMs: number, message: unknown, opts?: { repeat?: boolean }): void {
    this.act.setTimer(name, delayMs, message, opts?.repeat ?? false);
  }
  cancelTimer(name: string): void {
    this.act.cancelTimer(name);
  }

  setReminder(name: string, dueAt: number, message: unknown, opts?: { periodMs?: number }): void {
    const payload: MailboxPayload = {
      m: message,
      reminder: name,
      ...(opts?.periodMs ? { periodMs: opts.periodMs } : {}),
    };
    this.effects.reminders.push({ name, set: { dueAt, payload } });
  }
  cancelReminder(name: string): void {
    this.effects.reminders.push({ name });
  }
  passivate(): void {
    this.effects.passivate = true;
  }
}
