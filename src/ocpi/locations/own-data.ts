import Type from '#typebox';
import { HttpError, RequestValidationError } from '../../gateway/errors.js';
import { route } from '../../gateway/route-table.js';
import { zoneSpelling } from '../../tariffs/local-time.js';
import type { OcpiContext } from '../core/context.js';
import { assertOurParty } from '../core/guards.js';
import { ownListRoute, type OperatorRoute } from '../core/mount-kit.js';
import { ObjectId } from '../core/schemas.js';
import type { ObjectStore } from '../store/object-store.js';
import * as L221 from './schemas-2.2.1.js';
import type { StoredLocation } from './schemas-2.2.1.js';
import { enqueue } from '../outbox/outbox-store.js';
import type { SqlRunner } from '../../db/sql.js';
import { patchLocation, putLocation } from './service.js';
import { withEnergyMixAs } from '../core/energy-mix.js';

const LocationIdPath = Type.Object({ location_id: ObjectId });

/**
 * Our location's `time_zone` must be a zone of the IANA database (OCPI 2.2.1 Location): our CDRs
 * are priced in it, and a session on a location whose zone the pricing engine does not know ended
 * with no CDR. IANA names are case-sensitive, though our engine reads them in any case: a name
 * differing from the database's in case only is refused with its spelling. A partner's location
 * is the partner's data and is taken as sent (docs/OCPI.md "Our own data").
 */
function assertTimeZone(body: { time_zone?: string | undefined }): void {
  const zone = body.time_zone;
  if (zone === undefined) return;
  const spelled = zoneSpelling(zone);
  if (spelled === zone) return;
  throw new RequestValidationError([
    {
      loc: ['body', 'time_zone'],
      msg:
        spelled === undefined
          ? `${zone} is not a time zone of the IANA database (such as Europe/Amsterdam)`
          : `${zone} is spelled ${spelled} in the IANA database: partners may look it up as sent`,
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
    const locations = ctx.stores.locations.on(tx);
    const key = { ...ctx.ownParty(), id: locationId };
    // locked: a charger's status written meanwhile would be written back over (getForUpdate)
    const before = await locations.getForUpdate(key);
    const written = await keepChargerStatuses(tx, locations, key, before, await change(locations));
    await enqueue(tx, { role: 'EMSP' }, { kind: 'location', location_id: locationId });
    return written;
  });
  ctx.outbox.kick();
  return stored;
}

/** Statuses only the operator can give an EVSE: a charger reports none of them. */
const OPERATOR_STATUSES: ReadonlySet<string> = new Set(['PLANNED', 'REMOVED']);

/**
 * The status of an EVSE linked to a charger is the charger's (docs/ROAMING.md "Status"): an
 * operator's PUT or PATCH of the location keeps the status the EVSE had, unless it sets PLANNED
 * or REMOVED, or the EVSE was PLANNED or REMOVED (the operator brings it back). An edit of a name or an address had pushed UNKNOWN (the file's status) to every
 * eMSP for a charger that was charging, until the charger next reported.
 */
async function keepChargerStatuses(
  tx: SqlRunner,
  locations: ObjectStore<StoredLocation>,
  key: { country_code: string; party_id: string; id: string },
  before: StoredLocation | undefined,
  written: StoredLocation,
): Promise<StoredLocation> {
  const had = new Map((before?.evses ?? []).map((e) => [e.uid, e.status]));
  if (had.size === 0) return written;
  const rows = await tx.query('SELECT evse_uid FROM roaming_evse_link WHERE location_id = ?', [key.id]);
  const linked = new Set(rows.map((r) => String(r.evse_uid)));
  const kept = (e: NonNullable<StoredLocation['evses']>[number]) => {
    const status = had.get(e.uid);
    // the operator's own statuses are the operator's to set and to lift
    const chargers = status !== undefined && !OPERATOR_STATUSES.has(status);
    return linked.has(e.uid) && chargers && status !== e.status && !OPERATOR_STATUSES.has(e.status)
      ? status
      : undefined;
  };
  if (!(written.evses ?? []).some((e) => kept(e) !== undefined)) return written;
  const evses = (written.evses ?? []).map((e) => {
    const status = kept(e);
    return status === undefined ? e : { ...e, status };
  });
  const fixed = { ...written, evses };
  await locations.update(key, () => fixed);
  return fixed;
}

/** The operator's reads of our own locations: the ids the EVSE links and the chargers filter name. */
function ownLocationReads(ctx: OcpiContext): OperatorRoute[] {
  return [
    ownListRoute(ctx, {
      path: '/ocpi/locations',
      summary:
        'Our locations (2.2.1), in the order they were first stored: the ids the EVSE links and the chargers filter name',
      item: L221.LocationOut,
      store: ctx.stores.locations,
    }),
    route({
      method: 'GET',
      path: '/ocpi/locations/:location_id',
      summary: 'One of our locations (2.2.1), as stored',
      params: LocationIdPath,
      response: L221.LocationOut,
      responses: { 404: 'no location of ours with that id' },
      handler: async (req) => {
        const location = await ctx.stores.locations.get({ ...ctx.ownParty(), id: req.params.location_id });
        if (!location) throw new HttpError(404, 'location_not_found', `no location ${req.params.location_id} of ours`);
        return { data: location };
      },
    }),
  ];
}

/** The operator's routes for our own locations, on the management mount (docs/OCPI.md "Our own data"). */
export function ownLocationRoutes(ctx: OcpiContext): OperatorRoute[] {
  return [
    ...ownLocationReads(ctx),
    route({
      method: 'PUT',
      path: '/ocpi/locations/:location_id',
      summary: 'Creates or replaces one of our locations (2.2.1 shape; country_code and party_id are ours)',
      params: LocationIdPath,
      body: L221.Location,
      response: L221.LocationOut,
      handler: async (req) => {
        // an energy mix's impacts named as 2.1.1 names them (`source`) are stored as 2.2.1 does (`category`)
        const body = withEnergyMixAs('2.2.1', req.body);
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
