import type { OcpiContext } from '../core/context.js';
import { listRoute, type OcpiRoute } from '../core/mount-kit.js';
import { OpenObject } from '../core/schemas.js';

/**
 * The Sender interface of the CDRs module (the CPO side). CDRs come with the charging sessions of
 * our chargers; until then the list is empty (docs/OCPI.md "Who sees what"). CDR fields are open
 * objects (docs/OCPI.md, Decisions 14), so the module has no schemas of its own yet.
 */

/** 2.2.1 (the overview): GET `/cdrs`, the caller's CDRs. */
export function cdrsSender221(ctx: OcpiContext): OcpiRoute[] {
  return [
    listRoute(ctx, {
      path: '/cdrs',
      module: 'cdrs',
      summary: "CDRs of the caller's party, paged",
      version: '2.2.1',
      store: ctx.stores.cdrs,
      owner: 'caller',
      item: OpenObject,
    }),
  ];
}
