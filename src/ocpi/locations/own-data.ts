import Type from '#typebox';
import { RequestValidationError } from '../../gateway/errors.js';
import { route } from '../../gateway/route-table.js';
import { isTimeZone } from '../../tariffs/local-time.js';
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
 * Our location's `time_zone` must be a zone of the IANA database (OCPI 2.2.1 Location): our CDRs
 * are priced in it, and a session on a location whose zone the pricing engine does not know ended
 * with no CDR. A partner's location is the partner's data and is taken as sent (docs/OCPI.md
 * "Our own data").
 */
function assertTimeZone(body: { time_zone?: string | undefined }): void {
  const zone = body.time_zone;
  if (zone === undefined || isTimeZone(zone)) return;
  throw new RequestValidationError([
    {
      loc: ['body', 'time_zone'],
      msg: `${zone} is not a time zone of the IANA database (such as Europe/Amsterdam)`,
      type: 'value_error.time_zone',
      input: zone,
      ctx: {},
    },
  ]);
}

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
        assertTimeZone(body);
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
        assertTimeZone(body);
        const id = req.params.location_id;
        return { data: await changeAndPush(ctx, id, (store) => patchLocation(ctx, own, id, body, store)) };
      },
    }),
  ];
}
