import type { MigrationObject } from '@mikro-orm/core';
import { M0001ActorRuntime } from './m0001-actor-runtime.js';
import { M0002Ocpi } from './m0002-ocpi.js';
import { M0003Csms } from './m0003-csms.js';
import { M0004HotPath } from './m0004-hot-path.js';

/** Every migration in order. Names are stable: they are recorded in mikro_orm_migrations. */
export const migrationsList: MigrationObject[] = [
  { name: 'm0001-actor-runtime', class: M0001ActorRuntime },
  { name: 'm0002-ocpi', class: M0002Ocpi },
  { name: 'm0003-csms', class: M0003Csms },
  { name: 'm0004-hot-path', class: M0004HotPath },
];
