import Type, { type Static } from '#typebox';
import {
  BusinessDetails,
  CountryAlpha3,
  CountryCode,
  DateTime,
  DisplayText,
  EnergyMix,
  GeoLocation211,
  ObjectId,
  ObjectId39,
  OpenObject,
  PartyId,
  Url,
  ocpiString,
  openEnum,
} from '../core/schemas.js';
import {
  ConnectorFormat,
  ConnectorStandard,
  Facility,
  Hours211,
  PowerType,
  evsePatchWith,
  evseWith,
} from './schemas.js';
import { titled } from '../../gateway/openapi.js';

/** OCPI 2.1.1 locations (OCPI 2.1.1 mod_locations.md). Stored in the 2.2.1 shape: mappers.ts. */

export const Connector = titled(
  'Connector211',
  Type.Object({
    id: ObjectId,
    standard: ConnectorStandard,
    format: ConnectorFormat,
    power_type: PowerType,
    voltage: Type.Integer({ minimum: 0 }),
    amperage: Type.Integer({ minimum: 0 }),
    // string(36): Tariff.id
    tariff_id: Type.Optional(ObjectId),
    terms_and_conditions: Type.Optional(Url),
    last_updated: DateTime,
  }),
);
export type Connector = Static<typeof Connector>;
export const ConnectorPatch = Type.Partial(Connector);
export type ConnectorPatch = Static<typeof ConnectorPatch>;
/** ConnectorPatch as a request body: without `last_updated` it is stamped on receipt (Decisions 33). */
export const ConnectorPatchBody = ConnectorPatch;

export const Evse = titled('Evse211', evseWith(Connector, GeoLocation211, ObjectId39));
export type Evse = Static<typeof Evse>;

const LocationType = openEnum(['ON_STREET']);

/** The 2.1.1 Location (LocationOut of the CPO 2.1.1 list; nested in SessionCreate). */
export const Location = titled(
  'Location211',
  Type.Object({
    id: ObjectId39,
    type: LocationType,
    name: Type.Optional(ocpiString(255)),
    address: ocpiString(45),
    city: ocpiString(45),
    // required in 2.1.1; left optional, as the 2.2.1 locations we serve on 2.1.1 may have none
    postal_code: Type.Optional(ocpiString(10)),
    country: CountryAlpha3,
    coordinates: GeoLocation211,
    related_locations: Type.Optional(Type.Array(OpenObject)),
    evses: Type.Optional(Type.Array(Evse)),
    directions: Type.Optional(Type.Array(DisplayText)),
    operator: Type.Optional(BusinessDetails),
    suboperator: Type.Optional(BusinessDetails),
    owner: Type.Optional(BusinessDetails),
    facilities: Type.Optional(Type.Array(Facility)),
    time_zone: Type.Optional(ocpiString(255)),
    opening_times: Type.Optional(Hours211),
    charging_when_closed: Type.Optional(Type.Boolean()),
    images: Type.Optional(Type.Array(OpenObject)),
    energy_mix: Type.Optional(EnergyMix),
    last_updated: DateTime,
  }),
);
export type Location = Static<typeof Location>;

/** EVSE and Location patches of the 2.1.1 Receiver: every field optional, nested ones merged by uid / id. */
export const EvsePatch = evsePatchWith(Evse, ConnectorPatch);
export type EvsePatch = Static<typeof EvsePatch>;
export const EvsePatchBody = EvsePatch;
export const LocationPatch = Type.Partial(Type.Object({ ...Location.properties, evses: Type.Array(EvsePatch) }));
export type LocationPatch = Static<typeof LocationPatch>;
export const LocationPatchBody = LocationPatch;

export const LocationPath = Type.Object({ country_code: CountryCode, party_id: PartyId, location_id: ObjectId39 });
export const EvsePath = Type.Object({ ...LocationPath.properties, evse_uid: ObjectId39 });
export const ConnectorPath = Type.Object({ ...EvsePath.properties, connector_id: ObjectId });
