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
  /** BODY_MAX_DEPTH: deepest nesting of a JSON body */
  bodyMaxDepth: number;
  /**
   * TRUST_PROXY: whether X-Forwarded-Proto/-Host/-For count (Koa's `proxy`). Off by default: from
   * anyone else they would let a caller choose the host of the links we answer (docs/SECURITY.md).
   */
  trustProxy: boolean;
  observe?: (method: string, route: string, status: number, seconds: number) => void;
}

/**
 * The Koa application. Order: request id -> request log -> error mapper -> per-route
 * authentication, body parser (size and depth limits), validation -> handler -> envelope.
 */
export function createGateway(opts: GatewayOptions): Koa {
  const app = new Koa({ proxy: opts.trustProxy });
  app.silent = true;
  app.use(requestId());
  app.use(async (ctx, next) => {
    // every answer, errors included: a browser never guesses a type we did not send
    ctx.set('X-Content-Type-Options', 'nosniff');
    await next();
  });
  app.use(requestLog(opts.log, opts.observe));
  app.use(errorMapper(opts.log, opts.mounts));
  app.use(buildRouter(opts.mounts, { bodyLimit: opts.bodyLimit, bodyMaxDepth: opts.bodyMaxDepth }));
  return app;
}
