import Type from 'typebox';
import { route, type MountSpec } from '../gateway/route-table.js';
import type { OcpiCaller } from './auth.js';
import { Envelope } from './common/schemas.js';
import type { OcpiContext } from './context.js';
import { ocpiMount } from './mount-kit.js';

/**
 * `/ocpi/cpo/versions` and `/ocpi/emsp/versions`: the URL an operator hands a partner with
 * Token A to start a handshake from. Any valid token of ours is accepted, raw or base64 (the
 * caller does not know yet which version it will speak); a 401 carries status_code 2000.
 */
export function roleVersionsMount(ctx: OcpiContext, role: 'cpo' | 'emsp'): MountSpec<OcpiCaller> {
  return ocpiMount(ctx, {
    name: `ocpi-${role}-versions`,
    prefix: `/ocpi/${role}`,
    version: '2.1.1',
    accept: 'base64-or-raw',
    description: `OCPI versions of the ${role === 'cpo' ? 'CPO' : 'eMSP'} role`,
    routes: [
      route({
        method: 'GET',
        path: '/versions',
        summary: 'The OCPI versions of this role with the URLs of their details',
        response: Envelope(Type.Array(Type.Object({ version: Type.String(), url: Type.String() }))),
        handler: (req) => {
          const base = `${ctx.baseUrl(req.koa)}/ocpi/${role}`;
          return {
            data: [
              { version: '2.1.1', url: `${base}/2.1.1` },
              { version: '2.2.1', url: `${base}/2.2.1` },
            ],
          };
        },
      }),
    ],
  });
}
