import { guardedAuth } from './auth-failures.js';
import type { Context } from 'koa';
import Type from '#typebox';
import type { Config } from '../../config/index.js';
import type { PlatformServices } from '../platform/services.js';
import { bearerCheck } from './csms-auth.js';
import { HttpError } from './errors.js';
import { defineMount, route, type MountSpec } from './route-table.js';
import { staticAnswer, staticBytes } from './static-bytes.js';

export interface SystemMountOptions {
  services: PlatformServices;
  isShuttingDown(): boolean;
  openapi(): Record<string, unknown>;
}

/**
 * Who may read /metrics (METRICS_TOKEN): with a token, callers presenting it as a Bearer token;
 * without one, anyone, except in production, where the route does not exist (docs/SECURITY.md; before, metrics
 * name routes, partners and load to anyone who asks).
 */
function metricsGuard(config: Pick<Config, 'METRICS_TOKEN' | 'NODE_ENV'>): (ctx: Context) => void {
  const token = config.METRICS_TOKEN;
  if (token) {
    const matches = bearerCheck(token);
    return (ctx) => {
      if (!matches(ctx))
        throw new HttpError(
          401,
          'unauthorized',
          'missing or invalid Authorization: Bearer <METRICS_TOKEN>',
          undefined,
          { 'WWW-Authenticate': 'Bearer realm="metrics"' },
        );
    };
  }
  if (config.NODE_ENV === 'production') {
    return (ctx) => {
      throw new HttpError(404, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
    };
  }
  return () => undefined;
}

/** /healthz (alive), /readyz (database, Redis, shards), /metrics, /openapi.json. */
export function systemMount(opts: SystemMountOptions): MountSpec<unknown> {
  const { services } = opts;
  // the document is the same for the process's life: serialised once (static-bytes.ts)
  const openapiBytes = staticBytes(() => JSON.stringify(opts.openapi()));
  const guardMetrics = metricsGuard(services.config);
  return defineMount<unknown>({
    name: 'system',
    prefix: '',
    routes: [
      route({
        method: 'GET',
        path: '/healthz',
        summary: 'Liveness: the process is up',
        response: Type.Object({ status: Type.Literal('ok') }),
        handler: () => ({ data: { status: 'ok' } }),
      }),
      route({
        method: 'GET',
        path: '/readyz',
        summary: 'Readiness: database and Redis reachable, shards owned, not shutting down',
        responses: { 503: 'not ready' },
        handler: async () => {
          // measured now, but never longer than the probe timeout: a dependency that hangs
          // must not make the readiness check hang (load balancers give up and mark us dead);
          // while one is known unreachable, the last probe's state at once
          const { database, redis } = await services.health.readiness();
          const placement = services.actors.placementReady();
          const shuttingDown = opts.isShuttingDown();
          const ready = database && redis !== false && placement && !shuttingDown;
          return {
            status: ready ? 200 : 503,
            data: {
              status: ready ? 'ready' : 'not ready',
              checks: { database, redis, placement, shutting_down: shuttingDown },
              ...services.actors.describe(),
            },
          };
        },
      }),
      route({
        method: 'GET',
        path: '/metrics',
        summary: 'Prometheus metrics (Bearer METRICS_TOKEN when set; absent in production without one)',
        responses: { 401: 'METRICS_TOKEN is set and the request does not carry it' },
        handler: async (req) => {
          await guardedAuth(req.koa, 'metrics', () => guardMetrics(req.koa));
          const { body, contentType } = await services.metrics.exposition();
          return { raw: { body, type: contentType } };
        },
      }),
      route({
        method: 'GET',
        path: '/openapi.json',
        summary: 'This OpenAPI 3.1 document',
        handler: (req) => staticAnswer(req.koa, openapiBytes(), 'application/json; charset=utf-8'),
      }),
    ],
  });
}
