import { expect } from 'chai';
import type { Database } from '../../src/db/database.js';
import { toDollarParams } from '../../src/db/pg-executor.js';
import { tempSqlite } from '../support/databases.js';
import {
  checkOrmTransactionAlongside,
  checkSavepointIsolation,
  checkMergedRows,
  checkMeterProgressMerged,
  checkWindowAndCap,
  openMigrated,
} from '../support/group-commit-checks.js';

describe('the runtime on the SQLite driver (group commit, shared connection)', () => {
  let db: Database;
  let cleanup: () => void;

  before(async () => {
    const file = tempSqlite();
    cleanup = file.cleanup;
    db = await openMigrated({ kind: 'sqlite', file: file.file });
  });

  after(async () => {
    await db.close();
    cleanup();
  });

  it('commits a tick of turns together; a fenced or failing turn rolls back alone', async () => {
    await checkSavepointIsolation(db);
  });

  it('shares knex connection with a MikroORM transaction held across awaits, without a deadlock', async () => {
    await checkOrmTransactionAlongside(db);
  });

  it('rewrites ? placeholders for PostgreSQL, leaving quoted text alone', () => {
    expect(toDollarParams(`SELECT ? , '?' FROM t WHERE a = ? AND "b?" = ?`)).to.equal(
      `SELECT $1 , '?' FROM t WHERE a = $2 AND "b?" = $3`,
    );
  });

  it('gathers the turns of a window (COMMIT_WINDOW_MS) and caps a transaction at 64 turns', async () => {
    await checkWindowAndCap(db);
  });

  it('writes the merged rows of a batch in one statement; a fenced turn of the batch fails alone', async () => {
    await checkMergedRows(db);
  });

  it('moves the meters of several sessions in one merged write, skipping a repeated seqNo', async () => {
    await checkMeterProgressMerged(db);
  });
});
