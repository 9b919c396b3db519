import { canonicalJson } from '../core/canonical-json.js';
import type { Context } from 'koa';
import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { invalidParameters, unknownObject } from '../core/errors.js';
import { assertOwnParty, requireLink } from '../core/guards.js';
import { callersObject, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope } from '../core/schemas.js';
import type { ObjectKey } from '../store/object-store.js';
import { isCdr221, type StoredCdr } from '../sessions/stored.js';
import { cdr211Of } from './cpo-sender.js';
import { cdrTo221 } from './mappers.js';
import * as C211 from './schemas-2.1.1.js';
import * as C221 from './schemas-2.2.1.js';
import { CDR_AMOUNTS } from '../../tariffs/types.js';

/**
 * The Receiver interface of the CDRs module (the eMSP side): a partner CPO POSTs the CDRs of its
 * sessions with our tokens, and reads one back at the URL our `Location` header gave it. A CDR
 * is never changed once received: the same CDR again is accepted, another one under its id is
 * 2001 (docs/OCPI.md, Decisions 25).
 */

const unknownCdr = () => unknownObject('CDR');
const ONE = '/cdrs/:country_code/:party_id/:cdr_id';

/**
 * A CDR ends when its session was completed (mod_cdrs end_date_time: "when the session was
 * completed/finished"), not before it started: such a CDR is refused (2001), as a CDR once
 * received cannot be corrected under its id.
 */
function assertEndsAfterStart(cdr: StoredCdr): void {
  const [field, end] = isCdr221(cdr) ? ['end_date_time', cdr.end_date_time] : ['stop_date_time', cdr.stop_date_time];
  if (Date.parse(end) < Date.parse(cdr.start_date_time))
    throw invalidParameters([
      {
        field,
        message: `${field} ${end} is before start_date_time ${cdr.start_date_time}`,
        type: 'value_error.end_before_start',
      },
    ]);
}

/**
 * A CDR's periods follow one another: "a period ends when the next period starts" (mod_cdrs
 * CdrPeriod), so none starts before the one listed before it, nor after the CDR ended. Such a
 * CDR contradicts itself (its check could only say `unpriced`, and the CPO never heard why):
 * refused (2001), as one that ends before it started.
 */
function assertPeriodsInOrder(cdr: StoredCdr): void {
  const [endField, end] = isCdr221(cdr) ? ['end_date_time', cdr.end_date_time] : ['stop_date_time', cdr.stop_date_time];
  const endMs = Date.parse(end);
  const errors: Array<{ field: string; message: string; type: string }> = [];
  let before = -Infinity;
  cdr.charging_periods.forEach((period, i) => {
    const at = Date.parse(period.start_date_time);
    const field = `charging_periods.${i}.start_date_time`;
    if (at < before)
      errors.push({
        field,
        message: `${period.start_date_time} is before the start of the period listed before it`,
        type: 'value_error.periods_out_of_order',
      });
    else if (at > endMs)
      errors.push({
        field,
        message: `${period.start_date_time} is after ${endField} ${end}`,
        type: 'value_error.period_after_end',
      });
    before = Math.max(before, at);
  });
  if (errors.length > 0) throw invalidParameters(errors);
}

/**
 * What no CDR may hold: a negative volume of a dimension other than ENERGY (time, parking time,
 * current, power: only ENERGY may be negative, "more energy was feed into the grid", mod_cdrs
 * CdrDimensionType), and a negative `total_cost` in a CDR that is no credit CDR (mod_cdrs
 * "Credit CDRs": only a credit CDR's `total_cost` holds negative amounts). Refused (2001), as a
 * CDR once received cannot be corrected under its id (docs/OCPI.md, Decisions 14).
 */
function assertNoNegatives(cdr: StoredCdr): void {
  const errors: Array<{ field: string; message: string; type: string }> = [];
  cdr.charging_periods.forEach((period, i) =>
    period.dimensions.forEach((d, j) => {
      if (d.volume < 0 && d.type !== 'ENERGY')
        errors.push({
          field: `charging_periods.${i}.dimensions.${j}.volume`,
          message: `a ${d.type} volume of ${d.volume} is below 0`,
          type: 'value_error.number.not_ge',
        });
    }),
  );
  const credit = isCdr221(cdr) && cdr.credit === true;
  for (const field of CDR_AMOUNTS) {
    const cost = (
      cdr as Partial<Record<(typeof CDR_AMOUNTS)[number], number | { excl_vat: number; incl_vat?: number }>>
    )[field];
    if (cost === undefined || credit) continue;
    if (typeof cost === 'number' ? cost < 0 : cost.excl_vat < 0 || (cost.incl_vat ?? 0) < 0)
      errors.push({
        field,
        message: isCdr221(cdr)
          ? `a ${field} below 0 is a credit CDR's only (credit: true, with credit_reference_id)`
          : `a ${field} below 0: 2.1.1 has no credit CDR (a correction is a CDR of its own, or a credit CDR once the link speaks 2.2.1)`,
        type: 'value_error.number.not_ge',
      });
  }
  // mod_cdrs credit_reference_id: "Is required to be set for a Credit CDR"
  if (isCdr221(cdr) && cdr.credit === true && cdr.credit_reference_id === undefined)
    errors.push({
      field: 'credit_reference_id',
      message: 'a credit CDR names the CDR it credits (credit_reference_id)',
      type: 'missing',
    });
  if (errors.length > 0) throw invalidParameters(errors);
}

/**
 * Stores a received CDR once; answers where it can be read back. The first writer of an id wins in
 * one statement (`putNew`); the same CDR sent again (its members in any order) is a retry and
 * accepted, another one under its id is refused. Once the answer is out, the CDR (taken or sent
 * again) is re-priced in the background when the pricing threads are wired (checker.ts). Before,
 * a read and a write apart let several CDRs of one id sent at once all be accepted, the last kept,
 * and a check filed against another.
 */
async function receive(
  ctx: OcpiContext,
  koa: Context,
  prefix: string,
  key: ObjectKey,
  cdr: StoredCdr,
): Promise<{ data: undefined; headers: Record<string, string> }> {
  assertEndsAfterStart(cdr);
  assertPeriodsInOrder(cdr);
  assertNoNegatives(cdr);
  const origin = ctx.baseUrl(koa);
  if (!(await ctx.stores.cdrs.putNew(key, cdr))) {
    const existing = await ctx.stores.cdrs.get(key);
    if (!existing || canonicalJson(existing) !== canonicalJson(cdr))
      throw invalidParameters([
        {
          field: 'id',
          message: `CDR ${key.id} was received before and cannot be changed; a correction is a credit CDR with an id of its own`,
          type: 'value_error.cdr_exists',
        },
      ]);
  }
  // the CDR stored, taken now or sent again (a check left unpriced is made again)
  ctx.cdrChecks?.afterAnswer(koa.res, key, cdr);
  const path = [key.country_code, key.party_id, key.id].map(encodeURIComponent).join('/');
  return { data: undefined, headers: { Location: `${origin}${prefix}/cdrs/${path}` } };
}

/** 2.1.1: POST `/cdrs` and GET `/cdrs/{country_code}/{party_id}/{cdr_id}` (the Location we answered). */
export function cdrsReceiver211(ctx: OcpiContext, prefix: string): OcpiRoute[] {
  return [
    route({
      method: 'POST',
      path: '/cdrs',
      module: 'cdrs',
      summary: 'A CDR of the caller; the Location header says where to read it back',
      body: C211.Cdr,
      handler: (req) => {
        const caller = requireLink(req.auth, '2.1.1');
        const key = { country_code: caller.country_code, party_id: caller.party_id, id: req.body.id };
        return receive(ctx, req.koa, prefix, key, req.body);
      },
    }),
    route({
      method: 'GET',
      path: ONE,
      module: 'cdrs',
      summary: 'A CDR of the caller, as we received it',
      params: C221.CdrPath,
      response: Envelope(C211.Cdr),
      responses: { 404: 'unknown CDR' },
      handler: async (req) => {
        const found = await callersObject(req, '2.1.1', ctx.stores.cdrs, req.params.cdr_id, unknownCdr);
        return { data: await cdr211Of(ctx.stores.locations, found.object) };
      },
    }),
  ];
}

/** 2.2.1: POST `/cdrs` and GET `/cdrs/{country_code}/{party_id}/{cdr_id}` (the Location we answered). */
export function cdrsReceiver221(ctx: OcpiContext, prefix: string): OcpiRoute[] {
  return [
    route({
      method: 'POST',
      path: '/cdrs',
      module: 'cdrs',
      summary: 'A CDR of the caller; the Location header says where to read it back',
      body: C221.ReceivedCdr,
      handler: (req) => {
        const caller = requireLink(req.auth, '2.2.1');
        assertOwnParty(caller, req.body);
        // a platform's CDR is kept under the party it names (one of the caller's)
        const key = { country_code: req.body.country_code, party_id: req.body.party_id, id: req.body.id };
        return receive(ctx, req.koa, prefix, key, req.body);
      },
    }),
    route({
      method: 'GET',
      path: ONE,
      module: 'cdrs',
      summary: 'A CDR of the caller, as we received it',
      params: C221.CdrPath,
      response: Envelope(C221.ReceivedCdr),
      responses: { 404: 'unknown CDR' },
      handler: async (req) => {
        const found = await callersObject(req, '2.2.1', ctx.stores.cdrs, req.params.cdr_id, unknownCdr);
        const c = found.object;
        return { data: isCdr221(c) ? c : cdrTo221(c, found.key, ctx.ownParty()) };
      },
    }),
  ];
}
