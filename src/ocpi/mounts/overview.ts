import type { MountSpec } from '../../gateway/route-table.js';
import type { OcpiCaller } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import { forPartners, ocpiMount, type OcpiRoute } from '../core/mount-kit.js';
import { commandsReceiver } from '../commands/cpo-receiver.js';
import { commandResultsReceiver } from '../commands/emsp-results.js';
import { cdrsSender } from '../cdrs/cpo-sender.js';
import { cdrsReceiver221 } from '../cdrs/emsp-receiver.js';
import { ourRoleToward } from '../credentials/handshake.js';
import { credentialsModule } from '../credentials/routes.js';
import { locationReadBack221, locationsList221 } from '../locations/cpo-sender.js';
import { locationsReceiver } from '../locations/emsp-receiver.js';
import { sessionsSender } from '../sessions/cpo-sender.js';
import { sessionsReceiver221 } from '../sessions/emsp-receiver.js';
import { tariffsSender } from '../tariffs/cpo-sender.js';
import { tariffsReceiver221 } from '../tariffs/emsp-receiver.js';
import { tokensReceiver221 } from '../tokens/cpo-receiver.js';
import { tokensSender221 } from '../tokens/emsp-sender.js';
import { versionEndpointsRoute, versionListRoute, type ListedMount } from '../versions/routes.js';

export const OVERVIEW_PREFIX = '/ocpi/2.2.1';

export interface OverviewMountOptions {
  /** the 2.1.1 role mounts: GET /versions/2.1.1 lists their endpoints */
  roleMounts211: readonly ListedMount[];
}

/**
 * The overview mount: OCPI 2.2.1 module endpoints without a role segment (docs/OCPI.md
 * "Mounts"; what each one stores and serves: docs/OCPI.md, Decisions 6).
 */
export function overviewMount(ctx: OcpiContext, opts: OverviewMountOptions): MountSpec<OcpiCaller> {
  const versionsPath = `${OVERVIEW_PREFIX}/versions`;
  // the overview serves both sides: our Credentials list both roles, the one toward the caller first
  const ourRole = (caller: OcpiCaller) => {
    const toward = ourRoleToward(caller.role);
    return [toward, ourRoleToward(toward)] as const;
  };
  const routes: OcpiRoute[] = [];
  routes.push(
    versionListRoute(ctx, {
      summary: 'The supported OCPI versions with the URLs of their details',
      auth: false,
      detailsBase: (origin) => `${origin}${versionsPath}`,
    }),
    versionEndpointsRoute(ctx, {
      overview: { role: 'CPO', prefix: OVERVIEW_PREFIX, routes },
      roleMounts211: opts.roleMounts211,
    }),
    ...credentialsModule(ctx, { version: '2.2.1', ourVersionsPath: versionsPath, ourRole }),
    // our CPO side (what we send as a CPO, and the tokens we receive) is for eMSP partners; our
    // eMSP side for CPO partners (docs/OCPI.md, Decisions 6)
    ...forPartners('EMSP', [locationsList221(ctx)]),
    locationReadBack221(ctx),
    ...forPartners(
      'CPO',
      locationsReceiver(ctx, '2.2.1', {
        locationGet: false,
        summaries: {
          put: "Full replace of one of the caller's locations",
          patch: "Partial update of one of the caller's locations, its EVSEs (by uid) or connectors (by id)",
        },
      }),
    ),
    ...forPartners('EMSP', sessionsSender(ctx, '2.2.1')),
    ...forPartners('CPO', sessionsReceiver221(ctx)),
    ...forPartners('EMSP', cdrsSender(ctx, '2.2.1')),
    ...forPartners('CPO', cdrsReceiver221(ctx, OVERVIEW_PREFIX)),
    ...forPartners('EMSP', tariffsSender(ctx, '2.2.1')),
    ...forPartners('CPO', tariffsReceiver221(ctx)),
    ...forPartners('CPO', tokensSender221(ctx)),
    ...forPartners('EMSP', tokensReceiver221(ctx)),
    ...forPartners('EMSP', commandsReceiver(ctx, '2.2.1')),
    ...forPartners('CPO', [commandResultsReceiver(ctx, '2.2.1')]),
  );
  return ocpiMount(ctx, {
    name: 'ocpi-overview-2.2.1',
    prefix: OVERVIEW_PREFIX,
    version: '2.2.1',
    accept: 'base64-or-raw',
    description: 'OCPI 2.2.1 overview (no role segment)',
    routes,
  });
}
