import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { WebSocket, WebSocketServer } from 'ws';
import { textFrame } from '../../src/ocpp/text-frame.js';

/**
 * The frames the CSMS writes to a charger's socket itself: a WebSocket client (ws, as chargers'
 * stacks read them) receives each text whole, whatever its length and characters.
 */
describe('text frames written whole', () => {
  let server: Server;
  let client: WebSocket;
  const received: string[] = [];

  before(async () => {
    const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
    server = createServer();
    server.on('upgrade', (req, socket, head) => {
      wss.handleUpgrade(req, socket, head, (ws) => {
        ws.on('message', (data) => {
          // the client asks for a text of n characters c; the server writes it as one frame
          const { n, c } = JSON.parse(String(data)) as { n: number; c: string };
          const frame = textFrame(c.repeat(n));
          if (frame) socket.write(frame);
          else ws.send(c.repeat(n));
        });
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
    client.on('message', (data, isBinary) => {
      expect(isBinary).to.equal(false);
      received.push(String(data));
    });
    await once(client, 'open');
  });

  after(async () => {
    client.close();
    server.closeAllConnections();
    server.close();
  });

  async function ask(n: number, c: string): Promise<string> {
    const before = received.length;
    client.send(JSON.stringify({ n, c }));
    while (received.length === before) await new Promise((r) => setTimeout(r, 2));
    return received[before] ?? '';
  }

  it('sends texts across the 7-bit and 16-bit length boundaries intact', async () => {
    for (const n of [0, 1, 125, 126, 127, 65_535, 65_536, 200_000]) {
      expect(await ask(n, 'x'), `${n} bytes`).to.equal('x'.repeat(n));
    }
  });

  it('counts the length in UTF-8 bytes, not characters', async () => {
    // 42 three-byte characters: 126 bytes, a 16-bit length; 'é' is two bytes, '€' three
    for (const [n, c] of [
      [42, '€'],
      [63, 'é'],
      [21_845, '€'],
      [21_846, '€'],
    ] as const) {
      expect(await ask(n, c), `${n} x ${c}`).to.equal(c.repeat(n));
    }
  });

  it('leaves a text longer than a 16-bit length to ws', () => {
    expect(textFrame('x'.repeat(65_535))).to.be.an.instanceOf(Buffer);
    expect(textFrame('x'.repeat(65_536))).to.equal(undefined);
    expect(textFrame('€'.repeat(21_845))).to.be.an.instanceOf(Buffer);
    expect(textFrame('€'.repeat(21_846))).to.equal(undefined);
  });
});
