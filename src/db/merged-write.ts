import type { Dialect, SqlRunner, SqlStatement } from './sql.js';

/** The statements of one batch, one per `MergeableStatement` that has rows in it. */
export interface MergedRun {
  run(tx: SqlRunner, dialect: Dialect): Promise<void>;
  /**
   * The batch's rows as one statement, made without running anything, when they can be
   * (`MergeableStatement.manyStatement`); undefined when they run row by row. A group commit that
   * sends its whole transaction at once (`SqlExecutor.pipelinedCommit`) needs every run as one.
   */
  statement(dialect: Dialect): SqlStatement | undefined;
}

/**
 * One turn's row of a `MergeableStatement` (`ctx.write` takes it as well as a function). Alone,
 * or when its batch runs turn by turn, it is `one` statement; in a batch it joins the batch's
 * other rows of the same statement.
 */
export interface MergedWrite {
  one(tx: SqlRunner): Promise<void>;
  /** adds the row to `batch`'s rows of its statement; the first row also adds the statement to `runs` */
  join(batch: object, runs: MergedRun[]): void;
}

/**
 * A statement that many turns make with values of their own, one row each (a meter reading moving
 * its session row). A group commit on PostgreSQL runs every row of a batch as one statement
 * (`manyStatement`: one round trip instead of one per turn); SQLite, whose statements have no
 * round trip, runs them one by one. The rows come in the order the turns committed.
 */
export abstract class MergeableStatement<R> {
  /** the rows of each batch still gathering, by the batch's token */
  private readonly batches = new WeakMap<object, R[]>();

  abstract one(tx: SqlRunner, row: R): Promise<void>;

  /**
   * Several rows as one statement, or undefined where they must run one by one (SQLite, or rows
   * whose order within one statement the server would decide). Only makes the statement.
   */
  manyStatement(_rows: readonly R[], _dialect: Dialect): SqlStatement | undefined {
    return undefined;
  }

  /** Several rows: `manyStatement` when it gives one, else `one` for each, in order. */
  async many(tx: SqlRunner, rows: readonly R[], dialect: Dialect): Promise<void> {
    const merged = this.manyStatement(rows, dialect);
    if (merged) {
      await tx.run(merged.sql, merged.params);
      return;
    }
    for (const r of rows) await this.one(tx, r);
  }

  write(row: R): MergedWrite {
    return {
      one: (tx) => this.one(tx, row),
      join: (batch, runs) => {
        let rows = this.batches.get(batch);
        if (!rows) {
          const mine: R[] = [];
          rows = mine;
          this.batches.set(batch, mine);
          runs.push({
            run: (tx, dialect) => {
              const [first] = mine;
              return mine.length === 1 && first !== undefined ? this.one(tx, first) : this.many(tx, mine, dialect);
            },
            statement: (dialect) => this.manyStatement(mine, dialect),
          });
        }
        rows.push(row);
      },
    };
  }
}

/** A turn's write: a step on the turn's connection, or one row of a mergeable statement. */
export type WriteStep = ((tx: SqlRunner) => Promise<void>) | MergedWrite;

/**
 * A write step that locks a row many actors' turns write (one of our locations, whose EVSEs are
 * in it), with the key of that row: a group commit on PostgreSQL runs such turns in the order of
 * their keys, in every batch and every process, so that two batches never take two such rows in
 * opposite orders and deadlock (`GroupCommit.batches`).
 */
export type LockingStep = ((tx: SqlRunner) => Promise<void>) & { readonly lockKey: string };

export function lockingStep(lockKey: string, step: (tx: SqlRunner) => Promise<void>): LockingStep {
  return Object.assign(step, { lockKey });
}

/** The least lock key of a turn's steps (`LockingStep`), if any takes one. */
export function lockKeyOf(steps: readonly WriteStep[]): string | undefined {
  let least: string | undefined;
  for (const s of steps) {
    const key = typeof s === 'function' ? (s as Partial<LockingStep>).lockKey : undefined;
    if (key !== undefined && (least === undefined || key < least)) least = key;
  }
  return least;
}
