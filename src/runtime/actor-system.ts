import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SqlEntityManager } from '@mikro-orm/knex';
import type { Logger } from 'pino';
import { Compile, type Validator } from 'typebox/compile';
import type { Database } from '../db/database.js';
import { addressOf, parseAddress, shardOf, type Address } from './address.js';
import { Activation, type ActivationHost, type TurnEffects, type WorkItem } from './activation.js';
import {
  ActorMovedError,
  ActorUnavailableError,
  AskTimeoutError,
  FencedError,
  InvalidMessageError,
  UnknownActorKindError,
  UnrecoverableError,
  rebuildError,
  serializeError,
  type SerializedError,
} from './errors.js';
import type { ActorPlacement, Lease, PlacementEvents } from './placement.js';
import type { MailboxRow, RuntimeStore } from './runtime-store.js';
import type { Envelope, Transport } from './transport.js';
import type { RegisteredActor, DeactivationReason, DurableDelivery } from './types.js';
import type {
  ActorMessenger,
  ActorProtocol,
  ReplyTo,
  AskOptions,
  DurableSendOptions,
  DurableSendResult,
  Inbox,
  TypedRef,
} from './protocol.js';
import type { Static, TSchema } from 'typebox';

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
  onTurn?: (kind: string, outcome: 'ok' | 'error' | 'fenced' | 'moved', seconds: number) => void;
}

interface Kind {
  def: RegisteredActor;
  messages: Validator;
  state: Validator;
}

interface PendingAsk {
  resolve(value: unknown): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
  /** the process the ask was sent to: if its membership lapses, the ask is re-sent elsewhere */
  owner: string;
}

type Reply = { ok: true; value: unknown } | { ok: false; error: SerializedError };

/** An ask this process received, by its id: answered again from here if it is re-sent. */
interface ReceivedAsk {
  at: number;
  reply: Reply | undefined;
  /** calls with this id waiting for the turn (the first one and any re-send) */
  waiting: Array<Extract<Envelope, { t: 'call' }>>;
}

/** A pinned actor held by this process, e.g. for the charger whose socket we hold. */
export interface PinnedActor {
  readonly address: Address;
  readonly epoch: number;
  /** ends the activation and gives up the pin (the connection closed) */
  release(): Promise<void>;
}

class DuplicateDeliveryError extends Error {
  override readonly name = 'DuplicateDeliveryError';
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
 * The pause before an ask resolves its target again (moved, fenced, no owner yet). Every retry
 * path backs off: a fenced shard retried at once spun 1,238 commit transactions in a second
 * (issue 7).
 */
function retryDelayMs(attempt: number, remainingMs: number): number {
  return Math.max(1, Math.min(250, 10 * 2 ** attempt, remainingMs));
}

/**
 * The actor runtime of one process: activations, turns, routing through the placement and the
 * transport, durable messages and reminders.
 */
export class ActorSystem implements ActorMessenger, ActivationHost {
  readonly processId: string;
  readonly actors: ActorMessenger = this;
  private readonly kinds = new Map<string, Kind>();
  private readonly activations = new Map<Address, Activation>();
  private readonly pending = new Map<string, PendingAsk>();
  private readonly received = new Map<string, ReceivedAsk>();
  private rerouted = 0;
  private readonly inFlight = new Set<string>();
  private readonly timers: NodeJS.Timeout[] = [];
  private started = false;
  private stopping = false;
  private sweeping = false;

  constructor(private readonly opts: ActorSystemOptions) {
    this.processId = opts.placement.processId;
  }

  get log(): Logger {
    return this.opts.log;
  }

  register(def: RegisteredActor): this {
    if (this.started) throw new Error('register actor kinds before start()');
    if (this.kinds.has(def.kind)) throw new Error(`actor kind ${def.kind} registered twice`);
    this.kinds.set(def.kind, { def, messages: Compile(def.messages), state: Compile(def.state) });
    return this;
  }

  async start(): Promise<void> {
    this.started = true;
    await this.opts.transport.start(this.processId, (env) => this.onEnvelope(env));
    const events: PlacementEvents = {
      shardsLost: (shards, graceful) => this.dropShards(shards, graceful),
      shardsGained: () => void this.sweep(),
      membersLeft: (ids) => this.rerouteAsksTo(ids),
      pinsLost: (addresses) => {
        for (const address of addresses) {
          const act = this.activations.get(address);
          if (act) void this.deactivate(act, 'pin-lost', false);
        }
      },
    };
    await this.opts.placement.start(events);
    const sweepMs = this.opts.sweepMs ?? 1000;
    this.timers.push(setInterval(() => void this.sweep(), sweepMs).unref());
    this.timers.push(setInterval(() => this.passivateIdle(), Math.max(1000, Math.floor(this.opts.idleMs / 4))).unref());
  }

  /** Hands shards over, ends every activation, and leaves. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    await this.opts.placement.stop();
    await Promise.all([...this.activations.values()].map((a) => this.deactivate(a, 'shutdown', true)));
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new ActorUnavailableError('the actor system is stopping'));
      this.pending.delete(id);
    }
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
      inFlightDurable: this.inFlight.size,
      pendingAsks: this.pending.size,
      reroutedAsks: this.rerouted,
    };
  }

  // ---- ActorMessenger ---------------------------------------------------------------------

  /** The actor `key` of a protocol's kind: its address is built here and nowhere else. */
  ref<MessageSchema extends TSchema, Replies, Discriminant extends string | undefined>(
    protocol: ActorProtocol<MessageSchema, Replies, Discriminant>,
    key: string,
  ): TypedRef<Static<MessageSchema>, Replies, Discriminant> {
    const address = addressOf(protocol.kind, key);
    return {
      ...this.inbox<Static<MessageSchema>>(address),
      // The one cast of a reply: it crossed a queue or the wire as `unknown`. It is what the
      // handler of this protocol returned for this message, which `defineActor` types as a reply
      // of the protocol and `ReplyTo` narrows by the message's discriminant.
      ask: async (message, opts) =>
        (await this.askAt(address, message, opts)) as ReplyTo<Replies, Discriminant, typeof message>,
    };
  }

  inbox<Msg>(address: Address): Inbox<Msg> {
    return {
      address,
      tell: (message) => this.tellAt(address, message),
      sendDurable: (message, opts) => this.sendDurableAt(address, message, opts),
    };
  }

  private tellAt(address: Address, message: unknown): void {
    void this.deliverTell(address, message, 0).catch((err: unknown) =>
      this.log.warn({ err, address }, 'tell not delivered'),
    );
  }

  private async askAt(address: Address, message: unknown, opts?: AskOptions): Promise<unknown> {
    const timeoutMs = opts?.timeoutMs ?? this.opts.askTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    const kind = this.kindOf(address);
    // one id for every send of this ask: a process that sees it twice answers from memory
    const askId = randomUUID();
    for (let attempt = 0; ; attempt++) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new AskTimeoutError(`no reply from ${address} within ${timeoutMs} ms`);
      const local = this.localActivation(address);
      if (local) {
        try {
          return await withTimeout(
            new Promise((resolve, reject) => local.enqueue({ t: 'message', msg: message, resolve, reject })),
            remaining,
            () => new AskTimeoutError(`no reply from ${address} within ${timeoutMs} ms`),
          );
        } catch (err) {
          if (!(err instanceof ActorMovedError)) throw err;
          await sleep(retryDelayMs(attempt, deadline - Date.now()));
          continue;
        }
      }
      const owner = await this.ownerOf(address, kind.def);
      if (!owner || owner === this.processId) {
        if (kind.def.placement === 'pinned') throw new ActorUnavailableError(`${address} is not connected`);
        await sleep(retryDelayMs(attempt, remaining));
        continue;
      }
      try {
        return await this.remoteAsk(askId, owner, address, message, remaining, timeoutMs);
      } catch (err) {
        if (!(err instanceof ActorMovedError)) throw err;
        this.forgetOwner(address, kind.def);
        await sleep(retryDelayMs(attempt, deadline - Date.now()));
      }
    }
  }

  private async sendDurableAt(
    address: Address,
    message: unknown,
    opts: DurableSendOptions,
  ): Promise<DurableSendResult> {
    const kind = this.kindOf(address);
    if (!kind.messages.Check(message)) {
      const first = kind.messages.Errors(message)[0];
      throw new InvalidMessageError(
        `invalid message for ${kind.def.kind}: ${first?.instancePath || '/'} ${first?.message ?? ''}`,
      );
    }
    const shard = kind.def.placement === 'sharded' ? shardOf(address, this.opts.placement.shardCount) : -1;
    const res = await this.opts.store.enqueue(
      address,
      kind.def.kind,
      shard,
      opts.dedupeKey,
      { m: message },
      opts.notBefore ?? Date.now(),
    );
    if (!res.duplicate && (opts.notBefore ?? 0) <= Date.now()) void this.wake(address, kind.def);
    return res;
  }

  /** Claims a pinned actor for this process; a claim elsewhere is ended. */
  async pin(address: Address): Promise<PinnedActor> {
    const { key } = parseAddress(address);
    const kind = this.kindOf(address);
    if (kind.def.placement !== 'pinned') throw new TypeError(`${kind.def.kind} actors are not pinned`);
    const existing = this.activations.get(address);
    if (existing) await this.deactivate(existing, 'pin-lost', true);
    const { lease, previousOwner } = await this.opts.placement.claimPin(address);
    if (previousOwner && previousOwner !== this.processId) {
      void this.opts.transport.send(previousOwner, { t: 'unpin', to: address, epoch: lease.epoch });
    }
    const act = this.activate(kind, address, key, -1, lease.epoch);
    void this.drainAddress(address);
    return {
      address,
      epoch: lease.epoch,
      release: async () => {
        if (this.activations.get(address) === act) await this.deactivate(act, 'pin-released', true);
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
      reject: (err: unknown) => this.log.warn({ err, address: activation.address }, 'timer turn failed'),
    });
  }

  async runTurn(
    act: Activation,
    item: WorkItem,
    effects: TurnEffects,
    lease: Lease,
    durable: DurableDelivery | undefined,
    run: () => Promise<unknown>,
  ): Promise<void> {
    const started = performance.now();
    const kind = act.def.kind;
    try {
      if (item.t === 'durable' && !(await this.opts.store.isPending(item.row.id))) {
        item.done();
        return;
      }
      const result = await run();
      const needsCommit =
        effects.stateDirty ||
        effects.writes.length > 0 ||
        effects.reminders.length > 0 ||
        effects.emUsed ||
        durable !== undefined;
      if (needsCommit) await this.commit(act, effects, lease, item.t === 'durable' ? item.row : undefined);
      if (effects.stateDirty) act.state = effects.nextState;
      act.isNew = false;
      if (item.t === 'message') item.resolve(result);
      else if (item.t === 'durable') item.done();
      this.opts.onTurn?.(kind, 'ok', (performance.now() - started) / 1000);
      for (const fn of effects.afterCommit) {
        void Promise.resolve()
          .then(fn)
          .catch((err: unknown) => this.log.error({ err, address: act.address }, 'afterCommit failed'));
      }
      if (effects.passivate) void this.deactivate(act, 'idle', false);
    } catch (err) {
      effects.em?.clear();
      if (err instanceof FencedError) {
        this.log.warn(
          { address: act.address, epoch: act.epoch, fence: lease.fenceKey },
          'turn fenced: a newer owner exists',
        );
        this.opts.onTurn?.(kind, 'fenced', (performance.now() - started) / 1000);
        // give the lease up before the caller retries, or the retry reactivates under it
        this.onFenced(act, lease);
        if (item.t === 'message') item.reject(new ActorMovedError(err.message));
        else if (item.t === 'durable') item.done();
        return;
      }
      if (err instanceof DuplicateDeliveryError) {
        if (item.t === 'durable') item.done();
        return;
      }
      this.opts.onTurn?.(kind, 'error', (performance.now() - started) / 1000);
      if (item.t === 'message') item.reject(err);
      else if (item.t === 'durable') {
        const max = act.def.maxAttempts ?? 10;
        const unrecoverable = err instanceof UnrecoverableError;
        const outcome = await this.opts.store
          .fail(item.row, serializeError(err).message, max, unrecoverable)
          .catch(() => 'retry' as const);
        this.log.warn(
          { err, address: act.address, attempt: item.row.attempts + 1, outcome, unrecoverable },
          'durable message failed',
        );
        item.done();
      } else {
        this.log.error({ err, address: act.address }, 'onActivate failed');
      }
    }
  }

  // ---- internals --------------------------------------------------------------------------

  private async commit(
    act: Activation,
    effects: TurnEffects,
    lease: Lease,
    row: MailboxRow | undefined,
  ): Promise<void> {
    const store = this.opts.store;
    const em = effects.em ?? this.opts.db.fork();
    await em.begin();
    try {
      if (!(await store.checkFence(em, lease.fenceKey, lease.epoch))) {
        throw new FencedError(`${lease.fenceKey} has moved past epoch ${lease.epoch}`);
      }
      if (row && !(await store.complete(em, row))) throw new DuplicateDeliveryError(row.id);
      if (effects.stateDirty) {
        await store.saveState(em, act.address, act.def.kind, JSON.stringify(effects.nextState), lease.epoch);
      }
      for (const r of effects.reminders) {
        if (r.set)
          await store.upsertReminder(em, act.address, act.def.kind, act.shard, r.name, r.set.payload, r.set.dueAt);
        else await store.deleteReminder(em, act.address, r.name);
      }
      for (const step of effects.writes) await step(em);
      await em.flush();
      // the lease may have run out while the turn ran; the database fence is the last word,
      // this only narrows the window in which a stale owner reaches it
      if (!lease.isValid()) throw new FencedError(`lease on ${lease.fenceKey} expired during the turn`);
      await em.commit();
    } catch (err) {
      await em.rollback().catch(() => undefined);
      throw err;
    }
  }

  private onFenced(act: Activation, lease: Lease): void {
    this.opts.placement.leaseFenced(lease);
    if (act.shard < 0) {
      void this.deactivate(act, 'pin-lost', false);
      return;
    }
    for (const a of [...this.activations.values()]) {
      if (a.shard === act.shard && a.epoch <= act.epoch) void this.deactivate(a, 'shard-lost', false);
    }
  }

  private kindOf(address: Address): Kind {
    const { kind } = parseAddress(address);
    const k = this.kinds.get(kind);
    if (!k) throw new UnknownActorKindError(`no actor kind ${kind}`);
    return k;
  }

  /** The activation of an address this process owns (created on demand), else undefined. */
  private localActivation(address: Address): Activation | undefined {
    const existing = this.activations.get(address);
    if (existing && !existing.isStopped) {
      const lease = this.leaseFor(existing);
      if (lease?.isValid() && lease.epoch === existing.epoch) return existing;
      void this.deactivate(existing, existing.shard >= 0 ? 'shard-lost' : 'pin-lost', false);
    }
    if (this.stopping) return undefined;
    const kind = this.kindOf(address);
    if (kind.def.placement !== 'sharded') return undefined;
    const shard = shardOf(address, this.opts.placement.shardCount);
    const lease = this.opts.placement.shardLease(shard);
    if (!lease?.isValid() || !lease.isAccepting()) return undefined;
    return this.activate(kind, address, parseAddress(address).key, shard, lease.epoch);
  }

  private activate(kind: Kind, address: Address, key: string, shard: number, epoch: number): Activation {
    const log = this.log.child({ actor: address });
    const load = async (act: Activation): Promise<void> => {
      const raw = await this.opts.store.loadState(address);
      if (raw === undefined) {
        act.state = kind.def.initialState(key);
        act.isNew = true;
        return;
      }
      const parsed: unknown = JSON.parse(raw);
      if (!kind.state.Check(parsed)) {
        const first = kind.state.Errors(parsed)[0];
        throw new Error(
          `stored state of ${address} fails its schema at ${first?.instancePath || '/'}: ${first?.message ?? ''}`,
        );
      }
      act.state = parsed;
    };
    const act = new Activation(this, kind.def, kind.messages, address, key, shard, epoch, log, load);
    this.activations.set(address, act);
    if (kind.def.onActivate) act.enqueue({ t: 'activate' });
    return act;
  }

  private async deactivate(act: Activation, reason: DeactivationReason, wait: boolean): Promise<void> {
    if (this.activations.get(act.address) === act) this.activations.delete(act.address);
    await act.stop(reason, wait);
  }

  private async dropShards(shards: number[], graceful: boolean): Promise<void> {
    const lost = new Set(shards);
    const acts = [...this.activations.values()].filter((a) => a.shard >= 0 && lost.has(a.shard));
    await Promise.all(acts.map((a) => this.deactivate(a, 'shard-lost', graceful)));
  }

  private passivateIdle(): void {
    const now = Date.now();
    for (const act of this.activations.values()) {
      const idleMs = act.def.idleMs === undefined ? this.opts.idleMs : act.def.idleMs;
      if (idleMs === null || act.isBusy) continue;
      if (now - act.lastActive >= idleMs) void this.deactivate(act, 'idle', false);
    }
  }

  private async ownerOf(address: Address, def: RegisteredActor): Promise<string | undefined> {
    if (def.placement === 'pinned') return this.opts.placement.ownerOfPin(address);
    return this.opts.placement.ownerOfShard(shardOf(address, this.opts.placement.shardCount));
  }

  private forgetOwner(address: Address, def: RegisteredActor): void {
    if (def.placement === 'sharded')
      this.opts.placement.forgetShardOwner(shardOf(address, this.opts.placement.shardCount));
  }

  private remoteAsk(
    id: string,
    owner: string,
    address: Address,
    msg: unknown,
    remaining: number,
    timeoutMs: number,
  ): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new AskTimeoutError(`no reply from ${address} within ${timeoutMs} ms`));
      }, remaining);
      this.pending.set(id, { resolve, reject, timer, owner });
      const env: Envelope = { t: 'call', id, from: this.processId, to: address, msg, ask: true, hops: 0 };
      this.opts.transport.send(owner, env).then(
        (delivered) => {
          if (delivered) return;
          // nobody listens on that inbox: the process is gone; resolve the owner again
          this.settle(id, { ok: false, error: { name: 'ActorMovedError', message: `${owner} is gone` } });
        },
        // the message never left this process (Redis unreachable): the actor is unavailable
        // for now, which the caller may retry; not an error of the actor's own
        (err: unknown) =>
          this.settle(id, {
            ok: false,
            error: {
              name: 'ActorUnavailableError',
              message: `could not send to ${owner}: ${serializeError(err).message}`,
            },
          }),
      );
    });
  }

  /**
   * Processes whose membership lapsed will not answer: what we asked them is re-sent to the new
   * owner now instead of waiting out its timeout (issue 7: after kill -9, 7 of 24 asks waited
   * 30 s). Their leases lapsed before their membership did, so they cannot commit any more; the
   * re-send carries the same ask id (see `onCall`).
   */
  private rerouteAsksTo(processIds: string[]): void {
    const gone = new Set(processIds);
    for (const [id, p] of this.pending) {
      if (!gone.has(p.owner)) continue;
      this.rerouted++;
      this.settle(id, { ok: false, error: { name: 'ActorMovedError', message: `${p.owner} left the cluster` } });
    }
    if (gone.size > 0) this.log.info({ processes: [...gone] }, 'members left; asks to them re-sent');
  }

  private settle(id: string, reply: Reply): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (reply.ok) p.resolve(reply.value);
    else p.reject(rebuildError(reply.error));
  }

  private async deliverTell(address: Address, message: unknown, hops: number): Promise<void> {
    const kind = this.kindOf(address);
    for (let attempt = 0; attempt < 5; attempt++) {
      const local = this.localActivation(address);
      if (local) {
        local.enqueue({
          t: 'message',
          msg: message,
          resolve: () => undefined,
          reject: (err: unknown) => this.log.debug({ err, address }, 'tell failed'),
        });
        return;
      }
      const owner = await this.ownerOf(address, kind.def);
      if (owner && owner !== this.processId) {
        const sent = await this.opts.transport.send(owner, {
          t: 'call',
          id: '',
          from: this.processId,
          to: address,
          msg: message,
          ask: false,
          hops,
        });
        if (sent) return;
        this.forgetOwner(address, kind.def);
      } else if (kind.def.placement === 'pinned') {
        return;
      }
      await sleep(50 * 2 ** attempt);
    }
    throw new ActorUnavailableError(`no owner for ${address}`);
  }

  private async wake(address: Address, def: RegisteredActor): Promise<void> {
    if (this.localActivation(address) || this.opts.placement.pinLease(address)) {
      await this.drainAddress(address);
      return;
    }
    const owner = await this.ownerOf(address, def).catch(() => undefined);
    if (owner && owner !== this.processId) await this.opts.transport.send(owner, { t: 'wake', to: address });
  }

  private async drainAddress(address: Address): Promise<void> {
    try {
      const rows = await this.opts.store.dueFor(address, 200);
      for (const row of rows) this.deliverDurable(row);
    } catch (err) {
      this.log.warn({ err, address }, 'could not read the durable mailbox');
    }
  }

  private deliverDurable(row: MailboxRow): void {
    if (this.inFlight.has(row.id)) return;
    const act = this.localActivation(row.address);
    if (!act) return;
    this.inFlight.add(row.id);
    act.enqueue({ t: 'durable', row, done: () => this.inFlight.delete(row.id) });
  }

  /** Picks up due durable messages and reminders of the shards (and pins) this process owns. */
  private async sweep(): Promise<void> {
    if (this.sweeping || this.stopping) return;
    this.sweeping = true;
    try {
      const owned = this.opts.placement.ownedShards();
      const shards = owned.length === this.opts.placement.shardCount ? null : owned;
      const rows = await this.opts.store.due(shards, 500);
      for (const row of rows) this.deliverDurable(row);
      const pinned = await this.opts.store.due([-1], 500);
      for (const row of pinned) if (this.opts.placement.pinLease(row.address)) this.deliverDurable(row);
    } catch (err) {
      this.log.warn({ err }, 'durable sweep failed');
    } finally {
      this.sweeping = false;
    }
  }

  private onEnvelope(env: Envelope): void {
    switch (env.t) {
      case 'reply':
        this.settle(env.id, env.ok ? { ok: true, value: env.value } : { ok: false, error: env.error });
        return;
      case 'wake':
        void this.drainAddress(env.to);
        return;
      case 'unpin': {
        this.opts.placement.invalidatePin(env.to, env.epoch);
        const act = this.activations.get(env.to);
        if (act && act.epoch < env.epoch) void this.deactivate(act, 'pin-lost', false);
        return;
      }
      case 'call':
        this.onCall(env);
    }
  }

  private onCall(env: Extract<Envelope, { t: 'call' }>): void {
    let act: Activation | undefined;
    try {
      act = this.localActivation(env.to);
    } catch (err) {
      if (env.ask) this.reply(env, { ok: false, error: serializeError(err) });
      return;
    }
    if (!act) {
      if (env.ask)
        this.reply(env, {
          ok: false,
          error: { name: 'ActorMovedError', message: `${env.to} is not owned by ${this.processId}` },
        });
      else if (env.hops < MAX_FORWARD_HOPS) {
        void this.deliverTell(env.to, env.msg, env.hops + 1).catch((err: unknown) =>
          this.log.debug({ err }, 'forward failed'),
        );
      }
      return;
    }
    if (!env.ask) {
      act.enqueue({
        t: 'message',
        msg: env.msg,
        resolve: () => undefined,
        reject: (err: unknown) => this.log.debug({ err }, 'tell failed'),
      });
      return;
    }
    // A sender re-sends an ask (same id) when it believes the owner gone; if that owner was us
    // after all, the turn must not run twice: answer from memory, or join the running turn.
    const seen = this.received.get(env.id);
    if (seen) {
      if (seen.reply) this.reply(env, seen.reply);
      else seen.waiting.push(env);
      return;
    }
    const entry: ReceivedAsk = { at: Date.now(), reply: undefined, waiting: [env] };
    this.rememberAsk(env.id, entry);
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

  private rememberAsk(id: string, entry: ReceivedAsk): void {
    const oldest = Date.now() - RECEIVED_ASK_MEMORY_MS;
    for (const [k, v] of this.received) {
      if (v.reply === undefined || (v.at >= oldest && this.received.size < RECEIVED_ASK_MEMORY_MAX)) break;
      this.received.delete(k);
    }
    this.received.set(id, entry);
  }

  private reply(env: Extract<Envelope, { t: 'call' }>, r: Reply): void {
    const out: Envelope = r.ok
      ? { t: 'reply', id: env.id, ok: true, value: r.value }
      : { t: 'reply', id: env.id, ok: false, error: r.error };
    void this.opts.transport.send(env.from, out).catch((err: unknown) => this.log.debug({ err }, 'reply not sent'));
  }
}

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
