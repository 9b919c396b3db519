import { expect } from 'chai';
import { Database } from '../../src/db/database.js';
import { createLogger } from '../../src/logger.js';
import { GroupCommit } from '../../src/db/group-commit.js';
import { MergeableStatement } from '../../src/db/merged-write.js';
import type { SqlRunner } from '../../src/db/sql.js';
import { sessionWrites } from '../../src/csms/session-store.js';
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
async function checkSavepointIsolation(db: Database): Promise<void> {
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
  await db.loadOrm();
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
 * Callers that each wait for their commit before the next turn (a charger's calls, one at a time)
 * are not held by the window: as many waiting as the last batch took end it. Ten rounds of one
 * caller, then of four, each well inside one window of a second.
 */
async function checkClosedLoopNotHeld(db: Database): Promise<void> {
  const windowMs = 1000;
  const group = new GroupCommit(db.sql, windowMs);
  const turn = (id: string): Promise<void> =>
    group.commit((tx) => tx.run('INSERT INTO test_gc_row (id, n) VALUES (?, ?)', [id, 0]).then());
  for (const callers of [1, 4]) {
    const started = performance.now();
    for (let round = 0; round < 10; round++)
      await Promise.all(Array.from({ length: callers }, (_, c) => turn(`loop-${callers}-${round}-${c}`)));
    expect(performance.now() - started, `ten rounds of ${callers} caller(s)`).to.be.below(windowMs / 2);
  }
  expect(await count(db, 'loop-%')).to.equal(50);
}

/**
 * With a window, turns that end a little apart share a transaction; more than a batch's worth
 * (64) split over several transactions, and every turn settles after its batch committed.
 */
async function checkWindowAndCap(db: Database): Promise<void> {
  const group = new GroupCommit(db.sql, 5);
  const turns: Promise<void>[] = [];
  for (let i = 0; i < 150; i++) {
    turns.push(group.commit((tx) => tx.run('INSERT INTO test_gc_row (id, n) VALUES (?, ?)', [`win-${i}`, i]).then()));
    if (i === 75) await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(turns);
  expect(await count(db, 'win-%')).to.equal(150);
}

/**
 * A long window: a few turns after a batch wait it out, but 32 waiting turns are taken at once
 * (a closed loop of callers, each waiting for its reply, must not wait a window per round).
 */
async function checkFullEnoughEndsWindow(db: Database): Promise<void> {
  const windowMs = 1000;
  const group = new GroupCommit(db.sql, windowMs);
  const turn = (id: string): Promise<void> =>
    group.commit((tx) => tx.run('INSERT INTO test_gc_row (id, n) VALUES (?, ?)', [id, 0]).then());
  // the first turn after a quiet spell goes at the end of its tick and starts a window
  await turn('full-first');
  let started = performance.now();
  await Promise.all(Array.from({ length: 32 }, (_, i) => turn(`full-${i}`)));
  expect(performance.now() - started, '32 waiting turns did not end the window').to.be.below(windowMs / 2);
  started = performance.now();
  const few = Promise.all([turn('few-1'), turn('few-2')]);
  await new Promise((r) => setTimeout(r, 100));
  expect(await count(db, 'few-%'), 'two turns waited for the window').to.equal(0);
  await few;
  expect(await count(db, 'few-%')).to.equal(2);
  expect(await count(db, 'full-%')).to.equal(33);
}

/** A mergeable insert into the test table that records how its batches reached it. */
class InsertRow extends MergeableStatement<{ id: string; n: number }> {
  /** the size of each `many` call */
  readonly manyCalls: number[] = [];
  async one(tx: SqlRunner, r: { id: string; n: number }): Promise<void> {
    await tx.run('INSERT INTO test_gc_row (id, n) VALUES (?, ?)', [r.id, r.n]);
  }
  override async many(tx: SqlRunner, rows: readonly { id: string; n: number }[]): Promise<void> {
    this.manyCalls.push(rows.length);
    for (const r of rows) await this.one(tx, r);
  }
}

/**
 * Light turns (fence from the batch's read, rows merged): the rows of a tick reach their
 * statement once, together; a fenced turn in the tick fails alone and its row is not written,
 * while the others' rows land each on its own.
 */
async function checkMergedRows(db: Database): Promise<void> {
  const store = new RuntimeStore(db);
  await store.raiseFence('gc:merged', 3);
  const group = new GroupCommit(db.sql);
  const statement = new InsertRow();
  const turn = (id: string, epoch: number) =>
    group.commit(
      async (_tx, fences) => {
        if (fences.get('gc:merged') !== epoch) throw new Error('fenced');
      },
      { read: { reader: store.readFences, key: 'gc:merged' }, merged: [statement.write({ id, n: 1 })], light: true },
    );
  await Promise.all([turn('m-1', 3), turn('m-2', 3), turn('m-3', 3)]);
  expect(statement.manyCalls).to.deep.equal([3]);
  const second = await Promise.allSettled([turn('m-4', 3), turn('m-5', 2), turn('m-6', 3)]);
  expect(second.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
  // SQLite checks the fences before the merged statement runs; PostgreSQL pipelines the merged
  // statement with the fence read and checks after, so its rows ran, and rolled back, once more
  expect(statement.manyCalls).to.deep.equal(db.sql.dialect === 'postgresql' ? [3, 3] : [3]);
  const ids = await db.sql.query("SELECT id FROM test_gc_row WHERE id LIKE 'm-%' ORDER BY id");
  expect(ids.map((r) => r.id)).to.deep.equal(['m-1', 'm-2', 'm-3', 'm-4', 'm-6']);
}

/**
 * The meter readings of several sessions written by one merged statement: each row gets its own
 * values, the first reading sets the start only where none was set, and a 2.0.1 reading whose
 * seqNo is not above the last applied one leaves its row as it was.
 */
async function checkMeterProgressMerged(db: Database): Promise<void> {
  const group = new GroupCommit(db.sql);
  const session = (i: number, seq: number | null) => ({
    id: `00000000-0000-4000-8000-00000000000${i}`,
    charge_point_id: `gc-cp-${i}`,
    protocol: seq === null ? 'ocpp1.6' : 'ocpp2.0.1',
    transaction_id: `t${i}`,
    evse_id: 1,
    connector_id: 1,
    id_tag: null,
    started_at: Date.now(),
    meter_start_wh: i === 1 ? null : 1000,
    seq_no: seq,
    remote_start_command_id: null,
  });
  const rows = [session(1, null), session(2, null), session(3, 5)];
  await db.sql.transaction(async (tx) => {
    for (const s of rows) await sessionWrites.insert(tx, s);
  });
  const reading = (id: string, last: number, seq: number | null, at = Date.now()) => {
    const write = sessionWrites.progress(id, {
      meter: { start_wh: 900, last_wh: last, energy_wh: last - 900, at },
      seq_no: seq,
    });
    if (typeof write === 'function') throw new Error('a meter reading alone should be a merged write');
    return group.commit(async () => undefined, { merged: [write], light: true });
  };
  await Promise.all([
    reading(rows[0]!.id, 1500, null),
    reading(rows[1]!.id, 1700, null),
    reading(rows[2]!.id, 1900, 4),
  ]);
  const meters = async () =>
    (
      await db.sql.query(
        "SELECT id, meter_start_wh, meter_last_wh, energy_wh, seq_max FROM csms_session WHERE charge_point_id LIKE 'gc-cp-%' ORDER BY id",
      )
    ).map((r) => [Number(r.meter_start_wh), Number(r.meter_last_wh), Number(r.energy_wh), r.seq_max]);
  expect(await meters()).to.deep.equal([
    [900, 1500, 600, null],
    [1000, 1700, 800, null],
    [1000, 1000, 0, 5],
  ]);
  // a reading taken before the row's (queued offline, arriving late) leaves it; a newer one in
  // the same batch moves its own row
  await Promise.all([
    reading(rows[0]!.id, 1200, null, Date.now() - 60_000),
    reading(rows[1]!.id, 1800, null),
    reading(rows[2]!.id, 1950, 6, Date.now() - 60_000),
  ]);
  expect(await meters()).to.deep.equal([
    [900, 1500, 600, null],
    [1000, 1800, 900, null],
    [1000, 1950, 1050, 6],
  ]);
  // a newer reading below the last moves the last reading, never the energy: the register only
  // rises (docs/CSMS.md); a higher one in the same batch moves both
  await Promise.all([
    reading(rows[0]!.id, 1300, null),
    reading(rows[1]!.id, 1750, null),
    reading(rows[2]!.id, 2000, 7),
  ]);
  expect(await meters()).to.deep.equal([
    [900, 1300, 600, null],
    [1000, 1750, 900, null],
    [1000, 2000, 1100, 7],
  ]);
}

/**
 * The checks both dialects run, as mocha tests of the enclosing `describe` (the database is
 * opened by its `before`, hence a getter).
 */
export function groupCommitTests(db: () => Database): void {
  it('commits a tick of turns together; a fenced or failing turn rolls back alone', async () => {
    await checkSavepointIsolation(db());
  });

  it('gathers the turns of a window (COMMIT_WINDOW_MS) and caps a transaction at 64 turns', async () => {
    await checkWindowAndCap(db());
  });

  it('ends the window early once 32 turns wait; fewer wait it out', async () => {
    await checkFullEnoughEndsWindow(db());
  });

  it('a caller that waits for each commit before its next turn is not held by the window', async () => {
    await checkClosedLoopNotHeld(db());
  });

  it('writes the merged rows of a batch in one statement; a fenced turn of the batch fails alone', async () => {
    await checkMergedRows(db());
  });

  it('moves the meters of several sessions in one merged write, skipping a repeated seqNo and an older reading; a lower reading keeps the energy', async () => {
    await checkMeterProgressMerged(db());
  });
}
