import Type, { type Static } from '#typebox';
import {
  BusinessDetails,
  CountryAlpha3,
  CountryCode,
  DateTime,
  DisplayText,
  EnergyMix,
  GeoLocation,
  ObjectId,
  OpenObject,
  PartyId,
  Url,
  ciString,
  ocpiString,
  openEnum,
} from '../core/schemas.js';
import { TokenType } from '../tokens/schemas-2.2.1.js';
import {
  ConnectorFormat,
  ConnectorStandard,
  Facility,
  Hours,
  PowerType221,
  evsePatchWith,
  evseWith,
} from './schemas.js';
import { titled } from '../../gateway/openapi.js';

/** OCPI 2.2.1 locations (OCPI 2.2.1 mod_locations.asciidoc). These are also the stored shapes. */

export const Connector = titled(
  'Connector221',
  Type.Object({
    id: ObjectId,
    standard: ConnectorStandard,
    format: ConnectorFormat,
    power_type: PowerType221,
    max_voltage: Type.Integer({ minimum: 0 }),
    max_amperage: Type.Integer({ minimum: 0 }),
    max_electric_power: Type.Optional(Type.Integer({ minimum: 0 })),
    // CiString(36) each: Tariff.id
    tariff_ids: Type.Optional(Type.Array(ObjectId)),
    terms_and_conditions: Type.Optional(Url),
    last_updated: DateTime,
  }),
);
export type Connector = Static<typeof Connector>;
export const ConnectorPatch = Type.Partial(Connector);
export const ConnectorPatchBody = Type.Object({ ...ConnectorPatch.properties, last_updated: DateTime });

export const Evse = titled('Evse221', evseWith(Connector));
export type Evse = Static<typeof Evse>;

/** EVSEPatch: every field optional; connectors may be partial too (merged by id). */
export const EvsePatch = evsePatchWith(Evse, ConnectorPatch);
export type EvsePatch = Static<typeof EvsePatch>;
/** EVSEPatch as a request body: `last_updated` is what orders updates, so it is required. */
export const EvsePatchBody = Type.Object({ ...EvsePatch.properties, last_updated: DateTime });

export const PublishTokenType = Type.Object({
  uid: Type.Optional(ciString(36)),
  type: Type.Optional(TokenType),
  visual_number: Type.Optional(ocpiString(64)),
  issuer: Type.Optional(ocpiString(64)),
  group_id: Type.Optional(ciString(36)),
});
export type PublishToken = Static<typeof PublishTokenType>;

/** Where a location is: its fields in the Location, and in a CDR's CdrLocation (2.2.1). */
export const placeFields = {
  name: Type.Optional(ocpiString(255)),
  address: ocpiString(45),
  city: ocpiString(45),
  postal_code: Type.Optional(ocpiString(10)),
  state: Type.Optional(ocpiString(20)),
  country: CountryAlpha3,
  coordinates: GeoLocation,
};

const locationFields = {
  country_code: CountryCode,
  party_id: PartyId,
  id: Type.Optional(ObjectId),
  publish: Type.Boolean(),
  publish_allowed_to: Type.Optional(Type.Array(PublishTokenType)),
  ...placeFields,
  related_locations: Type.Optional(Type.Array(OpenObject)),
  parking_type: Type.Optional(openEnum(['ALONG_MOTORWAY', 'PARKING_GARAGE', 'PARKING_LOT', 'ON_STREET'])),
  evses: Type.Optional(Type.Array(Evse)),
  directions: Type.Optional(Type.Array(DisplayText)),
  operator: Type.Optional(BusinessDetails),
  suboperator: Type.Optional(BusinessDetails),
  owner: Type.Optional(BusinessDetails),
  facilities: Type.Optional(Type.Array(Facility)),
  time_zone: Type.String({ minLength: 1, maxLength: 255, description: 'IANA zone name' }),
  opening_times: Type.Optional(Hours),
  charging_when_closed: Type.Optional(Type.Boolean()),
  images: Type.Optional(Type.Array(OpenObject)),
  energy_mix: Type.Optional(EnergyMix),
  last_updated: DateTime,
};

/** Location (PUT body). */
export const Location = titled('Location221', Type.Object(locationFields));
export type Location = Static<typeof Location>;
/** The stored and served Location: the id is always present. */
export type StoredLocation = Location & { id: string };
/** LocationOut (2.2.1): a stored Location. */
export const LocationOut = titled('LocationOut221', Type.Object({ ...locationFields, id: ObjectId }));

/**
 * LocationPatch: the Location fields, all optional. EVSEs and connectors inside may be partial:
 * they are merged by uid / id, which is how the overview mount's PATCH updates "a Location,
 * EVSE or Connector" through one path (docs/OCPI.md, Decisions 6).
 */
export const LocationPatch = Type.Partial(Type.Object({ ...locationFields, evses: Type.Array(EvsePatch) }));
export type LocationPatch = Static<typeof LocationPatch>;
/** LocationPatch as a request body: `last_updated` required (see EvsePatchBody). */
export const LocationPatchBody = Type.Object({ ...LocationPatch.properties, last_updated: DateTime });

export const LocationPath = Type.Object({ country_code: CountryCode, party_id: PartyId, location_id: ObjectId });
export const EvsePath = Type.Object({
  country_code: CountryCode,
  party_id: PartyId,
  location_id: ObjectId,
  evse_uid: ObjectId,
});
export const ConnectorPath = Type.Object({ ...EvsePath.properties, connector_id: ObjectId });
