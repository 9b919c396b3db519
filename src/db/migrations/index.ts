import type { MigrationObject } from '@mikro-orm/core';
import { M0001ActorRuntime } from './m0001-actor-runtime.js';

/** Every migration in order. Names are stable: they are recorded in mikro_orm_migrations. */
export const migrationsList: MigrationObject[] = [{ name: 'm0001-actor-runtime', class: M0001ActorRuntime }];
