import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

/** JSON logs on stdout; every line carries the process id so cluster logs can be merged. */
export function createLogger(level: LevelWithSilent, bindings: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { pid: process.pid, ...bindings }, timestamp: pino.stdTimeFunctions.isoTime });
}
