import type { MountSpec } from '../../gateway/route-table.js';
import type { OcpiCaller } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import { commandResultsReceiver } from '../commands/emsp-results.js';
import { cdrsReceiver221 } from '../cdrs/emsp-receiver.js';
import { credentialsModule } from '../credentials/routes.js';
import { sessionsReceiver221 } from '../sessions/emsp-receiver.js';
import { locationsReceiver } from '../locations/emsp-receiver.js';
import { tariffsReceiver221 } from '../tariffs/emsp-receiver.js';
import { tokensSender221 } from '../tokens/emsp-sender.js';
import { VersionDetail221 } from '../versions/schemas.js';
import { roleMount } from './role-mount.js';

/** eMSP mount, OCPI 2.2.1 (docs/OCPI.md "Mounts"). */
export function emsp221Mount(ctx: OcpiContext): MountSpec<OcpiCaller> {
  return roleMount(ctx, {
    name: 'ocpi-emsp-2.2.1',
    prefix: '/ocpi/emsp/2.2.1',
    version: '2.2.1',
    role: 'EMSP',
    accept: 'base64-or-raw',
    description: 'OCPI 2.2.1, eMSP role',
    details: { summary: 'VersionDetail: the module endpoints of this version', schema: VersionDetail221 },
    routes: [
      ...credentialsModule(ctx, { version: '2.2.1', ourVersionsPath: '/ocpi/emsp/versions', ourRole: () => 'EMSP' }),
      ...locationsReceiver(ctx, '2.2.1', {
        summaries: { put: "Full replace of one of the caller's locations (path location_id must equal body id)" },
      }),
      ...sessionsReceiver221(ctx),
      ...cdrsReceiver221(ctx, '/ocpi/emsp/2.2.1'),
      ...tariffsReceiver221(ctx),
      ...tokensSender221(ctx),
      commandResultsReceiver(ctx, '2.2.1'),
    ],
  });
}
