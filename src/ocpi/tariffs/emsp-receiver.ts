import type { Static } from '#typebox';
import { route } from '../../gateway/route-table.js';
import type { PartyIdentity } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import { unknownObject } from '../core/errors.js';
import { olderThan, stampOfReceipt } from '../core/datetime.js';
import { assertOwnParty, assertSameId } from '../core/guards.js';
import { callerOwnPath, callersObject, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope } from '../core/schemas.js';
import { tariffFrom211, tariffTo211 } from './mappers.js';
import * as T211 from './schemas-2.1.1.js';
import * as T221 from './schemas-2.2.1.js';

/**
 * The Receiver interface of the tariffs module (the eMSP side): a partner CPO pushes its tariffs.
 * They are stored in the 2.2.1 shape (docs/OCPI.md "Storage"). A PUT or PATCH older than the
 * tariff held is not applied (Decisions 38): the answer is the tariff as held. One applied has the
 * partner's CDRs left unpriced for want of it checked again (cdrs/checker.ts).
 */

const unknownTariff = () => unknownObject('tariff');
const PATH = '/tariffs/:country_code/:party_id/:tariff_id';

/** A 2.1.1 PATCH applied to a tariff held: the 2.1.1 fields carry the same names in the stored 2.2.1 tariff. */
function patched211(t: T221.Tariff, patch: Static<typeof T211.TariffPatch>, id: string): T221.Tariff {
  return {
    ...t,
    ...patch,
    id,
    last_updated: patch.last_updated ?? stampOfReceipt(t.last_updated),
  } as T221.Tariff;
}

/**
 * A partner's tariff stored (pushed to us, or pulled from its Sender): its version is kept for
 * the checks of CDRs whose sessions started under it, and its CDRs left unpriced for want of it
 * are checked again (src/ocpi/cdrs/checker.ts).
 */
export async function tariffStored(ctx: OcpiContext, party: PartyIdentity, tariff: T221.Tariff): Promise<void> {
  await ctx.tariffVersions.keep(party, tariff);
  ctx.cdrChecks?.tariffPushed(party, tariff.id);
}

/** 2.1.1: GET, PUT, PATCH and DELETE of `/tariffs/{country_code}/{party_id}/{tariff_id}`. */
export function tariffsReceiver211(ctx: OcpiContext): OcpiRoute[] {
  const common = { path: PATH, module: 'tariffs', params: T211.TariffPath } as const;
  return [
    route({
      ...common,
      method: 'GET',
      summary: 'A tariff of the caller, as we hold it',
      response: Envelope(T211.Tariff),
      responses: { 404: 'unknown tariff' },
      handler: async (req) => ({
        data: tariffTo211(
          (await callersObject(req, '2.1.1', ctx.stores.tariffs, req.params.tariff_id, unknownTariff)).object,
        ),
      }),
    }),
    route({
      ...common,
      method: 'PATCH',
      summary: 'Partial update of a tariff of the caller (no last_updated: stamped on receipt)',
      body: T211.TariffPatch,
      response: Envelope(T211.Tariff),
      responses: { 404: 'unknown tariff' },
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const id = req.params.tariff_id;
        assertSameId('id', id, req.body.id);
        let applied = false;
        const updated = await ctx.stores.tariffs.update({ ...party, id }, (t) => {
          applied = !olderThan(req.body.last_updated, t.last_updated);
          return applied ? patched211(t, req.body, id) : t;
        });
        if (!updated) throw unknownTariff();
        if (applied) await tariffStored(ctx, party, updated);
        return { data: tariffTo211(updated) };
      },
    }),
    tariffDelete(ctx, '2.1.1'),
    route({
      ...common,
      method: 'PUT',
      summary: 'A new or updated tariff of the caller',
      body: T211.TariffIn,
      response: Envelope(T211.Tariff),
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const id = req.params.tariff_id;
        assertSameId('id', id, req.body.id);
        const held = await ctx.stores.tariffs.putUnlessOlder({ ...party, id }, tariffFrom211(req.body, party));
        if (held.applied) await tariffStored(ctx, party, held.object);
        return { data: tariffTo211(held.object) };
      },
    }),
  ];
}

/** 2.2.1: GET, PUT and DELETE of `/tariffs/{country_code}/{party_id}/{tariff_id}`. */
export function tariffsReceiver221(ctx: OcpiContext): OcpiRoute[] {
  const common = { path: PATH, module: 'tariffs', params: T221.TariffPath } as const;
  return [
    route({
      ...common,
      method: 'GET',
      summary: 'A tariff of the caller, as we hold it',
      response: Envelope(T221.Tariff),
      responses: { 404: 'unknown tariff' },
      handler: async (req) => ({
        data: (await callersObject(req, '2.2.1', ctx.stores.tariffs, req.params.tariff_id, unknownTariff)).object,
      }),
    }),
    route({
      ...common,
      method: 'PUT',
      summary: 'A new or updated tariff of the caller (country_code, party_id and id as the path says)',
      body: T221.Tariff,
      response: Envelope(T221.Tariff),
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.2.1');
        const id = req.params.tariff_id;
        assertOwnParty(party, req.body);
        assertSameId('id', id, req.body.id);
        const held = await ctx.stores.tariffs.putUnlessOlder({ ...party, id }, req.body);
        if (held.applied) await tariffStored(ctx, party, held.object);
        return { data: held.object };
      },
    }),
    tariffDelete(ctx, '2.2.1'),
  ];
}

/** DELETE `/tariffs/{country_code}/{party_id}/{tariff_id}`: the caller no longer offers it. */
function tariffDelete(ctx: OcpiContext, version: OcpiVersion): OcpiRoute {
  return route({
    method: 'DELETE',
    path: PATH,
    module: 'tariffs',
    params: version === '2.1.1' ? T211.TariffPath : T221.TariffPath,
    summary: 'The caller no longer offers this tariff',
    responses: { 404: 'unknown tariff' },
    handler: async (req) => {
      const { key } = await callersObject(
        req,
        version,
        ctx.stores.tariffs,
        String(req.params.tariff_id),
        unknownTariff,
      );
      await ctx.stores.tariffs.remove(key);
      return { data: undefined };
    },
  });
}
