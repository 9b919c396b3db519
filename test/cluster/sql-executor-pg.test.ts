import type { Database } from '../../src/db/database.js';
import { expect } from 'chai';
import type { SqlRunner } from '../../src/db/sql.js';
import { PG_URL, tempSchema } from '../support/databases.js';
import { checkOrmTransactionAlongside, groupCommitTests, openMigrated } from '../support/group-commit-checks.js';
import { checkOcpiShapesMigration } from '../support/ocpi-shapes-migration.js';
import { Database as Db } from '../../src/db/database.js';
import { createLogger } from '../../src/logger.js';

describe('the runtime on the pg driver (group commit, named statements)', () => {
  let database: Database;
  const db = (): Database => database;
  let drop: () => Promise<void>;

  before(async () => {
    const schema = await tempSchema();
    drop = schema.drop;
    database = await openMigrated({ kind: 'postgresql', url: PG_URL, schema: schema.schema });
  });

  after(async () => {
    await database.close();
    await drop();
  });

  groupCommitTests(db);

  it('a query waits for a busy pool longer than the connect bound (the bound is on making a connection)', async () => {
    const { PgExecutor } = await import('../../src/db/pg-executor.js');
    const pool = new PgExecutor({
      url: PG_URL,
      schema: 'public',
      poolMax: 1,
      idleInTransactionMs: 30_000,
      ssl: false,
      connectTimeoutMs: 200,
    });
    try {
      const slow = pool.query('SELECT pg_sleep(0.6) AS slept');
      // queued behind the one connection for 600 ms, three times the connect bound
      const [row] = await pool.query('SELECT 1 AS ok');
      await slow;
      if (Number(row?.ok) !== 1) throw new Error('the queued query did not run');
    } finally {
      await pool.close();
    }
  });

  it('a transaction PostgreSQL picks as a deadlock victim runs again and commits (retryTransient)', async () => {
    const { PgExecutor } = await import('../../src/db/pg-executor.js');
    const { retryTransient } = await import('../../src/db/group-commit.js');
    const schema = await tempSchema();
    const pool = new PgExecutor({
      url: PG_URL,
      schema: schema.schema,
      poolMax: 4,
      idleInTransactionMs: 30_000,
      ssl: false,
      connectTimeoutMs: 5_000,
    });
    try {
      await pool.run('CREATE TABLE pair (id integer PRIMARY KEY, n integer NOT NULL)');
      await pool.run('INSERT INTO pair (id, n) VALUES (1, 0), (2, 0)');
      const gate = (): { wait: Promise<void>; open: () => void } => {
        let open = (): void => undefined;
        const wait = new Promise<void>((resolve) => (open = resolve));
        return { wait, open };
      };
      const [a, b] = [gate(), gate()];
      let attempts = 0;
      // each locks one row, waits for the other to lock its row, then wants the other's: a cycle
      const cross = (first: number, second: number, mine: typeof a, theirs: typeof a) =>
        retryTransient(() =>
          pool.transaction(async (tx) => {
            attempts += 1;
            await tx.run('UPDATE pair SET n = n + 1 WHERE id = ?', [first]);
            mine.open();
            await theirs.wait;
            await tx.run('UPDATE pair SET n = n + 1 WHERE id = ?', [second]);
          }),
        );
      await Promise.all([cross(1, 2, a, b), cross(2, 1, b, a)]);
      const rows = await pool.query('SELECT n FROM pair ORDER BY id');
      if (rows.map((r) => Number(r.n)).join(',') !== '2,2')
        throw new Error(`both should commit: ${JSON.stringify(rows)}`);
      if (attempts < 3) throw new Error(`no deadlock happened (${attempts} attempts)`);
    } finally {
      await pool.close();
      await schema.drop();
    }
  });

  it('a batch of light turns whose pipelined write fails runs again turn by turn: the failing turn fails alone, and the pool goes on', async () => {
    const { GroupCommit } = await import('../../src/db/group-commit.js');
    const { MergeableStatement } = await import('../../src/db/merged-write.js');
    const { RuntimeStore } = await import('../../src/runtime/runtime-store.js');
    type R = { id: string; n: number };
    // every row of a batch in one INSERT, as the meter statements do: one duplicate fails them all
    class InsertAll extends MergeableStatement<R> {
      async one(tx: SqlRunner, r: R): Promise<void> {
        await tx.run('INSERT INTO test_gc_row (id, n) VALUES (?, ?)', [r.id, r.n]);
      }
      async many(tx: SqlRunner, rows: readonly R[]): Promise<void> {
        await tx.run('INSERT INTO test_gc_row (id, n) SELECT * FROM unnest(?::text[], ?::integer[])', [
          rows.map((r) => r.id),
          rows.map((r) => r.n),
        ]);
      }
    }
    const store = new RuntimeStore(db());
    await store.raiseFence('gc:pipe', 1);
    await db().sql.run("INSERT INTO test_gc_row (id, n) VALUES ('p-taken', 0)");
    const group = new GroupCommit(db().sql);
    const statement = new InsertAll();
    const turn = (id: string) =>
      group.commit(
        async (_tx, fences) => {
          if (fences.get('gc:pipe') !== 1) throw new Error('fenced');
        },
        { read: { reader: store.readFences, key: 'gc:pipe' }, merged: [statement.write({ id, n: 1 })], light: true },
      );
    const first = await Promise.allSettled([turn('p-1'), turn('p-taken'), turn('p-2')]);
    expect(first.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    // the connection whose pipeline failed was let go; the next batches prepare afresh and commit
    for (let round = 0; round < 3; round++)
      await Promise.all([turn(`p-${round}-a`), turn(`p-${round}-b`), turn(`p-${round}-c`)]);
    const ids = await db().sql.query("SELECT id FROM test_gc_row WHERE id LIKE 'p-%' ORDER BY id");
    expect(ids.map((r) => r.id)).to.deep.equal([
      'p-0-a',
      'p-0-b',
      'p-0-c',
      'p-1',
      'p-1-a',
      'p-1-b',
      'p-1-c',
      'p-2',
      'p-2-a',
      'p-2-b',
      'p-2-c',
      'p-taken',
    ]);
  });

  it('runs beside a MikroORM transaction held across awaits', async () => {
    await checkOrmTransactionAlongside(db());
  });

  it('m0006 moves tokens and tariffs stored in the 2.1.1 shape to the 2.2.1 shape, and CDR ids may have 39 characters', async () => {
    const schema = await tempSchema();
    const fresh = await Db.open(
      { kind: 'postgresql', url: PG_URL, schema: schema.schema },
      { log: createLogger('silent') },
    );
    try {
      await checkOcpiShapesMigration(fresh);
    } finally {
      await fresh.close();
      await schema.drop();
    }
  });
});
