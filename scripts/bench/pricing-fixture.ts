import { Prng } from '../prng.js';
import type { PricedCdr, PricingCdr, PricingPeriod, PricingTariff } from '../../src/tariffs/types.js';

/**
 * The input of the pricing benchmark (scripts/bench-pricing.ts): one complex OCPI 2.2.1 tariff
 * and CDRs of 20 charging periods each in the Europe/Amsterdam zone, drawn from a seeded
 * generator so that every run prices the same varied CDRs; and what a plausible priced CDR is.
 */

export const TIME_ZONE = 'Europe/Amsterdam';
export const PERIODS_PER_CDR = 20;

const VAT = 21;
const WEEKDAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'] as const;

/**
 * Eight elements, read in order: night (23:00-07:00, wraps midnight, with its own FLAT), weekend,
 * AC below 22 kW (max_power), from 30 kWh on (min_kwh), after 90 minutes (min_duration), the
 * default with the day FLAT, then parking on weekdays 08:00-20:00 and parking otherwise. Every
 * component has VAT and a step_size; min_price and max_price bound the total.
 */
export function complexTariff(): PricingTariff {
  const c = (type: 'ENERGY' | 'TIME' | 'PARKING_TIME' | 'FLAT', price: number, step_size: number) => ({
    type,
    price,
    vat: VAT,
    step_size,
  });
  return {
    country_code: 'NL',
    party_id: 'EVP',
    id: 'BENCH-COMPLEX',
    currency: 'EUR',
    type: 'REGULAR',
    min_price: { excl_vat: 1, incl_vat: 1.21 },
    max_price: { excl_vat: 75, incl_vat: 90.75 },
    elements: [
      {
        price_components: [c('FLAT', 0.25, 0), c('ENERGY', 0.24, 100), c('TIME', 0.6, 60)],
        restrictions: { start_time: '23:00', end_time: '07:00' },
      },
      {
        price_components: [c('ENERGY', 0.32, 1), c('TIME', 1.2, 60)],
        restrictions: { day_of_week: ['SATURDAY', 'SUNDAY'] },
      },
      { price_components: [c('ENERGY', 0.36, 1), c('TIME', 1.5, 60)], restrictions: { max_power: 22 } },
      { price_components: [c('ENERGY', 0.42, 1)], restrictions: { min_kwh: 30 } },
      { price_components: [c('TIME', 4.8, 60)], restrictions: { min_duration: 5400 } },
      { price_components: [c('FLAT', 0.5, 0), c('ENERGY', 0.49, 1), c('TIME', 2.4, 60)] },
      {
        price_components: [c('PARKING_TIME', 9, 300)],
        restrictions: { start_time: '08:00', end_time: '20:00', day_of_week: [...WEEKDAYS] },
      },
      { price_components: [c('PARKING_TIME', 1.8, 900)] },
    ],
    last_updated: '2025-01-01T00:00:00Z',
  };
}

const round = (v: number, decimals: number): number => Number(v.toFixed(decimals));
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

interface Profile {
  /** kW at the first charging period, and at the last (a DC charge tapers) */
  from: number;
  to: number;
  /** minutes of one charging period */
  minutes: [number, number];
}

const PROFILES: readonly Profile[] = [
  { from: 11, to: 11, minutes: [10, 25] },
  { from: 22, to: 22, minutes: [8, 20] },
  { from: 50, to: 42, minutes: [3, 8] },
  { from: 150, to: 40, minutes: [2, 5] },
];

/** One CDR: 12 to 16 charging periods (ENERGY, TIME, MAX_POWER), the rest parked (PARKING_TIME). */
function oneCdr(prng: Prng): PricingCdr {
  // any second of 2025 (both DST changes, every weekday and hour)
  const start = Date.UTC(2025, 0, 1) + prng.int(0, 364 * 86_400 - 1) * 1000;
  const profile = prng.pick(PROFILES);
  const charging = prng.int(12, 16);
  const periods: PricingPeriod[] = [];
  let at = start;
  for (let i = 0; i < PERIODS_PER_CDR; i++) {
    const parked = i >= charging;
    const seconds = parked ? prng.int(5, 60) * 60 : prng.int(profile.minutes[0] * 60, profile.minutes[1] * 60);
    const hours = seconds / 3600;
    if (parked) {
      periods.push({ start_date_time: iso(at), dimensions: [{ type: 'PARKING_TIME', volume: round(hours, 4) }] });
    } else {
      const kw = profile.from + ((profile.to - profile.from) * i) / charging;
      const max = round(kw * (0.92 + prng.next() * 0.08), 1);
      const energy = round(max * hours * (0.85 + prng.next() * 0.1), 3);
      periods.push({
        start_date_time: iso(at),
        dimensions: [
          { type: 'ENERGY', volume: energy },
          { type: 'TIME', volume: round(hours, 4) },
          { type: 'MAX_POWER', volume: max },
        ],
      });
    }
    at += seconds * 1000;
  }
  return { start_date_time: iso(start), end_date_time: iso(at), currency: 'EUR', charging_periods: periods };
}

/**
 * `count` different CDRs, the same for the same seed. They come out of JSON.parse, as every CDR
 * the platform prices does (a database row, a partner's request body): made here, their dates
 * are strings built by String.replace, whose characters V8 reads through an indirection, which
 * made encoding a batch cost about an eighth more than for the same CDRs out of JSON.
 */
export function benchCdrs(count: number, seed: number): PricingCdr[] {
  const prng = new Prng(seed);
  const made = Array.from({ length: count }, () => oneCdr(prng));
  return JSON.parse(JSON.stringify(made)) as PricingCdr[];
}

function volumeSum(cdr: PricingCdr, type: string): number {
  let sum = 0;
  for (const p of cdr.charging_periods) for (const d of p.dimensions) if (d.type === type) sum += d.volume;
  return sum;
}

const near = (a: number, b: number, tolerance: number): boolean => Math.abs(a - b) <= tolerance;

/**
 * Why `priced` is not a plausible price of `cdr` with complexTariff(), or undefined: totals equal
 * to the CDR's volumes, FLAT charged, the total the sum of its parts within min/max_price, and
 * incl_vat 21% above excl_vat.
 */
export function implausible(cdr: PricingCdr, priced: PricedCdr): string | undefined {
  const hours = (Date.parse(cdr.end_date_time) - Date.parse(cdr.start_date_time)) / 3_600_000;
  const excl = priced.total_cost.excl_vat;
  const parts =
    priced.total_fixed_cost.excl_vat +
    priced.total_energy_cost.excl_vat +
    priced.total_time_cost.excl_vat +
    priced.total_parking_cost.excl_vat;
  if (!near(priced.total_energy, volumeSum(cdr, 'ENERGY'), 1e-3)) return `total_energy ${priced.total_energy}`;
  if (!near(priced.total_parking_time, volumeSum(cdr, 'PARKING_TIME'), 1e-3))
    return `total_parking_time ${priced.total_parking_time}`;
  if (!near(priced.total_time, hours, 1e-3)) return `total_time ${priced.total_time}, expected ${hours}`;
  if (priced.total_fixed_cost.excl_vat <= 0) return 'no FLAT fee';
  if (excl < 1 || excl > 75) return `total_cost.excl_vat ${excl} outside min_price..max_price`;
  if (excl > 1 && excl < 75 && !near(excl, parts, 0.001)) return `total ${excl} is not the sum of its parts ${parts}`;
  if (excl === 75 && parts < 75) return `clamped to max_price below it (${parts})`;
  if (!near(priced.total_cost.incl_vat, excl * 1.21, 0.001)) return `incl_vat ${priced.total_cost.incl_vat}`;
  return undefined;
}
