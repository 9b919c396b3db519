import Type, { type Static } from 'typebox';
import {
  BusinessDetails,
  ConnectorFormat,
  ConnectorStandard,
  CountryCode,
  DateTime,
  DisplayText,
  EnergyMix,
  Facility,
  GeoLocation,
  Hours,
  ObjectId,
  OpenObject,
  PartyId,
  PowerType,
  Whitelist,
  evseWith,
  oneOf,
  openEnum,
} from '../common/schemas.js';

/** OCPI 2.1.1 shapes (spec "Resources and their fields"). */

export const Connector = Type.Object({
  id: ObjectId,
  standard: ConnectorStandard,
  format: ConnectorFormat,
  power_type: PowerType,
  voltage: Type.Integer(),
  amperage: Type.Integer(),
  tariff_id: Type.Optional(Type.String()),
  terms_and_conditions: Type.Optional(Type.String()),
  last_updated: DateTime,
});
export type Connector = Static<typeof Connector>;
export const ConnectorPatch = Type.Partial(Connector);
export type ConnectorPatch = Static<typeof ConnectorPatch>;
/** ConnectorPatch as a request body: `last_updated` is what orders updates, so it is required. */
export const ConnectorPatchBody = Type.Object({ ...ConnectorPatch.properties, last_updated: DateTime });

export const Evse = evseWith(Connector);
export type Evse = Static<typeof Evse>;

const LocationType = openEnum(['ON_STREET']);

/** The 2.1.1 Location (LocationOut of the CPO 2.1.1 list; nested in SessionCreate). */
export const Location = Type.Object({
  id: ObjectId,
  type: LocationType,
  name: Type.Optional(Type.String()),
  address: Type.String(),
  city: Type.String(),
  postal_code: Type.Optional(Type.String()),
  country: Type.String(),
  coordinates: GeoLocation,
  related_locations: Type.Optional(Type.Array(OpenObject)),
  evses: Type.Optional(Type.Array(Evse)),
  directions: Type.Optional(Type.Array(DisplayText)),
  operator: Type.Optional(BusinessDetails),
  suboperator: Type.Optional(BusinessDetails),
  owner: Type.Optional(BusinessDetails),
  facilities: Type.Optional(Type.Array(Facility)),
  time_zone: Type.Optional(Type.String()),
  opening_times: Type.Optional(Hours),
  charging_when_closed: Type.Optional(Type.Boolean()),
  images: Type.Optional(Type.Array(OpenObject)),
  energy_mix: Type.Optional(EnergyMix),
  last_updated: DateTime,
});
export type Location = Static<typeof Location>;

export const TokenType = oneOf(['RFID', 'OTHER']);

export const Token = Type.Object({
  uid: ObjectId,
  type: TokenType,
  auth_id: Type.String(),
  visual_number: Type.Optional(Type.String()),
  issuer: Type.String(),
  valid: Type.Boolean(),
  whitelist: Whitelist,
  language: Type.Optional(Type.String()),
  last_updated: DateTime,
});
export type Token = Static<typeof Token>;

export const TokenPatch = Type.Object({
  type: Type.Optional(TokenType),
  auth_id: Type.Optional(Type.String()),
  visual_number: Type.Optional(Type.String()),
  issuer: Type.Optional(Type.String()),
  valid: Type.Optional(Type.Boolean()),
  whitelist: Type.Optional(Whitelist),
  language: Type.Optional(Type.String()),
  last_updated: Type.Optional(DateTime),
});
export type TokenPatch = Static<typeof TokenPatch>;

export const LocationReferences = Type.Object({
  location_id: ObjectId,
  evse_uids: Type.Optional(Type.Array(Type.String())),
  connector_ids: Type.Optional(Type.Array(Type.String())),
});
export type LocationReferences = Static<typeof LocationReferences>;

export const AuthorizationInfo = Type.Object({
  allowed: openEnum(['ALLOWED']),
  location: Type.Optional(LocationReferences),
});

export const ChargingPeriod = Type.Object({
  start_date_time: DateTime,
  dimensions: Type.Array(Type.Object({ type: openEnum(['ENERGY']), volume: Type.Number() })),
});

export const SessionCreate = Type.Object({
  id: ObjectId,
  start_datetime: DateTime,
  end_datetime: Type.Optional(DateTime),
  kwh: Type.Number(),
  auth_id: Type.String(),
  auth_method: openEnum(['AUTH_REQUEST', 'WHITELIST', 'COMMAND']),
  location: Location,
  meter_id: Type.Optional(Type.String()),
  currency: Type.String(),
  charging_periods: Type.Optional(Type.Array(ChargingPeriod)),
  total_cost: Type.Optional(Type.Number()),
  status: openEnum(['ACTIVE', 'COMPLETED', 'INVALID']),
  last_updated: DateTime,
});
export type SessionCreate = Static<typeof SessionCreate>;
export const SessionOut = Type.Object({ ...SessionCreate.properties, authorization_id: Type.String() });

export const PriceComponent = Type.Object({
  type: openEnum(['TIME', 'ENERGY']),
  price: Type.Number(),
  step_size: Type.Integer(),
});
export const Tariff = Type.Object({
  id: ObjectId,
  currency: Type.String(),
  tariff_alt_text: Type.Optional(Type.Array(DisplayText)),
  tariff_alt_url: Type.Optional(Type.String()),
  elements: Type.Array(
    Type.Object({ price_components: Type.Array(PriceComponent), restrictions: Type.Optional(OpenObject) }),
  ),
  energy_mix: Type.Optional(EnergyMix),
  last_updated: DateTime,
});
export type Tariff = Static<typeof Tariff>;

export const Credentials = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 64 }),
  url: Type.String({ minLength: 1, description: 'versions endpoint URL' }),
  business_details: BusinessDetails,
  party_id: Type.String({ minLength: 3, maxLength: 3 }),
  country_code: Type.String({ minLength: 2, maxLength: 2 }),
});
export type Credentials = Static<typeof Credentials>;

export const Endpoint = Type.Object({ identifier: Type.String(), url: Type.String() });
export const VersionDetail = Type.Object({ version: Type.String(), endpoints: Type.Array(Endpoint) });

export const EvsePath = Type.Object({
  country_code: CountryCode,
  party_id: PartyId,
  location_id: ObjectId,
  evse_uid: ObjectId,
});
export const ConnectorPath = Type.Object({ ...EvsePath.properties, connector_id: ObjectId });
export const TokenPath = Type.Object({ country_code: CountryCode, party_id: PartyId, token_uid: ObjectId });
export const SessionPath = Type.Object({ country_code: CountryCode, party_id: PartyId, session_id: ObjectId });
export const TariffPath = Type.Object({ country_code: CountryCode, party_id: PartyId, tariff_id: ObjectId });
