import Type, { type Static } from '#typebox';
import {
  CountryCode,
  Currency,
  DateTime,
  NonNegative,
  ObjectId,
  PartyId,
  ocpiString,
  openEnum,
} from '../core/schemas.js';
import { Location } from '../locations/schemas-2.1.1.js';
import { titled } from '../../gateway/openapi.js';

/** OCPI 2.1.1 sessions (OCPI 2.1.1 mod_sessions.md). Stored in this shape. */

export const ChargingPeriod = titled(
  'ChargingPeriod211',
  Type.Object({
    start_date_time: DateTime,
    dimensions: Type.Array(Type.Object({ type: openEnum(['ENERGY']), volume: Type.Number() }), { minItems: 1 }),
  }),
);

export const SessionCreate = titled(
  'Session211',
  Type.Object({
    id: ObjectId,
    start_datetime: DateTime,
    end_datetime: Type.Optional(DateTime),
    kwh: NonNegative,
    // string(36), printable ASCII (types.md); in the 2.2.1 view, the CdrToken's uid and contract_id
    auth_id: ObjectId,
    auth_method: openEnum(['AUTH_REQUEST', 'WHITELIST', 'COMMAND']),
    location: Location,
    meter_id: Type.Optional(ocpiString(255)),
    currency: Currency,
    charging_periods: Type.Optional(Type.Array(ChargingPeriod)),
    total_cost: Type.Optional(Type.Number()),
    status: openEnum(['ACTIVE', 'COMPLETED', 'INVALID']),
    last_updated: DateTime,
  }),
);
export type SessionCreate = Static<typeof SessionCreate>;
export const SessionOut = Type.Object({ ...SessionCreate.properties, authorization_id: Type.String() });
/** A stored session: what the partner sent, and the authorization_id we serve (docs/OCPI.md, Decisions 9). */
export type StoredSession = SessionCreate & { authorization_id: string };

export const SessionPath = Type.Object({ country_code: CountryCode, party_id: PartyId, session_id: ObjectId });
/** PATCH: any session field (kwh, status, end_datetime, ...); without `last_updated` it is stamped on receipt. */
export const SessionPatch = Type.Partial(SessionCreate);
