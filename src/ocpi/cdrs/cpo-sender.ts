import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import { listRoute, type OcpiRoute } from '../core/mount-kit.js';
import { locationTo211 } from '../locations/mappers.js';
import type { StoredLocation } from '../locations/schemas-2.2.1.js';
import type { ObjectStore } from '../store/object-store.js';
import { narrowedTo } from '../sessions/mappers.js';
import { isCdr221, type StoredCdr } from '../sessions/stored.js';
import { cdrTo211, cdrTo221 } from './mappers.js';
import * as C211 from './schemas-2.1.1.js';
import * as C221 from './schemas-2.2.1.js';

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
  return cdrTo211(c, location ? narrowedTo(locationTo211(location), l.evse_uid, l.connector_id) : undefined);
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
