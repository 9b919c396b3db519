import type { MountSpec } from '../../gateway/route-table.js';
import type { OcpiCaller } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import { commandsReceiver } from '../commands/cpo-receiver.js';
import { credentialsModule } from '../credentials/routes.js';
import { locationObjectRoutes, locationsList221 } from '../locations/cpo-sender.js';
import { cdrsSender } from '../cdrs/cpo-sender.js';
import { sessionsSender } from '../sessions/cpo-sender.js';
import { tariffsSender } from '../tariffs/cpo-sender.js';
import { tokensReceiver221 } from '../tokens/cpo-receiver.js';
import { VersionDetail221 } from '../versions/schemas.js';
import { roleMount } from './role-mount.js';

/** CPO mount, OCPI 2.2.1 (docs/OCPI.md "Mounts"). */
export function cpo221Mount(ctx: OcpiContext): MountSpec<OcpiCaller> {
  return roleMount(ctx, {
    name: 'ocpi-cpo-2.2.1',
    prefix: '/ocpi/cpo/2.2.1',
    version: '2.2.1',
    role: 'CPO',
    accept: 'base64-or-raw',
    description: 'OCPI 2.2.1, CPO role',
    details: { summary: 'Version details: the module endpoints of this mount', schema: VersionDetail221 },
    routes: [
      ...credentialsModule(ctx, { version: '2.2.1', ourVersionsPath: '/ocpi/cpo/versions', ourRole: () => 'CPO' }),
      locationsList221(ctx),
      ...locationObjectRoutes(ctx, '2.2.1'),
      ...sessionsSender(ctx, '2.2.1'),
      ...cdrsSender(ctx, '2.2.1'),
      ...tariffsSender(ctx, '2.2.1'),
      ...tokensReceiver221(ctx),
      ...commandsReceiver(ctx, '2.2.1'),
    ],
  });
}
