import {
  hashToken,
  newToken,
  onboardedParty,
  type OcpiCaller,
  type PartnerRole,
  type PartyRole,
} from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import { partyTaken, roleMismatch } from '../core/errors.js';
import { assertOwnParty } from '../core/guards.js';
import { sameParty } from '../core/routing.js';
import type * as C211 from './schemas-2.1.1.js';
import type * as C221 from './schemas-2.2.1.js';

/**
 * The receiving side of the credentials handshake (docs/OCPI.md "The credentials link"). The
 * partner actor does the discovery and the token bookkeeping; this turns HTTP bodies into its
 * messages and its replies into our Credentials object.
 */

export type CredentialsBody =
  { version: '2.2.1'; body: C221.Credentials } | { version: '2.1.1'; body: C211.Credentials };

/**
 * Our Credentials object, in the shape of `version` (docs/OCPI.md, Decisions 17): in 2.2.1 one
 * role per role the versions URL it names serves (a role mount's one; both on the overview, the
 * one toward the caller first).
 */
export function ownCredentials(
  ctx: OcpiContext,
  version: OcpiVersion,
  token: string,
  url: string,
  role: PartnerRole | readonly PartnerRole[],
): C221.Credentials | C211.Credentials {
  const business_details = { name: ctx.own.business_name };
  if (version === '2.1.1')
    return { token, url, business_details, party_id: ctx.own.party_id, country_code: ctx.own.country_code };
  const roles = typeof role === 'string' ? [role] : role;
  return {
    token,
    url,
    roles: roles.map((r) => ({
      role: r,
      party_id: ctx.own.party_id,
      country_code: ctx.own.country_code,
      business_details,
    })),
  };
}

/** The role we play toward a partner: the other one. */
export function ourRoleToward(partnerRole: PartnerRole): PartnerRole {
  return partnerRole === 'CPO' ? 'EMSP' : 'CPO';
}

function businessOf(c: CredentialsBody, caller: OcpiCaller): { name: string; website?: string } | null {
  if (c.version === '2.1.1') return c.body.business_details;
  const own = onboardedParty(caller);
  const mine = c.body.roles.find((r) => r.country_code === own.country_code && r.party_id === own.party_id);
  return mine?.business_details ?? null;
}

/**
 * The CPO and eMSP roles of a 2.2.1 credentials object besides the caller's own party and role
 * (a platform or hub speaks for several; docs/OCPI.md "Platforms and hubs"). Other roles (HUB,
 * NAP, NSP, OTHER) have no module here and are not kept.
 */
export function otherParties(
  roles: ReadonlyArray<{ role: string; country_code: string; party_id: string }>,
  own: PartyRole,
): PartyRole[] {
  const out: PartyRole[] = [];
  for (const r of roles) {
    if (r.role !== 'CPO' && r.role !== 'EMSP') continue;
    const same = r.country_code === own.country_code && r.party_id === own.party_id;
    if (same && r.role === own.role) continue;
    if (out.some((p) => p.country_code === r.country_code && p.party_id === r.party_id && p.role === r.role)) continue;
    out.push({ country_code: r.country_code, party_id: r.party_id, role: r.role });
  }
  return out;
}

/**
 * 2001 when the roles name the onboarded party only in other roles than the one it was onboarded
 * in (docs/OCPI.md "The credentials link"). Roles that do not name the party at all are left to
 * the party check.
 */
function assertOwnRole(
  own: PartyRole,
  roles: ReadonlyArray<{ role: string; country_code: string; party_id: string }>,
): void {
  const named = roles.filter((r) => r.country_code === own.country_code && r.party_id === own.party_id);
  if (named.length === 0 || named.some((r) => r.role === own.role)) return;
  throw roleMismatch(
    own,
    named.map((r) => r.role),
  );
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
  ourRole: PartnerRole | readonly PartnerRole[],
): Promise<C221.Credentials | C211.Credentials> {
  const own = onboardedParty(caller);
  if (op === 'register' && c.version === '2.2.1') {
    // the roles must name the party Token A was issued to (docs/OCPI.md "The credentials link")
    const named =
      c.body.roles.find((r) => r.country_code === own.country_code && r.party_id === own.party_id) ?? c.body.roles[0];
    if (named) assertOwnParty(own, named);
  }
  // and in the role it was onboarded in: an eMSP that calls itself a CPO would be linked as what
  // it says it is not
  if (op === 'register' && c.version === '2.2.1') assertOwnRole(own, c.body.roles);
  // so must a 2.1.1 registration's party (Authentication 5), in any letter case (CiString, as
  // when we register with a 2.1.1 partner); a rotation's is ignored (the state table)
  if (op === 'register' && c.version === '2.1.1' && !sameParty(own, c.body))
    assertOwnParty(own, { country_code: c.body.country_code, party_id: c.body.party_id });
  // on PUT the identity stays the token's; the other parties are what the body lists now
  // the link speaks for the listed parties the operator allowed, and no others
  const claimed = c.version === '2.2.1' ? otherParties(c.body.roles, own) : [];
  const { granted: parties, taken } = await ctx.partners.granted(
    own.country_code,
    own.party_id,
    caller.partnerId,
    claimed,
  );
  if (taken) throw partyTaken(taken);
  const token = newToken();
  await ctx.partners.askOcpi(
    own.country_code,
    own.party_id,
    {
      op,
      caller_hash: caller.tokenHash,
      version: c.version,
      their_token: c.body.token,
      versions_url: c.body.url,
      business_details: businessOf(c, caller),
      new_hash: hashToken(token),
      parties,
    },
    c.version,
  );
  return ownCredentials(ctx, c.version, token, ourVersionsUrl, ourRole);
}

export async function unregister(ctx: OcpiContext, caller: OcpiCaller, version: OcpiVersion): Promise<void> {
  const own = onboardedParty(caller);
  await ctx.partners.askOcpi(own.country_code, own.party_id, { op: 'unregister' }, version);
}
