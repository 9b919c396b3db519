import Type, { type Static } from '#typebox';
import {
  CountryCode,
  Currency,
  DateTime,
  Day,
  DisplayText,
  EnergyMix,
  NonNegative,
  ObjectId,
  PartyId,
  TimeOfDay,
  Url,
  oneOf,
} from '../core/schemas.js';
import { titled } from '../../gateway/openapi.js';

/**
 * OCPI 2.2.1 tariffs (OCPI 2.2.1 mod_tariffs.asciidoc). Tariffs are stored in this shape,
 * whichever version they came in (docs/OCPI.md "Storage"); the 2.1.1 interfaces convert
 * (`mappers.ts`).
 */

export const Price = Type.Object({ excl_vat: Type.Number(), incl_vat: Type.Optional(Type.Number()) });

/**
 * A tariff's min_price or max_price: never negative. mod_tariffs: with max_price the session
 * "will NOT cost more than this amount"; a negative one would make it a credit, which only a
 * Credit CDR's `total_cost` may hold (mod_cdrs). A CDR's or session's Price may be negative.
 */
const PriceBound = Type.Object({
  excl_vat: Type.Number({ minimum: 0 }),
  incl_vat: Type.Optional(Type.Number({ minimum: 0 })),
});

export const PriceComponent = titled(
  'PriceComponent221',
  Type.Object({
    type: oneOf(['ENERGY', 'FLAT', 'PARKING_TIME', 'TIME']),
    price: Type.Number({ minimum: 0 }),
    // a percentage
    vat: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
    step_size: Type.Integer({ minimum: 0 }),
  }),
);

export const TariffRestrictions = titled(
  'TariffRestrictions221',
  Type.Object({
    start_time: Type.Optional(TimeOfDay),
    end_time: Type.Optional(TimeOfDay),
    start_date: Type.Optional(Day),
    end_date: Type.Optional(Day),
    min_kwh: Type.Optional(NonNegative),
    max_kwh: Type.Optional(NonNegative),
    min_current: Type.Optional(NonNegative),
    max_current: Type.Optional(NonNegative),
    min_power: Type.Optional(NonNegative),
    max_power: Type.Optional(NonNegative),
    min_duration: Type.Optional(Type.Integer({ minimum: 0 })),
    max_duration: Type.Optional(Type.Integer({ minimum: 0 })),
    day_of_week: Type.Optional(
      Type.Array(oneOf(['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'])),
    ),
    reservation: Type.Optional(oneOf(['RESERVATION', 'RESERVATION_EXPIRES'])),
  }),
);

export const TariffElement = titled(
  'TariffElement221',
  Type.Object({
    price_components: Type.Array(PriceComponent, { minItems: 1 }),
    restrictions: Type.Optional(TariffRestrictions),
  }),
);

const tariffFields = {
  country_code: CountryCode,
  party_id: PartyId,
  id: ObjectId,
  currency: Currency,
  type: Type.Optional(oneOf(['AD_HOC_PAYMENT', 'PROFILE_CHEAP', 'PROFILE_FAST', 'PROFILE_GREEN', 'REGULAR'])),
  tariff_alt_text: Type.Optional(Type.Array(DisplayText)),
  tariff_alt_url: Type.Optional(Url),
  min_price: Type.Optional(PriceBound),
  max_price: Type.Optional(PriceBound),
  elements: Type.Array(TariffElement, { minItems: 1 }),
  start_date_time: Type.Optional(DateTime),
  end_date_time: Type.Optional(DateTime),
  energy_mix: Type.Optional(EnergyMix),
  last_updated: DateTime,
};

export const Tariff = titled('Tariff221', Type.Object(tariffFields));
export type Tariff = Static<typeof Tariff>;

/**
 * A tariff as a CDR holds it (the one its session started with): its min_price and max_price as
 * they were stored, also from before bounds had to be non-negative, so that a CDR priced with
 * such a tariff still passes the CDR's schema and is sent (a CDR never changes once built).
 */
export const TariffAsStored = Type.Object({
  ...tariffFields,
  min_price: Type.Optional(Price),
  max_price: Type.Optional(Price),
});

export const TariffPath = Type.Object({ country_code: CountryCode, party_id: PartyId, tariff_id: ObjectId });
