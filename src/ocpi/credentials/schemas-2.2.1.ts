import Type, { type Static } from '#typebox';
import { BusinessDetails, CountryCode, PartyId, openEnum } from '../core/schemas.js';

/** The OCPI 2.2.1 Credentials object (OCPI 2.2.1 credentials.asciidoc). */

export const CredentialsRole = Type.Object({
  role: openEnum(['CPO', 'EMSP']),
  party_id: PartyId,
  country_code: CountryCode,
  business_details: BusinessDetails,
});

export const Credentials = Type.Object({
  token: Type.String({ minLength: 1, maxLength: 64 }),
  url: Type.String({ minLength: 1, description: "URL of the sender's versions endpoint" }),
  roles: Type.Array(CredentialsRole, { minItems: 1 }),
});
export type Credentials = Static<typeof Credentials>;
