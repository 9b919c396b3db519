import Type from '#typebox';
import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { assertOurParty, assertPathId } from '../core/guards.js';
import type { OperatorRoute } from '../core/mount-kit.js';
import { ObjectId } from '../core/schemas.js';
import { enqueue } from '../outbox/outbox-store.js';
import { tariffFrom211, tariffTo211 } from './mappers.js';
import * as T211 from './schemas-2.1.1.js';
import * as T221 from './schemas-2.2.1.js';

/**
 * The operator's route for our own tariffs, on the management mount (docs/OCPI.md "Our own
 * data"): a 2.2.1 Tariff (with our country_code and party_id) or a 2.1.1 one, stored in the 2.2.1
 * shape and answered in the shape it came in.
 */
export function ownTariffRoutes(ctx: OcpiContext): OperatorRoute[] {
  return [
    route({
      method: 'PUT',
      path: '/ocpi/tariffs/:tariff_id',
      summary: 'Creates or replaces one of our tariffs (2.2.1 Tariff, or a 2.1.1 one)',
      params: Type.Object({ tariff_id: ObjectId }),
      body: Type.Union([T221.Tariff, T211.Tariff]),
      response: Type.Union([T221.Tariff, T211.Tariff]),
      handler: async (req) => {
        const body = req.body;
        const id = req.params.tariff_id;
        assertPathId('tariff_id', id, 'id', body.id);
        const own = ctx.ownParty();
        if ('country_code' in body) assertOurParty(own, body, 'a tariff of ours names our country_code and party_id');
        const tariff = 'country_code' in body ? body : tariffFrom211(body, own);
        // the tariff and its PUT to every registered eMSP commit together (docs/ROAMING.md "What is pushed")
        const stored = await ctx.services.db.group.run(async (tx) => {
          const written = await ctx.stores.tariffs.on(tx).put({ ...own, id }, tariff);
          await enqueue(tx, { role: 'EMSP' }, { kind: 'tariff', tariff_id: id });
          return written;
        });
        ctx.outbox.kick();
        return { data: 'country_code' in body ? stored : tariffTo211(stored) };
      },
    }),
  ];
}
