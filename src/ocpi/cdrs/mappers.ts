import type { PartyIdentity } from '../core/auth.js';
import { defined } from '../core/defined.js';
import { geoTo211 } from '../locations/mappers.js';
import type * as V211 from '../locations/schemas-2.1.1.js';
import { authMethod211, authMethod221, cdrTokenFrom211, periodsTo211 } from '../sessions/mappers.js';
import { tariffFrom211, tariffTo211 } from '../tariffs/mappers.js';
import type * as C211 from './schemas-2.1.1.js';
import type * as C221 from './schemas-2.2.1.js';

/**
 * CDRs between the versions (docs/OCPI.md, Decisions 23): 2.1.1 names the token by auth_id and
 * carries the location with the EVSE and connector used; 2.2.1 has a CdrToken and a CdrLocation,
 * and its costs are Prices.
 */

/** A 2.1.1 CDR in the 2.2.1 shape: `owner` sent it, `tokenParty` issued its token. */
export function cdrTo221(c: C211.Cdr, owner: PartyIdentity, tokenParty: PartyIdentity): C221.Cdr {
  const evse = c.location.evses?.[0];
  const connector = evse?.connectors[0];
  return defined({
    ...owner,
    id: c.id,
    start_date_time: c.start_date_time,
    end_date_time: c.stop_date_time,
    cdr_token: cdrTokenFrom211(c.auth_id, tokenParty),
    auth_method: authMethod221(c.auth_method),
    cdr_location: defined({
      id: c.location.id,
      name: c.location.name,
      address: c.location.address,
      city: c.location.city,
      postal_code: c.location.postal_code,
      country: c.location.country,
      coordinates: c.location.coordinates,
      evse_uid: evse?.uid ?? '',
      evse_id: evse?.evse_id ?? evse?.uid ?? '',
      connector_id: connector?.id ?? '',
      connector_standard: connector?.standard ?? '',
      connector_format: connector?.format ?? 'SOCKET',
      connector_power_type: connector?.power_type ?? 'AC_3_PHASE',
    }),
    meter_id: c.meter_id,
    currency: c.currency,
    tariffs: c.tariffs?.map((t) => tariffFrom211(t, owner)),
    charging_periods: c.charging_periods,
    total_cost: { excl_vat: c.total_cost },
    total_energy: c.total_energy,
    total_time: c.total_time,
    total_parking_time: c.total_parking_time,
    remark: c.remark,
    last_updated: c.last_updated,
  });
}

/**
 * A 2.2.1 CDR in the 2.1.1 shape, with `location` the 2.1.1 location we hold for it (only the
 * EVSE and connector used), or else the CdrLocation's address without EVSEs.
 */
export function cdrTo211(c: C221.Cdr, location: V211.Location | undefined): C211.Cdr {
  const l = c.cdr_location;
  return defined({
    id: c.id,
    start_date_time: c.start_date_time,
    stop_date_time: c.end_date_time,
    auth_id: c.cdr_token.contract_id,
    auth_method: authMethod211(c.auth_method),
    location:
      location ??
      defined({
        id: l.id,
        type: 'UNKNOWN',
        name: l.name,
        address: l.address,
        city: l.city,
        // required in 2.1.1, optional in a 2.2.1 cdr_location (docs/OCPI.md, Decisions 40)
        postal_code: l.postal_code ?? '',
        country: l.country,
        coordinates: geoTo211(l.coordinates),
        last_updated: c.last_updated,
      }),
    meter_id: c.meter_id,
    currency: c.currency,
    tariffs: c.tariffs?.map(tariffTo211),
    charging_periods: periodsTo211(c.charging_periods),
    total_cost: c.total_cost.excl_vat,
    total_energy: c.total_energy,
    total_time: c.total_time,
    total_parking_time: c.total_parking_time,
    remark: c.remark,
    last_updated: c.last_updated,
  });
}
