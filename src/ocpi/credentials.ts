import { route, type RouteResult } from '../gateway/route-table.js';
import * as V211 from './2.1.1/schemas.js';
import * as V221 from './2.2.1/schemas.js';
import { hashToken, newToken, type OcpiCaller, type PartnerRole } from './auth.js';
import { Envelope } from './common/schemas.js';
import type { OcpiContext } from './context.js';
import { credentialsMethodNotAllowed, type OcpiVersion } from './envelope.js';
import { assertOwnParty } from './guards.js';
import type { OcpiRequest, OcpiRoute } from './mount-kit.js';

/**
 * The receiving side of the credentials handshake (spec "States and transitions", credentials
 * link). The partner actor does the discovery and the token bookkeeping; this turns HTTP
 * bodies into its messages and its replies into our Credentials object.
 */

export type CredentialsBody =
  { version: '2.2.1'; body: V221.Credentials } | { version: '2.1.1'; body: V211.Credentials };

/** Our Credentials object, in the shape of `version`. */
export function ownCredentials(
  ctx: OcpiContext,
  version: OcpiVersion,
  token: string,
  url: string,
  role: PartnerRole,
): V221.Credentials | V211.Credentials {
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
): Promise<V221.Credentials | V211.Credentials> {
  if (op === 'register' && c.version === '2.2.1') {
    // the roles must name the party Token A was issued to (spec Authentication 5)
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

export interface CredentialsRouteOptions {
  /** POST registers with Token A, PUT rotates a registered link (spec credentials module) */
  method: 'POST' | 'PUT';
  version: OcpiVersion;
  summary: string;
  /** the documented 405: POST once registered, PUT with Token A */
  methodNotAllowed: string;
  /** the path of the versions endpoint our Credentials name */
  ourVersionsPath: string;
  ourRole: (caller: OcpiCaller) => PartnerRole;
}

/** POST or PUT `/credentials` of a mount: the body in the mount's version, then `handshake`. */
export function credentialsRoute(ctx: OcpiContext, o: CredentialsRouteOptions): OcpiRoute {
  const common = {
    method: o.method,
    path: '/credentials',
    module: 'credentials',
    summary: o.summary,
    responses: { 405: o.methodNotAllowed },
  } as const;
  async function answer(req: OcpiRequest, sent: CredentialsBody): Promise<RouteResult> {
    if (o.method === 'PUT' && req.auth.tokenKind === 'initial')
      throw credentialsMethodNotAllowed('not registered yet: initial registration uses POST /credentials');
    const ourVersionsUrl = `${ctx.baseUrl(req.koa)}${o.ourVersionsPath}`;
    return {
      data: await handshake(
        ctx,
        o.method === 'POST' ? 'register' : 'rotate',
        req.auth,
        sent,
        ourVersionsUrl,
        o.ourRole(req.auth),
      ),
    };
  }
  // one route per version, so that each handler's body has its version's type
  return o.version === '2.2.1'
    ? route({
        ...common,
        body: V221.Credentials,
        response: Envelope(V221.Credentials),
        handler: (req) => answer(req, { version: '2.2.1', body: req.body }),
      })
    : route({
        ...common,
        body: V211.Credentials,
        response: Envelope(V211.Credentials),
        handler: (req) => answer(req, { version: '2.1.1', body: req.body }),
      });
}

export async function unregister(ctx: OcpiContext, caller: OcpiCaller, version: OcpiVersion): Promise<void> {
  await ctx.partners.askOcpi(caller.country_code, caller.party_id, { op: 'unregister' }, version);
}
