import type { Context } from 'koa';
import type { Logger } from 'pino';

/**
 * What the gateway's middleware keeps in `ctx.state` for the rest of the request: the request
 * and correlation ids (middleware/request-id.ts), the request's child logger
 * (middleware/request-log.ts), and the matched route template and caller (router.ts). Declared
 * on Koa's state type so that readers get these types without a cast; each is absent until the
 * middleware that sets it has run.
 */
declare module 'koa' {
  interface DefaultState {
    requestId?: string;
    correlationId?: string;
    log?: Logger;
    routeTemplate?: string;
    auth?: unknown;
  }
}

/** The request's id and logger, which middleware/request-id.ts and request-log.ts set before any route runs. */
export function requestContext(ctx: Context): { requestId: string; log: Logger } {
  const { requestId, log } = ctx.state;
  if (requestId === undefined || log === undefined)
    throw new Error('the request-id and request-log middleware run before the router (gateway.ts)');
  return { requestId, log };
}
