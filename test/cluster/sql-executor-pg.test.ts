import type { Database } from '../../src/db/database.js';
import { PG_URL, tempSchema } from '../support/databases.js';
import { checkOrmTransactionAlongside, groupCommitTests, openMigrated } from '../support/group-commit-checks.js';
import { checkOcpiShapesMigration } from '../support/ocpi-shapes-migration.js';
import { Database as Db } from '../../src/db/database.js';
import { createLogger } from '../../src/logger.js';

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

  groupCommitTests(() => db);

  it('runs beside a MikroORM transaction held across awaits', async () => {
    await checkOrmTransactionAlongside(db);
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
