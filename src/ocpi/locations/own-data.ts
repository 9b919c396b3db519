import Type from '#typebox';
import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { assertOurParty } from '../core/guards.js';
import type { OperatorRoute } from '../core/mount-kit.js';
import { ObjectId } from '../core/schemas.js';
import type { ObjectStore } from '../store/object-store.js';
import * as L221 from './schemas-2.2.1.js';
import type { StoredLocation } from './schemas-2.2.1.js';
import { enqueue } from '../outbox/outbox-store.js';
import { patchLocation, putLocation } from './service.js';

const LocationIdPath = Type.Object({ location_id: ObjectId });

/**
 * A change of one of our locations and its push to every registered eMSP (a PUT of the whole
 * location; docs/ROAMING.md "What is pushed") commit in one transaction, before the operator is
 * answered.
 */
async function changeAndPush(
  ctx: OcpiContext,
  locationId: string,
  change: (locations: ObjectStore<StoredLocation>) => Promise<StoredLocation>,
): Promise<StoredLocation> {
  const stored = await ctx.services.db.group.run(async (tx) => {
    const written = await change(ctx.stores.locations.on(tx));
    await enqueue(tx, { role: 'EMSP' }, { kind: 'location', location_id: locationId });
    return written;
  });
  ctx.outbox.kick();
  return stored;
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
        const id = req.params.location_id;
        return { data: await changeAndPush(ctx, id, (store) => putLocation(ctx, own, id, body, store)) };
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
        const id = req.params.location_id;
        return { data: await changeAndPush(ctx, id, (store) => patchLocation(ctx, own, id, body, store)) };
      },
    }),
  ];
}
