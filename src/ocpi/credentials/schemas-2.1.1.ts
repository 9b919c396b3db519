import Type, { type Static } from '#typebox';
import { BusinessDetails, CredentialsToken } from '../core/schemas.js';
import { titled } from '../../gateway/openapi.js';

/** The OCPI 2.1.1 Credentials object (OCPI 2.1.1 credentials.md). */
export const Credentials = titled(
  'Credentials211',
  Type.Object({
    token: CredentialsToken,
    url: Type.String({ minLength: 1, maxLength: 255, description: 'versions endpoint URL' }),
    business_details: BusinessDetails,
    party_id: Type.String({ minLength: 3, maxLength: 3 }),
    country_code: Type.String({ minLength: 2, maxLength: 2 }),
  }),
);
export type Credentials = Static<typeof Credentials>;
