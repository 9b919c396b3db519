/** The load test's output: whole lines, and a progress line that overwrites itself on a terminal. */
const tty = process.stdout.isTTY;

export function log(line: string): void {
  process.stdout.write(`${tty ? '\r\x1b[2K' : ''}${line}\n`);
}

export function progress(line: string): void {
  if (tty) process.stdout.write(`\r\x1b[2K${line}`);
  else log(line);
}
