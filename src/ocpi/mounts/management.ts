import { operatorAuthenticator, type OperatorAuth } from '../../gateway/csms-auth.js';
import { defineMount, type MountSpec } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { cdrCheckRoutes } from '../cdrs/check-routes.js';
import { receivedCommandRoutes } from '../commands/received-routes.js';
import { utcDateTimes, type OperatorRoute } from '../core/mount-kit.js';
import { ownLocationRoutes } from '../locations/own-data.js';
import { partnerObjectRoutes } from '../management/partner-objects.js';
import { partnerRoutes } from '../management/partner-routes.js';
import { ownTariffRoutes } from '../tariffs/own-data.js';
import { ownTokenRoutes } from '../tokens/own-data.js';

/**
 * The operator's OCPI routes on the management surface ({csms_base_url} = /v1, Bearer
 * CSMS_API_KEY): partner onboarding, handshakes, rotation and pulls (management/), and our own
 * locations, tariffs and tokens (each module's own-data.ts; docs/OCPI.md "Our own data"), and our
 * re-pricing of partners' CDRs (cdrs/check-routes.ts), and the commands partners sent our chargers
 * (commands/received-routes.ts).
 * Errors in the plain /v1 shape, as every /v1 mount.
 */
export function ocpiManagementMount(ctx: OcpiContext, outbox: OperatorRoute[]): MountSpec<OperatorAuth> {
  return defineMount<OperatorAuth>({
    name: 'ocpi-management',
    prefix: '/v1',
    description: 'OCPI partners and our own OCPI data (operators)',
    security: 'bearer',
    authenticate: operatorAuthenticator(ctx.services.config),
    // our own objects' timestamps are stored in UTC too
    routes: [
      ...partnerRoutes(ctx),
      ...partnerObjectRoutes(ctx),
      ...outbox,
      ...receivedCommandRoutes(ctx),
      ...cdrCheckRoutes(ctx),
      ...ownLocationRoutes(ctx),
      ...ownTariffRoutes(ctx),
      ...ownTokenRoutes(ctx),
    ].map(utcDateTimes),
  });
}
