import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { unknownLocation } from '../core/errors.js';
import { assertOwnParty, requireLink } from '../core/guards.js';
import { listRoute, pathParty, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope } from '../core/schemas.js';
import { locationTo211 } from './mappers.js';
import * as L211 from './schemas-2.1.1.js';
import * as L221 from './schemas-2.2.1.js';
import { findLocation } from './service.js';

/**
 * The Sender interface of the locations module (the CPO side): partners read our published
 * locations (docs/OCPI.md "Who sees what"; an unpublished one is left out and answers 404).
 */

/** 2.1.1: GET `/locations`, our published locations served in the 2.1.1 shape. */
export function locationsSender211(ctx: OcpiContext): OcpiRoute[] {
  return [
    listRoute(ctx, {
      path: '/locations',
      module: 'locations',
      summary: 'Our published locations (publish: true), paged (date_from inclusive, date_to exclusive)',
      version: '2.1.1',
      store: ctx.stores.locations,
      owner: 'ours',
      item: L211.Location,
      render: { name: '2.1.1', as: locationTo211 },
      publishedOnly: true,
    }),
  ];
}

/**
 * 2.2.1 (the overview): GET `/locations`, and GET of one location, ours or the caller's own
 * (the caller reads back what it pushed).
 */
export function locationsSender221(ctx: OcpiContext): OcpiRoute[] {
  return [
    listRoute(ctx, {
      path: '/locations',
      module: 'locations',
      summary: 'Our published locations, paged',
      version: '2.2.1',
      store: ctx.stores.locations,
      owner: 'ours',
      item: L221.LocationOut,
      publishedOnly: true,
    }),
    route({
      method: 'GET',
      path: '/locations/:country_code/:party_id/:location_id',
      module: 'locations',
      summary: "One of our locations, or one of the caller's",
      params: L221.LocationPath,
      response: Envelope(L221.LocationOut),
      responses: { 404: 'unknown location (status_code 2003)' },
      handler: async (req) => {
        const caller = requireLink(req.auth, '2.2.1');
        const party = pathParty(req);
        if (!ctx.isOwn(party)) assertOwnParty(caller, party);
        const location = await findLocation(ctx, party, req.params.location_id);
        // an unpublished location of ours is not shown to partners
        if (ctx.isOwn(party) && location.publish === false) throw unknownLocation();
        return { data: location };
      },
    }),
  ];
}
