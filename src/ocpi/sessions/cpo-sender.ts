import type { OcpiContext } from '../core/context.js';
import { listRoute, type OcpiRoute } from '../core/mount-kit.js';
import * as S211 from './schemas-2.1.1.js';

/**
 * The Sender interface of the sessions module (the CPO side). Our own chargers' sessions come
 * later; today a partner reads back the sessions of its own party (docs/OCPI.md "Who sees what").
 */

/** 2.2.1 (the overview): GET `/sessions`, the caller's sessions in the stored 2.1.1 shape. */
export function sessionsSender221(ctx: OcpiContext): OcpiRoute[] {
  return [
    listRoute(ctx, {
      path: '/sessions',
      module: 'sessions',
      summary: "Sessions of the caller's party, paged",
      version: '2.2.1',
      store: ctx.stores.sessions,
      owner: 'caller',
      item: S211.SessionOut,
    }),
  ];
}
