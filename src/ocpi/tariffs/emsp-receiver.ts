import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { assertSameId } from '../core/guards.js';
import { callerOwnPath, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope } from '../core/schemas.js';
import * as T211 from './schemas-2.1.1.js';

/** The Receiver interface of the tariffs module (the eMSP side): a partner CPO pushes its tariffs. */

/** 2.1.1: PUT `/tariffs/{country_code}/{party_id}/{tariff_id}`. */
export function tariffsReceiver211(ctx: OcpiContext): OcpiRoute[] {
  return [
    route({
      method: 'PUT',
      path: '/tariffs/:country_code/:party_id/:tariff_id',
      module: 'tariffs',
      summary: 'A new or updated tariff of the caller',
      params: T211.TariffPath,
      body: T211.Tariff,
      response: Envelope(T211.Tariff),
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const body = req.body;
        const id = req.params.tariff_id;
        assertSameId('id', id, body.id);
        return { data: await ctx.stores.tariffs.put({ ...party, id }, body) };
      },
    }),
  ];
}
