import Type, { type Static } from '#typebox';
import { BusinessDetails, CountryCode, CredentialsToken, PartyId, openEnum } from '../core/schemas.js';
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
    token: CredentialsToken,
    url: Type.String({ minLength: 1, maxLength: 255, description: "URL of the sender's versions endpoint" }),
    roles: Type.Array(CredentialsRole, { minItems: 1 }),
  }),
);
export type Credentials = Static<typeof Credentials>;
