import { expect } from 'chai';
import { SqliteConnectionLock, openSqlite } from '../../src/db/sqlite-connection.js';

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    if (err instanceof Error) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

describe("the process's SQLite connection (lent one holder at a time)", () => {
  it('lends it in order, and closes it only once the holder in flight hands it back', async () => {
    const conn = await openSqlite(':memory:');
    const lock = new SqliteConnectionLock(conn);
    const first = await lock.acquire();
    const order: string[] = [];
    const second = lock.acquire().then((c) => {
      order.push('second');
      return c;
    });
    await new Promise((r) => setImmediate(r));
    expect(order, 'the second holder waits while the first holds it').to.deep.equal([]);
    lock.release(first);
    lock.release(await second);
    expect(order).to.deep.equal(['second']);

    const holder = await lock.acquire();
    const waiting = lock.acquire();
    const closed = lock.close();
    expect((await rejection(waiting)).message).to.match(/closed/);
    expect((await rejection(lock.acquire())).message).to.match(/closed/);
    // a transaction in flight finishes on an open connection
    expect(holder.open).to.equal(true);
    expect(holder.prepare('SELECT 1 AS one').get()).to.deep.equal({ one: 1 });
    lock.release(holder);
    await closed;
    expect(conn.open).to.equal(false);
  });
});
