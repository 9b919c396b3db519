import type { MergedRun, MergedWrite } from './merged-write.js';
import {
  TransactionLostError,
  type Row,
  type SqlExecutor,
  type SqlRunner,
  type SqlStatement,
  type SqlTx,
  type StatementResult,
} from './sql.js';

/** Values a batch reads once for all its turns (`BatchRead`), by key. */
export type BatchValues = ReadonlyMap<string, number>;

/**
 * One turn's writes; throws to roll the turn back (FencedError, a failed statement). `read` holds
 * what the batch read for the turn's `BatchRead` (empty when it named none).
 */
export type TurnWrites = (tx: SqlTx, read: BatchValues) => Promise<void>;

/**
 * A read a turn needs before its writes, made once per batch for every turn that names the same
 * `reader`: on PostgreSQL one statement (and one round trip) instead of one per turn. The runtime
 * reads its fences this way.
 */
export interface BatchRead {
  readonly reader: (tx: SqlRunner, keys: readonly string[]) => Promise<BatchValues>;
  readonly key: string;
  /** the value the turn's writes require the read to find for `key` (the turn fails otherwise) */
  readonly expect?: number;
  /**
   * A statement that fails unless every key holds its expected value, locking them as `reader`
   * does: where the driver sends a whole transaction at once (`SqlExecutor.pipelinedCommit`), a
   * batch whose turns all have one (and `expect`) commits in one round trip, the check made by
   * the database instead of by each turn between the read and COMMIT.
   */
  readonly guard?: (expected: ReadonlyMap<string, number>) => SqlStatement;
}

const NOTHING_READ: BatchValues = new Map();

/** How often a transaction PostgreSQL chose as a deadlock's victim (or a serialization failure) runs again. */
const TRANSIENT_RETRIES = 3;

/**
 * PostgreSQL's deadlock (40P01) and serialization failure (40001): the transaction was rolled
 * back for another's sake and succeeds when run again. Turn writes are statements only, so they
 * can be (see `flush`).
 */
export function isTransient(err: unknown): boolean {
  for (let e: unknown = err; typeof e === 'object' && e !== null; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (code === '40P01' || code === '40001') return true;
  }
  return false;
}

/** `run`, again after a short random pause while it fails transiently, at most TRANSIENT_RETRIES more times. */
export async function retryTransient<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await run();
    } catch (err) {
      if (attempt >= TRANSIENT_RETRIES || !isTransient(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 10 * (attempt + 1)));
    }
  }
}
const NO_ROWS: readonly MergedWrite[] = [];

/**
 * Turns per transaction at most. Each turn is a subtransaction on PostgreSQL; past 64 in one
 * transaction the server's per-backend cache of them overflows and other sessions' visibility
 * checks slow down. More turns waiting form the next batch at once.
 */
const MAX_BATCH = 64;

/**
 * On PostgreSQL a batch's statements run one after the other on its connection, a round trip
 * each, while the pool's other connections wait: turns that arrive together are spread over
 * batches of this many, which commit side by side on their own connections. SQLite has one
 * connection and statements without round trips: one batch takes them all (up to MAX_BATCH).
 */
const PG_BATCH = 8;

/**
 * Waiting turns that end the window early: a batch this big gains little from waiting longer,
 * while a closed loop of callers (64 meter values in flight, each charger waiting for its reply)
 * would otherwise wait out every window with all its calls already in. Fewer end it as soon as
 * as many wait as the last batch held (`schedule`).
 */
const FULL_ENOUGH = 32;

/** What a turn commits besides its `TurnWrites`. */
export interface TurnExtras {
  /** the batch's read this turn needs */
  read?: BatchRead | undefined;
  /** rows of mergeable statements, run after every turn's writes, one statement per kind */
  merged?: readonly MergedWrite[];
  /**
   * The turn's `TurnWrites` make no statement of their own (its fence comes from `read`, its
   * rows are all `merged`): on PostgreSQL it adds no round trip to a batch, so batches of such
   * turns are not split into `PG_BATCH`es.
   */
  light?: boolean;
  /** the key of a shared row the turn's writes lock (merged-write.ts `LockingStep`) */
  lockKey?: string | undefined;
}

interface Pending {
  writes: TurnWrites;
  read?: BatchRead | undefined;
  merged: readonly MergedWrite[];
  light: boolean;
  lockKey?: string | undefined;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Group commit: the turns that end within the same tick (or within `windowMs`, when set) commit
 * together in one transaction on one connection. A fenced or failing turn fails alone while the
 * others go on: the batch is run again with a SAVEPOINT per turn (`flush`). Every turn's promise settles only after the shared COMMIT, so a reply (and
 * the OCPP CALLRESULT behind it) never acknowledges what is not durable. While one batch commits,
 * the next one gathers; on PostgreSQL several batches may commit at once, one per pool
 * connection, on SQLite they take turns on the one connection.
 */
export class GroupCommit {
  private pending: Pending[] = [];
  private scheduled = false;
  /** the window's timer while one runs */
  private windowTimer: NodeJS.Timeout | undefined;
  /** when the last batch was taken (performance.now()) */
  private lastBatchAt = Number.NEGATIVE_INFINITY;
  /** how many turns the last batch took (all batches of one `go`) */
  private lastBatchSize = 0;

  constructor(
    private readonly sql: SqlExecutor,
    /** 0: the turns of the same tick (setImmediate); more: see `schedule` */
    private readonly windowMs = 0,
  ) {}

  /** Settles after the batch holding these writes committed (or rejects with this turn's error). */
  commit(writes: TurnWrites, extras: TurnExtras = {}): Promise<void> {
    const { read, merged = NO_ROWS, light = false, lockKey } = extras;
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ writes, read, merged, light, lockKey, resolve, reject });
      this.schedule();
    });
  }

  /** `work` in the next shared transaction; its result once that transaction committed. */
  run<T>(work: (tx: SqlTx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      // set by `writes` before `resolve` runs: resolve follows a successful `writes` only
      let value: T;
      const writes = async (tx: SqlTx): Promise<void> => {
        value = await work(tx);
      };
      this.pending.push({ writes, merged: NO_ROWS, light: false, resolve: () => resolve(value), reject });
      this.schedule();
    });
  }

  /**
   * When the next batch is taken: at the end of this tick if no batch was taken within the last
   * `windowMs` (an idle process adds no wait to a lone turn), else once `windowMs` have passed
   * since the last one. Under a storm of small turns (chargers connecting, meter values) a batch
   * then holds what arrived in the window instead of the two or three turns of one tick, and
   * the COMMIT, the costly statement on SQLite, is paid once for all of them.
   *
   * The window ends early once as many turns wait as the last batch held (at most FULL_ENOUGH):
   * callers that each wait for their answer before sending again (a charger's meter values, one
   * call at a time) come back as many as were answered, and waiting longer only delays them. One
   * charger sending back to back waited out the whole window for each message (5.4 ms a meter
   * value on PostgreSQL, 209 a second); a storm's batches keep the size its window gave them.
   */
  private schedule(): void {
    const enough = this.pending.length >= Math.min(FULL_ENOUGH, Math.max(1, this.lastBatchSize));
    if (this.scheduled) {
      // enough has come in: take it at the end of this tick instead of at the window's end
      if (this.windowTimer && enough) {
        clearTimeout(this.windowTimer);
        this.windowTimer = undefined;
        setImmediate(this.go);
      }
      return;
    }
    this.scheduled = true;
    const wait = enough ? 0 : this.windowMs - (performance.now() - this.lastBatchAt);
    if (wait >= 1) this.windowTimer = setTimeout(this.go, wait);
    else setImmediate(this.go);
  }

  private readonly go = (): void => {
    this.scheduled = false;
    this.windowTimer = undefined;
    this.lastBatchAt = performance.now();
    this.lastBatchSize = this.pending.length;
    for (const batch of this.batches(this.pending.splice(0))) void this.flush(batch);
  };

  /**
   * The waiting turns as batches: up to MAX_BATCH each on SQLite; on PostgreSQL light turns
   * (no round trip of their own) up to MAX_BATCH together, the others PG_BATCH at a time.
   */
  private batches(waiting: Pending[]): Pending[][] {
    const out: Pending[][] = [];
    const chunk = (list: Pending[], size: number): void => {
      for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
    };
    if (this.sql.dialect !== 'postgresql') chunk(waiting, MAX_BATCH);
    else {
      chunk(
        waiting.filter((p) => p.light),
        MAX_BATCH,
      );
      // turns that lock a shared row run first in every batch, in the order of its key: the
      // batches of this process and of the others all take such rows in one order, so none waits
      // for a row another holds while that one waits for a row it holds (before, the chargers of
      // two locations reporting at once deadlocked batches in pairs, PostgreSQL broke each cycle
      // after a second, and calls failed after their retries). The other turns follow: what they
      // lock is their own, or is settled without waiting (an outbox row sent, `settle`)
      const heavy = waiting.filter((p) => !p.light);
      const keyed = heavy
        .filter((p) => p.lockKey !== undefined)
        .sort((a, b) => ((a.lockKey as string) < (b.lockKey as string) ? -1 : a.lockKey === b.lockKey ? 0 : 1));
      chunk([...keyed, ...heavy.filter((p) => p.lockKey === undefined)], PG_BATCH);
    }
    return out;
  }

  /**
   * A batch first runs without savepoints, the common case of turns that all succeed: on
   * PostgreSQL a savepoint per turn is a round trip (and one more write to the socket) each. If
   * any turn throws, that transaction rolls back as a whole and the batch runs again with a
   * savepoint per turn, so the failure stays that turn's own (`flushIsolated`). Turn writes are
   * statements only, so running them a second time after a rollback is safe.
   */
  private async flush(batch: Pending[]): Promise<void> {
    if (this.sql.pipelinedTransaction && batch.every((p) => p.light)) {
      if (await this.flushInOneTrip(batch)) return;
      return this.flushPipelined(batch);
    }
    const only = batch.length === 1 ? batch[0] : undefined;
    if (only) {
      await retryTransient(() => this.sql.transaction(async (tx) => alone(tx, only, await this.reads(tx, batch)))).then(
        only.resolve,
        only.reject,
      );
      return;
    }
    const committed = await this.sql
      .transaction(async (tx) => {
        const reads = await this.reads(tx, batch);
        // every turn's merged rows, one statement per kind after the turns' own writes
        const token = {};
        const runs: MergedRun[] = [];
        for (const p of batch) {
          await p.writes(tx, reads.get(p.read?.reader) ?? NOTHING_READ);
          for (const m of p.merged) m.join(token, runs);
        }
        for (const r of runs) await r.run(tx, this.sql.dialect);
      })
      .then(
        () => true,
        () => false,
      );
    if (committed) for (const p of batch) p.resolve();
    else await this.flushIsolated(batch);
  }

  /**
   * A batch of light turns where the driver pipelines (PostgreSQL): BEGIN, the batch's reads and
   * its merged writes go in one round trip, then each turn checks its fence against what was read,
   * then COMMIT: two round trips instead of five for a batch of meter values. The writes run
   * before the checks, inside the transaction, so a fenced turn rolls them all back, and the batch
   * runs again turn by turn (`flushIsolated`), where that turn fails alone. A statement made
   * after the pipeline left (a reader or a merged write that awaited first) runs on the
   * transaction after it, in order.
   */
  private async flushPipelined(batch: Pending[]): Promise<void> {
    const later = new Later();
    const reads = this.reads(later, batch);
    const token = {};
    const runs: MergedRun[] = [];
    for (const p of batch) for (const m of p.merged) m.join(token, runs);
    // settles once every merged statement did, the first failure being its error: none is still
    // under way when the transaction ends
    const written = Promise.allSettled(runs.map((r) => r.run(later, this.sql.dialect))).then((all) => {
      for (const r of all) if (r.status === 'rejected') throw r.reason;
    });
    // both settle with the pipeline: when it fails, its error is the batch's, not an unhandled one
    reads.catch(() => undefined);
    written.catch(() => undefined);
    const pipelined = this.sql.pipelinedTransaction?.bind(this.sql);
    if (!pipelined) throw new Error('flushPipelined without a pipelining driver');
    const committed = await pipelined(later.seal(), async (results, tx) => {
      later.settle(results, tx);
      try {
        const values = await reads;
        for (const p of batch) await p.writes(tx, values.get(p.read?.reader) ?? NOTHING_READ);
      } catch (err) {
        // no statement starts after this, and those under way end before the ROLLBACK: one that
        // ran after it would run outside the transaction
        later.fail(err);
        await written.catch(() => undefined);
        throw err;
      }
      await written;
    }).then(
      () => true,
      (err: unknown) => {
        later.fail(err);
        return false;
      },
    );
    if (committed) for (const p of batch) p.resolve();
    else await this.flushIsolated(batch);
  }

  /**
   * A batch of light turns whose reads all have a `guard` and an `expect`, where the driver sends
   * a whole transaction at once (PostgreSQL): BEGIN, the guards, the merged writes and COMMIT in
   * one round trip instead of two. Each turn's writes run first against the values the turns
   * expect (a light turn's writes only check them, and its lease); the guard makes the database
   * refuse the batch if any key holds another value, and the batch then runs again turn by turn
   * (`flushIsolated`), where the fenced turn fails alone, as in `flushPipelined`. False, with
   * nothing run, when the batch does not qualify: a read without a guard, two turns expecting
   * different values of one key, a turn whose writes throw or make a statement, or merged rows
   * that are not one statement (`MergedRun.statement`).
   */
  private async flushInOneTrip(batch: Pending[]): Promise<boolean> {
    const pipelinedCommit = this.sql.pipelinedCommit?.bind(this.sql);
    if (!pipelinedCommit) return false;
    const expected = new Map<
      BatchRead['reader'],
      { guard: NonNullable<BatchRead['guard']>; values: Map<string, number> }
    >();
    for (const p of batch) {
      const read = p.read;
      if (!read?.guard || read.expect === undefined) return false;
      let entry = expected.get(read.reader);
      if (!entry) expected.set(read.reader, (entry = { guard: read.guard, values: new Map() }));
      const held = entry.values.get(read.key);
      if (held !== undefined && held !== read.expect) return false;
      entry.values.set(read.key, read.expect);
    }
    try {
      for (const p of batch) {
        const read = p.read;
        await p.writes(NO_STATEMENTS, (read && expected.get(read.reader)?.values) ?? NOTHING_READ);
      }
    } catch {
      return false;
    }
    const statements: SqlStatement[] = [];
    for (const { guard, values } of expected.values()) statements.push(guard(values));
    const token = {};
    const runs: MergedRun[] = [];
    for (const p of batch) for (const m of p.merged) m.join(token, runs);
    for (const r of runs) {
      const statement = r.statement(this.sql.dialect);
      if (!statement) return false;
      statements.push(statement);
    }
    const committed = await pipelinedCommit(statements).then(
      () => true,
      () => false,
    );
    if (committed) for (const p of batch) p.resolve();
    else await this.flushIsolated(batch);
    return true;
  }

  private async flushIsolated(batch: Pending[]): Promise<void> {
    /** each turn's own failure, when its savepoint rolled back */
    const failures = new Map<Pending, unknown>();
    try {
      await retryTransient(() =>
        this.sql.transaction(async (tx) => {
          failures.clear();
          const reads = await this.reads(tx, batch);
          for (const p of batch) {
            await tx
              .savepoint(() => alone(tx, p, reads))
              .catch((err: unknown) => {
                // the transaction is gone, or PostgreSQL chose it as a deadlock's victim: run it again
                if (err instanceof TransactionLostError || isTransient(err)) throw err;
                failures.set(p, err);
              });
          }
        }),
      );
    } catch (err) {
      // BEGIN or COMMIT failed: nothing of the batch is durable
      for (const p of batch) p.reject(failures.get(p) ?? err);
      return;
    }
    for (const p of batch) {
      if (failures.has(p)) p.reject(failures.get(p));
      else p.resolve();
    }
  }

  /** Each reader of the batch, called once with the keys of every turn that names it. */
  private async reads(tx: SqlRunner, batch: Pending[]): Promise<Map<BatchRead['reader'] | undefined, BatchValues>> {
    const keys = new Map<BatchRead['reader'], Set<string>>();
    for (const p of batch) {
      if (!p.read) continue;
      let set = keys.get(p.read.reader);
      if (!set) keys.set(p.read.reader, (set = new Set()));
      set.add(p.read.key);
    }
    const values = new Map<BatchRead['reader'] | undefined, BatchValues>();
    for (const [reader, set] of keys) values.set(reader, await reader(tx, [...set]));
    return values;
  }
}

const refuseStatement = (): Promise<never> => Promise.reject(new Error('a light turn made a statement'));

/** The runner of a light turn's writes checked before a one-trip batch: they make no statement. */
const NO_STATEMENTS: SqlTx = {
  query: refuseStatement,
  execute: refuseStatement,
  run: refuseStatement,
  savepoint: refuseStatement,
};

/** One turn's writes and its merged rows as statements of their own. */
async function alone(tx: SqlTx, p: Pending, reads: Map<BatchRead['reader'] | undefined, BatchValues>): Promise<void> {
  await p.writes(tx, reads.get(p.read?.reader) ?? NOTHING_READ);
  for (const m of p.merged) await m.one(tx);
}

/**
 * A runner that writes statements down until sealed, for a pipeline to send together; each one's
 * promise settles with the pipeline's answer to it. A statement after the seal runs on the
 * transaction once the pipeline answered, in the order made.
 */
class Later implements SqlRunner {
  private readonly statements: SqlStatement[] = [];
  private readonly answers: { resolve(r: StatementResult): void; reject(err: unknown): void }[] = [];
  private sealed = false;
  private failure: { err: unknown } | undefined;
  private readonly tx: Promise<SqlRunner>;
  private openTx!: (tx: SqlRunner) => void;
  private failTx!: (err: unknown) => void;

  constructor() {
    this.tx = new Promise<SqlRunner>((resolve, reject) => {
      this.openTx = resolve;
      this.failTx = reject;
    });
    this.tx.catch(() => undefined);
  }

  query(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    if (this.sealed) return this.tx.then((tx) => this.open(tx).query(sql, params));
    return this.record(sql, params).then((r) => r.rows);
  }

  execute(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
    return this.query(sql, params);
  }

  run(sql: string, params: readonly unknown[] = []): Promise<number> {
    if (this.sealed) return this.tx.then((tx) => this.open(tx).run(sql, params));
    return this.record(sql, params).then((r) => r.rowCount);
  }

  /** The statements written down; later ones wait for `settle`. */
  seal(): readonly SqlStatement[] {
    this.sealed = true;
    return this.statements;
  }

  settle(results: readonly StatementResult[], tx: SqlRunner): void {
    this.answers.forEach((a, i) => {
      const r = results[i];
      if (r) a.resolve(r);
      else a.reject(new Error(`no answer to pipelined statement ${i}`));
    });
    this.openTx(tx);
  }

  /** Statements not answered yet, and any made from now on, reject with `err`. */
  fail(err: unknown): void {
    this.failure ??= { err };
    for (const a of this.answers) a.reject(err);
    this.failTx(err);
  }

  /** The transaction, unless the batch failed meanwhile (then no more statements start on it). */
  private open(tx: SqlRunner): SqlRunner {
    if (this.failure) throw this.failure.err;
    return tx;
  }

  private record(sql: string, params: readonly unknown[]): Promise<StatementResult> {
    this.statements.push({ sql, params });
    return new Promise<StatementResult>((resolve, reject) => this.answers.push({ resolve, reject }));
  }
}
