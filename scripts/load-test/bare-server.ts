import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

/**
 * The baseline of the load test: a bare `ws` server that accepts sockets and does nothing
 * else, with the same socket options as the OCPP endpoint (no permessage-deflate).
 */
const server = createServer();
const wss = new WebSocketServer({ server, perMessageDeflate: false, clientTracking: false });
let open = 0;
wss.on('connection', (ws) => {
  open += 1;
  ws.on('close', () => (open -= 1));
});
server.listen(0, '127.0.0.1', () => {
  process.send?.({ type: 'listening', port: (server.address() as AddressInfo).port });
});
process.on('message', (m: { type: string }) => {
  if (m.type === 'count') process.send?.({ type: 'count', open });
});
process.on('disconnect', () => process.exit(0));
