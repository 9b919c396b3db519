import { expect } from 'chai';
import type { Database } from '../../src/db/database.js';
import { UNKNOWN_KEEP, UnknownChargePoints } from '../../src/csms/unknown-charge-points.js';
import { createLogger } from '../../src/logger.js';
import { tempSqlite } from '../support/databases.js';
import { openMigrated } from '../support/group-commit-checks.js';

/**
 * The unknown-charger log's bounds (docs/CSMS.md "Unknown chargers"): a flood of random ids is
 * gathered in memory, written as one batch, and the table never holds more than UNKNOWN_KEEP ids.
 */
describe('unknown charge points: a flood of refused logins stays bounded', () => {
  let temp: ReturnType<typeof tempSqlite>;
  let db: Database;
  before(async () => {
    temp = tempSqlite();
    db = await openMigrated({ kind: 'sqlite', file: temp.file });
  });
  after(async () => {
    await db.close();
    temp.cleanup();
  });

  const rows = async (): Promise<number> =>
    Number((await db.sql.query('SELECT COUNT(*) AS n FROM csms_unknown_charge_point'))[0]?.n ?? 0);

  it('coalesces attempts per id, keeps the most recently seen UNKNOWN_KEEP ids', async () => {
    const log = new UnknownChargePoints(db, createLogger('silent'), 60_000);
    const t0 = Date.now();
    for (let i = 0; i < 3; i += 1) log.record({ id: 'SAME', address: '10.0.0.1', reason: 'unknown', at: t0 + i });
    // more ids than one write takes: the rest are dropped, not queued
    for (let i = 0; i < UNKNOWN_KEEP + 200; i += 1)
      log.record({ id: `RANDOM-${i}`, address: '10.0.0.2', reason: 'unknown', at: t0 + 10 + i });
    await log.flush();
    expect(await rows()).to.equal(UNKNOWN_KEEP);
    expect((await log.find('SAME'))?.attempts).to.equal(3);

    // newer ids push the least recently seen out
    for (let i = 0; i < 50; i += 1)
      log.record({ id: `LATER-${i}`, address: '10.0.0.3', reason: 'bad_password', at: t0 + 10_000 + i });
    await log.flush();
    expect(await rows()).to.equal(UNKNOWN_KEEP);
    expect(await log.find('SAME')).to.equal(undefined);
    const first = await log.list({ offset: 0, limit: 1 });
    expect(first.total).to.equal(UNKNOWN_KEEP);
    expect(first.items[0]).to.include({ id: 'LATER-49', reason: 'bad_password', attempts: 1 });
  });
});
