import type { PlatformModule } from '../platform/services.js';
import { partnerActor } from '../../actors/partner/actor.js';
import { discoveryPort } from './client/discovery-port.js';
import { PartnerClient, partnerHttpOptions } from './client/partner-client.js';
import { OcpiContext } from './core/context.js';
import { cpo211Mount } from './mounts/cpo-2.1.1.js';
import { cpo221Mount } from './mounts/cpo-2.2.1.js';
import { emsp211Mount } from './mounts/emsp-2.1.1.js';
import { emsp221Mount } from './mounts/emsp-2.2.1.js';
import { ocpiManagementMount } from './mounts/management.js';
import { ocpiNamespaceMount } from './mounts/namespace.js';
import { overviewMount } from './mounts/overview.js';
import { roleVersionsMount } from './mounts/role-versions.js';
import { partnerProjection } from './core/partner-projection.js';

/**
 * OCPI 2.1.1 and 2.2.1 for the CPO and eMSP roles, the overview mount, and the operator's
 * partner routes under /v1 (docs/OCPI.md). Commands are not part of this module yet.
 */
export function ocpiModule(): PlatformModule {
  let context: OcpiContext | undefined;
  return {
    name: 'ocpi',
    actors: (config) => [
      partnerActor({
        discovery: discoveryPort(new PartnerClient(partnerHttpOptions(config))),
        projection: partnerProjection,
      }),
    ],
    mounts(services) {
      const ctx = new OcpiContext(services);
      context = ctx;
      const cpo211 = cpo211Mount(ctx);
      const emsp211 = emsp211Mount(ctx);
      return [
        roleVersionsMount(ctx, 'cpo'),
        roleVersionsMount(ctx, 'emsp'),
        cpo211,
        cpo221Mount(ctx),
        emsp211,
        emsp221Mount(ctx),
        overviewMount(ctx, {
          roleMounts211: [
            { role: 'CPO', prefix: cpo211.prefix, routes: cpo211.routes },
            { role: 'EMSP', prefix: emsp211.prefix, routes: emsp211.routes },
          ],
        }),
        ocpiManagementMount(ctx),
        ocpiNamespaceMount(),
      ];
    },
    async attach() {
      await context?.startInvalidation();
    },
    async stop() {
      await context?.stopInvalidation();
    },
  };
}
