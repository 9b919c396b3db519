import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

/**
 * JSON logs on stdout (or `destination`, e.g. a test's capture); every line carries the process
 * id so cluster logs can be merged.
 */
export function createLogger(
  level: LevelWithSilent,
  bindings: Record<string, unknown> = {},
  destination?: DestinationStream,
): Logger {
  const options = { level, base: { pid: process.pid, ...bindings }, timestamp: pino.stdTimeFunctions.isoTime };
  return destination ? pino(options, destination) : pino(options);
}
