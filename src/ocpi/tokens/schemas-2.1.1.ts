import Type, { type Static } from '#typebox';
import { CountryCode, DateTime, ObjectId, PartyId, oneOf, openEnum } from '../core/schemas.js';

/**
 * OCPI 2.1.1 tokens (OCPI 2.1.1 mod_tokens.md). Stored in this shape; the overview serves it
 * too (docs/OCPI.md, Decisions 6).
 */

export const TokenType = oneOf(['RFID', 'OTHER']);
export const Whitelist = oneOf(['ALWAYS', 'ALLOWED', 'ALLOWED_OFFLINE', 'NEVER']);

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

export const TokenPath = Type.Object({ country_code: CountryCode, party_id: PartyId, token_uid: ObjectId });
