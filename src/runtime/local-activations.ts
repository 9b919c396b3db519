import type { SqlEntityManager } from '@mikro-orm/knex';
import type { Logger } from 'pino';
import type { TSchema } from '#typebox';
import type { Database } from '../db/database.js';
import { parseAddress, shardOf, type Address } from './address.js';
import { Activation, type ActivationHost } from './activation.js';
import { UnknownActorKindError } from './errors.js';
import type { ActorPlacement, Lease } from './placement.js';
import type { ActorMessenger } from './protocol.js';
import type { RuntimeStore } from './runtime-store.js';
import { TurnCommitter, type TurnObserver } from './turn-commit.js';
import type { DeactivationReason, RegisteredActor } from './types.js';
import { compileLazily, type LazyValidator } from '../lazy-compile.js';

/** A registered actor kind with its compiled schemas. */
export interface RegisteredKind {
  def: RegisteredActor;
  messages: LazyValidator<TSchema>;
  state: LazyValidator<TSchema>;
}

/**
 * What the messenger and the durable mailbox need to reach an actor: its kind, its activation
 * here (if this process owns it), and otherwise the process that does.
 */
export interface ActivationLookup {
  kindOf(address: Address): RegisteredKind;
  /** The activation of an address this process owns (created on demand), else undefined. */
  local(address: Address): Activation | undefined;
  /** the process that owns the address, as far as the placement knows (may be stale) */
  ownerOf(address: Address, def: RegisteredActor): Promise<string | undefined>;
  /** the owner we asked answered "moved" or is gone: look it up afresh next time */
  forgetOwner(address: Address, def: RegisteredActor): void;
}

export interface LocalActivationsOptions {
  db: Database;
  store: RuntimeStore;
  placement: ActorPlacement;
  log: Logger;
  /** default idle time before an activation is passivated (a kind may set its own) */
  idleMs: number;
  /** what the actors' `ctx.actors` is */
  actors: ActorMessenger;
  onTurn?: TurnObserver;
}

/**
 * The actor kinds registered in this process and the activations it holds: creating one (and
 * loading its state), ending one (idle, shard or pin lost, fenced, shutdown). Activations run
 * their turns through the `TurnCommitter`.
 */
export class LocalActivations implements ActivationHost, ActivationLookup {
  readonly processId: string;
  readonly actors: ActorMessenger;
  private readonly kinds = new Map<string, RegisteredKind>();
  private readonly activations = new Map<Address, Activation>();
  private stopping = false;
  private readonly turns: TurnCommitter;

  constructor(private readonly opts: LocalActivationsOptions) {
    this.processId = opts.placement.processId;
    this.actors = opts.actors;
    const { db, store, log, onTurn } = opts;
    this.turns = new TurnCommitter({ db, store, log, onTurn }, this);
  }

  get size(): number {
    return this.activations.size;
  }

  register(def: RegisteredActor): void {
    if (this.kinds.has(def.kind)) throw new Error(`actor kind ${def.kind} registered twice`);
    this.kinds.set(def.kind, { def, messages: compileLazily(def.messages), state: compileLazily(def.state) });
  }

  kindOf(address: Address): RegisteredKind {
    const { kind } = parseAddress(address);
    const k = this.kinds.get(kind);
    if (!k) throw new UnknownActorKindError(`no actor kind ${kind}`);
    return k;
  }

  /** The activation held for the address, whoever owns it now (for pins). */
  get(address: Address): Activation | undefined {
    return this.activations.get(address);
  }

  local(address: Address): Activation | undefined {
    const existing = this.activations.get(address);
    if (existing && !existing.isStopped) {
      const lease = this.leaseFor(existing);
      if (lease?.isValid() && lease.epoch === existing.epoch) return existing;
      void this.deactivate(existing, existing.shard >= 0 ? 'shard-lost' : 'pin-lost', false);
    }
    if (this.stopping) return undefined;
    const kind = this.kindOf(address);
    if (kind.def.placement !== 'sharded') return undefined;
    const { placement } = this.opts;
    const shard = shardOf(address, placement.shardCount);
    const lease = placement.shardLease(shard);
    if (!lease?.isValid() || !lease.isAccepting()) return undefined;
    return this.activate(kind, address, parseAddress(address).key, shard, lease.epoch);
  }

  /**
   * A new activation, its state loading. With `mailbox` (a new pin) the load also asks whether the
   * address has due durable rows, and `mailbox` is called with the answer once the state is loaded.
   */
  activate(
    kind: RegisteredKind,
    address: Address,
    key: string,
    shard: number,
    epoch: number,
    mailbox?: (due: boolean) => void,
  ): Activation {
    const load = (act: Activation): Promise<void> => this.loadState(kind, act, mailbox);
    const act = new Activation(this, kind.def, kind.messages, address, key, shard, epoch, this.opts.log, load);
    this.activations.set(address, act);
    if (kind.def.onActivate) act.enqueue({ t: 'activate' });
    return act;
  }

  private async loadState(kind: RegisteredKind, act: Activation, mailbox?: (due: boolean) => void): Promise<void> {
    const { store } = this.opts;
    let raw: string | undefined;
    let due = false;
    if (mailbox) ({ state: raw, due } = await store.loadStateAndDue(act.address));
    else raw = await store.loadState(act.address);
    if (raw === undefined) {
      act.state = kind.def.initialState(act.key);
      act.isNew = true;
    } else act.state = this.parseState(kind, act, raw);
    mailbox?.(due);
  }

  private parseState(kind: RegisteredKind, act: Activation, raw: string): unknown {
    const parsed: unknown = JSON.parse(raw);
    if (!kind.state.Check(parsed)) {
      const first = kind.state.Errors(parsed)[0];
      throw new Error(
        `stored state of ${act.address} fails its schema at ${first?.instancePath || '/'}: ${first?.message ?? ''}`,
      );
    }
    return parsed;
  }

  async deactivate(act: Activation, reason: DeactivationReason, wait: boolean): Promise<void> {
    if (this.activations.get(act.address) === act) this.activations.delete(act.address);
    await act.stop(reason, wait);
  }

  /** Shutdown begins: no activation is created from here on. */
  beginStop(): void {
    this.stopping = true;
  }

  /** Shutdown: every activation ends after its running turn. */
  async deactivateAll(): Promise<void> {
    await Promise.all([...this.activations.values()].map((a) => this.deactivate(a, 'shutdown', true)));
  }

  async dropShards(shards: number[], graceful: boolean): Promise<void> {
    const lost = new Set(shards);
    const acts = [...this.activations.values()].filter((a) => a.shard >= 0 && lost.has(a.shard));
    await Promise.all(acts.map((a) => this.deactivate(a, 'shard-lost', graceful)));
  }

  pinsLost(addresses: Address[]): void {
    for (const address of addresses) {
      const act = this.activations.get(address);
      if (act) void this.deactivate(act, 'pin-lost', false);
    }
  }

  /** Another process claimed the pinned address with a newer epoch. */
  unpinned(address: Address, epoch: number): void {
    this.opts.placement.invalidatePin(address, epoch);
    const act = this.activations.get(address);
    if (act && act.epoch < epoch) void this.deactivate(act, 'pin-lost', false);
  }

  /**
   * The database refused a commit under `lease`: give the lease up and end what ran under it,
   * before anything retries (or the retry reactivates the actor under the stale epoch).
   */
  fenced(act: Activation, lease: Lease): void {
    this.opts.placement.leaseFenced(lease);
    if (act.shard < 0) {
      void this.deactivate(act, 'pin-lost', false);
      return;
    }
    for (const a of [...this.activations.values()]) {
      if (a.shard === act.shard && a.epoch <= act.epoch) void this.deactivate(a, 'shard-lost', false);
    }
  }

  passivateIdle(): void {
    const now = Date.now();
    for (const act of this.activations.values()) {
      const idleMs = act.def.idleMs === undefined ? this.opts.idleMs : act.def.idleMs;
      if (idleMs === null || act.isBusy) continue;
      if (now - act.lastActive >= idleMs) void this.deactivate(act, 'idle', false);
    }
  }

  async ownerOf(address: Address, def: RegisteredActor): Promise<string | undefined> {
    const { placement } = this.opts;
    if (def.placement === 'pinned') return placement.ownerOfPin(address);
    return placement.ownerOfShard(shardOf(address, placement.shardCount));
  }

  forgetOwner(address: Address, def: RegisteredActor): void {
    const { placement } = this.opts;
    if (def.placement === 'sharded') placement.forgetShardOwner(shardOf(address, placement.shardCount));
  }

  // ---- ActivationHost ---------------------------------------------------------------------

  fork(): SqlEntityManager {
    return this.opts.db.fork();
  }

  leaseFor(activation: Activation): Lease | undefined {
    return activation.shard >= 0
      ? this.opts.placement.shardLease(activation.shard)
      : this.opts.placement.pinLease(activation.address);
  }

  onTurnIdle(activation: Activation): void {
    if (activation.isStopped && this.activations.get(activation.address) === activation)
      this.activations.delete(activation.address);
  }

  timerFired(activation: Activation, message: unknown): void {
    activation.enqueue({
      t: 'message',
      msg: message,
      resolve: () => undefined,
      reject: (err: unknown) => this.opts.log.warn({ err, address: activation.address }, 'timer turn failed'),
    });
  }

  runTurn(...turn: Parameters<TurnCommitter['runTurn']>): Promise<void> {
    return this.turns.runTurn(...turn);
  }
}
