import type { Logger } from 'pino';
import type { Static, TSchema } from '#typebox';
import type { Database } from '../db/database.js';
import { parseAddress, type Address } from './address.js';
import { DurableMailbox } from './durable-mailbox.js';
import { ActorUnavailableError } from './errors.js';
import { IncomingCalls } from './incoming-calls.js';
import { LocalActivations } from './local-activations.js';
import { Messenger } from './messenger.js';
import { PendingAsks } from './pending-asks.js';
import type { ActorPlacement, PlacementEvents } from './placement.js';
import type { ActorMessenger, ActorProtocol, Inbox, TypedRef } from './protocol.js';
import type { RuntimeStore } from './runtime-store.js';
import type { Envelope, Transport } from './transport.js';
import type { TurnObserver } from './turn-commit.js';
import type { RegisteredActor } from './types.js';

export interface ActorSystemOptions {
  db: Database;
  store: RuntimeStore;
  placement: ActorPlacement;
  transport: Transport;
  log: Logger;
  askTimeoutMs: number;
  idleMs: number;
  /** how often due durable messages and reminders are looked for */
  sweepMs?: number;
  /** observes every finished turn (metrics) */
  onTurn?: TurnObserver;
}

/** A pinned actor held by this process, e.g. for the charger whose socket we hold. */
export interface PinnedActor {
  readonly address: Address;
  readonly epoch: number;
  /** ends the activation and gives up the pin (the connection closed) */
  release(): Promise<void>;
}

/**
 * The actor runtime of one process, and the one object the rest of the platform holds. It wires
 * the parts together and starts and stops them:
 * - `LocalActivations` (local-activations.ts): registered kinds, the activations held here;
 * - `TurnCommitter` (turn-commit.ts): one turn and its fenced commit;
 * - `Messenger` (messenger.ts), `PendingAsks` (pending-asks.ts), `IncomingCalls`
 *   (incoming-calls.ts): asks and tells, here or across the transport;
 * - `DurableMailbox` (durable-mailbox.ts): durable messages and reminders.
 */
export class ActorSystem implements ActorMessenger {
  readonly processId: string;
  readonly actors: ActorMessenger = this;
  private readonly activations: LocalActivations;
  private readonly pending: PendingAsks;
  private readonly durable: DurableMailbox;
  private readonly messenger: Messenger;
  private readonly incoming: IncomingCalls;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly orphanListeners: Array<(addresses: Address[]) => void> = [];
  /** the claim of each address that runs or waits in `pin`, the latest one (claims of one address go one at a time) */
  private readonly pinning = new Map<Address, Promise<PinnedActor>>();
  private started = false;
  /** some registered kind uses ctx.em (MikroORM is loaded at start) */
  private needsOrm = false;
  private stopping = false;

  constructor(private readonly opts: ActorSystemOptions) {
    const { db, store, placement, transport, log, idleMs, askTimeoutMs, onTurn } = opts;
    const processId = placement.processId;
    this.processId = processId;
    this.activations = new LocalActivations({
      db,
      store,
      placement,
      log,
      idleMs,
      actors: this,
      onTurn,
    });
    this.pending = new PendingAsks(log);
    this.durable = new DurableMailbox({ store, placement, transport, log }, this.activations);
    const parts = { activations: this.activations, durable: this.durable, pending: this.pending };
    this.messenger = new Messenger({ processId, transport, log, askTimeoutMs }, parts);
    this.incoming = new IncomingCalls({ processId, transport, log }, this.activations, this.messenger);
  }

  get log(): Logger {
    return this.opts.log;
  }

  /**
   * Listens for pinned actors whose process left without releasing them (a kill -9): their
   * connections are gone and no process said so. Each address is reported to one process of the
   * cluster, once its membership lapsed; never in embedded mode.
   */
  onPinsOrphaned(listener: (addresses: Address[]) => void): void {
    this.orphanListeners.push(listener);
  }

  private async reportOrphans(processIds: string[]): Promise<void> {
    // a process that would tell no one (a worker) leaves them to one that would
    const take = this.opts.placement.takeOrphanedPins?.bind(this.opts.placement);
    if (!take || this.orphanListeners.length === 0) return;
    try {
      const addresses = await take(processIds);
      if (addresses.length === 0) return;
      this.opts.log.info({ processes: processIds, pins: addresses.length }, 'pins of a departed process reported');
      for (const listener of this.orphanListeners) listener(addresses);
    } catch (err) {
      this.opts.log.warn({ err, processes: processIds }, 'could not take the pins of a departed process');
    }
  }

  register(def: RegisteredActor): this {
    if (this.started) throw new Error('register actor kinds before start()');
    this.activations.register(def);
    if (def.entityManager) this.needsOrm = true;
    return this;
  }

  async start(): Promise<void> {
    this.started = true;
    if (this.needsOrm) await this.opts.db.loadOrm();
    await this.opts.transport.start(this.processId, (env) => this.onEnvelope(env));
    const events: PlacementEvents = {
      shardsLost: (shards, graceful) => this.activations.dropShards(shards, graceful),
      shardsGained: () => void this.durable.sweep(),
      membersLeft: (ids) => {
        this.pending.rerouteFrom(ids);
        void this.reportOrphans(ids);
      },
      pinsLost: (addresses) => this.activations.pinsLost(addresses),
    };
    await this.opts.placement.start(events);
    const sweepMs = this.opts.sweepMs ?? 1000;
    this.timers.push(setInterval(() => void this.durable.sweep(), sweepMs).unref());
    const passivateMs = Math.max(1000, Math.floor(this.opts.idleMs / 4));
    this.timers.push(setInterval(() => this.activations.passivateIdle(), passivateMs).unref());
  }

  /** Hands shards over, ends every activation, and leaves. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.activations.beginStop();
    this.durable.stop();
    for (const t of this.timers) clearInterval(t);
    await this.opts.placement.stop();
    await this.activations.deactivateAll();
    this.pending.rejectAll(() => new ActorUnavailableError('the actor system is stopping'));
    await this.opts.transport.stop();
  }

  placementReady(): boolean {
    return this.opts.placement.isReady();
  }

  describe(): Record<string, unknown> {
    return { placement: this.opts.placement.describe(), ...this.stats() };
  }

  ownedShardCount(): number {
    return this.opts.placement.ownedShards().length;
  }

  stats(): { activations: number; inFlightDurable: number; pendingAsks: number; reroutedAsks: number } {
    return {
      activations: this.activations.size,
      inFlightDurable: this.durable.inFlightCount,
      pendingAsks: this.pending.size,
      reroutedAsks: this.pending.rerouted,
    };
  }

  // ---- ActorMessenger ---------------------------------------------------------------------

  /** The actor `key` of a protocol's kind: its address is built here and nowhere else. */
  ref<MessageSchema extends TSchema, Replies, Discriminant extends string | undefined>(
    protocol: ActorProtocol<MessageSchema, Replies, Discriminant>,
    key: string,
  ): TypedRef<Static<MessageSchema>, Replies, Discriminant> {
    return this.messenger.ref(protocol, key);
  }

  inbox<Msg>(address: Address): Inbox<Msg> {
    return this.messenger.inbox<Msg>(address);
  }

  // ---- pinned actors ----------------------------------------------------------------------

  /**
   * Claims a pinned actor for this process; a claim elsewhere is ended. Claims of one address in
   * this process run one after the other (two connections of one charger at once): each ends the
   * activation of the one before. Overlapping, the later one's activation replaced the earlier
   * one's without ending it, and the earlier claim could raise its fence last.
   */
  async pin(address: Address): Promise<PinnedActor> {
    const before = this.pinning.get(address);
    const claim = (before ?? Promise.resolve()).then(
      () => this.claimPin(address),
      () => this.claimPin(address),
    );
    this.pinning.set(address, claim);
    try {
      return await claim;
    } finally {
      if (this.pinning.get(address) === claim) this.pinning.delete(address);
    }
  }

  private async claimPin(address: Address): Promise<PinnedActor> {
    const { key } = parseAddress(address);
    const kind = this.activations.kindOf(address);
    if (kind.def.placement !== 'pinned') throw new TypeError(`${kind.def.kind} actors are not pinned`);
    const existing = this.activations.get(address);
    if (existing) await this.activations.deactivate(existing, 'pin-lost', true);
    const { lease, previousOwner } = await this.opts.placement.claimPin(address);
    if (previousOwner && previousOwner !== this.processId) {
      void this.opts.transport.send(previousOwner, { t: 'unpin', to: address, epoch: lease.epoch });
    }
    // durable rows sent while no process held the pin: drained when the state load found any
    const act = this.activations.activate(kind, address, key, -1, lease.epoch, (due) => {
      if (due) void this.durable.drain(address);
    });
    return {
      address,
      epoch: lease.epoch,
      release: async () => {
        if (this.activations.get(address) === act) await this.activations.deactivate(act, 'pin-released', true);
        await this.opts.placement.releasePin(address, lease);
      },
    };
  }

  /** For pinned actors: is a live process holding the pin? */
  async isPinned(address: Address): Promise<boolean> {
    const lease = this.opts.placement.pinLease(address);
    if (lease?.isValid()) return true;
    const owner = await this.opts.placement.ownerOfPin(address);
    return owner !== undefined;
  }

  /** For pinned actors: which of these a live process holds (a list page, a fleet count). */
  async pinnedAmong(addresses: readonly Address[]): Promise<Set<Address>> {
    return this.opts.placement.pinnedAmong(addresses);
  }

  /** Of these pinned actors, the ones this process holds (known while Redis is away). */
  pinnedHere(addresses: readonly Address[]): Set<Address> {
    return this.opts.placement.pinnedHere(addresses);
  }

  private onEnvelope(env: Envelope): void {
    switch (env.t) {
      case 'reply':
        this.pending.settle(env.id, env.ok ? { ok: true, value: env.value } : { ok: false, error: env.error });
        return;
      case 'wake':
        void this.durable.drain(env.to);
        return;
      case 'unpin':
        this.activations.unpinned(env.to, env.epoch);
        return;
      case 'call':
        this.incoming.handle(env);
    }
  }
}
