import type { OcpiContext } from '../core/context.js';
import { listRoute, type OcpiRoute } from '../core/mount-kit.js';
import * as T211 from './schemas-2.1.1.js';

/** The Sender interface of the tariffs module (the CPO side): partners read our tariffs. */

/** 2.2.1 (the overview): GET `/tariffs`, served in the stored 2.1.1 shape (docs/OCPI.md, Decisions 6). */
export function tariffsSender221(ctx: OcpiContext): OcpiRoute[] {
  return [
    listRoute(ctx, {
      path: '/tariffs',
      module: 'tariffs',
      summary: 'Our tariffs, paged',
      version: '2.2.1',
      store: ctx.stores.tariffs,
      owner: 'ours',
      item: T211.Tariff,
    }),
  ];
}
