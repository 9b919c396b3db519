import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { RequestLogger } from '../request-state.js';

/**
 * One log line per request with its id, status and duration (error for a 5xx, warn for a 503,
 * info otherwise); a child logger for handlers (made when asked for).
 */
export function requestLog(
  log: Logger,
  observe?: (method: string, route: string, status: number, seconds: number) => void,
): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const logger = new RequestLogger(log, { req_id: ctx.state.requestId, corr_id: ctx.state.correlationId });
    ctx.state.requestLog = logger;
    try {
      await next();
    } finally {
      const ms = performance.now() - started;
      const route = ctx.state.routeTemplate ?? 'unmatched';
      observe?.(ctx.method, route, ctx.status, ms / 1000);
      // a 503 is the answer chosen while a dependency is out or the process is not ready (its cause
      // is logged once where it is seen): at error level, each health check during an outage paged
      const level = ctx.status === 503 ? 'warn' : ctx.status >= 500 ? 'error' : 'info';
      logger.line(
        level,
        { method: ctx.method, url: ctx.url, status: ctx.status, ms: Math.round(ms * 10) / 10 },
        'request',
      );
    }
  };
}
