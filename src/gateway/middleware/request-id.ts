import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** X-Request-ID and X-Correlation-ID: taken from the caller when sane, made up otherwise, echoed. */
export function requestId(): Middleware {
  return async (ctx, next) => {
    const given = ctx.get('X-Request-ID');
    const id = SAFE_ID.test(given) ? given : randomUUID();
    const corr = ctx.get('X-Correlation-ID');
    const correlation = SAFE_ID.test(corr) ? corr : id;
    ctx.state.requestId = id;
    ctx.state.correlationId = correlation;
    ctx.set('X-Request-ID', id);
    ctx.set('X-Correlation-ID', correlation);
    await next();
  };
}
