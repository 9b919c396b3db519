import type { MountSpec } from '../../gateway/route-table.js';
import type { OcpiCaller } from '../auth.js';
import { Envelope } from '../common/schemas.js';
import type { OcpiContext } from '../context.js';
import { credentialsRoute } from '../credentials.js';
import { endpointsOf, ocpiMount, type OcpiRoute } from '../mount-kit.js';
import * as S from './schemas.js';

export const CPO_221_PREFIX = '/ocpi/cpo/2.2.1';

/** CPO mount, OCPI 2.2.1 (spec Endpoints "CPO mount, version 2.2.1"; commands come later). */
export function cpo221Mount(ctx: OcpiContext): MountSpec<OcpiCaller> {
  const routes: OcpiRoute[] = [
    credentialsRoute(ctx, {
      method: 'PUT',
      version: '2.2.1',
      summary: 'Rotates the credentials of a registered partner',
      methodNotAllowed: 'called with the initial token (Token A)',
      ourVersionsPath: '/ocpi/cpo/versions',
      ourRole: () => 'CPO',
    }),
  ];
  routes.unshift({
    method: 'GET',
    path: '/',
    summary: 'Version details: the module endpoints of this mount',
    response: Envelope(S.VersionDetail),
    handler: (req) => ({ data: { version: '2.2.1', endpoints: endpointsOf(routes, '2.2.1', 'CPO', ctx.baseUrl(req.koa), CPO_221_PREFIX) } }),
  });
  return ocpiMount(ctx, { name: 'ocpi-cpo-2.2.1', prefix: CPO_221_PREFIX, version: '2.2.1', accept: 'base64-or-raw', description: 'OCPI 2.2.1, CPO role', routes });
}
