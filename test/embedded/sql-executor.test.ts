import BetterSqlite3 from 'better-sqlite3';
import { expect } from 'chai';
import type { Row, SqlRunner } from '../../src/db/sql.js';
import { RuntimeStore } from '../../src/runtime/runtime-store.js';
import { toDollarParams } from '../../src/db/pg-executor.js';
import { tempSqlite } from '../support/databases.js';
import { checkOrmTransactionAlongside, groupCommitTests, openMigrated } from '../support/group-commit-checks.js';
import { checkOcpiShapesMigration, checkReceivedCreditsMigration } from '../support/ocpi-shapes-migration.js';
import { Database } from '../../src/db/database.js';
import { createLogger } from '../../src/logger.js';

describe('the runtime on the SQLite driver (group commit, shared connection)', () => {
  let db: Database;
  let cleanup: () => void;
  let file: string;

  before(async () => {
    const temp = tempSqlite();
    cleanup = temp.cleanup;
    file = temp.file;
    db = await openMigrated({ kind: 'sqlite', file });
  });

  after(async () => {
    await db.close();
    cleanup();
  });

  groupCommitTests(() => db);

  it('shares knex connection with a MikroORM transaction held across awaits, without a deadlock', async () => {
    await checkOrmTransactionAlongside(db);
  });

  it('reads the fences of a batch from cache while the fence clock stands, and again after any change from any connection', async () => {
    const store = new RuntimeStore(db);
    await store.raiseFence('fc:a', 3);
    await store.raiseFence('fc:b', 7);
    /** the batch's fences, and how many statements read actor_fence itself */
    const read = async (keys: string[]): Promise<{ fences: Record<string, number>; fenceReads: number }> =>
      db.sql.transaction(async (tx) => {
        let fenceReads = 0;
        const counting: SqlRunner = {
          query: (sql: string, params?: readonly unknown[]): Promise<Row[]> => {
            if (/FROM actor_fence\b/.test(sql)) fenceReads++;
            return tx.query(sql, params);
          },
          run: (sql, params) => tx.run(sql, params),
          execute: (sql, params) => tx.execute(sql, params),
        };
        const fences = await store.readFences(counting, keys);
        return { fences: Object.fromEntries(keys.map((k) => [k, fences.get(k) ?? -1])), fenceReads };
      });

    expect(await read(['fc:a', 'fc:b'])).to.deep.equal({ fences: { 'fc:a': 3, 'fc:b': 7 }, fenceReads: 1 });
    expect(await read(['fc:a', 'fc:b'])).to.deep.equal({ fences: { 'fc:a': 3, 'fc:b': 7 }, fenceReads: 0 });
    // a key not seen yet is read; one that does not exist is not cached as absent
    expect(await read(['fc:a', 'fc:none'])).to.deep.equal({ fences: { 'fc:a': 3, 'fc:none': -1 }, fenceReads: 1 });
    await store.raiseFence('fc:none', 1);
    expect((await read(['fc:none'])).fences).to.deep.equal({ 'fc:none': 1 });

    // another process raises a fence through its own connection to the file
    const other = new BetterSqlite3(file);
    try {
      other.prepare('UPDATE actor_fence SET epoch = 9 WHERE fence_key = ?').run('fc:a');
    } finally {
      other.close();
    }
    expect(await read(['fc:a', 'fc:b'])).to.deep.equal({ fences: { 'fc:a': 9, 'fc:b': 7 }, fenceReads: 1 });
    // a statement on this process's own connection, outside the runtime store
    await db.sql.run('UPDATE actor_fence SET epoch = 11 WHERE fence_key = ?', ['fc:b']);
    expect((await read(['fc:a', 'fc:b'])).fences).to.deep.equal({ 'fc:a': 9, 'fc:b': 11 });
    // a change rolled back leaves the clock (and the cache) where they were
    await db.sql
      .transaction(async (tx) => {
        await tx.run('UPDATE actor_fence SET epoch = 99 WHERE fence_key = ?', ['fc:a']);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(await read(['fc:a', 'fc:b'])).to.deep.equal({ fences: { 'fc:a': 9, 'fc:b': 11 }, fenceReads: 0 });
  });

  it('rewrites ? placeholders for PostgreSQL, leaving quoted text alone', () => {
    expect(toDollarParams(`SELECT ? , '?' FROM t WHERE a = ? AND "b?" = ?`)).to.equal(
      `SELECT $1 , '?' FROM t WHERE a = $2 AND "b?" = $3`,
    );
  });

  const dataMigrations: Array<[string, (db: Database) => Promise<void>]> = [
    ['m0006 moves tokens and tariffs stored in the 2.1.1 shape to the 2.2.1 shape', checkOcpiShapesMigration],
    ['m0031 gives the credit CDRs received before published 2', checkReceivedCreditsMigration],
  ];
  for (const [title, check] of dataMigrations)
    it(title, async () => {
      const temp = tempSqlite();
      const fresh = await Database.open({ kind: 'sqlite', file: temp.file }, { log: createLogger('silent') });
      try {
        await check(fresh);
      } finally {
        await fresh.close();
        temp.cleanup();
      }
    });
});
