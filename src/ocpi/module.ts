import type { PlatformModule } from '../platform/services.js';
import { partnerActor } from '../../actors/partner-actor.js';
import { discoveryPort } from './client/discovery-port.js';
import { PartnerClient, partnerHttpOptions } from './client/partner-client.js';
import { cpo211Mount } from './2.1.1/cpo-mount.js';
import { emsp211Mount } from './2.1.1/emsp-mount.js';
import { cpo221Mount } from './2.2.1/cpo-mount.js';
import { emsp221Mount } from './2.2.1/emsp-mount.js';
import { OcpiContext } from './context.js';
import { ocpiManagementMount } from './management-mount.js';
import { ocpiNamespaceMount } from './namespace-mount.js';
import { overviewMount } from './overview-mount.js';
import { roleVersionsMount } from './versions-mount.js';

/**
 * OCPI 2.1.1 and 2.2.1 for the CPO and eMSP roles, the overview mount, and the operator's
 * partner routes under /v1 (docs/OCPI.md). Commands are not part of this module yet.
 */
export function ocpiModule(): PlatformModule {
  let context: OcpiContext | undefined;
  return {
    name: 'ocpi',
    actors: (config) => [partnerActor(discoveryPort(new PartnerClient(partnerHttpOptions(config))))],
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
        overviewMount(ctx, { cpo211Routes: cpo211.routes, emsp211Routes: emsp211.routes }),
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
