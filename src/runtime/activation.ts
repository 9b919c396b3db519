import type { SqlEntityManager } from '@mikro-orm/knex';
import type { Logger } from 'pino';
import type { TSchema } from '#typebox';
import type { LazyValidator } from '../lazy-compile.js';
import type { Address } from './address.js';
import { ActorMovedError, InvalidMessageError } from './errors.js';
import type { Lease } from './placement.js';
import type { MailboxRow } from './runtime-store.js';
import { TurnContext, type TurnEffects } from './turn-context.js';
import type { ActorContext, RegisteredActor, ActorMessenger, DeactivationReason, DurableDelivery } from './types.js';

export type { TurnEffects };

export type WorkItem =
  | { t: 'message'; msg: unknown; resolve(value: unknown): void; reject(err: unknown): void }
  | { t: 'durable'; row: MailboxRow; done(): void }
  /** the kind's onActivate hook, run as the first turn */
  | { t: 'activate' };

/** The services an activation needs from its system. */
export interface ActivationHost {
  readonly processId: string;
  readonly actors: ActorMessenger;
  fork(): SqlEntityManager;
  runTurn(
    activation: Activation,
    item: WorkItem,
    effects: TurnEffects,
    lease: Lease,
    durable: DurableDelivery | undefined,
    run: () => Promise<unknown>,
  ): Promise<void>;
  leaseFor(activation: Activation): Lease | undefined;
  onTurnIdle(activation: Activation): void;
  timerFired(activation: Activation, message: unknown): void;
}

/**
 * One live actor: its state, its queue, its timers. Turns run one at a time in arrival order.
 */
export class Activation {
  readonly queue: WorkItem[] = [];
  state: unknown;
  isNew = false;
  lastActive = Date.now();
  private running = false;
  private stopped = false;
  private current: Promise<void> | undefined;
  /** ctx.setTimer's timers, made on the first: no production actor sets one, and every charger has an activation */
  private timers: Map<string, NodeJS.Timeout> | undefined;

  constructor(
    readonly host: ActivationHost,
    readonly def: RegisteredActor,
    readonly messageValidator: LazyValidator<TSchema>,
    readonly address: Address,
    readonly key: string,
    /** shard for sharded actors; -1 for pinned */
    readonly shard: number,
    readonly epoch: number,
    /** the process's logger; the activation's own child of it is made when first used */
    private readonly parentLog: Logger,
    private readonly load: (activation: Activation) => Promise<void>,
  ) {
    this.loading = this.startLoad();
  }

  /**
   * Loads the stored state. The promise is dropped once loaded (a settled promise per activation
   * is memory every charger would hold); a failed load is kept until the next pump, which fails
   * what waited for it and starts the load again for what comes after: one bad read (a database
   * that blinked) must not fail every message of the actor until it is passivated.
   */
  private startLoad(): Promise<void> {
    const loading = this.load(this).then(
      () => {
        this.loading = undefined;
      },
      (err: unknown) => {
        this.loadFailed = true;
        throw err;
      },
    );
    loading.catch(() => undefined);
    return loading;
  }

  /** the last load failed: the next pump loads again */
  private loadFailed = false;

  private childLog: Logger | undefined;

  /** Bound to this actor's address. Made on first use: most activations of a fleet never log. */
  get log(): Logger {
    this.childLog ??= this.parentLog.child({ actor: this.address });
    return this.childLog;
  }

  /** the load of the stored state while it runs, or its failure (until the next pump loads again) */
  private loading: Promise<void> | undefined;

  get isStopped(): boolean {
    return this.stopped;
  }

  get isBusy(): boolean {
    return this.running || this.queue.length > 0;
  }

  enqueue(item: WorkItem): void {
    if (this.stopped) {
      rejectItem(item, new ActorMovedError(`${this.address} was deactivated`));
      return;
    }
    this.queue.push(item);
    this.lastActive = Date.now();
    if (!this.running) this.current = this.pump();
  }

  private async pump(): Promise<void> {
    this.running = true;
    try {
      if (this.loadFailed && !this.stopped) {
        this.loadFailed = false;
        this.loading = this.startLoad();
      }
      // awaited even when loaded (undefined): a turn starts a microtask after its enqueue, never inside it
      await this.loading;
      while (this.queue.length > 0 && !this.stopped) {
        const item = this.queue.shift();
        if (!item) break;
        await this.turn(item);
        this.lastActive = Date.now();
      }
    } catch (err) {
      this.log.error({ err, address: this.address }, 'activation failed');
      this.failQueued(err);
    } finally {
      // before onTurnIdle, which may enqueue and so start the next pump
      this.current = undefined;
      this.running = false;
      this.host.onTurnIdle(this);
    }
  }

  private async turn(item: WorkItem): Promise<void> {
    const lease = this.host.leaseFor(this);
    if (!lease || !lease.isValid() || lease.epoch !== this.epoch) {
      rejectItem(item, new ActorMovedError(`${this.address} is no longer owned here`));
      return;
    }
    const durable: DurableDelivery | undefined =
      item.t === 'durable'
        ? { id: item.row.id, dedupeKey: item.row.dedupeKey, attempt: item.row.attempts + 1 }
        : undefined;
    const effects: TurnEffects = {
      nextState: this.state,
      stateDirty: false,
      writes: [],
      reminders: [],
      emUsed: false,
      em: undefined,
      afterCommit: [],
      passivate: false,
    };
    const ctx = this.context(effects, durable);
    await this.host.runTurn(this, item, effects, lease, durable, async () => {
      if (item.t === 'activate') return this.def.onActivate?.(ctx);
      const msg = item.t === 'message' ? item.msg : item.row.payload.m;
      if (!this.messageValidator.Check(msg)) {
        const first = this.messageValidator.Errors(msg)[0];
        throw new InvalidMessageError(
          `invalid message for ${this.def.kind}: ${first?.instancePath || '/'} ${first?.message ?? ''}`,
        );
      }
      return this.def.handle(ctx, msg);
    });
  }

  context(effects: TurnEffects, durable: DurableDelivery | undefined): ActorContext<unknown> {
    return new TurnContext(this, effects, durable);
  }

  /** An in-memory timer of this activation (ctx.setTimer); its message arrives as a turn. */
  setTimer(name: string, delayMs: number, message: unknown, repeat: boolean): void {
    this.cancelTimer(name);
    const fire = (): void => {
      if (!repeat) this.timers?.delete(name);
      this.host.timerFired(this, message);
    };
    const handle = repeat ? setInterval(fire, delayMs) : setTimeout(fire, delayMs);
    handle.unref();
    (this.timers ??= new Map()).set(name, handle);
  }

  cancelTimer(name: string): void {
    const t = this.timers?.get(name);
    if (t) {
      clearTimeout(t);
      clearInterval(t);
      this.timers?.delete(name);
    }
  }

  /** Ends the activation: waits for the running turn, hands queued work back as "moved". */
  async stop(reason: DeactivationReason, wait: boolean): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const name of [...(this.timers?.keys() ?? [])]) this.cancelTimer(name);
    if (wait && this.current) await this.current.catch(() => undefined);
    this.failQueued(new ActorMovedError(`${this.address} was deactivated (${reason})`));
    try {
      this.def.onDeactivate?.(this.address, reason);
    } catch (err) {
      this.log.warn({ err, address: this.address }, 'onDeactivate threw');
    }
  }

  private failQueued(err: unknown): void {
    for (const item of this.queue.splice(0)) rejectItem(item, err);
  }
}

function rejectItem(item: WorkItem, err: unknown): void {
  if (item.t === 'message') item.reject(err);
  else if (item.t === 'durable') item.done();
}
