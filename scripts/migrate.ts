import { ConfigError, loadConfig } from '../config/index.js';
import { Database } from '../src/db/database.js';
import { createLogger } from '../src/logger.js';

/** The release phase: applies pending migrations and exits. */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL, { role: 'release' });
  const db = await Database.open(config.database, { log });
  try {
    const applied = await db.migrate();
    log.info(
      { applied, database: config.database.kind },
      applied.length ? 'migrations applied' : 'database is up to date',
    );
  } finally {
    await db.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(
    `${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
