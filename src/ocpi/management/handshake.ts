import { compileLazily } from '../../lazy-compile.js';
import type { PartnerMessage } from '../../../actors/partner/protocol.js';
import { HttpError } from '../../gateway/errors.js';
import { hashToken, newToken, type PartnerRole, type PartyRole } from '../core/auth.js';
import { endpointOf, PartnerCallError, SUPPORTED_VERSIONS, type Discovery } from '../client/partner-client.js';
import type { OcpiContext } from '../core/context.js';
import { sameParty } from '../core/routing.js';
import type { OcpiVersion } from '../core/envelope.js';
import type { PartnerRow, PartnerView } from '../core/partners.js';
import { otherParties, ourRoleToward, ownCredentials } from '../credentials/handshake.js';
import * as C211 from '../credentials/schemas-2.1.1.js';
import * as C221 from '../credentials/schemas-2.2.1.js';

/**
 * Our side of a credentials handshake with a partner that onboarded us, and of a rotation
 * (docs/OCPI.md "The credentials link", outbound). A failed call to the partner answers 502.
 */

const checkCredentials221 = compileLazily(C221.Credentials);
const checkCredentials211 = compileLazily(C211.Credentials);

type OutboundLink = Omit<Extract<PartnerMessage, { op: 'complete-outbound' }>, 'op'>;

/** The versions URL we hand a partner: that of the role we play toward it. */
export function ourVersionsUrl(origin: string, partnerRole: PartnerRole): string {
  return `${origin}/ocpi/${ourRoleToward(partnerRole) === 'CPO' ? 'cpo' : 'emsp'}/versions`;
}

/**
 * A failed call to a partner: 502 with the failure's category (and `more` details, such as the
 * uid of a command kept all the same); what exactly failed goes to our log only.
 */
export function badGateway(ctx: OcpiContext, err: unknown, more: Record<string, unknown> = {}): never {
  if (err instanceof PartnerCallError) {
    ctx.services.log.warn({ partnerCall: err.toLog() }, 'partner call failed');
    throw new HttpError(502, 'partner_call_failed', err.operatorMessage(), {
      ocpi_status_code: err.code,
      ...(err.partnerStatusCode === undefined ? {} : { partner_status_code: err.partnerStatusCode }),
      ...more,
    });
  }
  throw err;
}

/** The partner's link as the actor has it, when it is registered (409 otherwise). */
export async function registeredLink(
  ctx: OcpiContext,
  partner: PartnerRow,
): Promise<{ partner: PartnerView; theirToken: string }> {
  const state = await ctx.partners.ask(partner.country_code, partner.party_id, { op: 'get' });
  if (!state.ok || state.partner.status !== 'registered' || !state.their_token)
    throw new HttpError(409, 'not_registered', 'the partner is not registered');
  return { partner: state.partner, theirToken: state.their_token };
}

/**
 * Their credentials object, in either version's shape; `parties`: the other CPO and eMSP roles it
 * lists. A registration's must name the party and role the partner was onboarded as; a rotation's
 * party is not checked, as on our side (the partner has already switched to our new token).
 */
function theirCredentials(
  data: unknown,
  partner: PartnerRow,
  op: 'register' | 'rotate',
): {
  token: string;
  url: string;
  business: { name: string; website?: string } | null;
  parties: PartyRole[];
} {
  if (checkCredentials221.Check(data)) {
    const own = data.roles.find((r) => sameParty(r, partner) && r.role === partner.role);
    if (!own && op === 'register') throw notTheOnboardedParty(partner, data.roles);
    return {
      token: data.token,
      url: data.url,
      business: (own ?? data.roles[0])?.business_details ?? null,
      parties: otherParties(data.roles, partner),
    };
  }
  if (checkCredentials211.Check(data)) {
    if (op === 'register' && !sameParty(data, partner))
      throw notTheOnboardedParty(partner, [{ ...data, role: partner.role }]);
    return { token: data.token, url: data.url, business: data.business_details, parties: [] };
  }
  throw new PartnerCallError(3001, 'unexpected data', {
    message: 'the partner answered without a valid credentials object',
  });
}

/**
 * A partner whose credentials do not name the party (and role) it was onboarded as: no link is
 * made, as a registration with us whose roles name another party is 2001 (docs/OCPI.md "The
 * credentials link"). Before, the link was made under the onboarded party all the same.
 */
function notTheOnboardedParty(
  partner: PartnerRow,
  roles: ReadonlyArray<{ role: string; country_code: string; party_id: string }>,
): PartnerCallError {
  const named = roles.map((r) => `${r.country_code}-${r.party_id} (${r.role})`).join(', ');
  return new PartnerCallError(3001, 'unexpected data', {
    message: `the partner's credentials name ${named || 'no party'}, not ${partner.country_code}-${partner.party_id} (${partner.role}) it was onboarded as`,
  });
}

/**
 * An outbound credentials exchange: a pending token of ours goes first (the partner may use
 * it while it answers), then `exchange`; on failure the pending token is withdrawn, and a
 * failed call to the partner answers 502.
 */
async function withPendingToken<R>(
  ctx: OcpiContext,
  partner: PartnerRow,
  exchange: (ours: string, pendingHash: string) => Promise<R>,
): Promise<R> {
  const ours = newToken();
  const pending = hashToken(ours);
  await ctx.partners.ask(partner.country_code, partner.party_id, { op: 'prepare-outbound', pending_hash: pending });
  try {
    return await exchange(ours, pending);
  } catch (err) {
    await ctx.partners.ask(partner.country_code, partner.party_id, { op: 'abort-outbound', pending_hash: pending });
    return badGateway(ctx, err);
  }
}

/** The end of an outbound exchange: the partner actor records the link, our pending token becomes current. */
async function completeOutbound(ctx: OcpiContext, partner: PartnerRow, link: OutboundLink): Promise<PartnerView> {
  const { granted, taken } = await ctx.partners.granted(
    partner.country_code,
    partner.party_id,
    partner.id,
    link.parties ?? [],
  );
  if (taken)
    throw new HttpError(
      409,
      'party_of_another_partner',
      `the partner's credentials list ${taken.country_code}-${taken.party_id} (${taken.role}), a party of another partner`,
    );
  const reply = await ctx.partners.ask(partner.country_code, partner.party_id, {
    op: 'complete-outbound',
    ...link,
    ...(link.parties ? { parties: granted } : {}),
  });
  if (!reply.ok) throw new HttpError(409, 'handshake_superseded', reply.message);
  return reply.partner;
}

/**
 * Discovery of a partner's versions URL with `token` (its Token A, or the token of the link):
 * in the form of `first` (base64 for 2.2.1), then in the other form only when the partner
 * answered and refused (a 2.1.1-only partner expects the raw token; a timeout or a refused
 * destination would fail twice; docs/OCPI.md "Outbound calls").
 */
async function discoverPartner(
  ctx: OcpiContext,
  versionsUrl: string,
  token: string,
  first: OcpiVersion = '2.2.1',
  /** the version the operator asked the link to take (else the highest both list) */
  use?: OcpiVersion,
): Promise<Discovery> {
  const why = `asked for ${use ?? ''}`;
  try {
    return await ctx.client.discover(versionsUrl, token, first, use, why);
  } catch (err) {
    if (!(err instanceof PartnerCallError) || !(err.reason === 'error answer' || err.reason === 'not an OCPI envelope'))
      throw err;
    return ctx.client.discover(versionsUrl, token, first === '2.2.1' ? '2.1.1' : '2.2.1', use, why);
  }
}

/**
 * Our side of a handshake with a partner that gave us `token` (their Token A) and its versions
 * URL: discovery (the partner discovers us with our pending token while answering), POST
 * /credentials, and the partner actor records the link. `origin`: where partners reach us.
 */
export async function registerWith(
  ctx: OcpiContext,
  origin: string,
  partner: PartnerRow,
  body: { versions_url: string; token: string; version?: OcpiVersion | undefined },
): Promise<PartnerView> {
  return withPendingToken(ctx, partner, async (ours, pending) => {
    const discovery = await discoverPartner(ctx, body.versions_url, body.token, body.version, body.version);
    const endpoint = endpointOf(discovery.endpoints, 'credentials');
    if (!endpoint)
      throw new PartnerCallError(3001, 'unexpected data', { message: 'the partner lists no credentials endpoint' });
    const { version } = endpoint;
    const role = ourRoleToward(partner.role);
    const sent = ownCredentials(ctx, version, ours, ourVersionsUrl(origin, partner.role), role);
    const answer = await ctx.client.data('POST', endpoint.url, body.token, version, sent);
    const theirs = theirCredentials(answer.envelope.data, partner, 'register');
    return completeOutbound(ctx, partner, {
      pending_hash: pending,
      their_token: theirs.token,
      versions_url: theirs.url,
      version: discovery.version,
      endpoints: discovery.endpoints,
      business_details: theirs.business,
      parties: theirs.parties,
    });
  });
}

/**
 * PUT of our Credentials (with our new token `ours`) to the partner's credentials endpoints, the
 * highest version first: PUT exists on some mounts only (the eMSP side offers it in 2.1.1), a 405
 * moves to the next version. The partner's answer and the version that took it (the link's
 * version from then on: "a PUT will switch to the version that contains this credentials endpoint").
 */
async function putCredentials(
  ctx: OcpiContext,
  partner: PartnerRow,
  target: { endpoints: PartnerView['endpoints']; theirToken: string },
  ours: string,
  origin: string,
): Promise<{ data: unknown; version: OcpiVersion }> {
  for (const v of SUPPORTED_VERSIONS) {
    const endpoint = target.endpoints.find((e) => e.version === v && e.identifier === 'credentials');
    if (!endpoint) continue;
    const sent = ownCredentials(ctx, v, ours, ourVersionsUrl(origin, partner.role), ourRoleToward(partner.role));
    try {
      const answer = await ctx.client.data('PUT', endpoint.url, target.theirToken, v, sent);
      return { data: answer.envelope.data, version: v };
    } catch (err) {
      if (err instanceof PartnerCallError && err.httpStatus === 405) continue;
      throw err;
    }
  }
  throw new PartnerCallError(3001, 'error answer', { message: 'no credentials endpoint of the partner accepts PUT' });
}

/**
 * Our side of a rotation: the partner's versions and endpoints read again with the token it gave
 * us (as before a registration: a partner may have added a version or moved its endpoints since
 * the link was made), a new token of ours, PUT /credentials of the highest shared version, the
 * partner's new token; the link takes the version the PUT went to and the endpoints just read.
 * A failed read changes nothing (502, our old token still works).
 */
export async function rotateWith(
  ctx: OcpiContext,
  origin: string,
  partner: PartnerRow,
): Promise<PartnerView & { rotated_with_version: OcpiVersion }> {
  const link = await registeredLink(ctx, partner);
  const current = link.partner;
  return withPendingToken(ctx, partner, async (ours, pending) => {
    const discovery = current.versions_url
      ? await discoverPartner(ctx, current.versions_url, link.theirToken, current.version ?? '2.2.1')
      : undefined;
    const endpoints = discovery?.endpoints ?? current.endpoints;
    const answer = await putCredentials(ctx, partner, { endpoints, theirToken: link.theirToken }, ours, origin);
    const theirs = theirCredentials(answer.data, partner, 'rotate');
    const linked = await completeOutbound(ctx, partner, {
      pending_hash: pending,
      their_token: theirs.token,
      versions_url: theirs.url,
      version: answer.version,
      endpoints,
      business_details: theirs.business ?? current.business_details,
      ...(answer.version === '2.2.1' ? { parties: theirs.parties } : {}),
    });
    return { ...linked, rotated_with_version: answer.version };
  });
}

/**
 * Ends the link from our side: DELETE of the partner's credentials endpoint (the version of the
 * link first) with its token, then every token of ours for it stops working and the partner is
 * `unregistered`. A failed call answers 502 and keeps the link (the operator may retry), unless
 * `force`: a partner gone for good is never told, and its tokens must stop authorizing charges
 * and its sessions and CDRs stop being queued all the same.
 */
export async function unregisterWith(ctx: OcpiContext, partner: PartnerRow, force = false): Promise<PartnerView> {
  const link = await registeredLink(ctx, partner);
  const name = `${partner.country_code}-${partner.party_id}`;
  try {
    await tellUnregistered(ctx, link);
  } catch (err) {
    const untold =
      err instanceof PartnerCallError || (err instanceof HttpError && err.code === 'no_credentials_endpoint');
    if (!force || !untold) return badGateway(ctx, err);
    const why = err instanceof PartnerCallError ? err.toLog() : { message: err.message };
    ctx.services.log.warn({ partner: name, partnerCall: why }, 'link ended by us; the partner could not be told');
  }
  const reply = await ctx.partners.ask(partner.country_code, partner.party_id, { op: 'unregister' });
  if (!reply.ok) throw new HttpError(409, 'not_registered', reply.message);
  ctx.services.log.info({ partner: name }, 'link ended by us');
  return reply.partner;
}

/** DELETE of the partner's credentials: throws the 409 or the PartnerCallError of a call that failed. */
async function tellUnregistered(ctx: OcpiContext, link: Awaited<ReturnType<typeof registeredLink>>): Promise<void> {
  const order = [link.partner.version, ...SUPPORTED_VERSIONS].filter(
    (v): v is OcpiVersion => v === '2.1.1' || v === '2.2.1',
  );
  const endpoint = order
    .map((v) => link.partner.endpoints.find((e) => e.version === v && e.identifier === 'credentials'))
    .find((e) => e !== undefined);
  if (!endpoint) throw new HttpError(409, 'no_credentials_endpoint', 'the partner lists no credentials endpoint');
  const version = endpoint.version === '2.1.1' ? '2.1.1' : '2.2.1';
  await ctx.client.data('DELETE', endpoint.url, link.theirToken, version);
}
