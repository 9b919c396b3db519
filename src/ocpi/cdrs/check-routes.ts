import Type, { type Static, type TSchema } from '#typebox';
import { HttpError } from '../../gateway/errors.js';
import { pageHeaders, Paging } from '../../gateway/operator-paging.js';
import { route } from '../../gateway/route-table.js';
import { PricedCdr } from '../../tariffs/types.js';
import type { CdrCheck } from './check.js';
import type { CheckSummary } from './check-store.js';
import type { OcpiContext } from '../core/context.js';
import type { OperatorRoute } from '../core/mount-kit.js';
import { oneOf } from '../core/schemas.js';
import { CdrPath } from './schemas-2.2.1.js';

/**
 * The operator's view of our re-pricing of partners' CDRs (docs/TARIFFS.md "Re-pricing received
 * CDRs"): `GET /v1/cdr-checks` lists the checks (newest first, of one status if asked: the disagreements), and
 * `GET /v1/cdr-checks/{country_code}/{party_id}/{cdr_id}` shows how one CDR was priced.
 */

const Status = oneOf(['agrees', 'disagrees', 'unpriced']);
const Amounts = Type.Object({ excl_vat: Type.Number(), incl_vat: Type.Optional(Type.Number()) });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

const CheckOut = Type.Object({
  country_code: Type.String(),
  party_id: Type.String(),
  id: Type.String({ description: 'the CDR id' }),
  version: oneOf(['2.1.1', '2.2.1'], 'the version it came in'),
  status: Status,
  currency: Type.String(),
  tariff_id: Nullable(Type.String()),
  theirs: Type.Object(Amounts.properties, { description: "the CDR's total_cost (a 2.1.1 CDR's as excl_vat)" }),
  ours: Nullable(
    Type.Object(Amounts.properties, {
      description:
        'our pricing (both amounts); for a credit CDR the amounts of the CDR it credits, negated (incl_vat when that CDR has it)',
    }),
  ),
  difference: Nullable(
    Type.Object(Amounts.properties, { description: 'theirs minus ours (incl_vat when the CDR has it)' }),
  ),
  reason: Nullable(Type.String({ description: 'why it is unpriced, or where it disagrees' })),
  checked_at: Type.String(),
});
type CheckOut = Static<typeof CheckOut>;

const CheckDetailOut = Type.Object({
  ...CheckOut.properties,
  tariff: Nullable(
    Type.Object({
      id: Type.String(),
      source: oneOf(['cdr_tariffs', 'charging_period', 'connector']),
    }),
  ),
  time_zone: Nullable(Type.Object({ zone: Type.String(), source: oneOf(['location', 'cdr_location', 'utc']) })),
  notes: Type.Array(Type.String()),
  priced: Nullable(Type.Object(PricedCdr.properties, { description: 'our pricing, with its breakdown' })),
});

function checkOut(c: CheckSummary): CheckOut {
  return {
    ...c.key,
    version: c.version,
    status: c.status,
    currency: c.currency,
    tariff_id: c.tariff_id ?? null,
    theirs: c.theirs,
    ours: c.ours ?? null,
    difference: c.difference ?? null,
    reason: c.reason ?? null,
    checked_at: new Date(c.checked_at).toISOString(),
  };
}

function detailOut(c: CdrCheck): Static<typeof CheckDetailOut> {
  const { detail } = c;
  return {
    ...checkOut({ ...c, tariff_id: detail.tariff?.id }),
    tariff: detail.tariff ?? null,
    time_zone: detail.time_zone ?? null,
    notes: detail.notes,
    priced: detail.priced ?? null,
  };
}

/** GET /cdr-checks and GET /cdr-checks/{country_code}/{party_id}/{cdr_id} (the ocpi-management mount). */
export function cdrCheckRoutes(ctx: OcpiContext): OperatorRoute[] {
  const store = ctx.cdrCheckStore;
  const config = ctx.services.config;
  return [
    route({
      method: 'GET',
      path: '/cdr-checks',
      summary: "Our re-pricing of partners' CDRs, newest first: agrees, disagrees (by more than 0.01) or unpriced",
      query: Type.Object({ status: Type.Optional(Status), ...Paging }),
      response: Type.Array(CheckOut),
      handler: async (req) => {
        const { status, offset, limit } = req.query;
        const page = await store.list({ offset, limit, ...(status ? { status } : {}) });
        return { data: page.items.map(checkOut), headers: pageHeaders(config, req, page.total, offset, limit) };
      },
    }),
    route({
      method: 'GET',
      path: '/cdr-checks/:country_code/:party_id/:cdr_id',
      summary: "Our re-pricing of one partner's CDR: the tariff and time zone used, our totals and breakdown",
      params: CdrPath,
      response: CheckDetailOut,
      responses: { 404: 'no check of that CDR' },
      handler: async (req) => {
        const { country_code, party_id, cdr_id } = req.params;
        const check = await store.get({ country_code, party_id, id: cdr_id });
        if (!check) throw new HttpError(404, 'not_found', `no check of CDR ${country_code}-${party_id}-${cdr_id}`);
        return { data: detailOut(check) };
      },
    }),
  ];
}
