import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import '../request-state.js';

/** One log line per request with its id, status and duration; a child logger for handlers. */
export function requestLog(
  log: Logger,
  observe?: (method: string, route: string, status: number, seconds: number) => void,
): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const child = log.child({ req_id: ctx.state.requestId, corr_id: ctx.state.correlationId });
    ctx.state.log = child;
    try {
      await next();
    } finally {
      const ms = performance.now() - started;
      const route = ctx.state.routeTemplate ?? 'unmatched';
      observe?.(ctx.method, route, ctx.status, ms / 1000);
      const level = ctx.status >= 500 ? 'error' : 'info';
      child[level]({ method: ctx.method, url: ctx.url, status: ctx.status, ms: Math.round(ms * 10) / 10 }, 'request');
    }
  };
}
