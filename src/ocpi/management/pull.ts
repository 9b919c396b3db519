import { compileLazily } from '../../lazy-compile.js';
import { HttpError } from '../../gateway/errors.js';
import { endpointOf } from '../client/partner-client.js';
import type { PartyIdentity } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import type { PartnerRow } from '../core/partners.js';
import { normalizeDateTimes, type DateTimePath } from '../core/datetime.js';
import { locationFrom211 } from '../locations/mappers.js';
import * as L211 from '../locations/schemas-2.1.1.js';
import * as L221 from '../locations/schemas-2.2.1.js';
import { badGateway, registeredLink } from './handshake.js';

/** Pulling a registered CPO partner's locations (docs/OCPI.md "The credentials link", outbound). */

const checkLocation211 = compileLazily(L211.Location);
const checkLocation221 = compileLazily(L221.Location);

/** A pulled object as a location to store under the partner's party: undefined when it is none. */
function pulledLocation(o: unknown, version: OcpiVersion, party: PartyIdentity): L221.StoredLocation | undefined {
  // a timestamp that is no real instant makes the location one we refuse
  const invalid: DateTimePath[] = [];
  if (version === '2.1.1' && checkLocation211.Check(o)) {
    normalizeDateTimes(L211.Location, o, invalid);
    return invalid.length === 0 ? locationFrom211(o, party) : undefined;
  }
  if (version === '2.2.1' && checkLocation221.Check(o) && o.id) {
    normalizeDateTimes(L221.Location, o, invalid);
    return invalid.length === 0 ? { ...o, ...party, id: o.id } : undefined;
  }
  return undefined;
}

/** GETs every page of the partner's locations (following Link rel="next") and stores them. */
export async function pullLocations(ctx: OcpiContext, partner: PartnerRow, limit: number | undefined) {
  // an eMSP's locations endpoint is its Receiver interface: there is nothing to pull from it
  if (partner.role !== 'CPO')
    throw new HttpError(409, 'not_a_cpo', `partner ${partner.id} is an eMSP: only a CPO's locations can be pulled`);
  const link = await registeredLink(ctx, partner);
  const chosen = endpointOf(link.partner.endpoints, 'locations');
  if (!chosen) throw new HttpError(409, 'no_locations_endpoint', 'the partner lists no locations endpoint');
  const { version } = chosen;
  const url = limit ? `${chosen.url}?limit=${limit}` : chosen.url;
  const party = { country_code: partner.country_code, party_id: partner.party_id };
  const ids: string[] = [];
  let rejected = 0;
  let pages = 0;
  try {
    // each page is stored before the next one is read (one page in memory at a time); a failure
    // part-way answers 502 and keeps the pages stored so far (a pull again overwrites them)
    // locations is a functional module: 2.2.1 calls carry the routing headers (us -> the partner)
    for await (const page of ctx.client.pages(url, link.theirToken, version, { route: { from: ctx.own, to: party } })) {
      pages++;
      for (const o of page) {
        const location = pulledLocation(o, version, party);
        if (!location) {
          rejected++;
          continue;
        }
        await ctx.stores.locations.put({ ...party, id: location.id }, location);
        ids.push(location.id);
      }
    }
  } catch (err) {
    return badGateway(ctx, err);
  }
  return { version, url: chosen.url, pages, stored: ids.length, rejected, location_ids: ids };
}
