import { ConfigError, loadConfig } from '../../config/index.js';
import { createLogger } from '../logger.js';
import { Platform } from './platform.js';
import type { PlatformModule } from './services.js';

/**
 * Runs one platform process until SIGTERM/SIGINT: settings from the environment, graceful stop
 * within SHUTDOWN_TIMEOUT_MS (exit 0), or exit 1 when the stop fails or takes too long.
 */
export async function runProcess(modules: PlatformModule[]): Promise<Platform> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }
  const log = createLogger(config.LOG_LEVEL, { role: config.PROCESS_ROLE });
  if (!config.CSMS_API_KEY)
    log.warn('CSMS_API_KEY is not set: the management surface is open (allowed outside production only)');
  const platform = await Platform.create({ config, log, modules });
  await platform.start();

  let stopping = false;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      log.error({ timeoutMs: config.SHUTDOWN_TIMEOUT_MS }, 'shutdown took too long; exiting');
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS);
    force.unref();
    platform.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  return platform;
}

export function exitOnStartFailure(err: unknown): never {
  process.stderr.write(`failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
}
