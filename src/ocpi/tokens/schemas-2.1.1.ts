import Type, { type Static } from '#typebox';
import {
  CountryCode,
  DateTime,
  Language,
  ObjectId,
  ObjectId39,
  PartyId,
  ocpiString,
  oneOf,
  openEnum,
} from '../core/schemas.js';
import { titled } from '../../gateway/openapi.js';

/**
 * OCPI 2.1.1 tokens (OCPI 2.1.1 mod_tokens.md). Stored in this shape; the overview serves it
 * too (docs/OCPI.md, Decisions 6).
 */

export const TokenType = oneOf(['RFID', 'OTHER']);
export const Whitelist = oneOf(['ALWAYS', 'ALLOWED', 'ALLOWED_OFFLINE', 'NEVER']);

export const Token = titled(
  'Token211',
  Type.Object({
    uid: ObjectId,
    type: TokenType,
    // string(36), printable ASCII (types.md); stored as the 2.2.1 contract_id
    auth_id: ObjectId,
    visual_number: Type.Optional(ocpiString(64)),
    issuer: ocpiString(64),
    valid: Type.Boolean(),
    whitelist: Whitelist,
    language: Type.Optional(Language),
    last_updated: DateTime,
  }),
);
export type Token = Static<typeof Token>;

export const TokenPatch = Type.Object({
  type: Type.Optional(TokenType),
  auth_id: Type.Optional(ObjectId),
  visual_number: Type.Optional(ocpiString(64)),
  issuer: Type.Optional(ocpiString(64)),
  valid: Type.Optional(Type.Boolean()),
  whitelist: Type.Optional(Whitelist),
  language: Type.Optional(Language),
  last_updated: Type.Optional(DateTime),
});
export type TokenPatch = Static<typeof TokenPatch>;

export const LocationReferences = titled(
  'LocationReferences211',
  Type.Object({
    location_id: ObjectId39,
    // string(39) and string(36) ids (mod_locations.md)
    evse_uids: Type.Optional(Type.Array(ObjectId39)),
    connector_ids: Type.Optional(Type.Array(ObjectId)),
  }),
);
export type LocationReferences = Static<typeof LocationReferences>;

export const AuthorizationInfo = titled(
  'AuthorizationInfo211',
  Type.Object({
    allowed: openEnum(['ALLOWED']),
    location: Type.Optional(LocationReferences),
  }),
);

export const TokenPath = Type.Object({ country_code: CountryCode, party_id: PartyId, token_uid: ObjectId });
