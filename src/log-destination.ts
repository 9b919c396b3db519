import { writeSync } from 'node:fs';

/**
 * Where the process's JSON log lines go: stdout, with a bounded buffer (docs/OPERATIONS.md
 * "Signals"). A reader of stdout that stops reading (a stalled log drain, a collector behind a
 * full disk, a pager left open) or goes away must neither wedge nor exhaust the process:
 * - the lines of one turn of the event loop leave together, in one write, at its end;
 * - a full pipe (EAGAIN: process.stdout puts a pipe in non-blocking mode) keeps the lines in
 *   memory, retried from a timer, up to LOG_BUFFER_BYTES; past that new lines are dropped and
 *   counted, and once there is room one line says how many were lost;
 * - at exit, the lines still held get EXIT_FLUSH_MS to leave; a reader that is gone (EPIPE)
 *   ends logging at once.
 * pino's own destination retried a full pipe every 100 ms for as long as it stayed full, and a
 * broken one forever, in its exit flush: a SIGTERM then never ended the process, which kept its
 * chargers' sockets and its shard leases while serving nothing.
 */

/** How long the exit waits for stdout's reader to take the lines still held. */
export const EXIT_FLUSH_MS = 2000;

/** The smallest buffer: room for a few lines, whatever LOG_BUFFER_BYTES says. */
const MIN_BUFFER_BYTES = 4096;

/** How often a full pipe is tried again. */
const RETRY_MS = 20;

/** How often the count of dropped lines is reported, once there is room again. */
const REPORT_DROPPED_MS = 1000;

const DROPPED = 'log lines dropped: stdout was not read fast enough';

/** Blocks the thread for `ms` (the exit flush has no event loop to wait on). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * A pino destination on file descriptor `fd` that never blocks the event loop on a slow reader
 * and never holds more than `maxBufferBytes` (lines are measured in UTF-16 units before they are
 * encoded: a bound, not an exact byte count).
 */
export class LogWriter {
  readonly maxBufferBytes: number;
  /** lines waiting, in order */
  private queue: string[] = [];
  private queued = 0;
  /** the part of the last chunk the pipe did not take */
  private rest: Buffer | undefined;
  private scheduled = false;
  private retry: NodeJS.Timeout | undefined;
  /** the reader is gone (EPIPE) or the descriptor unusable: nothing more is written */
  private gone = false;
  private droppedLines = 0;
  private reportedLines = 0;

  constructor(
    private readonly fd: number,
    maxBufferBytes: number,
  ) {
    this.maxBufferBytes = Math.max(MIN_BUFFER_BYTES, maxBufferBytes);
  }

  /** pino's call: one serialized line, newline included. */
  write(line: string): boolean {
    if (this.gone) return true;
    if (this.queued + (this.rest?.length ?? 0) + line.length > this.maxBufferBytes) {
      this.droppedLines += 1;
      return false;
    }
    this.queue.push(line);
    this.queued += line.length;
    if (!this.scheduled && !this.retry) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
    return true;
  }

  /** lines dropped since the writer was made */
  dropped(): number {
    return this.droppedLines;
  }

  /** Queues the count of lines dropped since the last report, if any (itself dropped when there is no room). */
  reportDropped(): void {
    const lost = this.droppedLines - this.reportedLines;
    if (lost === 0 || this.gone) return;
    const line = JSON.stringify({
      level: 40,
      time: new Date().toISOString(),
      pid: process.pid,
      dropped: lost,
      max_buffer_bytes: this.maxBufferBytes,
      msg: DROPPED,
    });
    if (this.write(`${line}\n`)) this.reportedLines += lost;
  }

  /**
   * At exit: writes what is held, waiting out a full pipe until `deadline` (epoch ms). What is
   * still held then is lost; the exit is not held up.
   */
  flushUntil(deadline: number): void {
    this.reportDropped();
    while (!this.writeOut()) {
      if (Date.now() >= deadline) return;
      pause(10);
    }
  }

  private readonly drain = (): void => {
    this.scheduled = false;
    if (!this.writeOut()) this.retryLater();
  };

  private retryLater(): void {
    this.retry = setTimeout(() => {
      this.retry = undefined;
      if (!this.writeOut()) this.retryLater();
    }, RETRY_MS);
    // a stalled reader must not keep an otherwise finished process alive (the exit flushes)
    this.retry.unref();
  }

  /** Writes until nothing is held (true), the pipe is full (false) or the reader is gone (true). */
  private writeOut(): boolean {
    for (;;) {
      if (this.gone) return true;
      if (!this.rest) {
        if (this.queue.length === 0) return true;
        this.rest = Buffer.from(this.queue.length === 1 ? (this.queue[0] as string) : this.queue.join(''));
        this.queue = [];
        this.queued = 0;
      }
      try {
        const n = writeSync(this.fd, this.rest);
        this.rest = n >= this.rest.length ? undefined : this.rest.subarray(n);
      } catch (err) {
        if ((err as { code?: unknown }).code === 'EAGAIN') return false;
        // EPIPE (the reader is gone), EBADF...: nobody can be told anything any more
        this.gone = true;
        this.queue = [];
        this.queued = 0;
        this.rest = undefined;
        return true;
      }
    }
  }
}

let shared: LogWriter | undefined;

/**
 * The process's one stdout writer: every logger of the process writes through it, so that lines
 * keep their order and one exit flush covers them all. The first call's `maxBufferBytes` holds
 * (the platform's loggers are made after its settings are read).
 */
export function stdoutWriter(maxBufferBytes: number): LogWriter {
  if (shared) return shared;
  // asking for process.stdout puts a pipe in non-blocking mode (libuv): a full pipe then answers
  // EAGAIN instead of blocking the event loop
  const writer = new LogWriter(process.stdout.fd, maxBufferBytes);
  shared = writer;
  setInterval(() => writer.reportDropped(), REPORT_DROPPED_MS).unref();
  process.on('exit', () => writer.flushUntil(Date.now() + EXIT_FLUSH_MS));
  return writer;
}
