import type { MountSpec } from '../../gateway/route-table.js';
import type { OcpiCaller } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import { credentialsRoute } from '../credentials/routes.js';
import { locationsReceiver211 } from '../locations/emsp-receiver.js';
import { sessionsReceiver211 } from '../sessions/emsp-receiver.js';
import { tariffsReceiver211 } from '../tariffs/emsp-receiver.js';
import { tokensSender211 } from '../tokens/emsp-sender.js';
import { VersionDetail211 } from '../versions/schemas.js';
import { roleMount } from './role-mount.js';

/** eMSP mount, OCPI 2.1.1 (docs/OCPI.md "Mounts"). */
export function emsp211Mount(ctx: OcpiContext): MountSpec<OcpiCaller> {
  return roleMount(ctx, {
    name: 'ocpi-emsp-2.1.1',
    prefix: '/ocpi/emsp/2.1.1',
    version: '2.1.1',
    role: 'EMSP',
    accept: 'raw',
    description: 'OCPI 2.1.1, eMSP role',
    details: { summary: 'Version details: the module endpoints of this mount', schema: VersionDetail211 },
    routes: [
      credentialsRoute(ctx, {
        method: 'PUT',
        version: '2.1.1',
        summary: "Rotates the credentials of a registered partner (the identity stays the token's)",
        methodNotAllowed: 'called with the initial token (Token A): initial registration uses POST',
        ourVersionsPath: '/ocpi/emsp/versions',
        ourRole: () => 'EMSP',
      }),
      ...tokensSender211(ctx),
      ...sessionsReceiver211(ctx),
      ...locationsReceiver211(ctx),
      ...tariffsReceiver211(ctx),
    ],
  });
}
