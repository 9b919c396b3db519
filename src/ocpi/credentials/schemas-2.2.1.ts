import Type, { type Static } from '#typebox';
import { BusinessDetails, CountryCode, PartyId, openEnum } from '../core/schemas.js';
import { titled } from '../../gateway/openapi.js';

/** The OCPI 2.2.1 Credentials object (OCPI 2.2.1 credentials.asciidoc). */

export const CredentialsRole = titled(
  'CredentialsRole',
  Type.Object({
    role: openEnum(['CPO', 'EMSP']),
    party_id: PartyId,
    country_code: CountryCode,
    business_details: BusinessDetails,
  }),
);

export const Credentials = titled(
  'Credentials221',
  Type.Object({
    // CiString(64) in 2.2.1, string(64) in 2.1.1: printable ASCII without whitespace in both (2.2.1
    // transport_and_format: the token is sent as `Authorization: Token <token>`)
    token: Type.String({ minLength: 1, maxLength: 64, pattern: '^[\\x21-\\x7E]+$' }),
    url: Type.String({ minLength: 1, maxLength: 255, description: "URL of the sender's versions endpoint" }),
    roles: Type.Array(CredentialsRole, { minItems: 1 }),
  }),
);
export type Credentials = Static<typeof Credentials>;
