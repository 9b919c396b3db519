import { writeSync } from 'node:fs';

/**
 * Where the process's JSON log lines go: stdout, with a bounded buffer (docs/OPERATIONS.md
 * "Signals"). A reader of a stdout pipe that stops reading (a stalled log drain, a pager left
 * open) or goes away must neither wedge nor exhaust the process:
 * - the lines of one turn of the event loop leave together, in one write, at its end;
 * - a full pipe (EAGAIN: process.stdout puts a pipe in non-blocking mode) keeps the lines in
 *   memory, tried again at the next turn that logs or from a timer, up to LOG_BUFFER_BYTES;
 *   past that new lines are dropped and counted, and once there is room one line says how many
 *   were lost. A line is dropped only when the pipe has refused what was before it;
 * - a failed write (a full disk behind a redirected stdout: ENOSPC, EIO) loses its lines, counted
 *   the same way, and the next lines are tried again;
 * - at exit, the lines still held get EXIT_FLUSH_MS to leave; a reader that is gone (EPIPE)
 *   ends logging at once.
 * pino's own destination retried a full pipe every 100 ms for as long as it stayed full in its
 * exit flush (and sonic-boom, under it, a broken one forever): a SIGTERM then never ended the
 * process, which kept its chargers' sockets and its shard leases while serving nothing.
 * A terminal (which Node keeps in blocking mode) or a file is written as before: a write may
 * wait for the terminal, never for a reader of a pipe.
 */

/** How long the exit waits for stdout's reader to take the lines still held. */
export const EXIT_FLUSH_MS = 2000;

/** The smallest buffer: room for a few lines, whatever LOG_BUFFER_BYTES says. */
const MIN_BUFFER_BYTES = 4096;

/** How often a full pipe is tried again while nothing new is logged. */
const RETRY_MS = 20;

/** How often the count of dropped lines is reported, once there is room again. */
const REPORT_DROPPED_MS = 1000;

const DROPPED = 'log lines dropped: stdout was not read fast enough';

/** The notice's level: pino's warn. */
export const NOTICE_LEVEL = 40;

/** Blocks the thread for `ms` (the exit flush has no event loop to wait on). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** What the dropped-lines notice carries besides its count, and whether it is logged at all. */
export interface NoticeOptions {
  /** fields of every line of the process (pid, role) */
  base?: Record<string, unknown>;
  /** the notice is a warning (pino level 40): it is left out when the process logs less */
  warn?: boolean;
}

/**
 * A pino destination on file descriptor `fd` that never waits for a slow reader of a pipe and
 * never holds more than `maxBufferBytes` of lines (UTF-8 bytes, counting a partly written chunk
 * whole until it is out).
 */
export class LogWriter {
  readonly maxBufferBytes: number;
  /** lines waiting, in order, and their bytes */
  private queue: string[] = [];
  private queuedBytes = 0;
  /** the chunk being written (held whole until it is out), how much of it is out, its lines */
  private chunk: Buffer | undefined;
  private chunkWritten = 0;
  private chunkLines = 0;
  private scheduled = false;
  private retry: NodeJS.Timeout | undefined;
  /** the reader is gone (EPIPE) or the descriptor unusable: nothing more is written */
  private gone = false;
  private droppedLines = 0;
  private reportedLines = 0;

  constructor(
    private readonly fd: number,
    maxBufferBytes: number,
    private readonly notice: NoticeOptions = {},
  ) {
    this.maxBufferBytes = Math.max(MIN_BUFFER_BYTES, maxBufferBytes);
  }

  /** pino's call: one serialized line, newline included. */
  write(line: string): boolean {
    if (this.gone) return true;
    const bytes = Buffer.byteLength(line);
    if (!this.fits(bytes)) {
      // a healthy reader takes what waits now; only a pipe that refused (a retry is pending)
      // makes room run out, and is not asked again for every line
      if (!this.retry) this.writeOut();
      if (!this.fits(bytes)) {
        this.droppedLines += 1;
        return false;
      }
    }
    this.queue.push(line);
    this.queuedBytes += bytes;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
    return true;
  }

  /** lines dropped since the writer was made */
  dropped(): number {
    return this.droppedLines;
  }

  /** Queues the count of lines dropped since the last report, when there is room for it. */
  reportDropped(): void {
    const lost = this.droppedLines - this.reportedLines;
    if (lost === 0 || this.gone || this.notice.warn === false) return;
    const line = `${JSON.stringify({
      level: NOTICE_LEVEL,
      time: new Date().toISOString(),
      ...this.notice.base,
      dropped: lost,
      max_buffer_bytes: this.maxBufferBytes,
      msg: DROPPED,
    })}\n`;
    // no room: tried again at the next report (not counted as one more dropped line)
    if (!this.fits(Buffer.byteLength(line))) return;
    this.reportedLines += lost;
    this.write(line);
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

  /** Whether `bytes` more fit, or nothing is held at all (a line longer than the buffer still goes out alone). */
  private fits(bytes: number): boolean {
    const held = this.queuedBytes + (this.chunk?.length ?? 0);
    return held === 0 || held + bytes <= this.maxBufferBytes;
  }

  private readonly drain = (): void => {
    this.scheduled = false;
    if (!this.writeOut() && !this.retry) this.retryLater();
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
      if (!this.chunk) {
        if (this.queue.length === 0) return true;
        this.chunk = Buffer.from(this.queue.length === 1 ? (this.queue[0] as string) : this.queue.join(''));
        this.chunkWritten = 0;
        this.chunkLines = this.queue.length;
        this.queue = [];
        this.queuedBytes = 0;
      }
      try {
        this.chunkWritten += writeSync(this.fd, this.chunk, this.chunkWritten);
        if (this.chunkWritten >= this.chunk.length) this.chunk = undefined;
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (code === 'EAGAIN') return false;
        this.chunk = undefined;
        if (code === 'EPIPE' || code === 'EBADF') {
          // the reader is gone, or there is no stdout: nobody can be told anything any more
          this.gone = true;
          this.queue = [];
          this.queuedBytes = 0;
          return true;
        }
        // ENOSPC, EIO...: this chunk is lost (and counted); the next lines are tried again
        this.droppedLines += this.chunkLines;
      }
    }
  }
}

let shared: LogWriter | undefined;

/**
 * The process's one stdout writer: every logger of the process writes through it, so that lines
 * keep their order and one exit flush covers them all. The first call's `maxBufferBytes` and
 * notice options hold (a platform process makes its first logger from its settings).
 */
export function stdoutWriter(maxBufferBytes: number, notice: NoticeOptions = {}): LogWriter {
  if (shared) return shared;
  // asking for process.stdout puts a pipe in non-blocking mode (libuv): a full pipe then answers
  // EAGAIN instead of blocking the event loop; a worker thread has no fd of its own there
  const writer = new LogWriter(process.stdout.fd ?? 1, maxBufferBytes, notice);
  shared = writer;
  setInterval(() => writer.reportDropped(), REPORT_DROPPED_MS).unref();
  process.on('exit', () => writer.flushUntil(Date.now() + EXIT_FLUSH_MS));
  return writer;
}
