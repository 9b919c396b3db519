import type { PartyIdentity } from '../core/auth.js';
import { defined } from '../core/defined.js';
import { coordinate211 } from '../core/schemas.js';
import { CAPABILITIES_211 } from './schemas.js';
import type * as V211 from './schemas-2.1.1.js';
import type * as V221 from './schemas-2.2.1.js';
import { energyMixAs } from '../core/energy-mix.js';
import { firstTariff, type TariffChoice } from './tariff-choice.js';

/**
 * Locations are stored in the 2.2.1 shape; the 2.1.1 mounts read and write them through these
 * mappers (docs/OCPI.md "Storage"; OCPI 2.1.1 and 2.2.1 mod_locations, Connector:
 * voltage/amperage/tariff_id in 2.1.1 become max_voltage/max_amperage/tariff_ids in 2.2.1;
 * Location: `type` in 2.1.1, `parking_type` in 2.2.1).
 */

/**
 * A patch item for an EVSE or connector that is not there yet, taken as the whole object. The
 * merged location or EVSE is checked against its schema before it is stored (service.ts
 * `assertComplete`), so an incomplete one is answered 2001 and never kept.
 */
function asNew<T extends object>(patch: object): T {
  // checked after the merge (see above)
  return patch as T;
}

/** A connector as 2.1.1 has it; its one `tariff_id` is the one of its `tariff_ids` that `choose` names. */
export function connectorTo211(c: V221.Connector, choose: TariffChoice = firstTariff): V211.Connector {
  const { max_voltage, max_amperage, tariff_ids, max_electric_power: _power, power_type, ...rest } = c;
  return defined({
    ...rest,
    power_type: powerType211(power_type),
    voltage: max_voltage,
    amperage: max_amperage,
    tariff_id: tariff_ids && choose(tariff_ids),
  });
}

/** 2.1.1 has no two-phase supplies: they are single-phase there (docs/OCPI.md, Decisions 36). */
export function powerType211(t: V221.Connector['power_type']): V211.Connector['power_type'] {
  return t === 'AC_2_PHASE' || t === 'AC_2_PHASE_SPLIT' ? 'AC_1_PHASE' : t;
}

export function connectorFrom211(c: V211.Connector): V221.Connector {
  const { voltage, amperage, tariff_id, ...rest } = c;
  return defined({
    ...rest,
    max_voltage: voltage,
    max_amperage: amperage,
    tariff_ids: tariff_id === undefined ? undefined : [tariff_id],
  });
}

/** ConnectorPatch 2.1.1 -> the 2.2.1 fields it changes. */
export function connectorPatchFrom211(p: Partial<V211.Connector>): Partial<V221.Connector> {
  const { voltage, amperage, tariff_id, ...rest } = p;
  return defined({
    ...rest,
    max_voltage: voltage,
    max_amperage: amperage,
    tariff_ids: tariff_id === undefined ? undefined : [tariff_id],
  });
}

/** EVSEPatch 2.1.1 -> 2.2.1 (its connectors as connector patches). */
export function evsePatchFrom211(p: V211.EvsePatch): V221.EvsePatch {
  const { connectors, ...rest } = p;
  return defined({ ...rest, connectors: connectors?.map(connectorPatchFrom211) });
}

/**
 * LocationPatch 2.1.1 -> 2.2.1: `type` becomes `parking_type` where 2.2.1 has the same value
 * (OTHER and UNKNOWN have none: the stored parking_type stays); EVSEs as EVSE patches.
 */
export function locationPatchFrom211(p: V211.LocationPatch): V221.LocationPatch {
  const { type, evses, opening_times, ...rest } = p;
  return defined({
    ...rest,
    opening_times: opening_times && hoursFrom211(opening_times),
    parking_type: type === undefined ? undefined : TYPE_FROM_PARKING[type],
    evses: evses?.map(evsePatchFrom211),
  });
}

export function evseTo211(e: V221.Evse, choose: TariffChoice = firstTariff): V211.Evse {
  const coordinates = e.coordinates && geoTo211(e.coordinates);
  return defined({
    ...e,
    coordinates,
    capabilities: only211(e.capabilities, CAPABILITIES_211_SET),
    connectors: e.connectors.map((c) => connectorTo211(c, choose)),
  });
}

/**
 * The capabilities and facilities 2.1.1 names (mod_locations 4.2 Capability, 4.11 Facility).
 * 2.2.1 added others (CHIP_CARD_SUPPORT, START_SESSION_CONNECTOR_REQUIRED, PARKING_LOT,
 * METRO_STATION, ...): the 2.1.1 interfaces leave those out, as a strict 2.1.1 receiver refuses
 * them (docs/OCPI.md, Decisions 42).
 */
const CAPABILITIES_211_SET: ReadonlySet<string> = new Set(CAPABILITIES_211);
const FACILITIES_211: ReadonlySet<string> = new Set([
  'HOTEL',
  'RESTAURANT',
  'CAFE',
  'MALL',
  'SUPERMARKET',
  'SPORT',
  'RECREATION_AREA',
  'NATURE',
  'MUSEUM',
  'BUS_STOP',
  'TAXI_STAND',
  'TRAIN_STATION',
  'AIRPORT',
  'CARPOOL_PARKING',
  'FUEL_STATION',
  'WIFI',
]);

function only211<T extends string>(values: readonly T[] | undefined, known: ReadonlySet<string>): T[] | undefined {
  return values?.filter((v) => known.has(v));
}

/** 2.1.1 writes coordinates with exactly 6 decimals, 2.2.1 with 5 to 7. */
export function geoTo211(g: { latitude: string; longitude: string }): { latitude: string; longitude: string } {
  return { latitude: coordinate211(g.latitude), longitude: coordinate211(g.longitude) };
}

export function evseFrom211(e: V211.Evse): V221.Evse {
  return { ...e, connectors: e.connectors.map(connectorFrom211) };
}

const TYPE_FROM_PARKING: Record<string, string> = {
  ON_STREET: 'ON_STREET',
  PARKING_GARAGE: 'PARKING_GARAGE',
  UNDERGROUND_GARAGE: 'UNDERGROUND_GARAGE',
  PARKING_LOT: 'PARKING_LOT',
};

export function locationTo211(l: V221.StoredLocation, choose: TariffChoice = firstTariff): V211.Location {
  const {
    country_code: _cc,
    party_id: _pid,
    publish: _publish,
    publish_allowed_to: _allowed,
    state: _state,
    parking_type,
    evses,
    opening_times,
    ...rest
  } = l;
  // 2.1.1 requires a location type; 2.2.1 parking types without a 2.1.1 twin become OTHER
  const type = parking_type === undefined ? 'UNKNOWN' : (TYPE_FROM_PARKING[parking_type] ?? 'OTHER');
  return defined({
    ...rest,
    // 2.1.1 Location.postal_code is required, 2.2.1's optional (Decisions 40)
    postal_code: rest.postal_code ?? '',
    opening_times: opening_times && hoursTo211(opening_times),
    coordinates: geoTo211(rest.coordinates),
    facilities: only211(rest.facilities, FACILITIES_211),
    energy_mix: rest.energy_mix && energyMixAs('2.1.1', rest.energy_mix),
    type,
    evses: evses?.map((e) => evseTo211(e, choose)),
  });
}

type Hours221 = NonNullable<V221.Location['opening_times']>;
type Hours211 = NonNullable<V211.Location['opening_times']>;

/** 2.1.1 Hours give regular_hours or twentyfourseven; 2.2.1 always says twentyfourseven (Decisions 37). */
export function hoursFrom211(h: Hours211): Hours221 {
  return { ...h, twentyfourseven: h.twentyfourseven ?? false };
}

/** 2.2.1 Hours as 2.1.1 has them: one of twentyfourseven (when true) and regular_hours. */
export function hoursTo211(h: Hours221): Hours211 {
  if (h.twentyfourseven) {
    const { regular_hours: _regular, ...rest } = h;
    return rest;
  }
  if (h.regular_hours) {
    const { twentyfourseven: _always, ...rest } = h;
    return { ...rest, regular_hours: h.regular_hours };
  }
  return h;
}

/** What a 2.1.1 location without a time_zone is held with (Decisions 15); no zone the partner gave. */
export const ASSUMED_211_ZONE = 'Etc/UTC';

/** A 2.1.1 location pulled from a partner CPO, stored in the 2.2.1 shape under its party. */
export function locationFrom211(l: V211.Location, party: PartyIdentity): V221.StoredLocation {
  const { type, evses, time_zone, opening_times, ...rest } = l;
  const parking = TYPE_FROM_PARKING[type];
  return defined({
    ...rest,
    opening_times: opening_times && hoursFrom211(opening_times),
    country_code: party.country_code,
    party_id: party.party_id,
    publish: true,
    parking_type: parking,
    // time_zone is optional in 2.1.1 and required in 2.2.1
    time_zone: time_zone ?? ASSUMED_211_ZONE,
    energy_mix: rest.energy_mix && energyMixAs('2.2.1', rest.energy_mix),
    evses: evses?.map(evseFrom211),
  });
}

/** Merges patch items into a list by key; items not there yet are appended. */
function mergeByKey<T, P>(
  list: readonly T[] | undefined,
  patches: readonly P[] | undefined,
  key: (x: T | P) => unknown,
  merge: (t: T, p: P) => T,
  create: (p: P) => T,
): T[] | undefined {
  if (!patches) return list ? [...list] : undefined;
  const out = list ? [...list] : [];
  for (const p of patches) {
    const i = out.findIndex((t) => key(t) === key(p));
    const existing = i >= 0 ? out[i] : undefined;
    if (existing !== undefined) out[i] = merge(existing, p);
    else out.push(create(p));
  }
  return out;
}

/** PATCH semantics: the fields given replace, the rest stay; nested EVSEs/connectors merge by uid/id. */
export function mergeConnector(c: V221.Connector, p: Partial<V221.Connector>): V221.Connector {
  return { ...c, ...defined({ ...p }) };
}

export function mergeEvse(e: V221.Evse, p: V221.EvsePatch): V221.Evse {
  const { connectors, ...fields } = p;
  const merged: V221.Evse = { ...e, ...defined({ ...fields }) };
  const mergedConnectors = mergeByKey(e.connectors, connectors, (x) => x.id, mergeConnector, asNew<V221.Connector>);
  return { ...merged, connectors: mergedConnectors ?? [] };
}

export function mergeLocation(l: V221.StoredLocation, p: V221.LocationPatch): V221.StoredLocation {
  const { evses, ...fields } = p;
  const merged: V221.StoredLocation = {
    ...l,
    ...defined({ ...fields }),
    id: l.id,
    country_code: l.country_code,
    party_id: l.party_id,
  };
  const mergedEvses = mergeByKey(l.evses, evses, (x) => x.uid, mergeEvse, asNew<V221.Evse>);
  return defined({ ...merged, evses: mergedEvses });
}
