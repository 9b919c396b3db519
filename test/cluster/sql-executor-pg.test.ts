import type { Database } from '../../src/db/database.js';
import { PG_URL, tempSchema } from '../support/databases.js';
import {
  checkOrmTransactionAlongside,
  checkSavepointIsolation,
  checkMergedRows,
  checkMeterProgressMerged,
  checkWindowAndCap,
  openMigrated,
} from '../support/group-commit-checks.js';

describe('the runtime on the pg driver (group commit, named statements)', () => {
  let db: Database;
  let drop: () => Promise<void>;

  before(async () => {
    const schema = await tempSchema();
    drop = schema.drop;
    db = await openMigrated({ kind: 'postgresql', url: PG_URL, schema: schema.schema });
  });

  after(async () => {
    await db.close();
    await drop();
  });

  it('commits a tick of turns together; a fenced or failing turn rolls back alone', async () => {
    await checkSavepointIsolation(db);
  });

  it('runs beside a MikroORM transaction held across awaits', async () => {
    await checkOrmTransactionAlongside(db);
  });

  it('gathers the turns of a window (COMMIT_WINDOW_MS) and caps a transaction at 64 turns', async () => {
    await checkWindowAndCap(db);
  });

  it('writes the merged rows of a batch in one statement; a fenced turn of the batch fails alone', async () => {
    await checkMergedRows(db);
  });

  it('moves the meters of several sessions in one merged write, skipping a repeated seqNo', async () => {
    await checkMeterProgressMerged(db);
  });
});
