import type { CdrTimes } from './engine.js';
import { writeRealInstant } from '../rfc3339.js';
import {
  CDR_AMOUNTS,
  type PriceOutcome,
  type PricedCdr,
  type PricingCdr,
  type PricingPeriod,
  type PricingTariff,
} from './types.js';

/**
 * How a batch of CDRs crosses to a pricing thread and back (docs/TARIFFS.md "Where pricing
 * runs"): numbers in one Float64Array (moved, not copied), each tariff as its JSON (written once
 * per tariff object, read once per thread), the few other strings (zones, dimension types) in one
 * small JSON text. JSON of the CDRs themselves cost the event loop
 * ~45 us per CDR of 20 periods; this costs it a few. A CDR whose dates do not parse travels as
 * JSON, and so does every outcome with a breakdown or a refusal.
 */

export interface WireTask {
  tariff: PricingTariff;
  cdr: PricingCdr;
  time_zone: string;
  /** with the per-period breakdown (default false: totals only) */
  breakdown?: boolean;
  /** the CDR's instants, when they crossed as numbers (the CDR's date strings are then empty unless a breakdown echoes them) */
  times?: CdrTimes;
}

export interface WireBatch {
  /** JSON: { strings, raw } */
  text: string;
  /** each tariff of the batch as JSON, the same text for the same tariff object (see tariffText) */
  tariffs: string[];
  numbers: Float64Array;
}

export interface WireResults {
  /** JSON: [task index, outcome][] for outcomes with a breakdown or refused */
  text: string;
  /** per task: ok flag then the 15 totals (see TOTALS) */
  numbers: Float64Array;
}

interface BatchText {
  strings: string[];
  /** tasks sent whole, by index */
  raw: [number, PricingCdr][];
}

/** The totals a result carries as numbers, in order; Prices take two slots (excl, incl). */
const PRICES = CDR_AMOUNTS;
const VOLUMES = ['total_energy', 'total_time', 'total_parking_time'] as const;
const SLOTS = 1 + PRICES.length * 2 + VOLUMES.length;
/** Where each total sits in a result's slots, after the ok flag (the order encodeResults writes). */
const PRICE_AT = Object.fromEntries(PRICES.map((p, i) => [p, 1 + 2 * i])) as Record<(typeof PRICES)[number], number>;
const VOLUME_AT = Object.fromEntries(VOLUMES.map((v, i) => [v, 1 + 2 * PRICES.length + i])) as Record<
  (typeof VOLUMES)[number],
  number
>;

class Strings {
  readonly list: string[] = [];
  private readonly index = new Map<string, number>();
  of(s: string | undefined): number {
    if (s === undefined) return -1;
    let i = this.index.get(s);
    if (i === undefined) {
      i = this.list.push(s) - 1;
      this.index.set(s, i);
    }
    return i;
  }
}

/** Numbers in the header of a task: tariff, zone, breakdown, start, end, currency, period count. */
const HEADER = 7;

/** How many numbers `encodeTask` writes for a task (its header and, per period, three plus two per dimension). */
function sizeOf(t: WireTask): number {
  // a task with a breakdown goes whole: its header only
  if (t.breakdown) return HEADER;
  let size = HEADER;
  for (const p of t.cdr.charging_periods) size += 3 + 2 * p.dimensions.length;
  return size;
}

/**
 * Writes one task at `at`: its header, then per period its start, tariff_id and dimension
 * count, and per dimension its type and volume. Returns where the next task goes; a task whose
 * dates do not parse writes nothing (-1), and is sent whole.
 */
function encodeTask(out: Float64Array, at: number, t: WireTask, tariff: number, strings: Strings): number {
  if (!writeRealInstant(t.cdr.start_date_time, out, at + 3) || !writeRealInstant(t.cdr.end_date_time, out, at + 4))
    return -1;
  const periods = t.cdr.charging_periods;
  out[at] = tariff;
  out[at + 1] = strings.of(t.time_zone);
  out[at + 2] = t.breakdown ? 1 : 0;
  out[at + 5] = strings.of(t.cdr.currency);
  out[at + 6] = periods.length;
  let k = at + HEADER;
  for (let i = 0; i < periods.length; i++) {
    const p = periods[i] as PricingPeriod;
    if (!writeRealInstant(p.start_date_time, out, k)) return -1;
    const dims = p.dimensions;
    out[k + 1] = strings.of(p.tariff_id);
    out[k + 2] = dims.length;
    k += 3;
    for (let d = 0; d < dims.length; d++) {
      const dim = dims[d] as PricingPeriod['dimensions'][number];
      out[k] = strings.of(dim.type);
      out[k + 1] = dim.volume;
      k += 2;
    }
  }
  return k;
}

/**
 * A tariff's JSON, written once per tariff object: a bulk job sends the same tariff with every
 * batch. As the engine's own cache of read tariffs (engine.ts readTariff), this takes a tariff
 * object that is priced with as not changing afterwards.
 */
const tariffTexts = new WeakMap<PricingTariff, string>();

function tariffText(t: PricingTariff): string {
  let text = tariffTexts.get(t);
  if (text === undefined) {
    text = JSON.stringify(t);
    tariffTexts.set(t, text);
  }
  return text;
}

/**
 * Tariffs read in this thread, by their JSON: the same object for the same text, so that the
 * engine reads each tariff once (readTariff's cache is by object) rather than once per batch.
 */
const readTariffs = new Map<string, PricingTariff>();
/** tariffs kept by readTariffs; past it the map starts again */
const MAX_READ_TARIFFS = 256;

function tariffOf(text: string): PricingTariff {
  let t = readTariffs.get(text);
  if (t === undefined) {
    t = JSON.parse(text) as PricingTariff;
    if (readTariffs.size >= MAX_READ_TARIFFS) readTariffs.clear();
    readTariffs.set(text, t);
  }
  return t;
}

export function encodeBatch(tasks: readonly WireTask[]): WireBatch {
  const tariffs: string[] = [];
  const tariffIndex = new Map<PricingTariff, number>();
  const strings = new Strings();
  const raw: [number, PricingCdr][] = [];
  // sized once: a task sent whole takes its header only, so this is enough for every outcome
  let size = 0;
  for (const t of tasks) size += sizeOf(t);
  const out = new Float64Array(size);
  let n = 0;
  for (let i = 0; i < tasks.length; i++) {
    const t = tasks[i] as WireTask;
    let tariff = tariffIndex.get(t.tariff);
    if (tariff === undefined) {
      tariff = tariffs.push(tariffText(t.tariff)) - 1;
      tariffIndex.set(t.tariff, tariff);
    }
    // a breakdown echoes the CDR's own date strings: such a task goes whole, as do dates that do
    // not parse (for the engine to refuse)
    const next = t.breakdown ? -1 : encodeTask(out, n, t, tariff, strings);
    if (next >= 0) {
      n = next;
      continue;
    }
    out.set([tariff, strings.of(t.time_zone), t.breakdown ? 1 : 0, NaN, NaN, -1, -1], n);
    n += HEADER;
    raw.push([i, t.cdr]);
  }
  const text: BatchText = { strings: strings.list, raw };
  return { text: JSON.stringify(text), tariffs, numbers: n === size ? out : out.slice(0, n) };
}

/** The tasks of a batch, in a pricing thread. Indices cross as doubles and are read back with `| 0`. */
export function decodeBatch(batch: WireBatch): WireTask[] {
  const { strings, raw } = JSON.parse(batch.text) as BatchText;
  const tariffs = batch.tariffs.map(tariffOf);
  const rawOf = new Map(raw);
  const n = batch.numbers;
  const length = n.length;
  const tasks: WireTask[] = [];
  let k = 0;
  while (k < length) {
    const tariff = tariffs[(n[k] as number) | 0] as PricingTariff;
    const zone = (n[k + 1] as number) | 0;
    const time_zone = zone < 0 ? 'UTC' : (strings[zone] as string);
    const breakdown = n[k + 2] === 1;
    const start = n[k + 3] as number;
    const end = n[k + 4] as number;
    const currency = (n[k + 5] as number) | 0;
    const count = Math.max(0, (n[k + 6] as number) | 0);
    k += HEADER;
    const whole = n[k - 1] === -1 ? rawOf.get(tasks.length) : undefined;
    if (whole) {
      tasks.push({ tariff, time_zone, breakdown, cdr: whole });
      continue;
    }
    const charging_periods = new Array<PricingPeriod>(count);
    const starts = new Array<number>(count);
    for (let p = 0; p < count; p++) {
      const tariffId = (n[k + 1] as number) | 0;
      const dims = (n[k + 2] as number) | 0;
      starts[p] = n[k] as number;
      k += 3;
      const dimensions = new Array<PricingPeriod['dimensions'][number]>(dims);
      for (let d = 0; d < dims; d++) {
        dimensions[d] = { type: strings[(n[k] as number) | 0] as string, volume: n[k + 1] as number };
        k += 2;
      }
      // built field by field: a conditional spread costs more than the rest of the period
      const period: PricingPeriod = { start_date_time: '', dimensions };
      if (tariffId >= 0) period.tariff_id = strings[tariffId] as string;
      charging_periods[p] = period;
    }
    // no date strings: the engine reads `times` (a task with a breakdown, which echoes them, came whole)
    const cdr: PricingCdr = { start_date_time: '', end_date_time: '', charging_periods };
    if (currency >= 0) cdr.currency = strings[currency] as string;
    tasks.push({ tariff, time_zone, breakdown, cdr, times: { start, end, periods: starts } });
  }
  return tasks;
}

export function encodeResults(tasks: readonly WireTask[], outcomes: readonly PriceOutcome[]): WireResults {
  const numbers = new Float64Array(outcomes.length * SLOTS);
  const whole: [number, PriceOutcome][] = [];
  outcomes.forEach((o, i) => {
    if (!o.ok || tasks[i]?.breakdown) {
      whole.push([i, o]);
      return;
    }
    let k = i * SLOTS;
    numbers[k++] = 1;
    for (const p of PRICES) {
      numbers[k++] = o.priced[p].excl_vat;
      numbers[k++] = o.priced[p].incl_vat;
    }
    for (const v of VOLUMES) numbers[k++] = o.priced[v];
  });
  return { text: JSON.stringify(whole), numbers };
}

/**
 * The empty lists of every totals-only outcome's breakdown: shared and frozen rather than four
 * new arrays per CDR (a caller holding 100,000 outcomes made the event loop's young-generation
 * collections copy them all).
 */
const NONE = Object.freeze([]) as unknown as never[];

type Price = PricedCdr['total_cost'];

/** The Price at `k` of a result's numbers (excl_vat, then incl_vat). */
const priceAt = (n: Float64Array, k: number): Price => ({
  excl_vat: n[k] as number,
  incl_vat: n[k + 1] as number,
});

/**
 * A totals-only outcome's priced CDR, read from its batch's numbers when a field is read: one
 * small object per CDR (two with its outcome) instead of nine objects and fifteen boxed numbers.
 * Decoding made about 700 of the 790 bytes the event loop allocated per CDR priced through the
 * pool (docs/PERFORMANCE.md, pricing, "Fifteenth sitting"); those allocations set how often that
 * loop stops for a young-generation collection while a bulk job prices, and how much a caller
 * holding 100,000 outcomes leaves for a full collection to mark.
 *
 * Read-only, and a view: its fields are getters (each Price read is a new object), so spreading
 * it copies nothing but `currency`. `JSON.stringify` writes the same JSON as a plain PricedCdr;
 * `plainPriced` makes a plain copy.
 */
class PricedTotals implements PricedCdr {
  readonly #n: Float64Array;
  readonly #k: number;

  constructor(
    n: Float64Array,
    k: number,
    readonly currency: string,
  ) {
    this.#n = n;
    this.#k = k;
  }

  get total_cost(): Price {
    return priceAt(this.#n, this.#k + PRICE_AT.total_cost);
  }
  get total_fixed_cost(): Price {
    return priceAt(this.#n, this.#k + PRICE_AT.total_fixed_cost);
  }
  get total_energy(): number {
    return this.#n[this.#k + VOLUME_AT.total_energy] as number;
  }
  get total_energy_cost(): Price {
    return priceAt(this.#n, this.#k + PRICE_AT.total_energy_cost);
  }
  get total_time(): number {
    return this.#n[this.#k + VOLUME_AT.total_time] as number;
  }
  get total_time_cost(): Price {
    return priceAt(this.#n, this.#k + PRICE_AT.total_time_cost);
  }
  get total_parking_time(): number {
    return this.#n[this.#k + VOLUME_AT.total_parking_time] as number;
  }
  get total_parking_cost(): Price {
    return priceAt(this.#n, this.#k + PRICE_AT.total_parking_cost);
  }
  get total_reservation_cost(): Price {
    return priceAt(this.#n, this.#k + PRICE_AT.total_reservation_cost);
  }
  /** empty lists: totals only */
  get breakdown(): PricedCdr['breakdown'] {
    return { periods: NONE, steps: NONE, before_clamp: this.total_cost, clamped: NONE, warnings: NONE };
  }

  toJSON(): PricedCdr {
    return plainPriced(this);
  }
}

/** A plain copy of a priced CDR, whether a plain object or a pool's totals-only view. */
export function plainPriced(p: PricedCdr): PricedCdr {
  return {
    currency: p.currency,
    total_cost: p.total_cost,
    total_fixed_cost: p.total_fixed_cost,
    total_energy: p.total_energy,
    total_energy_cost: p.total_energy_cost,
    total_time: p.total_time,
    total_time_cost: p.total_time_cost,
    total_parking_time: p.total_parking_time,
    total_parking_cost: p.total_parking_cost,
    total_reservation_cost: p.total_reservation_cost,
    breakdown: p.breakdown,
  };
}

/**
 * The outcomes of a batch, on the caller's side; totals-only outcomes are `PricedTotals` views
 * over the batch's numbers, with an empty breakdown. This runs on the event loop that serves
 * chargers: it allocates two small objects per outcome.
 */
export function decodeResults(tasks: readonly WireTask[], results: WireResults): PriceOutcome[] {
  const whole = results.text === '[]' ? undefined : new Map(JSON.parse(results.text) as [number, PriceOutcome][]);
  const n = results.numbers;
  const out = new Array<PriceOutcome>(tasks.length);
  for (let i = 0; i < tasks.length; i++) {
    const sent = whole?.get(i);
    out[i] = sent ?? { ok: true, priced: new PricedTotals(n, i * SLOTS, (tasks[i] as WireTask).tariff.currency) };
  }
  return out;
}
