import type { QueryResult } from '@mikro-orm/core';
import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import type { BatchValues } from '../db/group-commit.js';
import { lockKeyOf, type MergedWrite, type WriteStep } from '../db/merged-write.js';
import type { SqlRunner } from '../db/sql.js';
import type { Activation, TurnEffects, WorkItem } from './activation.js';
import { ActorMovedError, FencedError, UnrecoverableError, serializeError } from './errors.js';
import type { Lease } from './placement.js';
import type { MailboxRow, RuntimeStore } from './runtime-store.js';
import type { DeactivationReason, DurableDelivery } from './types.js';

/** Observes every finished turn (metrics). */
export type TurnObserver = (kind: string, outcome: 'ok' | 'error' | 'fenced' | 'moved', seconds: number) => void;

export interface TurnCommitterOptions {
  db: Database;
  store: RuntimeStore;
  log: Logger;
  onTurn?: TurnObserver;
}

/** What the outcome of a turn may do to the activations (`LocalActivations` implements it). */
export interface ActivationControl {
  /** the database refused the commit: give the lease up and end what ran under it */
  fenced(act: Activation, lease: Lease): void;
  deactivate(act: Activation, reason: DeactivationReason, wait: boolean): Promise<void>;
}

/** The durable message was already marked done: a redelivery, whose effect must not commit twice. */
class DuplicateDeliveryError extends Error {
  override readonly name = 'DuplicateDeliveryError';
}

function isMerged(step: WriteStep): step is MergedWrite {
  return typeof step !== 'function';
}

function needsCommit(effects: TurnEffects, durable: DurableDelivery | undefined): boolean {
  return (
    effects.stateDirty ||
    effects.writes.length > 0 ||
    effects.reminders.length > 0 ||
    effects.emUsed ||
    durable !== undefined
  );
}

/**
 * Runs one turn of an activation and commits what it did: the handler's state, entities, raw
 * writes and reminders, and the done-mark of a durable message, all in one transaction that
 * first checks the lease's fence. Then settles the work item (reply, retry, dead letter).
 */
export class TurnCommitter {
  constructor(
    private readonly opts: TurnCommitterOptions,
    private readonly activations: ActivationControl,
  ) {}

  async runTurn(
    act: Activation,
    item: WorkItem,
    effects: TurnEffects,
    lease: Lease,
    durable: DurableDelivery | undefined,
    run: () => Promise<unknown>,
  ): Promise<void> {
    const started = performance.now();
    try {
      if (item.t === 'durable' && !(await this.opts.store.isPending(item.row.id))) {
        item.done();
        return;
      }
      const result = await run();
      if (needsCommit(effects, durable))
        await this.commit(act, effects, lease, item.t === 'durable' ? item.row : undefined);
      this.succeeded(act, item, effects, result, started);
    } catch (err) {
      effects.em?.clear();
      await this.failed(act, item, lease, err, started);
    }
  }

  private observe(act: Activation, outcome: 'ok' | 'error' | 'fenced', started: number): void {
    this.opts.onTurn?.(act.def.kind, outcome, (performance.now() - started) / 1000);
  }

  private succeeded(act: Activation, item: WorkItem, effects: TurnEffects, result: unknown, started: number): void {
    if (effects.stateDirty) act.state = effects.nextState;
    act.isNew = false;
    if (item.t === 'message') item.resolve(result);
    else if (item.t === 'durable') item.done();
    this.observe(act, 'ok', started);
    for (const fn of effects.afterCommit) {
      void Promise.resolve()
        .then(fn)
        .catch((err: unknown) => this.opts.log.error({ err, address: act.address }, 'afterCommit failed'));
    }
    if (effects.passivate) void this.activations.deactivate(act, 'idle', false);
  }

  private async failed(act: Activation, item: WorkItem, lease: Lease, err: unknown, started: number): Promise<void> {
    if (err instanceof FencedError) {
      this.opts.log.warn(
        { address: act.address, epoch: act.epoch, fence: lease.fenceKey },
        'turn fenced: a newer owner exists',
      );
      this.observe(act, 'fenced', started);
      // give the lease up before the caller retries, or the retry reactivates under it
      this.activations.fenced(act, lease);
      if (item.t === 'message') item.reject(new ActorMovedError(err.message));
      else if (item.t === 'durable') item.done();
      return;
    }
    if (err instanceof DuplicateDeliveryError) {
      if (item.t === 'durable') item.done();
      return;
    }
    this.observe(act, 'error', started);
    if (item.t === 'message') item.reject(err);
    else if (item.t === 'durable') await this.durableFailed(act, item, err);
    else this.opts.log.error({ err, address: act.address }, 'onActivate failed');
  }

  /** A durable message's turn failed: retry it later, or dead-letter it. */
  private async durableFailed(act: Activation, item: Extract<WorkItem, { t: 'durable' }>, err: unknown): Promise<void> {
    const max = act.def.maxAttempts ?? 10;
    const unrecoverable = err instanceof UnrecoverableError;
    const outcome = await this.opts.store
      .fail(item.row, serializeError(err).message, max, unrecoverable)
      .catch(() => 'retry' as const);
    this.opts.log.warn(
      { err, address: act.address, attempt: item.row.attempts + 1, outcome, unrecoverable },
      'durable message failed',
    );
    item.done();
  }

  /**
   * The turn's writes, committed with the other turns of its tick (`GroupCommit`), or, when the
   * handler used `ctx.em`, in a MikroORM transaction of its own so its entities flush inside it.
   */
  private async commit(
    act: Activation,
    effects: TurnEffects,
    lease: Lease,
    row: MailboxRow | undefined,
  ): Promise<void> {
    const { store, db } = this.opts;
    if (!effects.em) {
      // a turn that writes no state has its fence read with the batch's others (one statement),
      // or on PostgreSQL checked by the batch's guard in a one-trip commit
      const read = effects.stateDirty
        ? undefined
        : { reader: store.readFences, key: lease.fenceKey, expect: lease.epoch, guard: store.fenceGuard };
      const merged = effects.writes.filter(isMerged);
      const light =
        read !== undefined && !row && effects.reminders.length === 0 && merged.length === effects.writes.length;
      return db.group.commit((tx, fences) => this.turnWrites(tx, act, effects, lease, row, fences), {
        read,
        merged,
        light,
        // only PostgreSQL's batches are ordered by it: SQLite's one connection never waits on a row
        lockKey: db.dialect === 'postgresql' ? lockKeyOf(effects.writes) : undefined,
      });
    }
    // outside a group commit a merged row is a statement of its own, in the turn's order
    const writes = (tx: SqlRunner): Promise<void> => this.turnWrites(tx, act, effects, lease, row, undefined, true);
    const em = effects.em;
    await em.begin();
    try {
      await writes({
        query: (sql, params = []) => em.execute(sql, [...params], 'all'),
        execute: (sql, params = []) => em.execute(sql, [...params], 'all'),
        run: async (sql, params = []) => (await em.execute<QueryResult>(sql, [...params], 'run')).affectedRows,
      });
      await em.flush();
      await em.commit();
    } catch (err) {
      await em.rollback().catch(() => undefined);
      throw err;
    }
  }

  /**
   * One turn inside its transaction: done-mark, state, reminders, writes. The fence check rides
   * on the state write when there is one (`saveStateFenced`); else the batch read the fence with
   * its other turns' (`fences`), or, outside a group commit, it is a statement of its own.
   */
  private async turnWrites(
    tx: SqlRunner,
    act: Activation,
    effects: TurnEffects,
    lease: Lease,
    row: MailboxRow | undefined,
    fences?: BatchValues,
    /** run merged rows here too (else the group commit runs them after the batch's turns) */
    withMerged = false,
  ): Promise<void> {
    const store = this.opts.store;
    const fence = { key: lease.fenceKey, epoch: lease.epoch };
    const fenced = (): FencedError => new FencedError(`${fence.key} has moved past epoch ${fence.epoch}`);
    if (effects.stateDirty) {
      const state = JSON.stringify(effects.nextState);
      if (!(await store.saveStateFenced(tx, act.address, act.def.kind, state, fence))) throw fenced();
    } else if (fences ? fences.get(fence.key) !== fence.epoch : !(await store.checkFence(tx, fence.key, fence.epoch)))
      throw fenced();
    if (row && !(await store.complete(tx, row))) throw new DuplicateDeliveryError(row.id);
    for (const r of effects.reminders) {
      if (r.set)
        await store.upsertReminder(tx, act.address, act.def.kind, act.shard, r.name, r.set.payload, r.set.dueAt);
      else await store.deleteReminder(tx, act.address, r.name);
    }
    for (const step of effects.writes) {
      if (!isMerged(step)) await step(tx);
      else if (withMerged) await step.one(tx);
    }
    // the lease may have run out while the turn ran; the database fence is the last word,
    // this only narrows the window in which a stale owner reaches it
    if (!lease.isValid()) throw new FencedError(`lease on ${lease.fenceKey} expired during the turn`);
  }
}
