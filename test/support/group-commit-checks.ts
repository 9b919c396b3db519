import { expect } from 'chai';
import { Database } from '../../src/db/database.js';
import { createLogger } from '../../src/logger.js';
import { GroupCommit } from '../../src/db/group-commit.js';
import { RuntimeStore } from '../../src/runtime/runtime-store.js';
import type { Config } from '../../config/index.js';

/** Opens and migrates a database for the executor checks. */
export async function openMigrated(database: Config['database']): Promise<Database> {
  const db = await Database.open(database, { log: createLogger('silent') });
  await db.migrate();
  await db.sql.run('CREATE TABLE IF NOT EXISTS test_gc_row (id TEXT PRIMARY KEY, n INTEGER NOT NULL)');
  return db;
}

async function count(db: Database, like: string): Promise<number> {
  const rows = await db.sql.query('SELECT COUNT(*) AS n FROM test_gc_row WHERE id LIKE ?', [like]);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Turns of one tick in one batch: the fenced one and the failing one roll back to their
 * savepoints and fail alone; the others commit, and all settle after the COMMIT.
 */
export async function checkSavepointIsolation(db: Database): Promise<void> {
  const store = new RuntimeStore(db);
  await store.raiseFence('gc:fence', 5);
  const group = new GroupCommit(db.sql);
  const turn = (i: number, epoch: number, fail = false) =>
    group.commit(async (tx) => {
      await tx.run('INSERT INTO test_gc_row (id, n) VALUES (?, ?)', [`iso-${i}`, i]);
      const ok = await store.saveStateFenced(tx, `gc/${i}`, 'gc', JSON.stringify({ i }), { key: 'gc:fence', epoch });
      if (!ok) throw new Error('fenced');
      if (fail) throw new Error('asked to fail');
    });
  const results = await Promise.allSettled([turn(1, 5), turn(2, 4), turn(3, 5, true), turn(4, 5)]);
  expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
  const ids = await db.sql.query("SELECT id FROM test_gc_row WHERE id LIKE 'iso-%' ORDER BY id");
  expect(ids.map((r) => r.id)).to.deep.equal(['iso-1', 'iso-4']);
  expect(await store.loadState('gc/2')).to.equal(undefined);
  expect(await store.loadState('gc/4')).to.equal(JSON.stringify({ i: 4 }));
}

/**
 * A MikroORM transaction held open across awaits (knex's connection busy) while turns commit
 * through the executor: neither side waits on the other forever, everything lands.
 */
export async function checkOrmTransactionAlongside(db: Database): Promise<void> {
  const group = new GroupCommit(db.sql);
  const orm = db.fork().transactional(async (em) => {
    for (let i = 0; i < 5; i++) {
      await em.execute('INSERT INTO test_gc_row (id, n) VALUES (?, ?)', [`orm-${i}`, i]);
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  const turns: Promise<void>[] = [];
  for (let i = 0; i < 200; i++) {
    turns.push(group.commit((tx) => tx.run('INSERT INTO test_gc_row (id, n) VALUES (?, ?)', [`turn-${i}`, i]).then()));
    if (i % 20 === 0) await new Promise((r) => setTimeout(r, 5));
  }
  const outcome = await Promise.race([
    Promise.all([orm, ...turns]).then(() => 'done'),
    new Promise((r) => setTimeout(() => r('stuck'), 10_000)),
  ]);
  expect(outcome).to.equal('done');
  expect(await count(db, 'orm-%')).to.equal(5);
  expect(await count(db, 'turn-%')).to.equal(200);
}

/**
 * With a window, turns that end a little apart share a transaction; more than a batch's worth
 * (64) split over several transactions, and every turn settles after its batch committed.
 */
export async function checkWindowAndCap(db: Database): Promise<void> {
  const group = new GroupCommit(db.sql, 5);
  const turns: Promise<void>[] = [];
  for (let i = 0; i < 150; i++) {
    turns.push(group.commit((tx) => tx.run('INSERT INTO test_gc_row (id, n) VALUES (?, ?)', [`win-${i}`, i]).then()));
    if (i === 75) await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(turns);
  expect(await count(db, 'win-%')).to.equal(150);
}
