import Type, { type Static } from '#typebox';
import {
  CountryCode,
  Currency,
  DateTime,
  NonNegative,
  ObjectId,
  PartyId,
  ocpiString,
  oneOf,
  openEnum,
} from '../core/schemas.js';
import { Price } from '../tariffs/schemas-2.2.1.js';
import { TokenType } from '../tokens/schemas-2.2.1.js';
import { titled } from '../../gateway/openapi.js';

/**
 * OCPI 2.2.1 sessions (OCPI 2.2.1 mod_sessions.asciidoc), and the types the CDRs module shares
 * with them (CdrToken, ChargingPeriod, AuthMethod).
 */

export const CdrToken = titled(
  'CdrToken',
  Type.Object({
    country_code: CountryCode,
    party_id: PartyId,
    uid: ObjectId,
    type: TokenType,
    contract_id: ObjectId,
  }),
);
export type CdrToken = Static<typeof CdrToken>;

export const AuthMethod = oneOf(['AUTH_REQUEST', 'COMMAND', 'WHITELIST']);

export const CdrDimension = titled(
  'CdrDimension',
  Type.Object({
    type: openEnum(['ENERGY', 'TIME', 'PARKING_TIME', 'MAX_POWER', 'STATE_OF_CHARGE']),
    volume: Type.Number(),
  }),
);

export const ChargingPeriod = titled(
  'ChargingPeriod221',
  Type.Object({
    start_date_time: DateTime,
    dimensions: Type.Array(CdrDimension, { minItems: 1 }),
    tariff_id: Type.Optional(ObjectId),
  }),
);

const sessionFields = {
  country_code: CountryCode,
  party_id: PartyId,
  id: ObjectId,
  start_date_time: DateTime,
  end_date_time: Type.Optional(DateTime),
  kwh: NonNegative,
  cdr_token: CdrToken,
  auth_method: AuthMethod,
  authorization_reference: Type.Optional(ObjectId),
  location_id: ObjectId,
  evse_uid: ObjectId,
  connector_id: ObjectId,
  meter_id: Type.Optional(ocpiString(255)),
  currency: Currency,
  charging_periods: Type.Optional(Type.Array(ChargingPeriod)),
  total_cost: Type.Optional(Price),
  status: oneOf(['ACTIVE', 'COMPLETED', 'INVALID', 'PENDING', 'RESERVATION']),
  last_updated: DateTime,
};

export const Session = titled('Session221', Type.Object(sessionFields));
export type Session = Static<typeof Session>;

/** PATCH: any Session field; `last_updated` is required. */
export const SessionPatch = Type.Object({
  ...Type.Partial(Type.Object(sessionFields)).properties,
  last_updated: DateTime,
});
export type SessionPatch = Static<typeof SessionPatch>;

export const SessionPath = Type.Object({ country_code: CountryCode, party_id: PartyId, session_id: ObjectId });

export const ChargingPreferences = Type.Object({
  profile_type: oneOf(['CHEAP', 'FAST', 'GREEN', 'REGULAR']),
  departure_time: Type.Optional(DateTime),
  energy_need: Type.Optional(NonNegative),
  discharge_allowed: Type.Optional(Type.Boolean()),
});

export const ChargingPreferencesResponse = oneOf([
  'ACCEPTED',
  'DEPARTURE_REQUIRED',
  'ENERGY_NEED_REQUIRED',
  'NOT_POSSIBLE',
  'PROFILE_TYPE_NOT_SUPPORTED',
]);
