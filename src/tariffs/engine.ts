import { describeLocal, isTimeZone, localTimeAt } from './local-time.js';
import { parseRealInstant } from '../rfc3339.js';
import {
  NO_AMOUNT,
  VolumeSum,
  ZERO,
  costOf,
  dec,
  microOf,
  plus,
  priceOf,
  reported,
  type Amount,
  type Decimal,
  type Quantity,
} from './money.js';
import { holds, readRestriction, type PeriodFacts, type Restriction } from './restrictions.js';
import type {
  PricingTariff,
  DimensionBreakdown,
  PeriodBreakdown,
  PriceOutcome,
  PricedCdr,
  PricingCdr,
  PricingPeriod,
} from './types.js';

/**
 * The OCPI 2.2.1 pricing engine (docs/TARIFFS.md): a CDR's charging periods priced with a tariff,
 * in the location's time zone. Pure: no I/O, no clock. The rules, each with its source, are in
 * docs/TARIFFS.md; the ones that need a word here are commented where they are applied.
 */

type Priced = 'ENERGY' | 'TIME' | 'PARKING_TIME' | 'RESERVATION_TIME';

interface Component {
  price: Decimal;
  /** 1 + VAT/100; undefined when the component has no VAT */
  vat: Decimal | undefined;
  step_size: number;
  price_number: number;
  vat_number: number | undefined;
}

interface Element {
  /** 1-based, as an operator counts them in the tariff */
  number: number;
  restriction: Restriction;
  components: Partial<Record<'ENERGY' | 'TIME' | 'PARKING_TIME' | 'FLAT', Component>>;
}

/** min_price or max_price; without incl_vat, the bound of the amount incl. VAT follows excl. VAT's */
interface Bound {
  excl: Decimal;
  incl: Decimal | undefined;
}

interface ReadTariff {
  elements: Element[];
  /**
   * The elements that may price each type, in order: ordinary elements with a component of the
   * type price charging and parking; reservation elements (by their `reservation` restriction)
   * price reservation time with their TIME component; RESERVATION_EXPIRES elements with a FLAT
   * component charge an expired reservation's fee (EXPIRY_FEE).
   */
  candidates: Record<
    'ENERGY' | 'TIME' | 'PARKING_TIME' | 'FLAT' | 'RESERVATION' | 'RESERVATION_EXPIRES' | 'EXPIRY_FEE',
    Element[]
  >;
  /** whether an element has min_kwh or max_kwh (the energy before each period is then tracked) */
  kwhBounds: boolean;
  min: Bound | undefined;
  max: Bound | undefined;
  /**
   * 1 + VAT/100 when every price component of the tariff has the same VAT: the rate a bound
   * without `incl_vat` takes on a session that cost nothing (`clampToBounds`)
   */
  commonVat: Decimal | undefined;
}

const NO_QUANTITY: Quantity = Object.freeze({ micro: 0, rest: undefined });

const readTariffs = new WeakMap<PricingTariff, ReadTariff>();

/** The tariff with its numbers as decimals, read once per tariff object. */
function readTariff(t: PricingTariff): ReadTariff {
  const cached = readTariffs.get(t);
  if (cached) return cached;
  const elements = t.elements.map((e, i): Element => {
    // one object shape for every element (absent types undefined), so that reading a type is cheap
    const components: Element['components'] = {
      ENERGY: undefined,
      TIME: undefined,
      PARKING_TIME: undefined,
      FLAT: undefined,
    };
    // "the first Tariff Element with that Dimension": within an element, the first component of a type
    for (const c of e.price_components) {
      components[c.type] ??= {
        price: dec(c.price),
        vat: c.vat === undefined ? undefined : dec(100).plus(dec(c.vat)).shifted(2),
        step_size: c.step_size,
        price_number: c.price,
        vat_number: c.vat,
      };
    }
    return { number: i + 1, restriction: readRestriction(e.restrictions), components };
  });
  const amount = (p: PricingTariff['min_price']): Bound | undefined =>
    p === undefined
      ? undefined
      : { excl: dec(p.excl_vat), incl: p.incl_vat === undefined ? undefined : dec(p.incl_vat) };
  const kwhBounds = elements.some((e) => e.restriction.min_kwh !== undefined || e.restriction.max_kwh !== undefined);
  const ordinary = (type: 'ENERGY' | 'TIME' | 'PARKING_TIME' | 'FLAT'): Element[] =>
    elements.filter((e) => e.components[type] && e.restriction.reservation === undefined);
  const reserving = (kind: 'RESERVATION' | 'RESERVATION_EXPIRES'): Element[] =>
    elements.filter((e) => e.components.TIME && e.restriction.reservation === kind);
  const candidates = {
    ENERGY: ordinary('ENERGY'),
    TIME: ordinary('TIME'),
    PARKING_TIME: ordinary('PARKING_TIME'),
    FLAT: ordinary('FLAT'),
    RESERVATION: reserving('RESERVATION'),
    RESERVATION_EXPIRES: reserving('RESERVATION_EXPIRES'),
    EXPIRY_FEE: elements.filter((e) => e.components.FLAT && e.restriction.reservation === 'RESERVATION_EXPIRES'),
  };
  const read = {
    elements,
    candidates,
    kwhBounds,
    min: amount(t.min_price),
    max: amount(t.max_price),
    commonVat: commonVatOf(t),
  };
  readTariffs.set(t, read);
  return read;
}

/** 1 + VAT/100 when every price component has that same VAT; undefined when one has none or another. */
function commonVatOf(t: PricingTariff): Decimal | undefined {
  const rates = new Set(t.elements.flatMap((e) => e.price_components.map((c) => c.vat)));
  const [vat] = rates;
  return rates.size === 1 && vat !== undefined ? dec(100).plus(dec(vat)).shifted(2) : undefined;
}

/** Whether `tariff` is the one to use for a session started at `startMs` (its validity window). */
export function tariffValidAt(tariff: PricingTariff, startMs: number): boolean {
  if (tariff.start_date_time !== undefined && startMs < parseRealInstant(tariff.start_date_time)) return false;
  if (tariff.end_date_time !== undefined && startMs >= parseRealInstant(tariff.end_date_time)) return false;
  return true;
}

/**
 * Whether `tariff` is of a type that prices a roamed session: one with no `type` ("valid for all
 * sessions") or REGULAR ("valid when using an RFID, without any Charging Preference"), mod_tariffs
 * TariffType. An eMSP's driver, by card or by app, neither pays ad hoc at the charger
 * (AD_HOC_PAYMENT) nor sets a Charging Preference (PROFILE_CHEAP, _FAST, _GREEN: the platform
 * offers none), so those tariffs are not theirs.
 */
export function tariffForRoaming(tariff: PricingTariff): boolean {
  return tariff.type === undefined || tariff.type === 'REGULAR';
}

/**
 * Of the tariffs a connector names (`tariff_ids`, in order), the one that applies to a roamed
 * session started at `startMs`: the first of a roamed session's type (`tariffForRoaming`) whose
 * validity window holds it (mod_tariffs: "a driver accepts the tariff which is valid when they
 * start their charging session").
 */
export function selectTariff<T extends PricingTariff>(tariffs: readonly T[], startMs: number): T | undefined {
  return tariffs.find((t) => tariffForRoaming(t) && tariffValidAt(t, startMs));
}

interface Options {
  /** the per-period and per-dimension breakdown (default true); totals alone are cheaper */
  breakdown?: boolean;
  /** the CDR's instants, parsed already (else read from its strings) */
  times?: CdrTimes;
}

interface PeriodAt {
  period: PricingPeriod;
  start: number;
  end: number;
}

interface DimensionTotal {
  volume: VolumeSum;
  /** the volume each component priced, summed: one multiplication per component, not per period */
  priced: Map<Component, VolumeSum>;
  /** the step_size surplus, once known */
  cost: Amount;
  /** the component of the last period that priced the dimension (its step_size surplus is billed there), and its element */
  last: Component | undefined;
  lastElement: number;
  /**
   * Where the dimension went from a component to no element pricing it (mod_tariffs step_size
   * NOTE: "when switching to another TariffElement for the PriceComponents that is not in the
   * new TariffElement"): the component, its element and the volume priced up to there. Its
   * step rounds that volume up at that point (`stepUp`).
   */
  switches: Array<{ c: Component; element: number; used: Decimal }>;
}

/** A dimension's volume billed up to its last step rounding (step unit), and the volume used then. */
interface Billed {
  to: Decimal;
  usedAt: Decimal;
}

function costOfTotal(total: DimensionTotal): Amount {
  let cost = total.cost;
  for (const [c, volume] of total.priced) cost = plus(cost, costOf(volume.value(), c.price, c.vat));
  return cost;
}

const STEP_UNIT: Record<Priced, number> = {
  // ENERGY volumes are kWh and steps Wh; the time dimensions are hours and steps seconds
  ENERGY: 1000,
  TIME: 3600,
  PARKING_TIME: 3600,
  RESERVATION_TIME: 3600,
};

/**
 * The largest amount or volume answered: 4 decimals on a double are exact up to 2^53 / 10^4
 * (about 9.007e11); beyond, a total would be rounded silently (docs/TARIFFS.md).
 */
const LARGEST_AMOUNT = 900_000_000_000;

function representable(n: number): boolean {
  return Math.abs(n) <= LARGEST_AMOUNT;
}

function failure(code: 'invalid_tariff' | 'invalid_cdr', message: string): PriceOutcome {
  return { ok: false, code, message };
}

/** The CDR's instants as epoch ms, when the caller has them already (the pricing threads, wire.ts). */
export interface CdrTimes {
  start: number;
  end: number;
  /** each period's start, in order */
  periods: readonly number[];
}

export function timesOf(cdr: PricingCdr): CdrTimes {
  return {
    start: parseRealInstant(cdr.start_date_time),
    end: parseRealInstant(cdr.end_date_time),
    periods: cdr.charging_periods.map((p) => parseRealInstant(p.start_date_time)),
  };
}

/** Checks what a schema cannot: the order of things in time, the currency, the zone. */
function checkInput(
  tariff: PricingTariff,
  cdr: PricingCdr,
  timeZone: string,
  times: CdrTimes,
): PriceOutcome | PeriodAt[] {
  if (!isTimeZone(timeZone)) return failure('invalid_cdr', `time_zone ${timeZone} is not an IANA time zone`);
  const { start, end } = times;
  if (!Number.isFinite(start) || !Number.isFinite(end) || !times.periods.every(Number.isFinite))
    return failure(
      'invalid_cdr',
      'a date of the CDR or of a charging period is no real instant (year 0001 on, a day of the calendar)',
    );
  for (const field of ['start_date_time', 'end_date_time'] as const) {
    const text = tariff[field];
    if (text !== undefined && !Number.isFinite(parseRealInstant(text)))
      return failure(
        'invalid_tariff',
        `the tariff's ${field} is no real instant (year 0001 on, a day of the calendar)`,
      );
  }
  if (end < start) return failure('invalid_cdr', 'end_date_time is before start_date_time');
  if (cdr.currency !== undefined && cdr.currency !== tariff.currency)
    return failure('invalid_cdr', `the CDR is in ${cdr.currency}, the tariff in ${tariff.currency}`);
  if (!tariffValidAt(tariff, start))
    return failure('invalid_tariff', 'the tariff is not valid at the session start (start_date_time/end_date_time)');
  const periods = cdr.charging_periods;
  const out: PeriodAt[] = [];
  const starts = times.periods;
  for (let i = 0; i < periods.length; i++) {
    const period = periods[i] as PricingPeriod;
    const at = starts[i] as number;
    const until = starts[i + 1] ?? end;
    // the last period runs to the end: one starting after it is said so, not as out of order
    if (at > end) return failure('invalid_cdr', `charging_periods[${i}] starts after end_date_time`);
    if (until < at) return failure('invalid_cdr', `charging_periods[${i + 1}] starts before charging_periods[${i}]`);
    for (const d of period.dimensions) {
      if (d.volume < 0 && isPriced(d.type))
        return failure(
          'invalid_cdr',
          d.type === 'ENERGY'
            ? `charging_periods[${i}] has a negative ENERGY volume (energy fed back to the grid): not priced, this engine prices charging only`
            : `charging_periods[${i}] has a negative ${d.type} volume`,
        );
    }
    out.push({ period, start: at, end: until });
  }
  return out;
}

/** The facts restrictions are evaluated on, at the start of a period: one pass over its dimensions. */
function factsOf(p: PeriodAt, sessionStart: number, energyBefore: Quantity, timeZone: string): PeriodFacts {
  let energy: number | undefined;
  let power: number | undefined;
  let minPower: number | undefined;
  let maxPower: number | undefined;
  let current: number | undefined;
  let minCurrent: number | undefined;
  let maxCurrent: number | undefined;
  // a dimension given twice counts with its sum, as the volumes of one type add up
  for (const d of p.period.dimensions) {
    const v = d.volume;
    switch (d.type) {
      case 'ENERGY':
        energy = (energy ?? 0) + v;
        break;
      case 'POWER':
        power = (power ?? 0) + v;
        break;
      case 'MIN_POWER':
        minPower = (minPower ?? 0) + v;
        break;
      case 'MAX_POWER':
        maxPower = (maxPower ?? 0) + v;
        break;
      case 'CURRENT':
        current = (current ?? 0) + v;
        break;
      case 'MIN_CURRENT':
        minCurrent = (minCurrent ?? 0) + v;
        break;
      case 'MAX_CURRENT':
        maxCurrent = (maxCurrent ?? 0) + v;
        break;
    }
  }
  const hours = (p.end - p.start) / 3_600_000;
  // without a reported power, the average over the period (energy over time) is its power
  power ??= energy !== undefined && hours > 0 ? energy / hours : undefined;
  return {
    local: localTimeAt(timeZone, p.start),
    duration_s: Math.max(0, (p.start - sessionStart) / 1000),
    energy_before: energyBefore,
    min_power: minPower ?? power,
    max_power: maxPower ?? power,
    min_current: minCurrent ?? current,
    max_current: maxCurrent ?? current,
  };
}

/**
 * The element that prices a type in a period: the first of its candidates (ReadTariff.candidates:
 * the elements with a component of the type, in the tariff's order) whose restrictions hold
 * (mod_tariffs "PricingTariff Object").
 */
function elementFor(candidates: readonly Element[], facts: PeriodFacts, memo: Memo): Element | undefined {
  for (let i = 0; i < candidates.length; i++) {
    const e = candidates[i] as Element;
    let known = memo[e.number - 1];
    if (known === UNKNOWN) memo[e.number - 1] = known = holds(e.restriction, facts) ? HOLDS : FAILS;
    if (known === HOLDS) return e;
  }
  return undefined;
}

/** Per element, whether its restrictions hold in the period at hand: not asked yet, or the answer. */
type Memo = Uint8Array;
const UNKNOWN = 0;
const HOLDS = 1;
const FAILS = 2;

type Fee = { cost: Amount; element: number } | undefined;

const newTotal = (): DimensionTotal => ({
  volume: new VolumeSum(),
  priced: new Map(),
  cost: NO_AMOUNT,
  last: undefined,
  lastElement: 0,
  switches: [],
});

/** CdrDimensionType of OCPI 2.2.1 (mod_cdrs), and 2.1.1's FLAT. */
const KNOWN_DIMENSIONS: ReadonlySet<string> = new Set([
  'CURRENT',
  'ENERGY',
  'ENERGY_EXPORT',
  'ENERGY_IMPORT',
  'MAX_CURRENT',
  'MIN_CURRENT',
  'MAX_POWER',
  'MIN_POWER',
  'PARKING_TIME',
  'POWER',
  'RESERVATION_TIME',
  'STATE_OF_CHARGE',
  'TIME',
  'FLAT',
]);

const isPriced = (type: string): type is Priced =>
  type === 'ENERGY' || type === 'TIME' || type === 'PARKING_TIME' || type === 'RESERVATION_TIME';

/** One CDR being priced: its periods one after the other, then the session-wide rules. */
class SessionPricing {
  private readonly totals: Record<Priced, DimensionTotal> = {
    ENERGY: newTotal(),
    TIME: newTotal(),
    PARKING_TIME: newTotal(),
    RESERVATION_TIME: newTotal(),
  };
  private readonly energyBefore = new VolumeSum();
  private flat: Fee;
  private reservationFlat: Fee;
  /** an expired reservation's fee, from a RESERVATION_EXPIRES element that does not price its time */
  private expiryFee: Fee;
  private readonly periods: PeriodBreakdown[] = [];
  private readonly steps: PricedCdr['breakdown']['steps'] = [];
  private readonly warnings: string[] = [];
  private warnedDuration = false;
  private readonly warnedTypes = new Set<string>();
  private readonly sessionStart: number;
  /** per element, whether its restrictions hold in the period at hand (UNKNOWN: not asked yet) */
  private readonly memo: Memo;

  constructor(
    private readonly t: ReadTariff,
    private readonly times: CdrTimes,
    private readonly timeZone: string,
    private readonly withBreakdown: boolean,
    /** an expired reservation is one with no charging after it: RESERVATION_EXPIRES elements price it */
    private readonly charged: boolean,
  ) {
    this.sessionStart = times.start;
    this.memo = new Uint8Array(t.elements.length);
  }

  period(p: PeriodAt): void {
    // the kWh before the period matter only to a tariff with kWh bounds
    const before = this.t.kwhBounds ? this.energyBefore.quantity() : NO_QUANTITY;
    const facts = factsOf(p, this.sessionStart, before, this.timeZone);
    const memo = this.memo;
    memo.fill(UNKNOWN);
    const dims: DimensionBreakdown[] | undefined = this.withBreakdown ? [] : undefined;
    let isReservation = false;
    for (const d of p.period.dimensions) if (d.type === 'RESERVATION_TIME') isReservation = true;
    if (p.start < this.sessionStart && !isReservation && this.warnings.length === 0)
      this.warnings.push(
        'a charging period starts before start_date_time: total_time counts from start_date_time, durations too',
      );
    // read with the breakdown only: the pool's bulk pricing does not carry warnings
    if (this.withBreakdown) {
      this.checkDurations(p);
      this.checkTypes(p);
    }
    // FLAT: once per session, from the first period where an element with a FLAT component holds
    if (!isReservation && this.flat === undefined) {
      const e = elementFor(this.t.candidates.FLAT, facts, memo);
      this.flat = feeOf(e);
    }
    for (const d of p.period.dimensions) {
      if (!isPriced(d.type)) continue;
      const dim = this.dimension(d.type, d.volume, facts, memo);
      if (dim && dims) dims.push(dim);
    }
    if (dims)
      this.periods.push({
        start_date_time: p.period.start_date_time,
        end_date_time: new Date(p.end).toISOString(),
        local_time: describeLocal(this.timeZone, p.start),
        dimensions: dims,
      });
  }

  /**
   * A CDR that contradicts itself is priced as sent, and says so once: a period with more TIME or
   * PARKING_TIME than it lasts (two periods with one start, the first lasting nothing, among them).
   */
  private checkDurations(p: PeriodAt): void {
    if (this.warnedDuration) return;
    const hours = (p.end - p.start) / 3_600_000;
    for (const d of p.period.dimensions) {
      if ((d.type === 'TIME' || d.type === 'PARKING_TIME') && d.volume > hours + 1 / 3600) {
        this.warnedDuration = true;
        this.warnings.push(
          `a charging period from ${p.period.start_date_time} has ${d.volume} h of ${d.type} but lasts ${reported(dec(hours))} h: priced as sent`,
        );
        return;
      }
    }
  }

  /**
   * A dimension of a type OCPI does not define ("FOO", or "energy": enumerations are
   * case-sensitive) prices nothing: said once per type, so that a total of 0 has its reason.
   */
  private checkTypes(p: PeriodAt): void {
    for (const d of p.period.dimensions) {
      if (KNOWN_DIMENSIONS.has(d.type) || this.warnedTypes.has(d.type)) continue;
      this.warnedTypes.add(d.type);
      this.warnings.push(
        `a charging period from ${p.period.start_date_time} has a dimension of type ${JSON.stringify(d.type).slice(0, 80)}, which OCPI does not define: not priced`,
      );
    }
  }

  /** One dimension of a period: its volume to its component; its line of the breakdown. */
  private dimension(type: Priced, volume: number, facts: PeriodFacts, memo: Memo): DimensionBreakdown | undefined {
    const total = this.totals[type];
    // the volume in millionths once, for the three sums it goes to
    const micro = microOf(volume);
    total.volume.add(volume, micro);
    const e =
      type === 'RESERVATION_TIME'
        ? this.reservationElement(facts, memo)
        : elementFor(this.t.candidates[type], facts, memo);
    const c = e?.components[type === 'RESERVATION_TIME' ? 'TIME' : type];
    if (type === 'ENERGY' && this.t.kwhBounds) this.energyBefore.add(volume, micro);
    if (!e || !c) {
      // the dimension's pricing switched to no element: its last component's step applies here.
      // A volume of 0 (a period that lists ENERGY 0) used none of the dimension: no switch
      if (total.last && volume > 0) {
        total.switches.push({ c: total.last, element: total.lastElement, used: this.pricedVolume(type) });
        total.last = undefined;
      }
      if (!this.withBreakdown) return undefined;
      return { type, volume, cost: { excl_vat: 0, incl_vat: 0 }, reason: `no element prices ${type}` };
    }
    let sum = total.priced.get(c);
    if (sum === undefined) total.priced.set(c, (sum = new VolumeSum()));
    sum.add(volume, micro);
    // the step's surplus goes to the last period that used the dimension: one that lists it
    // with 0 (a charging period without energy) would bill a whole step at its price for nothing
    if (volume > 0) {
      total.last = c;
      total.lastElement = e.number;
    }
    if (!this.withBreakdown) return undefined;
    return {
      type,
      volume,
      element: e.number,
      price: c.price_number,
      ...(c.vat_number === undefined ? {} : { vat: c.vat_number }),
      cost: priceOf(costOf(dec(volume), c.price, c.vat)),
      reason: `element ${e.number} (${e.restriction.text})`,
    };
  }

  private reservationElement(facts: PeriodFacts, memo: Memo): Element | undefined {
    const wanted = this.charged ? 'RESERVATION' : 'RESERVATION_EXPIRES';
    let e = elementFor(this.t.candidates[wanted], facts, memo);
    // no RESERVATION_EXPIRES element: the RESERVATION one prices an expired reservation too
    if (!e && wanted === 'RESERVATION_EXPIRES') e = elementFor(this.t.candidates.RESERVATION, facts, memo);
    if (e && this.reservationFlat === undefined) this.reservationFlat = feeOf(e);
    // an expired reservation pays its reserved time and the expiration fee (mod_tariffs, the
    // example with a reservation price and an expire fee): a RESERVATION_EXPIRES element with a
    // FLAT alone charges the fee beside the RESERVATION element that priced the time
    if (!this.charged && this.expiryFee === undefined) {
      const fee = elementFor(this.t.candidates.EXPIRY_FEE, facts, memo);
      if (fee && fee !== e) this.expiryFee = feeOf(fee);
    }
    return e;
  }

  /**
   * Rounds a dimension's volume up to whole steps (mod_tariffs step_size NOTE): at each switch to
   * no element pricing it, with the component it switched from, then at the end with the
   * component of the last period that priced it. Each rounding counts the volume priced so far
   * and the surplus billed before it ("considering the already billed ..." in the NOTE's
   * examples), so that using more never bills less.
   */
  stepUp(type: Priced): void {
    const total = this.totals[type];
    let billed: Billed = { to: ZERO, usedAt: ZERO };
    for (const s of total.switches) billed = this.roundUp(type, s.c, s.element, s.used, billed);
    if (total.last) this.roundUp(type, total.last, total.lastElement, this.pricedVolume(type), billed);
  }

  /**
   * One rounding of `type` with component `c`, `priced` being the volume priced so far (CDR
   * unit): what was billed up to the last rounding, plus what was used since, up to whole steps;
   * the surplus is billed at `c`. Volumes in the step's unit (Wh, seconds). Whole steps are
   * counted on time to the second, so that hours written with 4 or 6 decimals (0.1667 h for 10
   * minutes) do not bill a step more than was used; what is billed is those steps. Time used that
   * rounds to no second at all still bills one step (step_size: the minimum billed). Only what
   * components priced is rounded (time no element priced stays free).
   */
  private roundUp(type: Priced, c: Component, element: number, priced: Decimal, billed: Billed): Billed {
    if (c.step_size <= 0) return billed;
    const unit = STEP_UNIT[type];
    const used = priced.times(dec(unit));
    const since = used.minus(billed.usedAt);
    const toSecond = unit === 3600 ? since.rounded(0) : since;
    const target = billed.to.plus(toSecond.isZero() ? since : toSecond).ceilToMultiple(c.step_size);
    const extra = target.minus(billed.to.plus(since));
    const next = { to: target, usedAt: used };
    if (extra.isZero()) return next;
    const cost = costOf(extra, c.price, c.vat, dec(unit));
    const total = this.totals[type];
    total.cost = plus(total.cost, cost);
    if (this.withBreakdown) {
      const surplus = reported(extra.dividedBy(dec(unit)));
      this.steps.push({ type, step_size: c.step_size, surplus, element, cost: priceOf(cost) });
    }
    return next;
  }

  /** The volume of a dimension that components priced, in its CDR unit (kWh, hours). */
  pricedVolume(type: Priced): Decimal {
    let used = ZERO;
    for (const v of this.totals[type].priced.values()) used = used.plus(v.value());
    return used;
  }

  /** The session-wide rules once every period is in, and the totals. */
  finish(currency: string): PricedCdr {
    this.stepUp('ENERGY');
    // TIME and PARKING_TIME share one rounding: when parking is priced it takes the step (the
    // session ends parked), otherwise charging time does (docs/TARIFFS.md "step_size"). A
    // parking dimension of no time is no parking: it leaves the step to charging time.
    const parked = this.totals.PARKING_TIME.priced.size > 0 && !this.pricedVolume('PARKING_TIME').isZero();
    this.stepUp(parked ? 'PARKING_TIME' : 'TIME');
    this.stepUp('RESERVATION_TIME');
    const fixed = this.flat?.cost ?? NO_AMOUNT;
    const energy = costOfTotal(this.totals.ENERGY);
    const time = costOfTotal(this.totals.TIME);
    const parking = costOfTotal(this.totals.PARKING_TIME);
    const reservation = [
      costOfTotal(this.totals.RESERVATION_TIME),
      this.reservationFlat?.cost ?? NO_AMOUNT,
      this.expiryFee?.cost ?? NO_AMOUNT,
    ].reduce(plus);
    const sum = [fixed, reservation, energy, time, parking].reduce(plus);
    const { total, clamped } = clampToBounds(this.t, sum);
    // the session's duration (mod_cdrs: total_time), whatever its periods say
    const hours = hoursOf(Math.max(0, this.times.end - this.sessionStart));
    return {
      currency,
      total_cost: priceOf(total),
      total_fixed_cost: priceOf(fixed),
      total_energy: reported(this.totals.ENERGY.volume.value()),
      total_energy_cost: priceOf(energy),
      total_time: hours,
      total_time_cost: priceOf(time),
      total_parking_time: reported(this.totals.PARKING_TIME.volume.value()),
      total_parking_cost: priceOf(parking),
      total_reservation_cost: priceOf(reservation),
      breakdown: {
        periods: this.periods,
        steps: this.steps,
        ...(this.flat ? { flat: { element: this.flat.element, cost: priceOf(this.flat.cost) } } : {}),
        ...(this.reservationFlat
          ? { reservation_flat: { element: this.reservationFlat.element, cost: priceOf(this.reservationFlat.cost) } }
          : {}),
        ...(this.expiryFee
          ? { reservation_expiry_fee: { element: this.expiryFee.element, cost: priceOf(this.expiryFee.cost) } }
          : {}),
        before_clamp: priceOf(sum),
        clamped,
        warnings: this.warnings,
      },
    };
  }
}

/** ms as hours to 4 decimals, half away from zero: whole 0.0001 h are 360 ms. */
function hoursOf(ms: number): number {
  if (!Number.isSafeInteger(ms)) return reported(dec(ms).dividedBy(dec(3_600_000)));
  const units = Math.floor(ms / 360);
  return (2 * (ms - units * 360) >= 360 ? units + 1 : units) / 10_000;
}

/** The FLAT fee of an element, if it has one. */
function feeOf(e: Element | undefined): Fee {
  const c = e?.components.FLAT;
  return e && c ? { cost: costOf(dec(1), c.price, c.vat), element: e.number } : undefined;
}

/**
 * min_price and max_price: both apply to both amounts, each on its own (mod_tariffs NOTEs). A
 * bound given without incl_vat moves the amount incl. VAT in proportion to the one excl. VAT
 * (the session's own VAT), rather than leaving it above the bound or dropping the VAT.
 */
function clampToBounds(t: ReadTariff, sum: Amount): { total: Amount; clamped: string[] } {
  const clamped: string[] = [];
  let { excl, incl } = sum;
  const bounds: [string, Bound | undefined, (value: Decimal, limit: Decimal) => boolean][] = [
    ['min_price', t.min, (v, l) => v.lessThan(l)],
    ['max_price', t.max, (v, l) => v.greaterThan(l)],
  ];
  for (const [name, b, beyond] of bounds) {
    if (!b) continue;
    const before = excl;
    if (beyond(excl, b.excl)) {
      excl = b.excl;
      clamped.push(`${name} excl_vat`);
    }
    if (b.incl !== undefined && beyond(incl, b.incl)) {
      incl = b.incl;
      clamped.push(`${name} incl_vat`);
    } else if (b.incl === undefined && !excl.equals(before)) {
      // a session that cost nothing has no rate of its own: the tariff's, when all its
      // components share one (a minimum of 2.00 on a tariff of 21% everywhere is 2.42, not 2.00)
      incl = before.isZero() ? (t.commonVat ? excl.times(t.commonVat) : excl) : incl.times(excl).dividedBy(before);
    }
  }
  return { total: { excl, incl }, clamped };
}

/**
 * Prices one CDR with one tariff. `timeZone` is the location's IANA zone, in which restrictions
 * are read. Returns every CDR total (reported to 4 decimals) and, unless asked not to, how each
 * was reached.
 */
export function priceCdr(
  tariff: PricingTariff,
  cdr: PricingCdr,
  timeZone: string,
  options: Options = {},
): PriceOutcome {
  const times = options.times ?? timesOf(cdr);
  const checked = checkInput(tariff, cdr, timeZone, times);
  if (!Array.isArray(checked)) return checked;
  const charged = checked.some((p) => p.period.dimensions.some((d) => d.type !== 'RESERVATION_TIME'));
  const session = new SessionPricing(readTariff(tariff), times, timeZone, options.breakdown !== false, charged);
  for (const p of checked) session.period(p);
  const priced = session.finish(tariff.currency);
  // an amount or volume the answer's JSON number cannot give to its last decimal (or Infinity,
  // beyond 1e308) is no answer: a step_size of 2^60 Wh billed 345876451382054.06 for .0928
  const numbers = [priced.total_cost, priced.total_energy_cost, priced.total_time_cost, priced.total_parking_cost];
  if (!representable(priced.total_energy) || !representable(priced.total_time))
    return failure('invalid_cdr', `the CDR's volumes add up beyond ${LARGEST_AMOUNT}, which cannot be given exactly`);
  const exact = numbers.every((p) => representable(p.excl_vat) && representable(p.incl_vat));
  if (!exact)
    return failure(
      'invalid_tariff',
      `the prices or volumes give amounts beyond ${LARGEST_AMOUNT}, which cannot be given exactly to 4 decimals`,
    );
  return { ok: true, priced };
}
