import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import { listRoute, type OcpiRoute } from '../core/mount-kit.js';
import { tariffTo211 } from './mappers.js';
import * as T211 from './schemas-2.1.1.js';
import * as T221 from './schemas-2.2.1.js';

/** The Sender interface of the tariffs module (the CPO side): partners read our tariffs. */

/** GET `/tariffs`: our tariffs, paged, in the shape of `version`. */
export function tariffsSender(ctx: OcpiContext, version: OcpiVersion): OcpiRoute[] {
  return [
    listRoute(ctx, {
      path: '/tariffs',
      module: 'tariffs',
      summary: 'Our tariffs, paged',
      version,
      store: ctx.stores.tariffs,
      owner: 'ours',
      ...(version === '2.1.1'
        ? { item: T211.Tariff, render: { name: '2.1.1', as: tariffTo211 } }
        : { item: T221.Tariff }),
    }),
  ];
}
