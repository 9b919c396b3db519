import Type, { type Static } from '#typebox';
import { Currency, DateTime } from '../ocpi/core/schemas.js';
import { ChargingPeriod } from '../ocpi/sessions/schemas-2.2.1.js';
import { Tariff } from '../ocpi/tariffs/schemas-2.2.1.js';

/** What the pricing engine takes and gives (engine.ts), shared by `/v1/tariffs/price`, the workers and the CLI. */

export const PricingCdr = Type.Object({
  start_date_time: DateTime,
  end_date_time: DateTime,
  currency: Type.Optional(Currency),
  charging_periods: Type.Array(ChargingPeriod, { minItems: 1, maxItems: 10_000 }),
});
export type PricingCdr = Static<typeof PricingCdr>;
export type PricingPeriod = Static<typeof ChargingPeriod>;

/**
 * A 2.2.1 Tariff as the engine reads it: the fields that name and date it (country_code,
 * party_id, last_updated) may be left out, as they price nothing.
 */
export const PricingTariff = Type.Object({
  ...Tariff.properties,
  country_code: Type.Optional(Tariff.properties.country_code),
  party_id: Type.Optional(Tariff.properties.party_id),
  last_updated: Type.Optional(Tariff.properties.last_updated),
});
export type PricingTariff = Static<typeof PricingTariff>;

export const PriceRequest = Type.Object({
  tariff: PricingTariff,
  cdr: PricingCdr,
  time_zone: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'the location\'s IANA time zone, e.g. "Europe/Amsterdam"',
  }),
});
export type PriceRequest = Static<typeof PriceRequest>;

const Money = Type.Object({ excl_vat: Type.Number(), incl_vat: Type.Number() });

export const DimensionBreakdown = Type.Object({
  type: Type.String(),
  volume: Type.Number(),
  /** the element (1-based) that priced it */
  element: Type.Optional(Type.Integer()),
  price: Type.Optional(Type.Number()),
  vat: Type.Optional(Type.Number()),
  cost: Money,
  reason: Type.String(),
});
export type DimensionBreakdown = Static<typeof DimensionBreakdown>;

export const PeriodBreakdown = Type.Object({
  start_date_time: Type.String(),
  end_date_time: Type.String(),
  /** the location's wall clock at the period's start, on which restrictions were read */
  local_time: Type.String(),
  dimensions: Type.Array(DimensionBreakdown),
});
export type PeriodBreakdown = Static<typeof PeriodBreakdown>;

/** A CDR's amounts (Prices in 2.2.1, numbers in 2.1.1), in the order a priced CDR's totals give them. */
export const CDR_AMOUNTS = [
  'total_cost',
  'total_fixed_cost',
  'total_energy_cost',
  'total_time_cost',
  'total_parking_cost',
  'total_reservation_cost',
] as const;

export const PricedCdr = Type.Object({
  currency: Type.String(),
  total_cost: Money,
  total_fixed_cost: Money,
  total_energy: Type.Number(),
  total_energy_cost: Money,
  total_time: Type.Number(),
  total_time_cost: Money,
  total_parking_time: Type.Number(),
  total_parking_cost: Money,
  total_reservation_cost: Money,
  breakdown: Type.Object({
    periods: Type.Array(PeriodBreakdown),
    /** step_size roundings: the surplus volume (kWh or hours) and what it cost */
    steps: Type.Array(
      Type.Object({
        type: Type.String(),
        step_size: Type.Integer(),
        surplus: Type.Number(),
        element: Type.Integer(),
        cost: Money,
      }),
    ),
    flat: Type.Optional(Type.Object({ element: Type.Integer(), cost: Money })),
    reservation_flat: Type.Optional(Type.Object({ element: Type.Integer(), cost: Money })),
    /** an expired reservation's fee, when a RESERVATION_EXPIRES element other than the time's charges it */
    reservation_expiry_fee: Type.Optional(Type.Object({ element: Type.Integer(), cost: Money })),
    /** the sum of the components, before min_price and max_price */
    before_clamp: Money,
    clamped: Type.Array(Type.String()),
    warnings: Type.Array(Type.String()),
  }),
});
export type PricedCdr = Static<typeof PricedCdr>;

export type PriceOutcome =
  { ok: true; priced: PricedCdr } | { ok: false; code: 'invalid_tariff' | 'invalid_cdr'; message: string };
