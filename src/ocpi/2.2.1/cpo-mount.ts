import type { MountSpec } from '../../gateway/route-table.js';
import type { OcpiCaller } from '../auth.js';
import { Envelope } from '../common/schemas.js';
import type { OcpiContext } from '../context.js';
import { handshake } from '../credentials.js';
import { credentialsMethodNotAllowed } from '../envelope.js';
import { endpointsOf, ocpiMount, validated, type OcpiRoute } from '../mount-kit.js';
import * as S from './schemas.js';

export const CPO_221_PREFIX = '/ocpi/cpo/2.2.1';

/** CPO mount, OCPI 2.2.1 (spec Endpoints "CPO mount, version 2.2.1"; commands come later). */
export function cpo221Mount(ctx: OcpiContext): MountSpec<OcpiCaller> {
  const routes: OcpiRoute[] = [
    {
      method: 'PUT',
      path: '/credentials',
      module: 'credentials',
      summary: 'Rotates the credentials of a registered partner',
      body: S.Credentials,
      response: Envelope(S.Credentials),
      responses: { 405: 'called with the initial token (Token A)' },
      handler: async (req) => {
        if (req.auth.tokenKind === 'initial') throw credentialsMethodNotAllowed('not registered yet: initial registration uses POST /credentials');
        const body = validated(S.Credentials, req.body);
        return { data: await handshake(ctx, 'rotate', req.auth, { version: '2.2.1', body }, `${ctx.baseUrl(req.koa)}/ocpi/cpo/versions`, 'CPO') };
      },
    },
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
