import { TransactionLostError, type SqlExecutor, type SqlTx } from './sql.js';

/** One turn's writes; throws to roll the turn back (FencedError, a failed statement). */
export type TurnWrites = (tx: SqlTx) => Promise<void>;

/**
 * Turns per transaction at most. Each turn is a subtransaction on PostgreSQL; past 64 in one
 * transaction the server's per-backend cache of them overflows and other sessions' visibility
 * checks slow down. More turns waiting form the next batch at once.
 */
const MAX_BATCH = 64;

interface Pending {
  writes: TurnWrites;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Group commit: the turns that end within the same tick (or within `windowMs`, when set) commit
 * together in one transaction on one connection. Each turn runs under a SAVEPOINT of its own, so a
 * fenced or failing turn rolls back to it and fails alone while the others go on; a batch of one
 * needs no savepoint. Every turn's promise settles only after the shared COMMIT, so a reply (and
 * the OCPP CALLRESULT behind it) never acknowledges what is not durable. While one batch commits,
 * the next one gathers; on PostgreSQL several batches may commit at once, one per pool
 * connection, on SQLite they take turns on the one connection.
 */
export class GroupCommit {
  private pending: Pending[] = [];
  private scheduled = false;
  /** when the last batch was taken (performance.now()) */
  private lastBatchAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly sql: SqlExecutor,
    /** 0: the turns of the same tick (setImmediate); more: see `schedule` */
    private readonly windowMs = 0,
  ) {}

  /** Settles after the batch holding these writes committed (or rejects with this turn's error). */
  commit(writes: TurnWrites): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ writes, resolve, reject });
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
      this.pending.push({ writes, resolve: () => resolve(value), reject });
      this.schedule();
    });
  }

  /**
   * When the next batch is taken: at the end of this tick if no batch was taken within the last
   * `windowMs` (an idle process adds no wait to a lone turn), else once `windowMs` have passed
   * since the last one. Under a storm of small turns (chargers connecting, meter values) a batch
   * then holds what arrived in the window instead of the two or three turns of one tick, and
   * the COMMIT, the costly statement on SQLite, is paid once for all of them.
   */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const go = (): void => {
      this.scheduled = false;
      this.lastBatchAt = performance.now();
      while (this.pending.length > 0) void this.flush(this.pending.splice(0, MAX_BATCH));
    };
    const wait = this.windowMs - (performance.now() - this.lastBatchAt);
    if (wait >= 1) setTimeout(go, wait);
    else setImmediate(go);
  }

  private async flush(batch: Pending[]): Promise<void> {
    const only = batch.length === 1 ? batch[0] : undefined;
    if (only) {
      await this.sql.transaction(only.writes).then(only.resolve, only.reject);
      return;
    }
    /** each turn's own failure, when its savepoint rolled back */
    const failures = new Map<Pending, unknown>();
    try {
      await this.sql.transaction(async (tx) => {
        for (const p of batch) {
          await tx
            .savepoint(() => p.writes(tx))
            .catch((err: unknown) => {
              // the transaction is gone: roll back and fail the whole batch
              if (err instanceof TransactionLostError) throw err;
              failures.set(p, err);
            });
        }
      });
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
}
