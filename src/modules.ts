import { csmsModule } from './csms/module.js';
import { ocpiModule } from './ocpi/module.js';
import type { PlatformModule } from './platform/services.js';
import { roamingModule } from './roaming/module.js';

/** The features this build runs. Each feature adds itself here. */
export function platformModules(): PlatformModule[] {
  return [csmsModule(), ocpiModule(), roamingModule()];
}
