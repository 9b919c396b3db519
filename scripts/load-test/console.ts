import { cpus, freemem, totalmem } from 'node:os';
/** The load test's output: whole lines, and a progress line that overwrites itself on a terminal. */
const tty = process.stdout.isTTY;

export function log(line: string): void {
  process.stdout.write(`${tty ? '\r\x1b[2K' : ''}${line}\n`);
}

export function progress(line: string): void {
  if (tty) process.stdout.write(`\r\x1b[2K${line}`);
  else log(line);
}

/** The machine a run was measured on, for the JSON output. */
export function machineInfo(): Record<string, unknown> {
  return {
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    totalMemMb: Math.round(totalmem() / 2 ** 20),
    freeMemMb: Math.round(freemem() / 2 ** 20),
    node: process.version,
  };
}
