import Type from 'typebox';
import type { PlatformServices } from '../platform/services.js';
import { defineMount, type MountSpec } from './route-table.js';

export interface SystemMountOptions {
  services: PlatformServices;
  isShuttingDown(): boolean;
  openapi(): Record<string, unknown>;
}

/** /healthz (alive), /readyz (database, Redis, shards), /metrics, /openapi.json. */
export function systemMount(opts: SystemMountOptions): MountSpec<unknown> {
  const { services } = opts;
  return defineMount<unknown>({
    name: 'system',
    prefix: '',
    routes: [
      {
        method: 'GET',
        path: '/healthz',
        summary: 'Liveness: the process is up',
        response: Type.Object({ status: Type.Literal('ok') }),
        handler: () => ({ data: { status: 'ok' } }),
      },
      {
        method: 'GET',
        path: '/readyz',
        summary: 'Readiness: database and Redis reachable, shards owned, not shutting down',
        responses: { 503: 'not ready' },
        handler: async () => {
          // measured now, but never longer than the probe timeout: a dependency that hangs
          // must not make the readiness check hang (load balancers give up and mark us dead)
          const { database, redis } = await services.health.probe();
          const placement = services.actors.placementReady();
          const shuttingDown = opts.isShuttingDown();
          const ready = database && redis !== false && placement && !shuttingDown;
          return {
            status: ready ? 200 : 503,
            data: { status: ready ? 'ready' : 'not ready', checks: { database, redis, placement, shutting_down: shuttingDown }, ...services.actors.describe() },
          };
        },
      },
      {
        method: 'GET',
        path: '/metrics',
        summary: 'Prometheus metrics',
        handler: async () => ({ raw: { body: await services.metrics.registry.metrics(), type: services.metrics.registry.contentType } }),
      },
      {
        method: 'GET',
        path: '/openapi.json',
        summary: 'This OpenAPI 3.1 document',
        handler: () => ({ data: opts.openapi() }),
      },
    ],
  });
}
