import type { Static } from '#typebox';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import { listRoute, type OcpiRoute } from '../core/mount-kit.js';
import { geoTo211, locationTo211 } from '../locations/mappers.js';
import { namingTariff, tariffOfPeriods } from '../locations/tariff-choice.js';
import type { StoredLocation } from '../locations/schemas-2.2.1.js';
import type { ObjectStore } from '../store/object-store.js';
import { narrowedTo } from '../sessions/mappers.js';
import { isCdr221, type StoredCdr } from '../sessions/stored.js';
import { cdrTo211, cdrTo221 } from './mappers.js';
import * as C211 from './schemas-2.1.1.js';
import * as C221 from './schemas-2.2.1.js';
import type * as L211 from '../locations/schemas-2.1.1.js';

/**
 * The Sender interface of the CDRs module (the CPO side): an eMSP reads the CDRs of the sessions
 * our chargers had with its tokens, the ones written for its party (docs/OCPI.md "Who sees
 * what"). Our CDRs are written in the 2.2.1 shape; the 2.1.1 list adds the location we hold.
 */

/** A stored CDR of ours as 2.1.1 has it. */
export async function cdr211Of(locations: Pick<ObjectStore<StoredLocation>, 'get'>, c: StoredCdr): Promise<C211.Cdr> {
  if (!isCdr221(c)) return c;
  const l = c.cdr_location;
  const location = await locations.get({ country_code: c.country_code, party_id: c.party_id, id: l.id });
  if (!location) return cdrTo211(c, undefined);
  const place = asAtStart(narrowedTo(locationTo211(location), l.evse_uid, l.connector_id), l, c.last_updated);
  // its connector names the tariff that priced it, none when none did
  return cdrTo211(c, namingTariff(place, tariffOfPeriods(c.charging_periods) ?? c.tariffs?.[0]?.id, true));
}

/**
 * The 2.1.1 location of a CDR as the session's start saw it, the same at every send and pull (a
 * CDR "cannot be changed/replaced, once sent", 2.1.1 mod_cdrs): the place kept in its
 * `cdr_location` when the session started, the CDR's own time, and UNKNOWN for the status of
 * its EVSE, which a CDR does not keep. Before, a location renamed since the session (or an EVSE
 * that changed status) changed every 2.1.1 CDR of it, those already sent too.
 */
function asAtStart(now: L211.Location, place: Static<typeof C221.CdrLocation>, at: string): L211.Location {
  const { name: _current, ...rest } = now;
  return {
    ...rest,
    ...(place.name === undefined ? {} : { name: place.name }),
    address: place.address,
    city: place.city,
    ...(place.postal_code === undefined ? {} : { postal_code: place.postal_code }),
    country: place.country,
    // 2.1.1 writes exactly 6 decimals (GeoLocation), a 2.2.1 cdr_location 5 to 7
    coordinates: geoTo211(place.coordinates),
    last_updated: at,
    ...(now.evses
      ? {
          evses: now.evses.map((e) => ({
            ...e,
            status: 'UNKNOWN' as const,
            last_updated: at,
            connectors: e.connectors.map((k) => ({ ...k, last_updated: at })),
          })),
        }
      : {}),
  };
}

/** GET `/cdrs`: our CDRs for the calling eMSP, paged, in the shape of `version`. */
export function cdrsSender(ctx: OcpiContext, version: OcpiVersion): OcpiRoute[] {
  const own = () => ctx.ownParty();
  return [
    listRoute(ctx, {
      path: '/cdrs',
      module: 'cdrs',
      summary: "CDRs of our sessions with the caller's tokens, paged",
      version,
      store: ctx.stores.cdrs,
      owner: 'ours-for-caller',
      ...(version === '2.1.1'
        ? {
            // a credit CDR is served on 2.2.1 only: 2.1.1 has none (visibilityOf)
            publishedOnly: 'public' as const,
            item: C211.Cdr,
            render: {
              name: '2.1.1',
              page: (items: StoredCdr[]) => Promise.all(items.map((c) => cdr211Of(ctx.stores.locations, c))),
            },
          }
        : {
            item: C221.Cdr,
            render: { name: '2.2.1', as: (c: StoredCdr) => (isCdr221(c) ? c : cdrTo221(c, own(), own())) },
          }),
    }),
  ];
}
