import type { MountSpec } from '../../gateway/route-table.js';
import type { OcpiCaller } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import { ocpiMount } from '../core/mount-kit.js';
import { versionListRoute } from '../versions/routes.js';

/**
 * `/ocpi/cpo/versions` and `/ocpi/emsp/versions`: the URL an operator hands a partner with
 * Token A to start a handshake from. Any valid token of ours is accepted, raw or base64 (the
 * caller does not know yet which version it will speak); a 401 carries status_code 2000
 * (docs/OCPI.md, Decisions 16).
 */
export function roleVersionsMount(ctx: OcpiContext, role: 'cpo' | 'emsp'): MountSpec<OcpiCaller> {
  return ocpiMount(ctx, {
    name: `ocpi-${role}-versions`,
    prefix: `/ocpi/${role}`,
    version: '2.1.1',
    accept: 'base64-or-raw',
    description: `OCPI versions of the ${role === 'cpo' ? 'CPO' : 'eMSP'} role`,
    serves: role === 'cpo' ? 'EMSP' : 'CPO',
    routes: [
      versionListRoute(ctx, {
        summary: 'The OCPI versions of this role with the URLs of their details',
        detailsBase: (origin) => `${origin}/ocpi/${role}`,
      }),
    ],
  });
}
