import Koa from 'koa';
import type { Logger } from 'pino';
import { errorMapper } from './middleware/error-mapper.js';
import { requestId } from './middleware/request-id.js';
import { requestLog } from './middleware/request-log.js';
import type { MountSpec } from './route-table.js';
import { buildRouter } from './router.js';

export interface GatewayOptions {
  log: Logger;
  mounts: ReadonlyArray<MountSpec<unknown>>;
  bodyLimit: string;
  observe?: (method: string, route: string, status: number, seconds: number) => void;
}

/**
 * The Koa application. Order: request id -> request log -> error mapper -> per-route
 * authentication, body parser (size limit), validation -> handler -> envelope.
 */
export function createGateway(opts: GatewayOptions): Koa {
  const app = new Koa({ proxy: true });
  app.silent = true;
  app.use(requestId());
  app.use(requestLog(opts.log, opts.observe));
  app.use(errorMapper(opts.log));
  app.use(buildRouter(opts.mounts, { bodyLimit: opts.bodyLimit }));
  return app;
}
