import type { EntitySchema } from '@mikro-orm/core';

/** Entities every process registers. Feature modules add their own through Database.open. */
export const coreEntities: EntitySchema[] = [];
