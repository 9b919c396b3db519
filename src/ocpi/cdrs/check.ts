import { selectTariff } from '../../tariffs/engine.js';
import { isTimeZone } from '../../tariffs/local-time.js';
import { dec, reported } from '../../tariffs/money.js';
import type { PricingHandle } from '../../tariffs/module.js';
import type { PriceOutcome, PricedCdr, PricingCdr, PricingPeriod, PricingTariff } from '../../tariffs/types.js';
import type { StoredLocation } from '../locations/schemas-2.2.1.js';
import { isCdr221, type StoredCdr } from '../sessions/stored.js';
import type { ObjectKey, ObjectStore } from '../store/object-store.js';
import { tariffFrom211 } from '../tariffs/mappers.js';
import type { Tariff } from '../tariffs/schemas-2.2.1.js';

/**
 * Our eMSP's re-pricing of a CDR a partner CPO posted us (docs/TARIFFS.md "Re-pricing received
 * CDRs"): the partner's tariff, in the partner's location's time zone, through the pricing
 * threads, and our total_cost held against theirs. The CDR itself is never changed.
 */

/** What re-pricing reads: what the partner pushed to our Receivers, and the pricing threads. */
export interface CheckDeps {
  tariffs: Pick<ObjectStore<Tariff>, 'get'>;
  locations: Pick<ObjectStore<StoredLocation>, 'get'>;
  pricing: PricingHandle;
}

export type CheckStatus = 'agrees' | 'disagrees' | 'unpriced';
export const CHECK_STATUSES: readonly CheckStatus[] = ['agrees', 'disagrees', 'unpriced'];

/** A total_cost: 2.1.1 CDRs have one number (excl_vat here), 2.2.1 ones a Price whose incl_vat is optional. */
export interface Amounts {
  excl_vat: number;
  incl_vat?: number;
}

/** Where the tariff came from: the CDR's own `tariffs`, or a pushed tariff a charging period (2.2.1) or the connector (2.1.1) names. */
export type TariffSource = 'cdr_tariffs' | 'charging_period' | 'connector';
/** Where the time zone came from: the 2.1.1 CDR's location, our copy of the partner's location, or none (UTC). */
export type ZoneSource = 'location' | 'cdr_location' | 'utc';

/** How a CDR was priced: kept as JSON (`detail`) and shown by `GET /v1/cdr-checks/{cc}/{pid}/{id}`. */
export interface CheckDetail {
  tariff?: { id: string; source: TariffSource };
  time_zone?: { zone: string; source: ZoneSource };
  /** what the operator should know about how it was priced (a time zone that was not found, ...) */
  notes: string[];
  /** our pricing, with the per-period breakdown */
  priced?: PricedCdr;
}

export interface CdrCheck {
  key: ObjectKey;
  version: '2.1.1' | '2.2.1';
  status: CheckStatus;
  currency: string;
  theirs: Amounts;
  ours?: { excl_vat: number; incl_vat: number };
  /** theirs minus ours: positive when the partner charged more than its tariff says */
  difference?: Amounts;
  /** why it is unpriced, or where it disagrees */
  reason?: string;
  checked_at: number;
  detail: CheckDetail;
}

/** Totals within this much of each other agree (one cent of any currency with cents). */
const TOLERANCE = dec(0.01);

/** The CDR as re-pricing reads it, whichever version it came in. */
interface CdrView {
  version: '2.1.1' | '2.2.1';
  start: string;
  end: string;
  currency: string;
  periods: PricingPeriod[];
  theirs: Amounts;
  credit: boolean;
  /** its own tariffs, in the 2.2.1 shape */
  own: Tariff[];
  /** the distinct tariff ids its charging periods (2.2.1) or its connector (2.1.1) name */
  named: string[];
  namedBy: 'charging_period' | 'connector';
  locationId: string;
  /** the time_zone of the location a 2.1.1 CDR carries */
  zone?: string;
}

const distinct = (ids: Array<string | undefined>): string[] =>
  [...new Set(ids)].filter((id): id is string => id !== undefined);

function viewOf(cdr: StoredCdr, key: ObjectKey): CdrView {
  if (isCdr221(cdr)) {
    const { excl_vat, incl_vat } = cdr.total_cost;
    return {
      version: '2.2.1',
      start: cdr.start_date_time,
      end: cdr.end_date_time,
      currency: cdr.currency,
      periods: cdr.charging_periods,
      theirs: incl_vat === undefined ? { excl_vat } : { excl_vat, incl_vat },
      credit: cdr.credit === true,
      own: cdr.tariffs ?? [],
      named: distinct(cdr.charging_periods.map((p) => p.tariff_id)),
      namedBy: 'charging_period',
      locationId: cdr.cdr_location.id,
    };
  }
  // a 2.1.1 CDR's location lists the EVSE and connector used; its tariff_id names the tariff
  const connectors = (cdr.location.evses ?? []).flatMap((e) => e.connectors);
  return {
    version: '2.1.1',
    start: cdr.start_date_time,
    end: cdr.stop_date_time,
    currency: cdr.currency,
    periods: cdr.charging_periods,
    theirs: { excl_vat: cdr.total_cost },
    // 2.1.1 has no credit flag: a correction is a CDR with a negative total_cost
    credit: cdr.total_cost < 0,
    own: (cdr.tariffs ?? []).map((t) => tariffFrom211(t, key)),
    named: distinct(connectors.map((c) => c.tariff_id)),
    namedBy: 'connector',
    locationId: cdr.location.id,
    ...(cdr.location.time_zone === undefined ? {} : { zone: cdr.location.time_zone }),
  };
}

interface ChosenTariff {
  tariff: PricingTariff;
  id: string;
  source: TariffSource;
}

/**
 * The tariff the CDR is priced with: the first of its own valid at its start; else the one its
 * charging periods (2.2.1) or connector (2.1.1) name, among the tariffs the partner pushed us.
 * A string is why there is none.
 */
async function tariffOf(deps: CheckDeps, view: CdrView, key: ObjectKey): Promise<ChosenTariff | string> {
  const own = selectTariff(view.own, Date.parse(view.start));
  if (own) return { tariff: own, id: own.id, source: 'cdr_tariffs' };
  const namer = view.namedBy === 'charging_period' ? 'charging periods' : 'connector';
  const ownNote =
    view.own.length > 0
      ? `none of the CDR's ${view.own.length} tariffs is valid at its start`
      : 'the CDR has no tariffs';
  const [id, ...more] = view.named;
  if (id === undefined) return `no tariff known: ${ownNote}, and its ${namer} name none`;
  if (more.length > 0)
    return `${ownNote}, and its ${namer} name ${view.named.length} tariffs (${view.named.join(', ')}): a CDR is priced with one`;
  const pushed = await deps.tariffs.get({ country_code: key.country_code, party_id: key.party_id, id });
  if (!pushed)
    return `tariff ${id} (named by its ${namer}) is not known: ${key.country_code}-${key.party_id} has not pushed it to our tariffs Receiver`;
  return { tariff: pushed, id, source: view.namedBy };
}

/**
 * The zone restrictions are read in: that of the location a 2.1.1 CDR carries (the place as at
 * the session, sent with the CDR), else our copy of the partner's location's, else UTC (noted).
 * A 2.1.1 location pushed without a time_zone is held as Etc/UTC: the CDR's zone comes first.
 */
async function zoneOf(
  deps: CheckDeps,
  view: CdrView,
  key: ObjectKey,
  notes: string[],
): Promise<{ zone: string; source: ZoneSource }> {
  const stored = await deps.locations.get({
    country_code: key.country_code,
    party_id: key.party_id,
    id: view.locationId,
  });
  const candidates: Array<[string | undefined, ZoneSource, string]> = [
    [view.zone, 'cdr_location', "the CDR's location"],
    [stored?.time_zone, 'location', `location ${view.locationId} as the partner pushed it`],
  ];
  for (const [zone, source, what] of candidates) {
    if (zone === undefined) continue;
    if (isTimeZone(zone)) return { zone, source };
    notes.push(`the time_zone of ${what} (${zone}) is no IANA time zone`);
  }
  notes.push(
    `no time zone known for location ${view.locationId} (not pushed to our locations Receiver${view.version === '2.1.1' ? ', none in the CDR' : ''}): restrictions were read in UTC`,
  );
  return { zone: 'UTC', source: 'utc' };
}

function pricingCdrOf(view: CdrView): PricingCdr {
  return {
    start_date_time: view.start,
    end_date_time: view.end,
    currency: view.currency,
    charging_periods: view.periods,
  };
}

/** Theirs against ours: the difference (theirs minus ours) and where it exceeds the tolerance. */
function compare(
  theirs: Amounts,
  ours: { excl_vat: number; incl_vat: number },
): { difference: Amounts; off: string[] } {
  const off: string[] = [];
  const diff = (field: 'excl_vat' | 'incl_vat', their: number): number => {
    const d = dec(their).minus(dec(ours[field]));
    if (d.abs().greaterThan(TOLERANCE)) off.push(`total_cost ${field}: theirs ${their}, ours ${ours[field]}`);
    return reported(d);
  };
  const excl_vat = diff('excl_vat', theirs.excl_vat);
  if (theirs.incl_vat === undefined) return { difference: { excl_vat }, off };
  return { difference: { excl_vat, incl_vat: diff('incl_vat', theirs.incl_vat) }, off };
}

/** Our pricing of the CDR, or why there is none. */
async function priceWith(
  deps: CheckDeps,
  chosen: ChosenTariff,
  view: CdrView,
  zone: string,
): Promise<PricedCdr | string> {
  // the pricing threads failing (the process stopping) is no outcome of the CDR: it throws, and
  // nothing is kept, so a later POST of the same CDR checks it
  const outcome: PriceOutcome = await deps.pricing.priceOne({
    tariff: chosen.tariff,
    cdr: pricingCdrOf(view),
    time_zone: zone,
    breakdown: true,
  });
  return outcome.ok ? outcome.priced : `the pricing engine refused it (${outcome.code}): ${outcome.message}`;
}

/** Re-prices one received CDR; never throws for what the CDR or the tariff hold (those are `unpriced`). */
export async function checkCdr(deps: CheckDeps, key: ObjectKey, cdr: StoredCdr, now = Date.now()): Promise<CdrCheck> {
  const view = viewOf(cdr, key);
  const detail: CheckDetail = { notes: [] };
  const base = { key, version: view.version, currency: view.currency, theirs: view.theirs, checked_at: now, detail };
  const unpriced = (reason: string): CdrCheck => ({ ...base, status: 'unpriced', reason });
  if (view.credit) return unpriced('a credit CDR (it reverses the costs of an earlier CDR): not re-priced');
  const chosen = await tariffOf(deps, view, key);
  if (typeof chosen === 'string') return unpriced(chosen);
  detail.tariff = { id: chosen.id, source: chosen.source };
  detail.time_zone = await zoneOf(deps, view, key, detail.notes);
  const priced = await priceWith(deps, chosen, view, detail.time_zone.zone);
  if (typeof priced === 'string') return unpriced(priced);
  detail.priced = priced;
  const ours = { excl_vat: priced.total_cost.excl_vat, incl_vat: priced.total_cost.incl_vat };
  const { difference, off } = compare(view.theirs, ours);
  if (off.length === 0) return { ...base, status: 'agrees', ours, difference };
  const changed = changedSinceStart(chosen, view);
  if (changed) return { ...base, status: 'unpriced', ours, difference, reason: `${off.join('; ')}; ${changed}` };
  return { ...base, status: 'disagrees', ours, difference, reason: off.join('; ') };
}

/**
 * Why a difference cannot be held against the partner: the pushed tariff it was priced with was
 * updated after the session started, and a driver pays the tariff valid when the session started
 * (mod_tariffs); the version of that time is not kept (a PUT replaces a tariff). Undefined when
 * the tariff is the CDR's own or was last updated by the start.
 */
function changedSinceStart(chosen: ChosenTariff, view: CdrView): string | undefined {
  const at = chosen.tariff.last_updated;
  if (chosen.source === 'cdr_tariffs' || at === undefined) return undefined;
  const updated = Date.parse(at);
  if (!(updated > Date.parse(view.start))) return undefined;
  return `tariff ${chosen.id} was updated at ${at}, after the session started (${view.start}): the version in force at the start is not held, so the difference may be the tariff's change`;
}
