import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import Koa from 'koa';
import { pino } from 'pino';
import { requestLog } from '../../src/gateway/middleware/request-log.js';

/**
 * The request line's level (docs/OPERATIONS.md "Log lines"): an operator alerting on error lines
 * is told of failures, not of the 503 each health check gets while a dependency is out.
 */
describe('the request log line', () => {
  it('is info for a 2xx or 4xx, warn for a 503, error for another 5xx', async () => {
    const lines: Array<{ level: number; status: number }> = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean))
          lines.push(JSON.parse(line) as { level: number; status: number });
        done();
      },
    });
    const app = new Koa();
    app.use(requestLog(pino({ level: 'info' }, sink)));
    app.use((ctx) => {
      ctx.status = Number(ctx.path.slice(1));
      ctx.body = 'x';
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      for (const status of [200, 404, 503, 500]) await fetch(`http://127.0.0.1:${port}/${status}`);
    } finally {
      server.close();
    }
    expect(lines.map((l) => [l.status, l.level])).to.deep.equal([
      [200, 30],
      [404, 30],
      [503, 40],
      [500, 50],
    ]);
  });
});
