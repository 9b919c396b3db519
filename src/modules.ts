import { csmsModule, type CsmsModuleOptions } from './csms/module.js';
import { ocpiModule } from './ocpi/module.js';
import type { ActorHost, PlatformModule } from './platform/services.js';
import { roamingPort } from './roaming/bridge.js';
import { cdrBuilderOf } from './roaming/cdrs.js';
import { chargerCommands } from './roaming/commands.js';
import { roamingModule } from './roaming/module.js';
import { pricingModule } from './tariffs/module.js';

/**
 * The features this build runs. Each feature adds itself here. `csms`: options of the CSMS module
 * besides its roaming port (tests shorten its call timeout).
 */
export function platformModules(csms: Omit<CsmsModuleOptions, 'roaming'> = {}): PlatformModule[] {
  const pricing = pricingModule();
  const cdrs = (host: ActorHost) => cdrBuilderOf(host, pricing.pricing);
  const ocpi = ocpiModule({
    chargers: (services) => chargerCommands(services),
    pricing: pricing.pricing,
    cdrs: (host) => ({
      ensure: (sessionId) => cdrs(host).refresh(sessionId),
      whyNotBuilt: (sessionId) => cdrs(host).whyNotBuilt(sessionId),
    }),
  });
  return [
    csmsModule({ ...csms, roaming: (host) => roamingPort(host, ocpi.outbox, cdrs(host)) }),
    ocpi,
    roamingModule(ocpi.outbox),
    pricing,
  ];
}
