import Type from '#typebox';
import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { assertOurParty } from '../core/guards.js';
import type { OperatorRoute } from '../core/mount-kit.js';
import { ObjectId } from '../core/schemas.js';
import * as L221 from './schemas-2.2.1.js';
import { enqueue } from '../outbox/outbox-store.js';
import { patchLocation, putLocation } from './service.js';

const LocationIdPath = Type.Object({ location_id: ObjectId });

/**
 * A change of one of our locations goes to every registered eMSP, as a PUT of the whole location
 * (docs/ROAMING.md "What is pushed"), queued before the operator is answered.
 */
async function pushLocation(ctx: OcpiContext, locationId: string): Promise<void> {
  await ctx.services.db.group.run((tx) => enqueue(tx, { role: 'EMSP' }, { kind: 'location', location_id: locationId }));
  ctx.outbox.kick();
}

/** The operator's routes for our own locations, on the management mount (docs/OCPI.md "Our own data"). */
export function ownLocationRoutes(ctx: OcpiContext): OperatorRoute[] {
  return [
    route({
      method: 'PUT',
      path: '/ocpi/locations/:location_id',
      summary: 'Creates or replaces one of our locations (2.2.1 shape; country_code and party_id are ours)',
      params: LocationIdPath,
      body: L221.Location,
      response: L221.LocationOut,
      handler: async (req) => {
        const body = req.body;
        const own = ctx.ownParty();
        assertOurParty(own, body, `country_code and party_id must be ours (${own.country_code}-${own.party_id})`);
        const stored = await putLocation(ctx, own, req.params.location_id, body);
        await pushLocation(ctx, req.params.location_id);
        return { data: stored };
      },
    }),
    route({
      method: 'PATCH',
      path: '/ocpi/locations/:location_id',
      summary: 'Partial update of one of our locations, its EVSEs (by uid) or connectors (by id)',
      params: LocationIdPath,
      body: L221.LocationPatchBody,
      response: L221.LocationOut,
      responses: { 404: 'unknown location' },
      handler: async (req) => {
        const body = req.body;
        const own = ctx.ownParty();
        assertOurParty(own, body, 'country_code and party_id must be ours');
        const stored = await patchLocation(ctx, own, req.params.location_id, body);
        await pushLocation(ctx, req.params.location_id);
        return { data: stored };
      },
    }),
  ];
}
