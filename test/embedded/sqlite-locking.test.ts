import { expect } from 'chai';
import BetterSqlite3 from 'better-sqlite3';
import { tempSqlite } from '../support/databases.js';
import { runToExit, startNode, type NodeProcess } from '../support/processes.js';

const KEY = 'sqlite-locking-key-0123456789';

/** How many charge points another process reads from the platform's file (throws when it cannot). */
function readFromOutside(file: string): number {
  const other = new BetterSqlite3(file, { readonly: true, timeout: 200 });
  try {
    const row = other.prepare('SELECT count(*) AS n FROM csms_charge_point').get() as { n: number };
    return row.n;
  } finally {
    other.close();
  }
}

async function register(node: NodeProcess, id: string): Promise<void> {
  const res = await fetch(`${node.url}/v1/charge-points`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id, protocol: 'ocpp1.6' }),
  });
  expect(res.status).to.equal(201);
}

/**
 * An embedded platform's SQLite file (SQLITE_LOCKING): by default the process keeps the file's lock
 * while it runs, so a second platform started on the same file stops with a message that names
 * the lock, instead of running beside the first; `normal` lets other processes read the file.
 */
describe('embedded SQLite locking (SQLITE_LOCKING)', function () {
  this.timeout(60_000);
  const nodes: NodeProcess[] = [];
  const temps: Array<ReturnType<typeof tempSqlite>> = [];

  afterEach(async () => {
    for (const n of nodes.splice(0)) await n.stop();
    for (const t of temps.splice(0)) t.cleanup();
  });

  function start(extra: Record<string, string> = {}): Promise<NodeProcess> {
    const temp = tempSqlite();
    temps.push(temp);
    return startNode({ DATABASE_URL: temp.url, REDIS_URL: '', PORT: '0', CSMS_API_KEY: KEY, ...extra });
  }

  it('by default a second platform on the same file refuses to start, and the first serves on', async () => {
    const first = await start();
    nodes.push(first);
    await register(first, 'CP-LOCK-1');
    const file = temps[0]!.file;
    expect(() => readFromOutside(file)).to.throw(/locked/);

    const second = await runToExit(
      { DATABASE_URL: `sqlite:${file}`, PORT: '0', CSMS_API_KEY: KEY, LOG_LEVEL: 'info' },
      { timeoutMs: 30_000 },
    );
    expect(second.code).to.not.equal(0).and.not.equal(null);
    expect(second.lines.join('\n')).to.include(`the SQLite file ${file} is locked by another process`);

    const ready = await fetch(`${first.url}/readyz`);
    expect(ready.status).to.equal(200);
    await register(first, 'CP-LOCK-2');
    await first.stop();
    nodes.length = 0;
    // once the platform stopped, the file is anyone's, with both charge points in it
    expect(readFromOutside(file)).to.equal(2);
  });

  it('with SQLITE_LOCKING=normal another process reads the file while the platform runs', async () => {
    const node = await start({ SQLITE_LOCKING: 'normal' });
    nodes.push(node);
    await register(node, 'CP-SHARED-1');
    expect(readFromOutside(temps[0]!.file)).to.equal(1);
  });
});
