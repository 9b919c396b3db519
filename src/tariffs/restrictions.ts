import type { TariffRestrictions } from '../ocpi/tariffs/schemas-2.2.1.js';
import type { Static } from '#typebox';
import { dateKeyOf, type DayOfWeek, type LocalTime } from './local-time.js';
import { compareQuantities, quantityOf, type Quantity } from './money.js';

/**
 * TariffRestrictions (OCPI 2.2.1 mod_tariffs "TariffRestrictions class"), evaluated for one
 * charging period at its start (docs/TARIFFS.md "Restrictions"): lower bounds inclusive, upper
 * bounds exclusive; a time window whose end is before its start wraps midnight; a bound on a
 * quantity the period does not report (current, power) does not hold.
 */

type Restrictions = Static<typeof TariffRestrictions>;

/** What is known about a period when it starts. */
export interface PeriodFacts {
  local: LocalTime;
  /** seconds since the session started */
  duration_s: number;
  /** kWh charged before this period */
  energy_before: Quantity;
  /** kW: the lowest and highest power of the period (MIN_POWER / MAX_POWER, POWER, or energy over time) */
  min_power: number | undefined;
  max_power: number | undefined;
  /** A, summed over phases */
  min_current: number | undefined;
  max_current: number | undefined;
}

/** A restriction set read once per tariff: times in seconds of day, kWh as decimals. */
export interface Restriction {
  start_s?: number;
  end_s?: number;
  start_date?: number;
  end_date?: number;
  min_kwh?: Quantity;
  max_kwh?: Quantity;
  /** the kWh bounds as written */
  kwh_bounds: number[];
  min_current?: number;
  max_current?: number;
  min_power?: number;
  max_power?: number;
  min_duration?: number;
  max_duration?: number;
  days?: ReadonlySet<DayOfWeek>;
  reservation?: 'RESERVATION' | 'RESERVATION_EXPIRES';
  /** the restrictions as written, for the breakdown */
  text: string;
}

const secondsOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 3600 + Number(hhmm.slice(3, 5)) * 60;

/**
 * Every restriction set has the same fields, absent ones undefined: one object shape for all the
 * elements of all tariffs, so that `holds` reads each field at a known place.
 */
export function readRestriction(r: Restrictions | undefined): Restriction {
  return {
    start_s: r?.start_time === undefined ? undefined : secondsOf(r.start_time),
    end_s: r?.end_time === undefined ? undefined : secondsOf(r.end_time),
    start_date: r?.start_date === undefined ? undefined : dateKeyOf(r.start_date),
    end_date: r?.end_date === undefined ? undefined : dateKeyOf(r.end_date),
    min_kwh: r?.min_kwh === undefined ? undefined : quantityOf(r.min_kwh),
    max_kwh: r?.max_kwh === undefined ? undefined : quantityOf(r.max_kwh),
    kwh_bounds: [r?.min_kwh, r?.max_kwh].filter((b): b is number => b !== undefined),
    min_current: r?.min_current,
    max_current: r?.max_current,
    min_power: r?.min_power,
    max_power: r?.max_power,
    min_duration: r?.min_duration,
    max_duration: r?.max_duration,
    days: r?.day_of_week !== undefined && r.day_of_week.length > 0 ? new Set(r.day_of_week) : undefined,
    reservation: r?.reservation,
    text: r ? describe(r) : 'no restrictions',
  };
}

function describe(r: Restrictions): string {
  const parts: string[] = [];
  if (r.start_time !== undefined || r.end_time !== undefined)
    parts.push(`time ${r.start_time ?? '00:00'}-${r.end_time ?? '24:00'}`);
  if (r.start_date !== undefined || r.end_date !== undefined)
    parts.push(`date ${r.start_date ?? '...'} to ${r.end_date ?? '...'} (excl.)`);
  if (r.day_of_week !== undefined && r.day_of_week.length > 0) parts.push(`days ${r.day_of_week.join(',')}`);
  bounds(parts, 'kWh', '', r.min_kwh, r.max_kwh);
  bounds(parts, 'duration', 's', r.min_duration, r.max_duration);
  bounds(parts, 'power', 'kW', r.min_power, r.max_power);
  bounds(parts, 'current', 'A', r.min_current, r.max_current);
  if (r.reservation !== undefined) parts.push(r.reservation);
  return parts.length === 0 ? 'no restrictions' : parts.join(', ');
}

/** A lower (inclusive) and upper (exclusive) bound as the breakdown says them: `power 11kW-<22kW`, `current < 32A`. */
function bounds(parts: string[], what: string, unit: string, min: number | undefined, max: number | undefined): void {
  if (min !== undefined && max !== undefined) parts.push(`${what} ${min}${unit}-<${max}${unit}`);
  else if (min !== undefined) parts.push(`${what} >= ${min}${unit}`);
  else if (max !== undefined) parts.push(`${what} < ${max}${unit}`);
}

/** Whether the time of day lies in [start, end); a window ending before it starts wraps midnight. */
function inWindow(second: number, start: number | undefined, end: number | undefined): boolean {
  if (start !== undefined && end !== undefined) {
    if (start === end) return true;
    return start < end ? second >= start && second < end : second >= start || second < end;
  }
  if (start !== undefined) return second >= start;
  // valid until midnight, counted from the start of the day: the whole day (as 00:00-00:00)
  if (end !== undefined) return end === 0 || second < end;
  return true;
}

/** Whether the restrictions (other than `reservation`, which selects the elements) hold for the period. */
export function holds(r: Restriction, f: PeriodFacts): boolean {
  if (!inWindow(f.local.second_of_day, r.start_s, r.end_s)) return false;
  if (r.start_date !== undefined && f.local.date_key < r.start_date) return false;
  if (r.end_date !== undefined && f.local.date_key >= r.end_date) return false;
  if (r.days !== undefined && !r.days.has(f.local.day_of_week)) return false;
  if (r.min_kwh !== undefined && compareQuantities(f.energy_before, r.min_kwh) < 0) return false;
  if (r.max_kwh !== undefined && compareQuantities(f.energy_before, r.max_kwh) >= 0) return false;
  if (r.min_duration !== undefined && f.duration_s < r.min_duration) return false;
  if (r.max_duration !== undefined && f.duration_s >= r.max_duration) return false;
  if (r.min_power !== undefined && !(f.min_power !== undefined && f.min_power >= r.min_power)) return false;
  if (r.max_power !== undefined && !(f.max_power !== undefined && f.max_power < r.max_power)) return false;
  if (r.min_current !== undefined && !(f.min_current !== undefined && f.min_current >= r.min_current)) return false;
  if (r.max_current !== undefined && !(f.max_current !== undefined && f.max_current < r.max_current)) return false;
  return true;
}
