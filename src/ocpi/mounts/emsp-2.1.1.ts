import type { MountSpec } from '../../gateway/route-table.js';
import type { OcpiCaller } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import { commandResultsReceiver } from '../commands/emsp-results.js';
import { cdrsReceiver211 } from '../cdrs/emsp-receiver.js';
import { credentialsModule } from '../credentials/routes.js';
import { locationsReceiver } from '../locations/emsp-receiver.js';
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
      ...credentialsModule(ctx, { version: '2.1.1', ourVersionsPath: '/ocpi/emsp/versions', ourRole: () => 'EMSP' }),
      ...tokensSender211(ctx),
      ...sessionsReceiver211(ctx),
      ...locationsReceiver(ctx, '2.1.1'),
      ...tariffsReceiver211(ctx),
      ...cdrsReceiver211(ctx, '/ocpi/emsp/2.1.1'),
      commandResultsReceiver(ctx, '2.1.1'),
    ],
  });
}
