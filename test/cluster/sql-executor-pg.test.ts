import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { resolve } from 'node:path';
import pg from 'pg';
import type { Database } from '../../src/db/database.js';
import { expect } from 'chai';
import type { SqlRunner } from '../../src/db/sql.js';
import { PG_URL, tempSchema, uniqueName } from '../support/databases.js';
import { runToExit } from '../support/processes.js';
import { migrationNames } from '../../src/db/migrations/names.js';
import { checkOrmTransactionAlongside, groupCommitTests, openMigrated } from '../support/group-commit-checks.js';
import { checkOcpiShapesMigration, checkReceivedCreditsMigration } from '../support/ocpi-shapes-migration.js';
import { Database as Db } from '../../src/db/database.js';
import { createLogger } from '../../src/logger.js';

/** A mergeable insert into the test table, every row of a batch in one statement, as the meter statements do. */
async function insertAll() {
  const { MergeableStatement } = await import('../../src/db/merged-write.js');
  type R = { id: string; n: number };
  class InsertAll extends MergeableStatement<R> {
    async one(tx: SqlRunner, r: R): Promise<void> {
      await tx.run('INSERT INTO test_gc_row (id, n) VALUES (?, ?)', [r.id, r.n]);
    }
    override manyStatement(rows: readonly R[]) {
      return {
        sql: 'INSERT INTO test_gc_row (id, n) SELECT * FROM unnest(?::text[], ?::integer[])',
        params: [rows.map((r) => r.id), rows.map((r) => r.n)],
      };
    }
  }
  return new InsertAll();
}

/** The pg executor with a pool of one connection, on the `public` schema. */
async function onePool(url: string, connectTimeoutMs: number, queryTimeoutMs = 30_000) {
  const { PgExecutor } = await import('../../src/db/pg-executor.js');
  return new PgExecutor({
    url,
    schema: 'public',
    poolMax: 1,
    idleInTransactionMs: 30_000,
    ssl: false,
    connectTimeoutMs,
    queryTimeoutMs,
  });
}

/**
 * A TCP proxy to the database. `freeze` makes the connections open at that moment stop passing
 * bytes either way, without closing (a network path that black-holes them, a stalled server);
 * connections made after it pass bytes as before.
 */
async function freezingProxy() {
  const target = new URL(PG_URL);
  const pairs = new Set<[Socket, Socket]>();
  const all = new Set<Socket>();
  const proxy = createServer((inbound) => {
    const outbound = connect(Number(target.port || 5432), target.hostname);
    const pair: [Socket, Socket] = [inbound, outbound];
    pairs.add(pair);
    for (const s of pair) {
      all.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        pairs.delete(pair);
        all.delete(s);
      });
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = new URL(PG_URL);
  url.host = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return {
    url: url.toString(),
    freeze(): void {
      for (const [inbound, outbound] of pairs) {
        inbound.unpipe(outbound);
        outbound.unpipe(inbound);
        // read and dropped, so that nothing backs up into the client's writes either
        for (const s of [inbound, outbound]) s.on('data', () => undefined);
      }
      pairs.clear();
    },
    async close(): Promise<void> {
      for (const s of all) s.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}

/** What `p` settled with and after how many ms. */
async function timed<T>(p: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const start = Date.now();
  return p.then(
    (value) => ({ ms: Date.now() - start, value }),
    (error: unknown) => ({ ms: Date.now() - start, error }),
  );
}

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
    const pool = await onePool(PG_URL, 200);
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

  it('ping answers on a connection of its own while every pooled connection is busy, and false when the server is gone', async () => {
    const pool = await onePool(PG_URL, 500);
    try {
      const busy = pool.query('SELECT pg_sleep(1.5) AS slept');
      await new Promise((r) => setTimeout(r, 100));
      // before, the probe queued behind the busy pool until its 1 s bound and /readyz said the database was down
      const pinged = pool.ping();
      expect(await Promise.race([pinged.then((ok) => `ping ${ok}`), busy.then(() => 'pool free')])).to.equal(
        'ping true',
      );
      await busy;
    } finally {
      await pool.close();
    }
    // nothing listens on the port: false, not a throw
    const gone = await onePool('postgres://postgres@127.0.0.1:1/test', 500);
    try {
      expect(await gone.ping()).to.equal(false);
      expect(await gone.ping()).to.equal(false);
    } finally {
      await gone.close();
    }
  });

  it('a connection dropped while a transaction holds it fails that transaction, not the process', async () => {
    const { PgExecutor } = await import('../../src/db/pg-executor.js');
    // a TCP proxy to the database whose connections the test cuts, as a network or a failover does
    const target = new URL(PG_URL);
    const sockets = new Set<Socket>();
    const proxy = createServer((inbound) => {
      const outbound = connect(Number(target.port || 5432), target.hostname);
      for (const s of [inbound, outbound]) {
        sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => sockets.delete(s));
      }
      inbound.pipe(outbound).pipe(inbound);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const address = proxy.address() as AddressInfo;
    const url = new URL(PG_URL);
    url.host = `127.0.0.1:${address.port}`;
    const pool = new PgExecutor({
      url: url.toString(),
      schema: 'public',
      poolMax: 2,
      idleInTransactionMs: 30_000,
      ssl: false,
      connectTimeoutMs: 2000,
      queryTimeoutMs: 30_000,
    });
    try {
      const failed = await pool
        .transaction(async (tx) => {
          await tx.query('SELECT 1 AS ok');
          // cut between two statements: no query of the client is under way
          for (const s of sockets) s.destroy();
          await new Promise((resolve) => setTimeout(resolve, 200));
          await tx.query('SELECT 2 AS ok');
        })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      // was an uncaught 'error' event of the lent pg client: the process exited
      expect(failed).to.be.instanceOf(Error);
      const [row] = await pool.query('SELECT 3 AS ok');
      expect(row).to.deep.equal({ ok: 3 });
    } finally {
      await pool.close();
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  describe('a database that stops answering on connections already open (DATABASE_QUERY_TIMEOUT_MS)', () => {
    // the bound: 1 s on the server (statement_timeout), the answer awaited 1 s more
    const QUERY_MS = 1000;

    it("a statement fails with an outage's error within the bound, and the next one runs on a new connection", async () => {
      const { isDependencyOutage } = await import('../../src/platform/dependency-health.js');
      const link = await freezingProxy();
      const pool = await onePool(link.url, 2000, QUERY_MS);
      try {
        expect(await pool.query('SELECT 1 AS ok')).to.deep.equal([{ ok: 1 }]);
        link.freeze();
        // was: no answer ever (the connection open, nothing coming back), every later statement queued behind it
        const stuck = await timed(pool.query('SELECT 2 AS ok'));
        expect(stuck.error).to.be.instanceOf(Error).with.property('message', 'Query read timeout');
        expect(isDependencyOutage(stuck.error)).to.equal(true);
        expect(stuck.ms).to.be.within(QUERY_MS, 3 * QUERY_MS + 500);
        // the pool of one let the silent connection go
        expect(await pool.query('SELECT 3 AS ok')).to.deep.equal([{ ok: 3 }]);
      } finally {
        await pool.close();
        await link.close();
      }
    });

    it('a transaction and a pipelined commit fail within the bound, without a ROLLBACK queued behind the silent statement', async () => {
      const link = await freezingProxy();
      const pool = await onePool(link.url, 2000, QUERY_MS);
      try {
        const tx = await timed(
          pool.transaction(async (t) => {
            await t.query('SELECT 1 AS ok');
            link.freeze();
            await t.query('SELECT 2 AS ok');
          }),
        );
        expect(tx.error).to.be.instanceOf(Error).with.property('message', 'Query read timeout');
        // one bound, not a second one for a ROLLBACK waiting behind the first statement
        expect(tx.ms).to.be.below(2 * QUERY_MS + 900);
        expect(await pool.query('SELECT 3 AS ok')).to.deep.equal([{ ok: 3 }]);

        link.freeze();
        const piped = await timed(pool.pipelinedCommit([{ sql: 'SELECT 4 AS ok', params: [] }]));
        expect(piped.error).to.be.instanceOf(Error).with.property('message', 'Query read timeout');
        expect(piped.ms).to.be.below(3 * QUERY_MS + 500);
        expect(await pool.query('SELECT 5 AS ok')).to.deep.equal([{ ok: 5 }]);
      } finally {
        await pool.close();
        await link.close();
      }
    });

    it('a statement running past the bound is cancelled by the server (57014, an outage) and its connection serves on', async () => {
      const { isDependencyOutage } = await import('../../src/platform/dependency-health.js');
      const pool = await onePool(PG_URL, 2000, QUERY_MS);
      try {
        const slow = await timed(pool.query('SELECT pg_sleep(5) AS slept'));
        expect(slow.error).to.have.property('code', '57014');
        expect(isDependencyOutage(slow.error)).to.equal(true);
        expect(slow.ms).to.be.below(QUERY_MS + 900);
        expect(await pool.query('SELECT 1 AS ok')).to.deep.equal([{ ok: 1 }]);
      } finally {
        await pool.close();
      }
    });

    it("ping's own connection that stops answering says false, and the next ping connects anew", async () => {
      const link = await freezingProxy();
      const pool = await onePool(link.url, 2000, QUERY_MS);
      try {
        expect(await pool.ping()).to.equal(true);
        link.freeze();
        const frozen = await timed(pool.ping());
        expect(frozen.value).to.equal(false);
        expect(frozen.ms).to.be.below(3 * QUERY_MS + 500);
        // was: every later probe queued on the silent connection, the database "down" for good
        expect(await pool.ping()).to.equal(true);
      } finally {
        await pool.close();
        await link.close();
      }
    });
  });

  it('two release phases started together on a new schema both succeed: one applies the migrations, the other waits for it', async () => {
    const schema = uniqueName('t');
    const env = { DATABASE_URL: PG_URL, DATABASE_SCHEMA: schema, LOG_LEVEL: 'info' };
    const entry = resolve(import.meta.dirname, '../../scripts/migrate.js');
    try {
      const runs = await Promise.all([
        runToExit(env, { entry, timeoutMs: 60_000 }),
        runToExit(env, { entry, timeoutMs: 60_000 }),
      ]);
      const lines = runs.flatMap((r) => r.lines.map((l) => JSON.parse(l) as { msg: string; applied?: string[] }));
      for (const r of runs) expect(r.code, r.lines.join('\n') + r.stderr).to.equal(0);
      // every migration applied once, by one of the two
      expect(lines.flatMap((l) => l.applied ?? [])).to.have.members([...migrationNames]);
      expect(lines.map((l) => l.msg)).to.include.members(['migrations applied', 'database is up to date']);
    } finally {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  });

  it("m0028: an OCPI object inserted without created_ms (a process of the release before) gets the insert's time", async () => {
    const before = Date.now();
    await db().sql.run(
      `INSERT INTO ocpi_object (module, country_code, party_id, object_id, last_updated_ms, published, data, updated_at)
       VALUES ('tokens', 'NL', 'OLD', 'OLD-1', 0, 1, '{}', ?)`,
      [before],
    );
    const [row] = await db().sql.query(`SELECT created_ms FROM ocpi_object WHERE party_id = 'OLD'`);
    // was 0: the object sorted before every other in every list, for good
    expect(Number(row?.created_ms)).to.be.within(before - 1000, Date.now() + 1000);
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
      queryTimeoutMs: 30_000,
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
    const { RuntimeStore } = await import('../../src/runtime/runtime-store.js');
    const store = new RuntimeStore(db());
    await store.raiseFence('gc:pipe', 1);
    await db().sql.run("INSERT INTO test_gc_row (id, n) VALUES ('p-taken', 0)");
    const group = new GroupCommit(db().sql);
    const statement = await insertAll();
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

  it("light turns whose fences a guard checks commit in one round trip; a fence that moved fails its turn alone, and one raised by another connection waits for the batch's commit", async () => {
    const { GroupCommit } = await import('../../src/db/group-commit.js');
    const { RuntimeStore } = await import('../../src/runtime/runtime-store.js');
    const sql = db().sql;
    const store = new RuntimeStore(db());
    expect(store.fenceGuard, 'PostgreSQL has a fence guard').to.be.a('function');
    await store.raiseFence('gc:one-a', 3);
    await store.raiseFence('gc:one-b', 3);
    // count the round trips of each kind the batches take
    const trips = { oneTrip: 0, twoTrips: 0 };
    const oneTrip = sql.pipelinedCommit!.bind(sql);
    const twoTrips = sql.pipelinedTransaction!.bind(sql);
    const counted = Object.assign(Object.create(sql) as typeof sql, {
      pipelinedCommit: (statements: Parameters<typeof oneTrip>[0]) => {
        trips.oneTrip += 1;
        return oneTrip(statements);
      },
      pipelinedTransaction: (...args: Parameters<typeof twoTrips>) => {
        trips.twoTrips += 1;
        return twoTrips(...args);
      },
    });
    const group = new GroupCommit(counted);
    const statement = await insertAll();
    const turn = (id: string, key: string, epoch: number) =>
      group.commit(
        async (_tx, fences) => {
          if (fences.get(key) !== epoch) throw new Error('fenced');
        },
        {
          read: { reader: store.readFences, key, expect: epoch, guard: store.fenceGuard },
          merged: [statement.write({ id, n: 1 })],
          light: true,
        },
      );
    await Promise.all([turn('o-1', 'gc:one-a', 3), turn('o-2', 'gc:one-b', 3), turn('o-3', 'gc:one-a', 3)]);
    expect(trips).to.deep.equal({ oneTrip: 1, twoTrips: 0 });
    // gc:one-b moved past epoch 2: the guard refuses the batch, which runs again turn by turn
    const second = await Promise.allSettled([
      turn('o-4', 'gc:one-a', 3),
      turn('o-5', 'gc:one-b', 2),
      turn('o-6', 'gc:one-a', 3),
    ]);
    expect(second.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect(trips).to.deep.equal({ oneTrip: 2, twoTrips: 0 });
    // a statement of the pipeline fails (a duplicate row): the batch runs again turn by turn
    const duplicate = await Promise.allSettled([turn('o-1', 'gc:one-a', 3), turn('o-10', 'gc:one-b', 3)]);
    expect(duplicate.map((r) => r.status)).to.deep.equal(['rejected', 'fulfilled']);
    expect(trips).to.deep.equal({ oneTrip: 3, twoTrips: 0 });
    // two turns of one batch expecting different epochs of one key: no guard can hold, two trips
    const third = await Promise.allSettled([turn('o-7', 'gc:one-a', 3), turn('o-8', 'gc:one-a', 2)]);
    expect(third.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected']);
    expect(trips).to.deep.equal({ oneTrip: 3, twoTrips: 1 });
    const ids = await sql.query("SELECT id FROM test_gc_row WHERE id LIKE 'o-%' ORDER BY id");
    expect(ids.map((r) => r.id)).to.deep.equal(['o-1', 'o-10', 'o-2', 'o-3', 'o-4', 'o-6', 'o-7']);

    // the guard share-locks the fences: a new owner raising one waits until the batch committed
    let raised = false;
    let raise: Promise<void> = Promise.resolve();
    await sql.transaction(async (tx) => {
      const guard = store.fenceGuard!(new Map([['gc:one-a', 3]]));
      await tx.query(guard.sql, guard.params);
      raise = store.raiseFences(['gc:one-a'], 4).then(() => {
        raised = true;
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(raised, 'the raise went past the share lock').to.equal(false);
    });
    await raise;
    const after = await Promise.allSettled([turn('o-9', 'gc:one-a', 3)]);
    expect(after.map((r) => r.status)).to.deep.equal(['rejected']);
    const fence = await sql.query("SELECT epoch FROM actor_fence WHERE fence_key = 'gc:one-a'");
    expect(fence.map((r) => Number(r.epoch))).to.deep.equal([4]);
  });

  it("two chargers' new connections raising each other's fence while their old turns commit: no deadlock", async () => {
    const { RuntimeStore } = await import('../../src/runtime/runtime-store.js');
    const sql = db().sql;
    const store = new RuntimeStore(db());
    await store.raiseFence('gc:dl-x', 1);
    await store.raiseFence('gc:dl-y', 1);
    const deadlocks = async () => {
      const rows = await sql.query('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()');
      return Number(rows[0]?.deadlocks);
    };
    const before = await deadlocks();
    // a turn of each charger's actor, fenced by its pin: its batch share-locks the fence
    const turn = (key: string) =>
      db().group.commit(
        async (_tx, fences) => {
          if (fences.get(key) !== 1) throw new Error('fenced');
          await new Promise((r) => setTimeout(r, 100));
        },
        { read: { reader: store.readFences, key } },
      );
    const filler = () => db().group.commit(async () => undefined);
    // one tick: [turn x, raise y, 6 more] and [turn y, raise x, ...] as two batches of 8 on two connections
    const started = Date.now();
    const calls: Promise<unknown>[] = [
      turn('gc:dl-x'),
      store.raiseFence('gc:dl-y', 2),
      ...Array.from({ length: 6 }, filler),
      turn('gc:dl-y'),
      store.raiseFence('gc:dl-x', 2),
      ...Array.from({ length: 6 }, filler),
    ];
    // a turn whose fence the other raise took first is fenced: either outcome is the runtime's
    const turns = await Promise.allSettled([calls[0], calls[8]]);
    expect(await calls[1], 'y raised').to.equal(2);
    expect(await calls[9], 'x raised').to.equal(2);
    await Promise.all(calls.filter((_, i) => ![0, 8].includes(i)));
    const ms = Date.now() - started;
    for (const t of turns) if (t.status === 'rejected') expect(String(t.reason)).to.contain('fenced');
    // PostgreSQL breaks a deadlock after deadlock_timeout (1 s): the batches had each held the
    // fence the other's raise waited for, and took more than a second
    expect(ms, 'the raises waited only for the turns that held their fences').to.be.below(900);
    await sql.query('SELECT pg_stat_force_next_flush()');
    expect(await deadlocks(), 'deadlocks in the database').to.equal(before);
  });

  it('runs beside a MikroORM transaction held across awaits', async () => {
    await checkOrmTransactionAlongside(db());
  });

  const dataMigrations: Array<[string, (db: Database) => Promise<void>]> = [
    [
      'm0006 moves tokens and tariffs stored in the 2.1.1 shape to the 2.2.1 shape, and CDR ids may have 39 characters',
      checkOcpiShapesMigration,
    ],
    ['m0031 gives the credit CDRs received before published 2', checkReceivedCreditsMigration],
  ];
  for (const [title, check] of dataMigrations)
    it(title, async () => {
      const schema = await tempSchema();
      const fresh = await Db.open(
        { kind: 'postgresql', url: PG_URL, schema: schema.schema },
        { log: createLogger('silent') },
      );
      try {
        await check(fresh);
      } finally {
        await fresh.close();
        await schema.drop();
      }
    });
});
