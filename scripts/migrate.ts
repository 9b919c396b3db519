import { byteSize } from '../config/byte-size.js';
import { loadConfig, warnMisspelledSettings } from '../config/index.js';
import { Database } from '../src/db/database.js';
import { createLogger } from '../src/logger.js';
import { checkDatabase } from '../src/platform/dependency-error.js';
import { exitOnStartFailure } from '../src/platform/start-failure.js';
import { commandLine } from './cli.js';

/** The release phase: applies pending migrations and exits. */
async function main(): Promise<void> {
  commandLine({
    summary:
      'The release phase: applies the pending migrations to the database of DATABASE_URL (and\n' +
      'DATABASE_SCHEMA) and exits. Without DATABASE_URL, the embedded SQLite file.',
    options: {},
    notes: 'Settings: docs/CONFIGURATION.md.',
  });
  const config = loadConfig();
  const log = createLogger(config.LOG_LEVEL, { role: 'release' }, undefined, byteSize(config.LOG_BUFFER_BYTES));
  warnMisspelledSettings(log);
  const db = await Database.open(config.database, { log });
  try {
    await checkDatabase(db, config.database);
    const applied = await db.migrate(undefined, () =>
      log.info({ database: config.database.kind }, 'another process is applying migrations; waiting for it'),
    );
    log.info(
      { applied, database: config.database.kind },
      applied.length ? 'migrations applied' : 'database is up to date',
    );
  } finally {
    await db.close();
  }
}

// a failure is one JSON line naming the setting (as a platform process's start)
main().catch(exitOnStartFailure);
