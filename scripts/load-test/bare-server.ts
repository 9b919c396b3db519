import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { trivialAnswer } from './trivial-answers.js';

/**
 * The baseline of the load test: a bare `ws` server with the same socket options as the OCPP
 * endpoint (no permessage-deflate). Idle sockets cost it nothing but the socket; a CALL gets the
 * smallest valid result (trivial-answers.ts), without validation, persistence or state.
 */
const server = createServer();
const wss = new WebSocketServer({ server, perMessageDeflate: false, clientTracking: false });
let open = 0;
wss.on('connection', (ws) => {
  open += 1;
  ws.on('close', () => (open -= 1));
  ws.on('message', (data) => {
    const frame: unknown = JSON.parse(data.toString());
    if (!Array.isArray(frame) || frame[0] !== 2) return;
    ws.send(JSON.stringify([3, frame[1], trivialAnswer(String(frame[2]))]));
  });
});
server.listen(0, '127.0.0.1', () => {
  // listen(0) on a TCP host: address() is an AddressInfo, not a pipe name
  process.send?.({ type: 'listening', port: (server.address() as AddressInfo).port });
});
process.on('message', (m: { type: string }) => {
  if (m.type === 'count') process.send?.({ type: 'count', open });
});
process.on('disconnect', () => process.exit(0));
