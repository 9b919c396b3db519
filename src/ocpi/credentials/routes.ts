import { route, type RouteResult } from '../../gateway/route-table.js';
import type { OcpiCaller, PartnerRole } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import { credentialsMethodNotAllowed } from '../core/errors.js';
import type { OcpiRequest, OcpiRoute } from '../core/mount-kit.js';
import { Envelope } from '../core/schemas.js';
import { handshake, ourRoleToward, ownCredentials, unregister, type CredentialsBody } from './handshake.js';
import * as C211 from './schemas-2.1.1.js';
import * as C221 from './schemas-2.2.1.js';

/** The credentials module's routes (docs/OCPI.md "The credentials link", the inbound table). */

export interface CredentialsRouteOptions {
  /** POST registers with Token A, PUT rotates a registered link */
  method: 'POST' | 'PUT';
  version: OcpiVersion;
  summary: string;
  /** the documented 405: POST once registered, PUT with Token A */
  methodNotAllowed: string;
  /** the path of the versions endpoint our Credentials name */
  ourVersionsPath: string;
  /** the roles our Credentials list (`ownCredentials`) */
  ourRole: (caller: OcpiCaller) => PartnerRole | readonly PartnerRole[];
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
    if (req.auth.tokenKind === 'retired')
      throw credentialsMethodNotAllowed(
        o.method === 'PUT'
          ? 'called with the initial token: initial registration uses POST /credentials, updates the current token'
          : 'already registered: use PUT /credentials with the current token to update the credentials',
      );
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
        body: C221.Credentials,
        response: Envelope(C221.Credentials),
        handler: (req) => answer(req, { version: '2.2.1', body: req.body }),
      })
    : route({
        ...common,
        body: C211.Credentials,
        response: Envelope(C211.Credentials),
        handler: (req) => answer(req, { version: '2.1.1', body: req.body }),
      });
}

/**
 * GET `/credentials`: our Credentials object in the mount's version, with the token the caller
 * presented (we keep hashes only); `versionsPath` is the versions endpoint they name.
 */
export function ownCredentialsRoute(
  ctx: OcpiContext,
  versionsPath: string,
  version: OcpiVersion = '2.2.1',
  ourRole: (caller: OcpiCaller) => PartnerRole | readonly PartnerRole[] = (caller) => ourRoleToward(caller.role),
): OcpiRoute {
  const common = {
    method: 'GET',
    path: '/credentials',
    module: 'credentials',
    summary: 'The credentials the caller uses with us (Token A or the current token)',
  } as const;
  const data = (req: OcpiRequest) =>
    ownCredentials(ctx, version, req.auth.token, `${ctx.baseUrl(req.koa)}${versionsPath}`, ourRole(req.auth));
  return version === '2.2.1'
    ? route({ ...common, response: Envelope(C221.Credentials), handler: (req) => ({ data: data(req) }) })
    : route({ ...common, response: Envelope(C211.Credentials), handler: (req) => ({ data: data(req) }) });
}

/** DELETE `/credentials`: every token of the caller stops working; 405 while not registered. */
export function unregisterRoute(ctx: OcpiContext, version: OcpiVersion = '2.2.1'): OcpiRoute {
  return route({
    method: 'DELETE',
    path: '/credentials',
    module: 'credentials',
    summary: 'Removes the credentials relationship; every token of the caller stops working',
    responses: { 405: 'not registered (called with Token A)' },
    handler: async (req) => {
      // Token A never ends a link (another process may still know it for up to a second)
      if (req.auth.tokenKind === 'initial') throw credentialsMethodNotAllowed('not registered: nothing to unregister');
      if (req.auth.tokenKind === 'retired')
        throw credentialsMethodNotAllowed('called with the initial token: DELETE /credentials takes the current token');
      await unregister(ctx, req.auth, version);
      return { data: undefined };
    },
  });
}

export interface CredentialsModuleOptions {
  version: OcpiVersion;
  /** the versions endpoint our Credentials name (the mount's role list, or the overview's) */
  ourVersionsPath: string;
  ourRole: (caller: OcpiCaller) => PartnerRole | readonly PartnerRole[];
}

/**
 * The whole credentials module of a mount (OCPI "credentials" module, both versions): GET our
 * credentials, POST to register with Token A, PUT to rotate, DELETE to unregister, with the
 * state table's 405s (docs/OCPI.md "The credentials link").
 */
export function credentialsModule(ctx: OcpiContext, o: CredentialsModuleOptions): OcpiRoute[] {
  const shared = { version: o.version, ourVersionsPath: o.ourVersionsPath, ourRole: o.ourRole };
  return [
    ownCredentialsRoute(ctx, o.ourVersionsPath, o.version, o.ourRole),
    credentialsRoute(ctx, {
      ...shared,
      method: 'POST',
      summary: "Registers with Token A: store the caller's token and versions URL, discover it, issue our token",
      methodNotAllowed: 'already registered',
    }),
    credentialsRoute(ctx, {
      ...shared,
      method: 'PUT',
      summary: "Rotates the credentials of a registered partner (the identity stays the token's)",
      methodNotAllowed: 'called with the initial token (Token A): initial registration uses POST',
    }),
    unregisterRoute(ctx, o.version),
  ];
}
