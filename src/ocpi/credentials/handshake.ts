import { hashToken, newToken, type OcpiCaller, type PartnerRole } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import { assertOwnParty } from '../core/guards.js';
import type * as C211 from './schemas-2.1.1.js';
import type * as C221 from './schemas-2.2.1.js';

/**
 * The receiving side of the credentials handshake (docs/OCPI.md "The credentials link"). The
 * partner actor does the discovery and the token bookkeeping; this turns HTTP bodies into its
 * messages and its replies into our Credentials object.
 */

export type CredentialsBody =
  { version: '2.2.1'; body: C221.Credentials } | { version: '2.1.1'; body: C211.Credentials };

/** Our Credentials object, in the shape of `version` (docs/OCPI.md, Decisions 17). */
export function ownCredentials(
  ctx: OcpiContext,
  version: OcpiVersion,
  token: string,
  url: string,
  role: PartnerRole,
): C221.Credentials | C211.Credentials {
  const business_details = { name: ctx.own.business_name };
  if (version === '2.1.1')
    return { token, url, business_details, party_id: ctx.own.party_id, country_code: ctx.own.country_code };
  return {
    token,
    url,
    roles: [{ role, party_id: ctx.own.party_id, country_code: ctx.own.country_code, business_details }],
  };
}

/** The role we play toward a partner: the other one. */
export function ourRoleToward(partnerRole: PartnerRole): PartnerRole {
  return partnerRole === 'CPO' ? 'EMSP' : 'CPO';
}

function businessOf(c: CredentialsBody, caller: OcpiCaller): { name: string; website?: string } | null {
  if (c.version === '2.1.1') return c.body.business_details;
  const mine = c.body.roles.find((r) => r.country_code === caller.country_code && r.party_id === caller.party_id);
  return mine?.business_details ?? null;
}

/**
 * POST /credentials (register, Token A) or PUT /credentials (rotate, current token).
 * Answers our Credentials object with a fresh token for the caller.
 */
export async function handshake(
  ctx: OcpiContext,
  op: 'register' | 'rotate',
  caller: OcpiCaller,
  c: CredentialsBody,
  ourVersionsUrl: string,
  ourRole: PartnerRole,
): Promise<C221.Credentials | C211.Credentials> {
  if (op === 'register' && c.version === '2.2.1') {
    // the roles must name the party Token A was issued to (docs/OCPI.md "The credentials link")
    const named =
      c.body.roles.find((r) => r.country_code === caller.country_code && r.party_id === caller.party_id) ??
      c.body.roles[0];
    if (named) assertOwnParty(caller, named);
  }
  // on PUT the body's country_code and party_id are ignored: the identity stays the token's
  const token = newToken();
  await ctx.partners.askOcpi(
    caller.country_code,
    caller.party_id,
    {
      op,
      caller_hash: caller.tokenHash,
      version: c.version,
      their_token: c.body.token,
      versions_url: c.body.url,
      business_details: businessOf(c, caller),
      new_hash: hashToken(token),
    },
    c.version,
  );
  return ownCredentials(ctx, c.version, token, ourVersionsUrl, ourRole);
}

export async function unregister(ctx: OcpiContext, caller: OcpiCaller, version: OcpiVersion): Promise<void> {
  await ctx.partners.askOcpi(caller.country_code, caller.party_id, { op: 'unregister' }, version);
}
