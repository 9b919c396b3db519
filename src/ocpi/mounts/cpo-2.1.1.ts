import type { MountSpec } from '../../gateway/route-table.js';
import type { OcpiCaller } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import { commandsReceiver } from '../commands/cpo-receiver.js';
import { credentialsModule } from '../credentials/routes.js';
import { locationObjectRoutes, locationsSender211 } from '../locations/cpo-sender.js';
import { cdrsSender } from '../cdrs/cpo-sender.js';
import { sessionsSender } from '../sessions/cpo-sender.js';
import { tariffsSender } from '../tariffs/cpo-sender.js';
import { tokensReceiver211 } from '../tokens/cpo-receiver.js';
import { VersionDetail211 } from '../versions/schemas.js';
import { roleMount } from './role-mount.js';

/** CPO mount, OCPI 2.1.1 (docs/OCPI.md "Mounts"). */
export function cpo211Mount(ctx: OcpiContext): MountSpec<OcpiCaller> {
  return roleMount(ctx, {
    name: 'ocpi-cpo-2.1.1',
    prefix: '/ocpi/cpo/2.1.1',
    version: '2.1.1',
    role: 'CPO',
    accept: 'raw',
    description: 'OCPI 2.1.1, CPO role',
    details: { summary: 'Version details: the module endpoints of this mount', schema: VersionDetail211 },
    routes: [
      ...credentialsModule(ctx, { version: '2.1.1', ourVersionsPath: '/ocpi/cpo/versions', ourRole: () => 'CPO' }),
      ...locationsSender211(ctx),
      ...locationObjectRoutes(ctx, '2.1.1'),
      ...sessionsSender(ctx, '2.1.1'),
      ...cdrsSender(ctx, '2.1.1'),
      ...tariffsSender(ctx, '2.1.1'),
      ...tokensReceiver211(ctx),
      ...commandsReceiver(ctx, '2.1.1'),
    ],
  });
}
