import { csmsModule } from './csms/module.js';
import { ocpiModule } from './ocpi/module.js';
import type { ActorHost, PlatformModule } from './platform/services.js';
import { roamingPort } from './roaming/bridge.js';
import { cdrBuilderOf } from './roaming/cdrs.js';
import { chargerCommands } from './roaming/commands.js';
import { roamingModule } from './roaming/module.js';
import { pricingModule } from './tariffs/module.js';

/** The features this build runs. Each feature adds itself here. */
export function platformModules(): PlatformModule[] {
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
    csmsModule({ roaming: (host) => roamingPort(host, ocpi.outbox, cdrs(host)) }),
    ocpi,
    roamingModule(ocpi.outbox),
    pricing,
  ];
}
