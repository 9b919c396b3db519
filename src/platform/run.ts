import { byteSize } from '../../config/byte-size.js';
import { loadConfig, warnMisspelledSettings } from '../../config/index.js';
import { createLogger, type Logger } from '../logger.js';
import { Platform } from './platform.js';
import type { PlatformModule } from './services.js';

export { exitOnStartFailure } from './start-failure.js';

/**
 * Runs one platform process until SIGTERM/SIGINT: settings from the environment, graceful stop
 * within SHUTDOWN_TIMEOUT_MS (exit 0), or exit 1 when the stop fails or takes too long.
 */
export async function runProcess(modules: PlatformModule[]): Promise<Platform> {
  const config = loadConfig();
  const log = createLogger(
    config.LOG_LEVEL,
    { role: config.PROCESS_ROLE },
    undefined,
    byteSize(config.LOG_BUFFER_BYTES),
  );
  logUncaughtErrors(log);
  warnMisspelledSettings(log);
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

/**
 * An exception nothing caught, or a rejection nothing handled, ends the process as Node would
 * (exit 1), but logged as one JSON line through pino instead of Node's plain-text stack. The
 * destination flushes what it holds at exit (src/log-destination.ts), so the line is out before
 * the process ends, unless stdout's reader has not taken it within EXIT_FLUSH_MS.
 */
function logUncaughtErrors(log: Logger): void {
  process.on('uncaughtException', (err, origin) => {
    log.fatal({ err, origin }, 'uncaught exception; exiting');
    process.exit(1);
  });
  process.on('unhandledRejection', (reason) => {
    log.fatal({ err: reason }, 'unhandled rejection; exiting');
    process.exit(1);
  });
}
