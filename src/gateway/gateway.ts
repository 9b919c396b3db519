import Koa from 'koa';
import type { Logger } from 'pino';
import { DependencyDegradedError } from '../platform/dependency-health.js';
import { AuthFailures } from './auth-failures.js';
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
  /** HTTP_AUTH_FAILURES: failed authentications from one address and surface before a back-off (0: none) */
  authFailures?: number;
  /** whether requests of the surfaces that need the database are answered 503 at once (DependencyHealth) */
  shedsDatabaseWork?: () => boolean;
}

/** The surfaces whose every route needs the database; health, metrics, docs and the console's files do not. */
const DATABASE_SURFACES = /^\/(v1|ocpi)\//;

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
  const sheds = opts.shedsDatabaseWork;
  if (sheds)
    app.use(async (ctx, next) => {
      // answered as any request that found the database away: 503 dependency_unavailable (the
      // error mapper), in the surface's own shape, without waiting on it
      if (sheds() && DATABASE_SURFACES.test(ctx.path))
        throw new DependencyDegradedError('the database has not answered the last probes');
      await next();
    });
  const failures = opts.authFailures
    ? new AuthFailures({ maxFailures: opts.authFailures, trustProxy: opts.trustProxy, log: opts.log })
    : undefined;
  app.use(
    buildRouter(opts.mounts, {
      bodyLimit: opts.bodyLimit,
      bodyMaxDepth: opts.bodyMaxDepth,
      ...(failures ? { authFailures: failures } : {}),
    }),
  );
  return app;
}
