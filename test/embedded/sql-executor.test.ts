import { expect } from 'chai';
import type { Database } from '../../src/db/database.js';
import { toDollarParams } from '../../src/db/pg-executor.js';
import { tempSqlite } from '../support/databases.js';
import { checkOrmTransactionAlongside, groupCommitTests, openMigrated } from '../support/group-commit-checks.js';

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

  groupCommitTests(() => db);

  it('shares knex connection with a MikroORM transaction held across awaits, without a deadlock', async () => {
    await checkOrmTransactionAlongside(db);
  });

  it('rewrites ? placeholders for PostgreSQL, leaving quoted text alone', () => {
    expect(toDollarParams(`SELECT ? , '?' FROM t WHERE a = ? AND "b?" = ?`)).to.equal(
      `SELECT $1 , '?' FROM t WHERE a = $2 AND "b?" = $3`,
    );
  });
});
