import Type from 'typebox';
import { route, type MountSpec } from '../gateway/route-table.js';
import { locationPushRoutes } from './2.2.1/location-routes.js';
import * as S from './2.2.1/schemas.js';
import * as S211 from './2.1.1/schemas.js';
import type { OcpiCaller } from './auth.js';
import { Envelope, OpenObject } from './common/schemas.js';
import type { OcpiContext } from './context.js';
import { credentialsRoute, ourRoleToward, ownCredentials, unregister } from './credentials.js';
import { unknownLocation, unknownVersion } from './envelope.js';
import { assertOwnParty, requireLink } from './guards.js';
import { findLocation } from './location-service.js';
import { endpointsOf, listRoute, ocpiMount, pathParty, type OcpiRoute } from './mount-kit.js';
import { CPO_211_PREFIX } from './2.1.1/cpo-mount.js';
import { EMSP_211_PREFIX } from './2.1.1/emsp-mount.js';

export const OVERVIEW_PREFIX = '/ocpi/2.2.1';

const VersionList = Type.Array(Type.Object({ version: Type.String(), url: Type.String() }));

export interface OverviewMountOptions {
  /** the 2.1.1 role mounts' routes: GET /versions/2.1.1 lists their endpoints */
  cpo211Routes: readonly OcpiRoute[];
  emsp211Routes: readonly OcpiRoute[];
}

/**
 * The overview mount (spec Endpoints "Overview mount"): OCPI 2.2.1 module endpoints without a
 * role segment. Request and response bodies are not shown in the spec; docs/OCPI.md says what
 * each one stores and serves.
 */
export function overviewMount(ctx: OcpiContext, opts: OverviewMountOptions): MountSpec<OcpiCaller> {
  const versionsUrl = (base: string): string => `${base}${OVERVIEW_PREFIX}/versions`;
  const routes: OcpiRoute[] = [
    route({
      method: 'GET',
      path: '/versions',
      auth: false,
      summary: 'The supported OCPI versions with the URLs of their details',
      response: Envelope(VersionList),
      handler: (req) => {
        const base = versionsUrl(ctx.baseUrl(req.koa));
        return {
          data: [
            { version: '2.1.1', url: `${base}/2.1.1` },
            { version: '2.2.1', url: `${base}/2.2.1` },
          ],
        };
      },
    }),
    route({
      method: 'GET',
      path: '/versions/:version',
      auth: false,
      summary: 'The module endpoint map of a version',
      params: Type.Object({ version: Type.String() }),
      response: Envelope(Type.Object({ version: Type.String(), endpoints: Type.Array(OpenObject) })),
      responses: { 404: 'version not supported' },
      handler: (req) => {
        const version = req.params.version;
        const base = ctx.baseUrl(req.koa);
        if (version === '2.2.1')
          return { data: { version, endpoints: endpointsOf(routes, '2.2.1', 'CPO', base, OVERVIEW_PREFIX) } };
        if (version === '2.1.1') {
          // 2.1.1 has no overview: its endpoints are those of the 2.1.1 role mounts
          return {
            data: {
              version,
              endpoints: [
                ...endpointsOf(opts.cpo211Routes, '2.1.1', 'CPO', base, CPO_211_PREFIX),
                ...endpointsOf(opts.emsp211Routes, '2.1.1', 'EMSP', base, EMSP_211_PREFIX),
              ],
            },
          };
        }
        throw unknownVersion(version);
      },
    }),
    route({
      method: 'GET',
      path: '/credentials',
      module: 'credentials',
      summary: 'The credentials the caller uses with us (Token A or the current token)',
      response: Envelope(S.Credentials),
      handler: (req) => ({
        data: ownCredentials(
          ctx,
          '2.2.1',
          req.auth.token,
          versionsUrl(ctx.baseUrl(req.koa)),
          ourRoleToward(req.auth.role),
        ),
      }),
    }),
    credentialsRoute(ctx, {
      method: 'POST',
      version: '2.2.1',
      summary: 'Initial handshake with Token A',
      methodNotAllowed: 'already registered',
      ourVersionsPath: `${OVERVIEW_PREFIX}/versions`,
      ourRole: (caller) => ourRoleToward(caller.role),
    }),
    credentialsRoute(ctx, {
      method: 'PUT',
      version: '2.2.1',
      summary: 'Rotates the credentials of a registered partner',
      methodNotAllowed: 'called with Token A',
      ourVersionsPath: `${OVERVIEW_PREFIX}/versions`,
      ourRole: (caller) => ourRoleToward(caller.role),
    }),
    route({
      method: 'DELETE',
      path: '/credentials',
      module: 'credentials',
      summary: 'Removes the credentials relationship; every token of the caller stops working',
      handler: async (req) => {
        await unregister(ctx, req.auth, '2.2.1');
        return { data: undefined };
      },
    }),
    listRoute(ctx, {
      path: '/locations',
      module: 'locations',
      summary: 'Our published locations, paged',
      version: '2.2.1',
      store: ctx.stores.locations,
      owner: 'ours',
      item: S.LocationOut,
      publishedOnly: true,
    }),
    route({
      method: 'GET',
      path: '/locations/:country_code/:party_id/:location_id',
      module: 'locations',
      summary: "One of our locations, or one of the caller's",
      params: S.LocationPath,
      response: Envelope(S.LocationOut),
      responses: { 404: 'unknown location (status_code 2003)' },
      handler: async (req) => {
        const caller = requireLink(req.auth, '2.2.1');
        const party = pathParty(req);
        if (!ctx.isOwn(party)) assertOwnParty(caller, party);
        const location = await findLocation(ctx, party, req.params.location_id);
        // an unpublished location of ours is not shown to partners
        if (ctx.isOwn(party) && location.publish === false) throw unknownLocation();
        return { data: location };
      },
    }),
    ...locationPushRoutes(ctx, {
      put: "Full replace of one of the caller's locations",
      patch: "Partial update of one of the caller's locations, its EVSEs (by uid) or connectors (by id)",
    }),
    listRoute(ctx, {
      path: '/sessions',
      module: 'sessions',
      summary: "Sessions of the caller's party, paged",
      version: '2.2.1',
      store: ctx.stores.sessions,
      owner: 'caller',
      item: S211.SessionOut,
    }),
    listRoute(ctx, {
      path: '/cdrs',
      module: 'cdrs',
      summary: "CDRs of the caller's party, paged",
      version: '2.2.1',
      store: ctx.stores.cdrs,
      owner: 'caller',
      item: OpenObject,
    }),
    listRoute(ctx, {
      path: '/tariffs',
      module: 'tariffs',
      summary: 'Our tariffs, paged',
      version: '2.2.1',
      store: ctx.stores.tariffs,
      owner: 'ours',
      item: S211.Tariff,
    }),
    listRoute(ctx, {
      path: '/tokens',
      module: 'tokens',
      summary: 'Our own tokens, paged',
      version: '2.2.1',
      store: ctx.stores.tokens,
      owner: 'ours',
      item: S211.Token,
    }),
  ];
  return ocpiMount(ctx, {
    name: 'ocpi-overview-2.2.1',
    prefix: OVERVIEW_PREFIX,
    version: '2.2.1',
    accept: 'base64-or-raw',
    description: 'OCPI 2.2.1 overview (no role segment)',
    routes,
  });
}
