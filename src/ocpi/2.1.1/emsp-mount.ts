import Type from 'typebox';
import { route, type MountSpec } from '../../gateway/route-table.js';
import type { OcpiCaller } from '../auth.js';
import { Envelope } from '../common/schemas.js';
import type { OcpiContext } from '../context.js';
import { credentialsRoute } from '../credentials.js';
import { unknownToken } from '../envelope.js';
import { assertSameId, requireLink } from '../guards.js';
import { patchConnector211, putEvse211 } from '../location-service.js';
import { callerOwnPath, listRoute, ocpiMount, versionDetailsRoute, type OcpiRoute } from '../mount-kit.js';
import * as S from './schemas.js';

export const EMSP_211_PREFIX = '/ocpi/emsp/2.1.1';

const AuthorizeQuery = Type.Object({
  type: Type.Optional(Type.Union([Type.Literal('RFID'), Type.Literal('OTHER')], { default: 'RFID' })),
});

/** eMSP mount, OCPI 2.1.1 (spec Endpoints "eMSP mount, version 2.1.1"). */
export function emsp211Mount(ctx: OcpiContext): MountSpec<OcpiCaller> {
  const routes: OcpiRoute[] = [
    credentialsRoute(ctx, {
      method: 'PUT',
      version: '2.1.1',
      summary: "Rotates the credentials of a registered partner (the identity stays the token's)",
      methodNotAllowed: 'called with the initial token (Token A): initial registration uses POST',
      ourVersionsPath: '/ocpi/emsp/versions',
      ourRole: () => 'EMSP',
    }),
    listRoute(ctx, {
      path: '/tokens',
      module: 'tokens',
      summary: 'Our own tokens for the CPO to pull, paged',
      version: '2.1.1',
      store: ctx.stores.tokens,
      owner: 'ours',
      item: S.Token,
    }),
    route({
      method: 'POST',
      path: '/tokens/:token_uid/authorize',
      module: 'tokens',
      summary: 'Real-time authorization of one of our tokens',
      params: Type.Object({ token_uid: S.Token.properties.uid }),
      query: AuthorizeQuery,
      body: S.LocationReferences,
      bodyOptional: true,
      response: Envelope(S.AuthorizationInfo),
      responses: { 404: 'unknown token (status_code 2004)' },
      handler: async (req) => {
        requireLink(req.auth, '2.1.1');
        const type = req.query.type ?? 'RFID';
        const token = await ctx.stores.tokens.get({ ...ctx.own, id: req.params.token_uid });
        if (!token || token.type !== type) throw unknownToken();
        const location = req.body;
        // values beyond ALLOWED are not shown in the spec; OCPI 2.1.1 calls a refused token BLOCKED
        return { data: { allowed: token.valid ? 'ALLOWED' : 'BLOCKED', ...(location ? { location } : {}) } };
      },
    }),
    route({
      method: 'PUT',
      path: '/sessions/:country_code/:party_id/:session_id',
      module: 'sessions',
      summary: 'A new or updated session of the caller',
      params: S.SessionPath,
      body: S.SessionCreate,
      response: Envelope(S.SessionOut),
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const body = req.body;
        const id = req.params.session_id;
        assertSameId('id', id, body.id);
        // authorization_id is not shown in the spec: the auth_id the session was started with
        const session = { ...body, authorization_id: body.auth_id };
        return { data: await ctx.stores.sessions.put({ ...party, id }, session) };
      },
    }),
    route({
      method: 'PUT',
      path: '/locations/:country_code/:party_id/:location_id/:evse_uid',
      module: 'locations',
      summary: "A new or updated EVSE of one of the caller's locations",
      params: S.EvsePath,
      body: S.Evse,
      response: Envelope(S.Evse),
      responses: { 404: 'unknown location (status_code 2003)' },
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        return { data: await putEvse211(ctx, party, req.params.location_id, req.params.evse_uid, req.body) };
      },
    }),
    route({
      method: 'PATCH',
      path: '/locations/:country_code/:party_id/:location_id/:evse_uid/:connector_id',
      module: 'locations',
      summary: 'Partial update of a connector',
      params: S.ConnectorPath,
      body: S.ConnectorPatchBody,
      response: Envelope(S.Connector),
      responses: { 404: 'unknown location, EVSE or connector (status_code 2003)' },
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const path = {
          location_id: req.params.location_id,
          evse_uid: req.params.evse_uid,
          connector_id: req.params.connector_id,
        };
        return { data: await patchConnector211(ctx, party, path, req.body) };
      },
    }),
    route({
      method: 'PUT',
      path: '/tariffs/:country_code/:party_id/:tariff_id',
      module: 'tariffs',
      summary: 'A new or updated tariff of the caller',
      params: S.TariffPath,
      body: S.Tariff,
      response: Envelope(S.Tariff),
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const body = req.body;
        const id = req.params.tariff_id;
        assertSameId('id', id, body.id);
        return { data: await ctx.stores.tariffs.put({ ...party, id }, body) };
      },
    }),
  ];
  routes.unshift(
    versionDetailsRoute(ctx, {
      routes,
      version: '2.1.1',
      role: 'EMSP',
      prefix: EMSP_211_PREFIX,
      summary: 'Version details: the module endpoints of this mount',
      detail: S.VersionDetail,
    }),
  );
  return ocpiMount(ctx, {
    name: 'ocpi-emsp-2.1.1',
    prefix: EMSP_211_PREFIX,
    version: '2.1.1',
    accept: 'raw',
    description: 'OCPI 2.1.1, eMSP role',
    routes,
  });
}
