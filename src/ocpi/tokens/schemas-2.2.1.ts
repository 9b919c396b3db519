import Type, { type Static } from '#typebox';
import { CountryCode, DateTime, DisplayText, Language, ObjectId, PartyId, oneOf, ocpiString } from '../core/schemas.js';
import { Whitelist } from './schemas-2.1.1.js';
import { titled } from '../../gateway/openapi.js';

/**
 * OCPI 2.2.1 tokens (OCPI 2.2.1 mod_tokens.asciidoc). Tokens are stored in this shape, whichever
 * version they came in (docs/OCPI.md "Storage"); the 2.1.1 interfaces convert (`mappers.ts`).
 */

export const TokenType = oneOf(['AD_HOC_USER', 'APP_USER', 'OTHER', 'RFID']);
export type TokenType = Static<typeof TokenType>;

export const EnergyContract = titled(
  'EnergyContract',
  Type.Object({
    supplier_name: ocpiString(64),
    contract_id: Type.Optional(ocpiString(64)),
  }),
);

const tokenFields = {
  country_code: CountryCode,
  party_id: PartyId,
  uid: ObjectId,
  type: TokenType,
  contract_id: ObjectId,
  visual_number: Type.Optional(ocpiString(64)),
  issuer: ocpiString(64),
  group_id: Type.Optional(ObjectId),
  valid: Type.Boolean(),
  whitelist: Whitelist,
  language: Type.Optional(Language),
  default_profile_type: Type.Optional(oneOf(['CHEAP', 'FAST', 'GREEN', 'REGULAR'])),
  energy_contract: Type.Optional(EnergyContract),
  last_updated: DateTime,
};

export const Token = titled('Token221', Type.Object(tokenFields));
export type Token = Static<typeof Token>;

/** PATCH: any Token field; `last_updated` is required (OCPI 2.2.1 transport: every PATCH carries it). */
export const TokenPatch = Type.Object({ ...Type.Partial(Type.Object(tokenFields)).properties, last_updated: DateTime });
export type TokenPatch = Static<typeof TokenPatch>;

/** `?type=` of the Receiver's and the authorize paths: the token's type, RFID when absent. */
export const TokenTypeQuery = Type.Object({ type: Type.Optional(TokenType) });

export const TokenPath = Type.Object({ country_code: CountryCode, party_id: PartyId, token_uid: ObjectId });

export const LocationReferences = titled(
  'LocationReferences221',
  Type.Object({
    location_id: ObjectId,
    evse_uids: Type.Optional(Type.Array(ObjectId)),
  }),
);
export type LocationReferences = Static<typeof LocationReferences>;

export const AllowedType = oneOf(['ALLOWED', 'BLOCKED', 'EXPIRED', 'NO_CREDIT', 'NOT_ALLOWED']);

export const AuthorizationInfo = titled(
  'AuthorizationInfo221',
  Type.Object({
    allowed: AllowedType,
    token: Token,
    location: Type.Optional(LocationReferences),
    authorization_reference: Type.Optional(ObjectId),
    info: Type.Optional(DisplayText),
  }),
);
