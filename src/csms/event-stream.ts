import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import type { Logger } from 'pino';

/**
 * The most of an event stream's text waiting for its client to read it. A client that stops
 * reading (a browser tab on a suspended laptop, a stalled network) is cut off past it: every
 * change event of the fleet was kept for it, 20-28 MB per 100,000 events and on without end. A
 * dashboard's EventSource connects again by itself and reads its views anew.
 */
export const MAX_EVENT_BACKLOG_BYTES = 1024 * 1024;

/** The body of one `GET /v1/events` answer (server-sent events), written only through `send`. */
export class EventStream {
  readonly body = new PassThrough();
  private cut = false;

  constructor(
    private readonly socket: Socket,
    private readonly log: Logger,
    private readonly maxBacklog = MAX_EVENT_BACKLOG_BYTES,
  ) {}

  /** What waits for the client: the stream's own buffers and the socket's. */
  waiting(): number {
    return this.body.writableLength + this.body.readableLength + this.socket.writableLength;
  }

  /**
   * Writes `text`, or, with more than the backlog already waiting, ends the connection at once
   * (a close could not reach a client that reads nothing) and drops this and every later text.
   */
  send(text: string): void {
    if (this.cut) return;
    const waiting = this.waiting();
    if (waiting > this.maxBacklog) {
      this.cut = true;
      this.log.warn({ waiting_bytes: waiting }, 'event stream closed: its client does not read what it is sent');
      this.socket.destroy();
      this.body.destroy();
      return;
    }
    this.body.write(text);
  }
}
