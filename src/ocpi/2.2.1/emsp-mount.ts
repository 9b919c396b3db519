import { route, type MountSpec } from '../../gateway/route-table.js';
import type { OcpiCaller } from '../auth.js';
import { Envelope } from '../common/schemas.js';
import type { OcpiContext } from '../context.js';
import { credentialsRoute } from '../credentials.js';
import { patchEvse } from '../location-service.js';
import { callerOwnPath, ocpiMount, versionDetailsRoute, type OcpiRoute } from '../mount-kit.js';
import { locationPushRoutes } from './location-routes.js';
import * as S from './schemas.js';

export const EMSP_221_PREFIX = '/ocpi/emsp/2.2.1';

/** eMSP mount, OCPI 2.2.1 (spec Endpoints "eMSP mount, version 2.2.1"). */
export function emsp221Mount(ctx: OcpiContext): MountSpec<OcpiCaller> {
  const routes: OcpiRoute[] = [
    credentialsRoute(ctx, {
      method: 'POST',
      version: '2.2.1',
      summary: "Initial handshake: store the caller's token and versions URL, discover it, issue our token",
      methodNotAllowed: 'already registered',
      ourVersionsPath: '/ocpi/emsp/versions',
      ourRole: () => 'EMSP',
    }),
    ...locationPushRoutes(ctx, {
      put: "Full replace of one of the caller's locations (path location_id must equal body id)",
      patch: "Partial update of one of the caller's locations",
    }),
    route({
      method: 'PATCH',
      path: '/locations/:country_code/:party_id/:location_id/:evse_uid',
      module: 'locations',
      summary: "Partial update of an EVSE of one of the caller's locations",
      params: S.EvsePath,
      body: S.EvsePatchBody,
      response: Envelope(S.Evse),
      responses: { 404: 'unknown location or EVSE (status_code 2003)' },
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.2.1');
        const body = req.body;
        return { data: await patchEvse(ctx, party, req.params.location_id, req.params.evse_uid, body) };
      },
    }),
  ];
  routes.unshift(
    versionDetailsRoute(ctx, {
      routes,
      version: '2.2.1',
      role: 'EMSP',
      prefix: EMSP_221_PREFIX,
      summary: 'VersionDetail: the module endpoints of this version',
      detail: S.VersionDetail,
    }),
  );
  return ocpiMount(ctx, {
    name: 'ocpi-emsp-2.2.1',
    prefix: EMSP_221_PREFIX,
    version: '2.2.1',
    accept: 'base64-or-raw',
    description: 'OCPI 2.2.1, eMSP role',
    routes,
  });
}
