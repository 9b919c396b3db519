import Type from '#typebox';
import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { assertPathId } from '../core/guards.js';
import type { OperatorRoute } from '../core/mount-kit.js';
import { ObjectId } from '../core/schemas.js';
import * as T211 from './schemas-2.1.1.js';

/** The operator's route for our own tariffs, on the management mount (docs/OCPI.md "Our own data"). */
export function ownTariffRoutes(ctx: OcpiContext): OperatorRoute[] {
  return [
    route({
      method: 'PUT',
      path: '/ocpi/tariffs/:tariff_id',
      summary: 'Creates or replaces one of our tariffs (2.1.1 Tariff)',
      params: Type.Object({ tariff_id: ObjectId }),
      body: T211.Tariff,
      response: T211.Tariff,
      handler: async (req) => {
        const body = req.body;
        const id = req.params.tariff_id;
        assertPathId('tariff_id', id, 'id', body.id);
        return { data: await ctx.stores.tariffs.put({ ...ctx.ownParty(), id }, body) };
      },
    }),
  ];
}
