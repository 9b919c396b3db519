import type { Dialect, SqlRunner } from './sql.js';

/** The statements of one batch, one per `MergeableStatement` that has rows in it. */
export interface MergedRun {
  run(tx: SqlRunner, dialect: Dialect): Promise<void>;
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
 * (`many`: one round trip instead of one per turn); SQLite, whose statements have no round trip,
 * may run them one by one. `many` gets the rows in the order the turns committed.
 */
export abstract class MergeableStatement<R> {
  /** the rows of each batch still gathering, by the batch's token */
  private readonly batches = new WeakMap<object, R[]>();

  abstract one(tx: SqlRunner, row: R): Promise<void>;
  abstract many(tx: SqlRunner, rows: readonly R[], dialect: Dialect): Promise<void>;

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
          });
        }
        rows.push(row);
      },
    };
  }
}

/** A turn's write: a step on the turn's connection, or one row of a mergeable statement. */
export type WriteStep = ((tx: SqlRunner) => Promise<void>) | MergedWrite;
