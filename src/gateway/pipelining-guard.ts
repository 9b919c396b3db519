import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How many requests of one connection may wait for their answers at once. HTTP/1.1 lets a client
 * send requests before reading the answers to the earlier ones (pipelining); browsers and the
 * partners' HTTP clients do not, or a few at most. Node's server answers every request it has
 * parsed and keeps each answer until the client reads it, so a client that sent thousands and
 * read nothing held them all: 300 connections of 1,000 requests each (11 MB sent) grew a process
 * to 2.6 GB, and a charger's Heartbeat waited 29 s (docs/SECURITY.md "Limits").
 */
export const MAX_WAITING_ANSWERS = 32;

/** Requests of each connection whose answers are not written out yet. */
const waiting = new WeakMap<Socket, number>();

/**
 * `handler` behind the limit: a connection with MAX_WAITING_ANSWERS requests waiting for their
 * answers is ended at its next one, and the requests it had already sent that come after are
 * dropped unanswered. An answer stops waiting when it is written out (`finish`) or its connection
 * closes, so a client that reads its answers, pipelining or not, never meets the limit.
 */
export function boundedPipelining(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const socket = req.socket;
    if (socket.destroyed) return;
    const count = (waiting.get(socket) ?? 0) + 1;
    if (count > MAX_WAITING_ANSWERS) {
      socket.destroy();
      return;
    }
    waiting.set(socket, count);
    let done = false;
    const settled = (): void => {
      if (done) return;
      done = true;
      waiting.set(socket, (waiting.get(socket) ?? 1) - 1);
    };
    res.once('finish', settled);
    res.once('close', settled);
    handler(req, res);
  };
}
