import { selectTariff, tariffForRoaming, tariffValidAt } from '../../tariffs/engine.js';
import { isTimeZone, readsLocalTime } from '../../tariffs/local-time.js';
import { dec, reported } from '../../tariffs/money.js';
import type { PricingHandle } from '../../tariffs/module.js';
import type { PriceOutcome, PricedCdr, PricingCdr, PricingPeriod, PricingTariff } from '../../tariffs/types.js';
import { ASSUMED_211_ZONE } from '../locations/mappers.js';
import type { StoredLocation } from '../locations/schemas-2.2.1.js';
import { isCdr221, type StoredCdr } from '../sessions/stored.js';
import type { ObjectKey, ObjectStore } from '../store/object-store.js';
import type { SqlRunner } from '../../db/sql.js';
import type { PartyIdentity } from '../core/auth.js';
import { tariffFrom211 } from '../tariffs/mappers.js';
import type { Tariff } from '../tariffs/schemas-2.2.1.js';
import type { TariffVersions } from '../tariffs/versions.js';
import { canonicalJson } from '../core/canonical-json.js';

/**
 * Our eMSP's re-pricing of a CDR a partner CPO posted us (docs/TARIFFS.md "Re-pricing received
 * CDRs"): the partner's tariff, in the partner's location's time zone, through the pricing
 * threads, and our total_cost held against theirs. The CDR itself is never changed.
 */

/** What re-pricing reads: what the partner pushed to our Receivers, and the pricing threads. */
export interface CheckDeps {
  tariffs: Pick<ObjectStore<Tariff>, 'get'>;
  /** the earlier versions of the pushed tariffs (src/ocpi/tariffs/versions.ts) */
  versions: Pick<TariffVersions, 'inForceAt'>;
  locations: Pick<ObjectStore<StoredLocation>, 'get'>;
  /** the CDRs partners sent us: a credit CDR is held against the CDR it credits */
  cdrs: Pick<ObjectStore<StoredCdr>, 'get'>;
  /** the ids of the credit CDRs `party` sent us that name CDR `credited`, in the order they came (`creditsNaming`) */
  creditsOf(party: PartyIdentity, credited: string): Promise<string[]>;
  pricing: PricingHandle;
}

export type CheckStatus = 'agrees' | 'disagrees' | 'unpriced';
export const CHECK_STATUSES: readonly CheckStatus[] = ['agrees', 'disagrees', 'unpriced'];

/** A total_cost: 2.1.1 CDRs have one number (excl_vat here), 2.2.1 ones a Price whose incl_vat is optional. */
export interface Amounts {
  excl_vat: number;
  incl_vat?: number;
}

/** A tariff id and what named it. */
export interface NamedTariff {
  id: string;
  source: TariffSource;
}

/** Where the tariff came from: the CDR's own `tariffs`, or a pushed tariff a charging period (2.2.1) or the connector names (2.1.1: in the CDR; 2.2.1: in our copy of the location). */
export type TariffSource = 'cdr_tariffs' | 'charging_period' | 'connector';
/** Where the time zone came from: the 2.1.1 CDR's location, our copy of the partner's location, or none (UTC). */
export type ZoneSource = 'location' | 'cdr_location' | 'utc';

/** How a CDR was priced: kept as JSON (`detail`) and shown by `GET /v1/cdr-checks/{cc}/{pid}/{id}`. */
export interface CheckDetail {
  /** the tariff used; on a CDR unpriced for want of it, the pushed tariff it names (checked again when pushed) */
  tariff?: NamedTariff;
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
  /** our pricing; for a credit CDR, the amounts of the CDR it credits, negated (incl_vat when that CDR has it) */
  ours?: Amounts;
  /** theirs minus ours: positive when the partner charged more than its tariff says */
  difference?: Amounts;
  /** why it is unpriced, or where it disagrees */
  reason?: string;
  checked_at: number;
  detail: CheckDetail;
  /** unpriced for want of the tariff `detail.tariff` names, which the partner has not given us */
  waitsForTariff?: true;
  /** a credit CDR unpriced for want of the CDR it credits, which the partner has not sent us (yet) */
  waitsForCredited?: true;
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
  /** the EVSE and connector of a 2.2.1 CDR, as named in its cdr_location */
  connector?: { evse_uid: string; connector_id: string };
  /** the time_zone of the location a 2.1.1 CDR carries */
  zone?: string;
  /** the other totals the CDR states (its volumes, and in 2.2.1 its costs per dimension) */
  stated: StatedTotals;
}

type Volume = 'total_energy' | 'total_time' | 'total_parking_time';
type DimensionCost = 'total_energy_cost' | 'total_time_cost' | 'total_parking_cost' | 'total_fixed_cost';
interface StatedTotals {
  volumes: Partial<Record<Volume, number>>;
  costs: Partial<Record<DimensionCost, number>>;
}

/** The volumes and per-dimension costs (excl. VAT) a CDR states beside its total_cost. */
function statedOf(cdr: StoredCdr): StatedTotals {
  const volumes = { total_energy: cdr.total_energy, total_time: cdr.total_time };
  const parking = cdr.total_parking_time === undefined ? {} : { total_parking_time: cdr.total_parking_time };
  if (!isCdr221(cdr)) return { volumes: { ...volumes, ...parking }, costs: {} };
  const costs: StatedTotals['costs'] = {};
  for (const k of ['total_energy_cost', 'total_time_cost', 'total_parking_cost', 'total_fixed_cost'] as const) {
    const price = cdr[k];
    if (price !== undefined) costs[k] = price.excl_vat;
  }
  return { volumes: { ...volumes, ...parking }, costs };
}

/** Volumes within this much agree: a Wh of energy, 3.6 seconds of time (kWh and hours to 3 decimals). */
const VOLUME_TOLERANCE = dec(0.001);

/**
 * Where the other totals the CDR states differ from ours (notes; `total_cost` alone decides the
 * status): a CDR whose total is right but whose `total_energy` or energy cost is not would still
 * mislead a driver's invoice built from them.
 */
function otherTotalsOff(stated: StatedTotals, ours: PricedCdr): string[] {
  const off: string[] = [];
  for (const [k, theirs] of Object.entries(stated.volumes) as Array<[Volume, number]>)
    if (dec(theirs).minus(dec(ours[k])).abs().greaterThan(VOLUME_TOLERANCE))
      off.push(`${k}: theirs ${theirs}, ours ${ours[k]}`);
  for (const [k, theirs] of Object.entries(stated.costs) as Array<[DimensionCost, number]>)
    if (dec(theirs).minus(dec(ours[k].excl_vat)).abs().greaterThan(TOLERANCE))
      off.push(`${k} excl_vat: theirs ${theirs}, ours ${ours[k].excl_vat}`);
  return off;
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
      connector: { evse_uid: cdr.cdr_location.evse_uid, connector_id: cdr.cdr_location.connector_id },
      stated: statedOf(cdr),
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
    stated: statedOf(cdr),
  };
}

interface ChosenTariff extends NamedTariff {
  tariff: PricingTariff;
  /** what the check notes of where the tariff came from (a version of one the partner deleted since) */
  note?: string;
}

/** Why no tariff was chosen; with the pushed tariff the CDR names when only that is missing (checked again when it comes). */
interface NoTariff {
  reason: string;
  waitsFor?: NamedTariff;
}

type StoredPlace = StoredLocation | undefined;

/**
 * The tariff the CDR is priced with: of its own tariffs, the one its charging periods (2.2.1) or
 * connector (2.1.1) name (mod_cdrs ChargingPeriod.tariff_id: "the Tariff that is relevant"),
 * else the first valid at its start; else the one named, among those the partner pushed us; else,
 * for a 2.2.1 CDR with no tariffs naming none, the one its connector names in our copy of the
 * location. More than one named: none (the engine prices a CDR with one).
 */
async function tariffOf(
  deps: CheckDeps,
  view: CdrView,
  key: ObjectKey,
  stored: StoredPlace,
): Promise<ChosenTariff | NoTariff> {
  const namer = view.namedBy === 'charging_period' ? 'charging periods' : 'connector';
  if (view.named.length > 1)
    return {
      reason: `its ${namer} name ${view.named.length} tariffs (${view.named.join(', ')}): a CDR is priced with one`,
    };
  const [id] = view.named;
  const own = view.own.find((t) => t.id === id) ?? selectTariff(view.own, Date.parse(view.start));
  if (own) return { tariff: own, id: own.id, source: 'cdr_tariffs' };
  if (id !== undefined)
    return pushedTariff(deps, key, { id, source: view.namedBy }, `named by its ${namer}`, Date.parse(view.start));
  if (view.own.length > 0)
    return {
      reason: `no tariff known: none of the CDR's ${view.own.length} tariffs is valid at its start, and its ${namer} name none`,
    };
  const none = `no tariff known: the CDR has no tariffs, and its ${namer} name none`;
  return view.connector
    ? connectorTariff(deps, key, view.connector, view.locationId, stored, none, Date.parse(view.start))
    : { reason: none };
}

/**
 * A 2.2.1 CDR naming no tariff: the tariff_ids of its connector in our copy of the partner's
 * location (mod_locations Connector: "the currently valid charging tariffs"), as a 2.1.1 CDR's
 * connector names its tariff. One id is used; several are not (which applied is not known).
 */
async function connectorTariff(
  deps: CheckDeps,
  key: ObjectKey,
  at: { evse_uid: string; connector_id: string },
  locationId: string,
  stored: StoredPlace,
  none: string,
  startMs: number,
): Promise<ChosenTariff | NoTariff> {
  if (!stored) return { reason: `${none}; location ${locationId} was not pushed to our locations Receiver` };
  const where = `connector ${at.connector_id} of EVSE ${at.evse_uid} at location ${locationId} as the partner pushed it`;
  const connector = stored.evses?.find((e) => e.uid === at.evse_uid)?.connectors.find((c) => c.id === at.connector_id);
  const ids = distinct(connector?.tariff_ids ?? []);
  const [id] = ids;
  if (id === undefined) return { reason: `${none}, nor does ${where}` };
  if (ids.length > 1) {
    // the type rule picks one when it leaves one: of those the partner gave us, the ones of a
    // roamed session's type valid at its start (ad hoc and charging-preference tariffs are not)
    const known = await Promise.all(
      ids.map((t) => deps.tariffs.get({ country_code: key.country_code, party_id: key.party_id, id: t })),
    );
    const given = known.filter((t): t is Tariff => t !== undefined);
    const eligible = given.filter((t) => tariffForRoaming(t) && tariffValidAt(t, startMs));
    const [only] = eligible;
    if (given.length === ids.length && eligible.length === 1 && only)
      return { tariff: only, id: only.id, source: 'connector' };
    return {
      reason:
        `${none}; ${where} names ${ids.length} tariffs (${ids.join(', ')}): which applied is not known` +
        (given.length === ids.length
          ? ` (${eligible.length} of them untyped or REGULAR and valid at its start)`
          : ` (${ids.length - given.length} of them not given to us)`),
    };
  }
  return pushedTariff(deps, key, { id, source: 'connector' }, `named by ${where}`, startMs);
}

/**
 * The partner's tariff `id` as we hold it, or, when the partner deleted it since (mod_tariffs
 * DELETE: "no longer in use"), its version last updated at or before `startMs`, with a note: a
 * session running when a CPO retires its tariff ends with a CDR that names it, and the check of
 * that CDR said the tariff was never given to us, or took the CDR's own copy of it unchecked.
 */
async function heldTariff(
  deps: CheckDeps,
  key: ObjectKey,
  id: string,
  startMs: number,
): Promise<{ tariff: Tariff; note?: string } | undefined> {
  const held = await deps.tariffs.get({ country_code: key.country_code, party_id: key.party_id, id });
  if (held) return { tariff: held };
  const kept = await deps.versions.inForceAt(key, id, startMs);
  if (!kept) return undefined;
  return {
    tariff: kept,
    note: `tariff ${id} was deleted by the partner since: its version of ${kept.last_updated}, in force at the start, is used`,
  };
}

/** A tariff the partner pushed to our tariffs Receiver, or why there is none. */
async function pushedTariff(
  deps: CheckDeps,
  key: ObjectKey,
  named: NamedTariff,
  by: string,
  startMs: number,
): Promise<ChosenTariff | NoTariff> {
  const pushed = await heldTariff(deps, key, named.id, startMs);
  if (pushed) return { ...named, ...pushed };
  return {
    reason: `tariff ${named.id} (${by}) is not known: ${key.country_code}-${key.party_id} has not given it to us (pushed to our tariffs Receiver, or listed on its tariffs Sender when we pulled it)`,
    waitsFor: named,
  };
}

/**
 * The zone restrictions are read in: that of the location a 2.1.1 CDR carries (the place as at
 * the session, sent with the CDR), else our copy of the partner's location's, else UTC (noted,
 * source `utc`). A 2.1.1 location pushed without a time_zone is held as Etc/UTC (Decisions 15):
 * for a 2.1.1 CDR that Etc/UTC is taken for no zone known, not for the partner's word.
 */
function zoneOf(view: CdrView, stored: StoredPlace, notes: string[]): { zone: string; source: ZoneSource } {
  const held = stored?.time_zone;
  const assumed = view.version === '2.1.1' && held === ASSUMED_211_ZONE;
  if (assumed && view.zone === undefined)
    notes.push(
      `location ${view.locationId} is held with ${ASSUMED_211_ZONE}, as a 2.1.1 location pushed without a time_zone is: taken for no zone known`,
    );
  const candidates: Array<[string | undefined, ZoneSource, string]> = [
    [view.zone, 'cdr_location', "the CDR's location"],
    [assumed ? undefined : held, 'location', `location ${view.locationId} as the partner pushed it`],
  ];
  for (const [zone, source, what] of candidates) {
    if (zone === undefined) continue;
    if (isTimeZone(zone)) return { zone, source };
    notes.push(`the time_zone of ${what} (${zone}) is no IANA time zone`);
  }
  // why none: the location never reached us, came without a zone, or with one no IANA name
  const why = !stored
    ? 'not pushed to our locations Receiver'
    : assumed || held === undefined
      ? 'pushed without a time_zone'
      : 'pushed with no IANA time zone';
  const inCdr =
    view.version !== '2.1.1' ? '' : view.zone === undefined ? ', none in the CDR' : ', none valid in the CDR';
  notes.push(`no time zone known for location ${view.locationId} (${why}${inCdr}): restrictions were read in UTC`);
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
  if (view.credit)
    return isCdr221(cdr) ? checkCredit(deps, key, cdr, base) : unpriced('a 2.1.1 CDR below 0: not re-priced');
  const stored = await deps.locations.get({ ...key, id: view.locationId });
  const chosen = await tariffOf(deps, view, key, stored);
  if (!('tariff' in chosen)) {
    if (!chosen.waitsFor) return unpriced(chosen.reason);
    detail.tariff = chosen.waitsFor;
    return { ...unpriced(chosen.reason), waitsForTariff: true };
  }
  detail.tariff = { id: chosen.id, source: chosen.source };
  if (chosen.note) detail.notes.push(chosen.note);
  detail.time_zone = zoneOf(view, stored, detail.notes);
  const used = await inForceAtStart(deps, key, chosen, view, detail.notes);
  // priced in UTC, a tariff that reads the local time would give a total that looks right and is
  // not: a dispute raised on a guess (as price-cdr refuses such a tariff without a zone)
  if (detail.time_zone.source === 'utc' && readsLocalTime(used.tariff))
    return unpriced(
      `no time zone known for location ${view.locationId}, and the tariff's restrictions read the local time (start_time, end_time, start_date, end_date or day_of_week)`,
    );
  const priced = await priceWith(deps, used, view, detail.time_zone.zone);
  if (typeof priced === 'string') return unpriced(priced);
  detail.priced = priced;
  for (const off of otherTotalsOff(view.stated, priced)) detail.notes.push(`the CDR's ${off}`);
  const ours = { excl_vat: priced.total_cost.excl_vat, incl_vat: priced.total_cost.incl_vat };
  const { difference, off } = compare(view.theirs, ours);
  if (off.length === 0) {
    const published = await againstPublished(deps, key, chosen, view, detail.time_zone.zone, detail.notes);
    if (published) {
      // what the check shows priced is what `ours` says: the published version's pricing
      detail.priced = published.priced;
      return {
        ...base,
        status: 'disagrees',
        ours: published.ours,
        difference: published.difference,
        reason: published.reason,
      };
    }
    return { ...base, status: 'agrees', ours, difference };
  }
  const changed = changedSinceStart(used, view);
  if (changed) return { ...base, status: 'unpriced', ours, difference, reason: `${off.join('; ')}; ${changed}` };
  return { ...base, status: 'disagrees', ours, difference, reason: off.join('; ') };
}

/**
 * A credit CDR (2.2.1 mod_cdrs "Credit CDRs") takes back the CDR it names in full: "the Credit CDR
 * will contain all the data of the original CDR", only its amounts negative. It is not priced: it
 * is held against that CDR as this party sent it to us. Its `total_cost` off by more than 0.01
 * from the CDR's, negated, or another currency `disagrees` (a partial credit is no credit: a
 * correction is a full credit, then a new CDR); volumes and times that differ are notes. A credit
 * of a CDR we have not received (checked again when it comes), or of a credit, is `unpriced`.
 */
async function checkCredit(
  deps: CheckDeps,
  key: ObjectKey,
  credit: Extract<StoredCdr, { cdr_token: unknown }>,
  base: Omit<CdrCheck, 'status'>,
): Promise<CdrCheck> {
  const ref = credit.credit_reference_id;
  const credited = ref === undefined ? undefined : await deps.cdrs.get({ ...key, id: ref });
  if (ref === undefined || !credited || viewOf(credited, key).credit) {
    const unpriced: CdrCheck = {
      ...base,
      status: 'unpriced',
      reason: `a credit CDR of ${ref === undefined ? 'no CDR named' : `CDR ${ref}`}, ${credited ? 'itself a credit' : 'which this party has not sent us (checked again when it comes)'}: nothing to hold it against`,
    };
    return ref !== undefined && !credited ? { ...unpriced, waitsForCredited: true } : unpriced;
  }
  const billed = viewOf(credited, key);
  const negate = (n: number) => reported(dec(0).minus(dec(n)));
  const ours: Amounts =
    billed.theirs.incl_vat === undefined
      ? { excl_vat: negate(billed.theirs.excl_vat) }
      : { excl_vat: negate(billed.theirs.excl_vat), incl_vat: negate(billed.theirs.incl_vat) };
  const off: string[] = [];
  const differ = (field: 'excl_vat' | 'incl_vat'): number | undefined => {
    const theirs = base.theirs[field];
    const expected = ours[field];
    if (theirs === undefined && expected !== undefined)
      base.detail.notes.push(`the credit states no total_cost ${field}; the credited CDR's, negated, is ${expected}`);
    if (theirs === undefined || expected === undefined) return undefined;
    const d = dec(theirs).minus(dec(expected));
    if (d.abs().greaterThan(TOLERANCE))
      off.push(`total_cost ${field}: theirs ${theirs}, the credited CDR's negated ${expected}`);
    return reported(d);
  };
  const excl = differ('excl_vat') ?? 0;
  const incl = differ('incl_vat');
  const difference: Amounts = incl === undefined ? { excl_vat: excl } : { excl_vat: excl, incl_vat: incl };
  // the first credit to come is the one: those after it disagree, whatever came first of them
  // and the CDR (its checks run again when it comes after them)
  const credits = await deps.creditsOf(key, ref);
  const mine = credits.indexOf(key.id);
  const earlier = mine < 0 ? credits : credits.slice(0, mine);
  if (earlier.length > 0)
    off.push(
      `CDR ${ref} was credited before by ${earlier.slice(0, 5).join(', ')}: a second credit takes back what was billed once`,
    );
  if (billed.currency !== credit.currency)
    off.push(`currency: theirs ${credit.currency}, the credited CDR's ${billed.currency}`);
  base.detail.notes.push(`credits CDR ${ref}, which billed ${billed.theirs.excl_vat} ${billed.currency} excl. VAT`);
  const stated = statedOf(credit).volumes;
  for (const [k, theirs] of Object.entries(stated) as Array<[Volume, number]>) {
    const was = billed.stated.volumes[k];
    if (was !== undefined && dec(theirs).minus(dec(was)).abs().greaterThan(VOLUME_TOLERANCE))
      base.detail.notes.push(`the credit's ${k} is ${theirs}, the credited CDR's ${was}`);
  }
  if (off.length === 0) return { ...base, status: 'agrees', ours, difference };
  return { ...base, status: 'disagrees', ours, difference, reason: off.join('; ') };
}

/**
 * `CheckDeps.creditsOf` on the objects table: the credit CDRs of the party (`published` 2: a
 * credit, object-store.ts `visibilityOf`) whose text names the CDR, in the order they were first
 * stored (`created_ms`, then id). A scan of that party's credits only, in the background check of
 * a credit.
 */
export function creditsNaming(sql: Pick<SqlRunner, 'query'>): CheckDeps['creditsOf'] {
  return async (party, credited) => {
    const needle = JSON.stringify(credited).replace(/[\\%_]/g, (c) => `\\${c}`);
    const rows = await sql.query(
      `SELECT object_id FROM ocpi_object WHERE module = 'cdrs' AND country_code = ? AND party_id = ? AND published = 2
         AND data LIKE ? ESCAPE '\\' ORDER BY created_ms, object_id`,
      [party.country_code, party.party_id, `%"credit_reference_id":${needle}%`],
    );
    return rows.map((r) => String(r.object_id));
  };
}

/** What of a tariff prices a session: all but its texts, energy mix and `last_updated`. */
function pricingOf(t: PricingTariff): string {
  const { currency, type, elements, min_price, max_price, start_date_time, end_date_time } = t;
  return canonicalJson({ currency, type, elements, min_price, max_price, start_date_time, end_date_time });
}

/**
 * A CDR priced right by a tariff of its own `tariffs` that is not the one the partner gave us:
 * the version of the same id our tariffs Receiver holds as in force at the session's start
 * prices otherwise. A CPO could bill 0.99 a kWh by a tariff it names in the CDR while the one it
 * pushed, the one the driver was shown, said 0.30, and the check said `agrees`. Priced with the
 * published version, a total off by more than 0.01 `disagrees` (ours then is that price); one
 * within it, or a version we do not hold as at the start, is a note.
 */
async function againstPublished(
  deps: CheckDeps,
  key: ObjectKey,
  chosen: ChosenTariff,
  view: CdrView,
  zone: string,
  notes: string[],
): Promise<
  { ours: Amounts & { incl_vat: number }; difference: Amounts; reason: string; priced: PricedCdr } | undefined
> {
  if (chosen.source !== 'cdr_tariffs') return undefined;
  const start = Date.parse(view.start);
  const found = await heldTariff(deps, key, chosen.id, start);
  if (!found) return undefined;
  const held = found.tariff;
  if (found.note) notes.push(found.note);
  const atStart = Date.parse(held.last_updated) > start ? await deps.versions.inForceAt(key, chosen.id, start) : held;
  const stated = `the CDR's tariff ${chosen.id} (last_updated ${chosen.tariff.last_updated})`;
  if (!atStart) {
    if (pricingOf(held) !== pricingOf(chosen.tariff))
      notes.push(
        `${stated} differs from the one the partner gave us, updated at ${held.last_updated}, after the session started; its version of the start is not held`,
      );
    return undefined;
  }
  if (pricingOf(atStart) === pricingOf(chosen.tariff)) return undefined;
  const given =
    atStart.last_updated === chosen.tariff.last_updated
      ? `the version the partner gave us with the same last_updated`
      : `the version the partner gave us (last_updated ${atStart.last_updated})`;
  const priced = await priceWith(deps, { ...chosen, tariff: atStart }, view, zone);
  if (typeof priced === 'string') {
    notes.push(`${stated} differs from ${given}, which could not price it: ${priced}`);
    return undefined;
  }
  const ours = { excl_vat: priced.total_cost.excl_vat, incl_vat: priced.total_cost.incl_vat };
  const { difference, off } = compare(view.theirs, ours);
  if (off.length === 0) {
    notes.push(`${stated} differs from ${given}, which prices it the same`);
    return undefined;
  }
  return {
    ours,
    difference,
    priced,
    reason: `${stated} is not ${given}, which prices it otherwise: ${off.join('; ')}`,
  };
}

/**
 * A pushed tariff updated after the session started: the version in force at the start, when we
 * kept it (src/ocpi/tariffs/versions.ts; mod_tariffs: "a driver accepts the tariff which is valid
 * when they start their charging session"), noted; else the tariff as it is (`changedSinceStart`).
 */
async function inForceAtStart(
  deps: CheckDeps,
  key: ObjectKey,
  chosen: ChosenTariff,
  view: CdrView,
  notes: string[],
): Promise<ChosenTariff> {
  const updated = chosen.tariff.last_updated;
  const start = Date.parse(view.start);
  if (chosen.source === 'cdr_tariffs' || updated === undefined || !(Date.parse(updated) > start)) return chosen;
  const earlier = await deps.versions.inForceAt(key, chosen.id, start);
  if (!earlier) return chosen;
  notes.push(
    `tariff ${chosen.id} was updated at ${updated}, after the session started (${view.start}): priced with its version of ${earlier.last_updated}, in force at the start`,
  );
  return { ...chosen, tariff: earlier };
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
