import type { MountSpec } from '../../gateway/route-table.js';
import type { OcpiCaller } from '../auth.js';
import type { OcpiContext } from '../context.js';
import { credentialsRoute } from '../credentials.js';
import { ocpiMount, versionDetailsRoute, type OcpiRoute } from '../mount-kit.js';
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
  routes.unshift(
    versionDetailsRoute(ctx, {
      routes,
      version: '2.2.1',
      role: 'CPO',
      prefix: CPO_221_PREFIX,
      summary: 'Version details: the module endpoints of this mount',
      detail: S.VersionDetail,
    }),
  );
  return ocpiMount(ctx, {
    name: 'ocpi-cpo-2.2.1',
    prefix: CPO_221_PREFIX,
    version: '2.2.1',
    accept: 'base64-or-raw',
    description: 'OCPI 2.2.1, CPO role',
    routes,
  });
}
