import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { AuthFailures } from './auth-failures.js';

/**
 * The request's child logger (bound to its request and correlation ids), made on first use: a
 * pino child serializes its bindings when it is made, a few microseconds that most requests,
 * which log only their one request line, do not need.
 */
export class RequestLogger {
  private child: Logger | undefined;

  constructor(
    private readonly base: Logger,
    readonly bindings: { req_id: string | undefined; corr_id: string | undefined },
  ) {}

  get log(): Logger {
    this.child ??= this.base.child(this.bindings);
    return this.child;
  }

  /** The request line: through the child if one was made, else with the ids as fields. */
  line(level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, msg: string): void {
    if (this.child) this.child[level](fields, msg);
    else if (this.base.isLevelEnabled(level)) this.base[level]({ ...this.bindings, ...fields }, msg);
  }
}

/**
 * What the gateway's middleware keeps in `ctx.state` for the rest of the request: the request
 * and correlation ids (middleware/request-id.ts), the request's logger
 * (middleware/request-log.ts), and the matched route template and caller (router.ts). Declared
 * on Koa's state type so that readers get these types without a cast; each is absent until the
 * middleware that sets it has run.
 */
declare module 'koa' {
  interface DefaultState {
    requestId?: string;
    correlationId?: string;
    requestLog?: RequestLogger;
    routeTemplate?: string;
    auth?: unknown;
    /** the back-off on failed authentications (auth-failures.ts), for routes that check credentials themselves */
    authFailures?: AuthFailures;
  }
}

/** The request's id and logger, which middleware/request-id.ts and request-log.ts set before any route runs. */
export function requestContext(ctx: Context): { requestId: string; logger: RequestLogger } {
  const { requestId, requestLog } = ctx.state;
  if (requestId === undefined || requestLog === undefined)
    throw new Error('the request-id and request-log middleware run before the router (gateway.ts)');
  return { requestId, logger: requestLog };
}
