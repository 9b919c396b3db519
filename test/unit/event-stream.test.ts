import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { EventStream, MAX_EVENT_BACKLOG_BYTES } from '../../src/csms/event-stream.js';

/** A server socket and the client socket connected to it, over loopback. */
async function socketPair(): Promise<{ server: Socket; client: Socket; close(): void }> {
  const listener = createServer();
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const accepted = once(listener, 'connection') as Promise<[Socket]>;
  const client = createConnection((listener.address() as AddressInfo).port, '127.0.0.1');
  const [server] = await accepted;
  return {
    server,
    client,
    close: () => {
      client.destroy();
      server.destroy();
      listener.close();
    },
  };
}

/** Sends 1 KB events, letting the socket drain between batches, until `stop` or `limitBytes`. */
async function flood(events: EventStream, limitBytes: number, stop: () => boolean): Promise<number> {
  const text = `event: charge-point\ndata: ${'x'.repeat(1000)}\n\n`;
  let sent = 0;
  while (sent < limitBytes && !stop()) {
    for (let i = 0; i < 16; i += 1) events.send(text);
    sent += 16 * text.length;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return sent;
}

/**
 * An event stream (GET /v1/events) whose client stops reading is cut off once its backlog passes
 * MAX_EVENT_BACKLOG_BYTES (docs/SECURITY.md "Limits"): it kept every event of the fleet for the
 * client, and a process grew by hundreds of MB for a few stalled dashboards.
 */
describe('an event stream', () => {
  const warnings: string[] = [];
  const log = pino(
    { level: 'warn' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
          warnings.push((JSON.parse(line) as { msg: string }).msg);
        done();
      },
    }),
  );

  it('whose client reads nothing is cut off past its backlog, the connection ended', async () => {
    const pair = await socketPair();
    try {
      pair.client.pause();
      const clientClosed = once(pair.client, 'close');
      const events = new EventStream(pair.server, log);
      events.body.pipe(pair.server);
      const sent = await flood(events, 256 * 1024 * 1024, () => pair.server.destroyed);
      expect(pair.server.destroyed, `still open after ${sent} bytes`).to.equal(true);
      expect(events.body.destroyed).to.equal(true);
      // what the process held for it stayed near the bound (the kernel's buffers took the rest)
      expect(events.waiting()).to.be.at.most(MAX_EVENT_BACKLOG_BYTES + 64 * 1024);
      expect(warnings).to.include('event stream closed: its client does not read what it is sent');
      pair.client.resume();
      await clientClosed;
    } finally {
      pair.close();
    }
  });

  it('whose client reads is never cut off', async () => {
    const pair = await socketPair();
    try {
      let received = 0;
      pair.client.on('data', (chunk: Buffer) => (received += chunk.length));
      const events = new EventStream(pair.server, log);
      events.body.pipe(pair.server);
      const sent = await flood(events, 16 * 1024 * 1024, () => pair.server.destroyed);
      expect(pair.server.destroyed).to.equal(false);
      await new Promise<void>((resolve) => {
        const check = (): void => (received >= sent ? resolve() : void setTimeout(check, 5));
        check();
      });
      expect(received).to.equal(sent);
    } finally {
      pair.close();
    }
  });
});
