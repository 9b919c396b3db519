import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import { NOTICE_LEVEL, stdoutWriter } from './log-destination.js';

export type { Logger } from 'pino';

/** LOG_BUFFER_BYTES's default: the log lines a process holds while stdout's reader lags. */
export const DEFAULT_LOG_BUFFER_BYTES = 8 * 1024 * 1024;

/**
 * JSON logs on stdout, through the process's bounded writer (src/log-destination.ts), or
 * `destination` (e.g. a test's capture); every line carries the process id so cluster logs can
 * be merged.
 */
export function createLogger(
  level: LevelWithSilent,
  bindings: Record<string, unknown> = {},
  destination?: DestinationStream,
  bufferBytes = DEFAULT_LOG_BUFFER_BYTES,
): Logger {
  const base = { pid: process.pid, ...bindings };
  const options = { level, base, timestamp: pino.stdTimeFunctions.isoTime };
  // 'silent' has no value: nothing is logged, the notice of dropped lines neither
  const warns = (pino.levels.values[level] ?? Number.POSITIVE_INFINITY) <= NOTICE_LEVEL;
  return pino(options, destination ?? stdoutWriter(bufferBytes, { base, warn: warns }));
}
