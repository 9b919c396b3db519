import type { Tariff, TariffElement } from '../../src/ocpi/tariffs/schemas-2.2.1.js';
import type { Static } from '#typebox';
import type { PricingCdr } from '../../src/tariffs/types.js';

/** Test-data builders for tariffs and CDRs to price. */

type Element = Static<typeof TariffElement>;
type Component = Element['price_components'][number];

export function aTariff(elements: Element[], extra: Partial<Tariff> = {}): Tariff {
  return {
    country_code: 'NL',
    party_id: 'TST',
    id: 'T1',
    currency: 'EUR',
    elements,
    last_updated: '2024-01-01T00:00:00Z',
    ...extra,
  };
}

export function anElement(components: Component[], restrictions?: Element['restrictions']): Element {
  return restrictions ? { price_components: components, restrictions } : { price_components: components };
}

export const energy = (price: number, step_size = 1, vat?: number): Component => ({
  type: 'ENERGY',
  price,
  step_size,
  ...(vat === undefined ? {} : { vat }),
});
export const time = (price: number, step_size = 1, vat?: number): Component => ({
  type: 'TIME',
  price,
  step_size,
  ...(vat === undefined ? {} : { vat }),
});
export const parking = (price: number, step_size = 1, vat?: number): Component => ({
  type: 'PARKING_TIME',
  price,
  step_size,
  ...(vat === undefined ? {} : { vat }),
});
export const flat = (price: number, vat?: number): Component => ({
  type: 'FLAT',
  price,
  step_size: 0,
  ...(vat === undefined ? {} : { vat }),
});

/** A period: its start (ISO, UTC) and its dimensions as `{ENERGY: 10, TIME: 0.5}`. */
export type PeriodSpec = [string, Record<string, number>];

/** A CDR from `start` to `end` with the given periods. */
export function aCdr(start: string, end: string, periods: PeriodSpec[]): PricingCdr {
  return {
    start_date_time: start,
    end_date_time: end,
    charging_periods: periods.map(([at, dims]) => ({
      start_date_time: at,
      dimensions: Object.entries(dims).map(([type, volume]) => ({ type, volume })),
    })),
  };
}

/** Minutes as hours, the unit of TIME and PARKING_TIME volumes. */
export const minutes = (m: number): number => m / 60;
