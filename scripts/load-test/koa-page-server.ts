import type { AddressInfo } from 'node:net';
import Koa from 'koa';

/**
 * The console benchmark's baseline (bench-fleet.ts): bare Koa answering every GET with a page
 * computed beforehand, the same bytes and headers a list request of the platform sent. What is
 * left of a request is HTTP, Koa and the client: the floor under any route.
 */
interface PageOrder {
  type: 'page';
  body: string;
  total: string;
}

process.once('message', (m: PageOrder) => {
  const app = new Koa();
  app.use((ctx) => {
    ctx.set('X-Total-Count', m.total);
    ctx.type = 'application/json';
    ctx.body = m.body;
  });
  const server = app.listen(0, '127.0.0.1', () => {
    process.send?.({ type: 'listening', port: (server.address() as AddressInfo).port });
  });
});
process.on('disconnect', () => process.exit(0));
