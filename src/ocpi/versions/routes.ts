import Type, { type TSchema } from '#typebox';
import { route } from '../../gateway/route-table.js';
import { guardedAuth } from '../../gateway/auth-failures.js';
import type { PartnerRole } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import { unknownVersion } from '../core/errors.js';
import { ourRoleToward } from '../credentials/handshake.js';
import { partnerRoleOf, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope, OpenObject } from '../core/schemas.js';
import { VersionList } from './schemas.js';

/**
 * The versions module: the version lists a partner starts from, and the version details of
 * each mount, generated from the mount's route table (docs/OCPI.md, Decisions 6, 7 and 16).
 */

/** The versions we serve, each with the URL of its details under `base`. */
function versionsUnder(base: string): Array<{ version: OcpiVersion; url: string }> {
  return [
    { version: '2.1.1', url: `${base}/2.1.1` },
    { version: '2.2.1', url: `${base}/2.2.1` },
  ];
}

export interface VersionListRouteOptions {
  summary: string;
  /** the overview's list needs no token (docs/OCPI.md "Mounts") */
  auth?: false;
  /** where the version details are, given the origin partners reach us at */
  detailsBase: (origin: string) => string;
}

/** GET `/versions`: the versions we serve and the URLs of their details. */
export function versionListRoute(ctx: OcpiContext, o: VersionListRouteOptions): OcpiRoute {
  return route({
    method: 'GET',
    path: '/versions',
    ...(o.auth === false ? { auth: false } : {}),
    summary: o.summary,
    response: Envelope(VersionList),
    handler: (req) => ({ data: versionsUnder(o.detailsBase(ctx.baseUrl(req.koa))) }),
  });
}

/**
 * Who sends and who receives a module's objects on a mount of `role` (OCPI 2.2.1 InterfaceRole):
 * the CPO sends locations, sessions, CDRs and tariffs and receives tokens and commands; the eMSP
 * the other way round. Credentials are listed as SENDER (docs/OCPI.md, Decisions 7).
 */
function interfaceRole(role: PartnerRole, module: string): 'SENDER' | 'RECEIVER' {
  if (module === 'credentials') return 'SENDER';
  const cpoReceives = module === 'tokens' || module === 'commands';
  return (role === 'CPO') === cpoReceives ? 'RECEIVER' : 'SENDER';
}

/** The version-details endpoint list, generated from a mount's route table. */
export function endpointsOf(
  routes: readonly OcpiRoute[],
  version: OcpiVersion,
  role: PartnerRole,
  baseUrl: string,
  prefix: string,
) {
  // a route only for partners of one role is our side toward them (the overview serves both)
  const seen = new Set<string>();
  const endpoints: Array<{ identifier: string; role?: 'SENDER' | 'RECEIVER'; url: string }> = [];
  for (const r of routes) {
    if (!r.module) continue;
    const partnerRole = partnerRoleOf(r);
    const ours = partnerRole ? ourRoleToward(partnerRole) : role;
    const interfaceSide = interfaceRole(ours, r.module);
    const key = version === '2.2.1' ? `${r.module} ${interfaceSide}` : r.module;
    if (seen.has(key)) continue;
    seen.add(key);
    const url = `${baseUrl}${prefix}/${r.module}`;
    endpoints.push(
      version === '2.2.1' ? { identifier: r.module, role: interfaceSide, url } : { identifier: r.module, url },
    );
  }
  return endpoints;
}

export interface VersionDetailsRouteOptions {
  /** the mount's route table, which the answer lists by module */
  routes: readonly OcpiRoute[];
  version: OcpiVersion;
  role: PartnerRole;
  prefix: string;
  summary: string;
  /** the version's VersionDetail schema, for the OpenAPI document */
  detail: TSchema;
}

/** GET `/` of a role mount: its version details (docs/OCPI.md, Decisions 7). */
export function versionDetailsRoute(ctx: OcpiContext, o: VersionDetailsRouteOptions): OcpiRoute {
  return {
    method: 'GET',
    path: '/',
    summary: o.summary,
    operationId: 'getVersionDetails',
    response: Envelope(o.detail),
    handler: (req) => ({
      data: { version: o.version, endpoints: endpointsOf(o.routes, o.version, o.role, ctx.baseUrl(req.koa), o.prefix) },
    }),
  };
}

/** The routes of a mount, as a version's details list them. */
export interface ListedMount {
  role: PartnerRole;
  prefix: string;
  routes: readonly OcpiRoute[];
}

/**
 * GET `/versions/{version}` of the overview: 2.2.1 lists the overview's own endpoints, 2.1.1
 * (which has no overview) those of the 2.1.1 role mounts (docs/OCPI.md, Decisions 4 and 6). 2.1.1
 * endpoints carry no role, so a caller whose token we know gets only the mount that serves its
 * role; without one, both are listed.
 */
export function versionEndpointsRoute(
  ctx: OcpiContext,
  o: { overview: ListedMount; roleMounts211: readonly ListedMount[] },
): OcpiRoute {
  return route({
    method: 'GET',
    path: '/versions/:version',
    auth: false,
    summary: 'The module endpoint map of a version',
    params: Type.Object({ version: Type.String() }),
    response: Envelope(Type.Object({ version: Type.String(), endpoints: Type.Array(OpenObject) })),
    responses: { 404: 'version not supported' },
    handler: async (req) => {
      const version = req.params.version;
      const base = ctx.baseUrl(req.koa);
      const listed = (m: ListedMount, v: OcpiVersion) => endpointsOf(m.routes, v, m.role, base, m.prefix);
      if (version === '2.2.1') return { data: { version, endpoints: listed(o.overview, '2.2.1') } };
      if (version !== '2.1.1') throw unknownVersion(version);
      // the token is optional here, but a lookup is one: through the back-off on guesses (a 429
      // then answers as without a token, naming every mount)
      const caller = req.koa.get('Authorization')
        ? await guardedAuth(req.koa, 'ocpiToken', () =>
            ctx.tokens.authenticate(req.koa, '2.1.1', 'base64-or-raw'),
          ).catch(() => undefined)
        : undefined;
      const mounts = caller
        ? o.roleMounts211.filter((m) => caller.parties.some((p) => m.role === ourRoleToward(p.role)))
        : o.roleMounts211;
      return { data: { version, endpoints: mounts.flatMap((m) => listed(m, '2.1.1')) } };
    },
  });
}
