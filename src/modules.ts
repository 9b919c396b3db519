import { csmsModule } from './csms/module.js';
import { ocpiModule } from './ocpi/module.js';
import type { PlatformModule } from './platform/services.js';
import { roamingPort } from './roaming/bridge.js';
import { chargerCommands } from './roaming/commands.js';
import { roamingModule } from './roaming/module.js';
import { pricingModule } from './tariffs/module.js';

/** The features this build runs. Each feature adds itself here. */
export function platformModules(): PlatformModule[] {
  const ocpi = ocpiModule({ chargers: (services) => chargerCommands(services) });
  const pricing = pricingModule();
  return [csmsModule({ roaming: (host) => roamingPort(host, ocpi.outbox) }), ocpi, roamingModule(ocpi.outbox), pricing];
}
