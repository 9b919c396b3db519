import type { Database } from '../../src/db/database.js';
import { PG_URL, tempSchema } from '../support/databases.js';
import { checkOrmTransactionAlongside, groupCommitTests, openMigrated } from '../support/group-commit-checks.js';

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
});
