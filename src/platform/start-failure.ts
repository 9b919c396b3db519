import { ConfigError } from '../../config/index.js';
import { createLogger } from '../logger.js';
import { DependencyError } from './dependency-error.js';

/**
 * A start that failed is one JSON log line at level fatal, whatever LOG_LEVEL says, naming the
 * setting to look at when there is one (a bad value: exit 78; PostgreSQL or Redis unusable: 1).
 */
export function exitOnStartFailure(err: unknown): never {
  const log = createLogger('fatal');
  if (err instanceof ConfigError) {
    log.fatal({ setting: err.variable }, err.message);
    process.exit(78);
  }
  if (err instanceof DependencyError) log.fatal({ setting: err.setting }, err.message);
  else log.fatal({ err }, `failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
