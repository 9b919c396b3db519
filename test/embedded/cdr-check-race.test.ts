import { expect } from 'chai';
import type { Database } from '../../src/db/database.js';
import { createLogger } from '../../src/logger.js';
import { CdrCheckStore } from '../../src/ocpi/cdrs/check-store.js';
import { CdrChecker } from '../../src/ocpi/cdrs/checker.js';
import type { StoredLocation } from '../../src/ocpi/locations/schemas-2.2.1.js';
import type { StoredCdr } from '../../src/ocpi/sessions/stored.js';
import { ObjectStore, type ObjectKey, type ObjectSql } from '../../src/ocpi/store/object-store.js';
import type { Tariff } from '../../src/ocpi/tariffs/schemas-2.2.1.js';
import { TariffVersions } from '../../src/ocpi/tariffs/versions.js';
import { PricingPool } from '../../src/tariffs/pool.js';
import { tempSqlite } from '../support/databases.js';
import { openMigrated } from '../support/group-commit-checks.js';
import { aCdr221, aTariff221 } from '../support/ocpi-builders.js';

/**
 * A CDR's check and the tariff it waits for, crossing (docs/TARIFFS.md "Re-pricing received
 * CDRs"): the tariff is stored, and the unpriced checks naming it looked for, after the check read
 * the tariffs and before it was kept. The check must not stay unpriced.
 */
describe('CDR checks: a tariff that arrives while a check of a CDR naming it is under way', function () {
  this.timeout(30_000);
  let temp: ReturnType<typeof tempSqlite>;
  let db: Database;
  let pool: PricingPool;
  before(async () => {
    temp = tempSqlite();
    db = await openMigrated({ kind: 'sqlite', file: temp.file });
    pool = new PricingPool({ threads: 1, idleTimeoutMs: 1000, maxQueue: 4 });
  });
  after(async () => {
    await pool.close();
    await db.close();
    temp.cleanup();
  });

  it('is priced: the check reads once more after it is kept', async () => {
    const sql: ObjectSql = {
      query: (text, params) => db.sql.query(text, params),
      run: (text, params) => db.group.run((tx) => tx.run(text, params)),
    };
    const tariffs = new ObjectStore<Tariff>(sql, 'tariffs');
    const checks = new CdrCheckStore(db);
    const party = { country_code: 'NL', party_id: 'CPO' };
    const tariffKey: ObjectKey = { ...party, id: 'TAR-LATE' };
    const tariff = aTariff221({
      ...party,
      id: 'TAR-LATE',
      min_price: undefined,
      elements: [{ price_components: [{ type: 'ENERGY', price: 0.3, vat: 20, step_size: 1 }] }],
    }) as unknown as Tariff;
    let pushed = false;
    let foundByPush: ObjectKey[] | undefined;
    // the partner's PUT lands right after the check's first read of the tariff: the Receiver
    // stores it, then looks for the unpriced checks naming it (none kept yet)
    const racing: Pick<ObjectStore<Tariff>, 'get'> = {
      get: async (key) => {
        const found = await tariffs.get(key);
        if (!found && !pushed && key.id === tariffKey.id) {
          pushed = true;
          await tariffs.put(tariffKey, tariff);
          foundByPush = await checks.unpricedNaming(party, tariffKey.id, 1000);
        }
        return found;
      },
    };
    const pulls: string[] = [];
    const checker = new CdrChecker(
      {
        tariffs: racing,
        versions: new TariffVersions(sql),
        locations: new ObjectStore<StoredLocation>(sql, 'locations'),
        cdrs: new ObjectStore<StoredCdr>(sql, 'cdrs'),
        creditsOf: async () => [],
        pricing: pool,
      },
      checks,
      new ObjectStore<StoredCdr>(sql, 'cdrs'),
      createLogger('silent'),
      (p) => pulls.push(p.party_id),
    );
    const cdr = aCdr221({
      ...party,
      id: 'CDR-RACE',
      start_date_time: '2026-01-05T17:30:00Z',
      end_date_time: '2026-01-05T18:30:00Z',
      charging_periods: [
        {
          start_date_time: '2026-01-05T17:30:00Z',
          tariff_id: 'TAR-LATE',
          dimensions: [{ type: 'ENERGY', volume: 10 }],
        },
      ],
      total_energy: 10,
      total_cost: { excl_vat: 3, incl_vat: 3.6 },
    }) as unknown as StoredCdr;
    const key: ObjectKey = { ...party, id: 'CDR-RACE' };

    const outcome = await checker.run(key, cdr);

    expect(pushed, 'the tariff arrived during the check').to.equal(true);
    expect(foundByPush, 'what the push found to check again').to.deep.equal([]);
    expect(outcome).to.deep.include({ status: 'agrees', ours: { excl_vat: 3, incl_vat: 3.6 } });
    expect(await checks.get(key)).to.deep.include({ status: 'agrees' });
    expect(pulls, 'no pull for a tariff that came').to.deep.equal([]);
  });
});
