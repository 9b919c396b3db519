import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { unknownObject } from '../core/errors.js';
import { assertSameId } from '../core/guards.js';
import { callerOwnPath, callersObject, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope } from '../core/schemas.js';
import * as T211 from './schemas-2.1.1.js';

/** The Receiver interface of the tariffs module (the eMSP side): a partner CPO pushes its tariffs. */

const unknownTariff = () => unknownObject('tariff');

/** 2.1.1: GET, PUT, PATCH and DELETE of `/tariffs/{country_code}/{party_id}/{tariff_id}`. */
export function tariffsReceiver211(ctx: OcpiContext): OcpiRoute[] {
  const common = {
    path: '/tariffs/:country_code/:party_id/:tariff_id',
    module: 'tariffs',
    params: T211.TariffPath,
  } as const;
  return [
    route({
      ...common,
      method: 'GET',
      summary: 'A tariff of the caller, as we hold it',
      response: Envelope(T211.Tariff),
      responses: { 404: 'unknown tariff' },
      handler: async (req) => ({
        data: (await callersObject(req, '2.1.1', ctx.stores.tariffs, req.params.tariff_id, unknownTariff)).object,
      }),
    }),
    route({
      ...common,
      method: 'PATCH',
      summary: 'Partial update of a tariff of the caller (last_updated required)',
      body: T211.TariffPatch,
      response: Envelope(T211.Tariff),
      responses: { 404: 'unknown tariff' },
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const id = req.params.tariff_id;
        assertSameId('id', id, req.body.id);
        const updated = await ctx.stores.tariffs.update({ ...party, id }, (t) => ({ ...t, ...req.body, id }));
        if (!updated) throw unknownTariff();
        return { data: updated };
      },
    }),
    tariffDelete211(ctx),
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

/** 2.1.1: DELETE `/tariffs/{country_code}/{party_id}/{tariff_id}`: the caller no longer offers it. */
function tariffDelete211(ctx: OcpiContext): OcpiRoute {
  return route({
    method: 'DELETE',
    path: '/tariffs/:country_code/:party_id/:tariff_id',
    module: 'tariffs',
    params: T211.TariffPath,
    summary: 'The caller no longer offers this tariff',
    responses: { 404: 'unknown tariff' },
    handler: async (req) => {
      const { key } = await callersObject(req, '2.1.1', ctx.stores.tariffs, req.params.tariff_id, unknownTariff);
      await ctx.stores.tariffs.remove(key);
      return { data: undefined };
    },
  });
}
