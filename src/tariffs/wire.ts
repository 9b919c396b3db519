import type { CdrTimes } from './engine.js';
import { daysFromCivil, daysInMonth } from './local-time.js';
import type { PriceOutcome, PricedCdr, PricingCdr, PricingPeriod, PricingTariff } from './types.js';

/**
 * How a batch of CDRs crosses to a pricing thread and back (docs/TARIFFS.md "Where pricing
 * runs"): numbers in one Float64Array (moved, not copied), the few strings (tariffs, zones,
 * dimension types) in one small JSON text. JSON of the CDRs themselves cost the event loop
 * ~45 us per CDR of 20 periods; this costs it a few. A CDR whose dates do not parse travels as
 * JSON, and so does every outcome with a breakdown or a refusal.
 */

export interface WireTask {
  tariff: PricingTariff;
  cdr: PricingCdr;
  time_zone: string;
  breakdown: boolean;
  /** the CDR's instants, when they crossed as numbers (the CDR's date strings are then empty unless a breakdown echoes them) */
  times?: CdrTimes;
}

export interface WireBatch {
  /** JSON: { tariffs, strings, raw } */
  text: string;
  numbers: Float64Array;
}

export interface WireResults {
  /** JSON: [task index, outcome][] for outcomes with a breakdown or refused */
  text: string;
  /** per task: ok flag then the 15 totals (see TOTALS) */
  numbers: Float64Array;
}

interface BatchText {
  tariffs: PricingTariff[];
  strings: string[];
  /** tasks sent whole, by index */
  raw: [number, PricingCdr][];
}

/** The totals a result carries as numbers, in order; Prices take two slots (excl, incl). */
const PRICES = [
  'total_cost',
  'total_fixed_cost',
  'total_energy_cost',
  'total_time_cost',
  'total_parking_cost',
  'total_reservation_cost',
] as const;
const VOLUMES = ['total_energy', 'total_time', 'total_parking_time'] as const;
const SLOTS = 1 + PRICES.length * 2 + VOLUMES.length;

/** A growing Float64Array: numbers written in place (a JS array of them cost ~80 ns a push). */
class Numbers {
  buf = new Float64Array(8192);
  n = 0;
  put(v: number): void {
    if (this.n === this.buf.length) {
      const bigger = new Float64Array(this.buf.length * 2);
      bigger.set(this.buf);
      this.buf = bigger;
    }
    this.buf[this.n++] = v;
  }
  done(): Float64Array {
    return this.buf.slice(0, this.n);
  }
}

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

/** The two-digit number at `i`, or -1 when either character is not a digit. */
function two(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** The three-digit number at `i`, or -1. */
function three(s: string, i: number): number {
  const a = two(s, i);
  const c = s.charCodeAt(i + 2) - 48;
  return a >= 0 && c >= 0 && c <= 9 ? a * 10 + c : -1;
}

/**
 * Epoch ms of an OCPI DateTime. The common form, `YYYY-MM-DDThh:mm:ss[.fff]Z`, is read digit by
 * digit (Date.parse is the slowest step of a batch); any other through Date.parse.
 */
export function parseDateTime(s: string): number {
  const n = s.length;
  if (
    (n === 20 || n === 24) &&
    s[4] === '-' &&
    s[7] === '-' &&
    s[10] === 'T' &&
    s[13] === ':' &&
    s[16] === ':' &&
    s[n - 1] === 'Z' &&
    (n === 20 || s[19] === '.')
  ) {
    const century = two(s, 0);
    const yy = two(s, 2);
    const month = two(s, 5);
    const day = two(s, 8);
    const hour = two(s, 11);
    const minute = two(s, 14);
    const second = two(s, 17);
    const ms = n === 24 ? three(s, 20) : 0;
    const year = century * 100 + yy;
    // years before 100 and anything odd go the long way (Date.parse decides)
    if (
      century >= 1 &&
      yy >= 0 &&
      month >= 1 &&
      month <= 12 &&
      day >= 1 &&
      day <= daysInMonth(year, month) &&
      hour >= 0 &&
      hour <= 23 &&
      minute >= 0 &&
      minute <= 59 &&
      second >= 0 &&
      second <= 59 &&
      ms >= 0
    )
      return daysFromCivil(year, month, day) * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1000 + ms;
  }
  return Date.parse(s);
}

/** Numbers of one task: tariff, zone, breakdown, start, end, currency, periods (start, tariff_id, dims (type, volume)). */
function encodeTask(out: Numbers, t: WireTask, tariff: number, strings: Strings): boolean {
  const start = parseDateTime(t.cdr.start_date_time);
  const end = parseDateTime(t.cdr.end_date_time);
  const periods = t.cdr.charging_periods;
  if (!Number.isFinite(start) || !Number.isFinite(end)) return false;
  const mark = out.n;
  out.put(tariff);
  out.put(strings.of(t.time_zone));
  out.put(t.breakdown ? 1 : 0);
  out.put(start);
  out.put(end);
  out.put(strings.of(t.cdr.currency));
  out.put(periods.length);
  for (const p of periods) {
    const at = parseDateTime(p.start_date_time);
    if (!Number.isFinite(at)) {
      out.n = mark;
      return false;
    }
    out.put(at);
    out.put(strings.of(p.tariff_id));
    out.put(p.dimensions.length);
    for (const d of p.dimensions) {
      out.put(strings.of(d.type));
      out.put(d.volume);
    }
  }
  return true;
}

export function encodeBatch(tasks: readonly WireTask[]): WireBatch {
  const tariffs: PricingTariff[] = [];
  const tariffIndex = new Map<PricingTariff, number>();
  const strings = new Strings();
  const raw: [number, PricingCdr][] = [];
  const out = new Numbers();
  tasks.forEach((t, i) => {
    let tariff = tariffIndex.get(t.tariff);
    if (tariff === undefined) {
      tariff = tariffs.push(t.tariff) - 1;
      tariffIndex.set(t.tariff, tariff);
    }
    // a breakdown echoes the CDR's own date strings: such a task goes whole, as do dates that do
    // not parse (for the engine to refuse)
    if (!t.breakdown && encodeTask(out, t, tariff, strings)) return;
    for (const v of [tariff, strings.of(t.time_zone), t.breakdown ? 1 : 0, NaN, NaN, -1, -1]) out.put(v);
    raw.push([i, t.cdr]);
  });
  const text: BatchText = { tariffs, strings: strings.list, raw };
  return { text: JSON.stringify(text), numbers: out.done() };
}

/** The tasks of a batch, in a pricing thread. */
export function decodeBatch(batch: WireBatch): WireTask[] {
  const { tariffs, strings, raw } = JSON.parse(batch.text) as BatchText;
  const rawOf = new Map(raw);
  const n = batch.numbers;
  const str = (i: number): string | undefined => (i < 0 ? undefined : strings[i]);
  const tasks: WireTask[] = [];
  let k = 0;
  while (k < n.length) {
    const tariff = tariffs[n[k++] as number] as PricingTariff;
    const time_zone = str(n[k++] as number) ?? 'UTC';
    const breakdown = n[k++] === 1;
    const start = n[k++] as number;
    const end = n[k++] as number;
    const currency = str(n[k++] as number);
    const count = n[k++] as number;
    const whole = rawOf.get(tasks.length);
    if (count < 0 && whole) {
      tasks.push({ tariff, time_zone, breakdown, cdr: whole });
      continue;
    }
    const charging_periods: PricingPeriod[] = [];
    const starts: number[] = [];
    for (let p = 0; p < count; p++) {
      const at = n[k++] as number;
      const tariffId = str(n[k++] as number);
      const dims = n[k++] as number;
      const dimensions: PricingPeriod['dimensions'] = [];
      for (let d = 0; d < dims; d++) dimensions.push({ type: str(n[k++] as number) ?? '', volume: n[k++] as number });
      starts.push(at);
      // built field by field: a conditional spread costs more than the rest of the period
      const period: PricingPeriod = { start_date_time: '', dimensions };
      if (tariffId !== undefined) period.tariff_id = tariffId;
      charging_periods.push(period);
    }
    // no date strings: the engine reads `times` (a task with a breakdown, which echoes them, came whole)
    const cdr: PricingCdr = { start_date_time: '', end_date_time: '', charging_periods };
    if (currency !== undefined) cdr.currency = currency;
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

/** The outcomes of a batch, on the caller's side; totals-only outcomes carry an empty breakdown. */
export function decodeResults(tasks: readonly WireTask[], results: WireResults): PriceOutcome[] {
  const whole = new Map(JSON.parse(results.text) as [number, PriceOutcome][]);
  const n = results.numbers;
  return tasks.map((t, i) => {
    const sent = whole.get(i);
    if (sent) return sent;
    let k = i * SLOTS + 1;
    const price = () => ({ excl_vat: n[k++] as number, incl_vat: n[k++] as number });
    const [
      total_cost,
      total_fixed_cost,
      total_energy_cost,
      total_time_cost,
      total_parking_cost,
      total_reservation_cost,
    ] = PRICES.map(price) as [PricedCdr['total_cost'], ...PricedCdr['total_cost'][]];
    const priced: PricedCdr = {
      currency: t.tariff.currency,
      total_cost,
      total_fixed_cost: total_fixed_cost ?? total_cost,
      total_energy: n[k++] as number,
      total_energy_cost: total_energy_cost ?? total_cost,
      total_time: n[k++] as number,
      total_time_cost: total_time_cost ?? total_cost,
      total_parking_time: n[k++] as number,
      total_parking_cost: total_parking_cost ?? total_cost,
      total_reservation_cost: total_reservation_cost ?? total_cost,
      breakdown: { periods: [], steps: [], before_clamp: total_cost, clamped: [], warnings: [] },
    };
    return { ok: true, priced };
  });
}
