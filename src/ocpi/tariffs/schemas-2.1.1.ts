import Type, { type Static } from '#typebox';
import { CountryCode, Currency, DateTime, DisplayText, EnergyMix, ObjectId, PartyId, Url } from '../core/schemas.js';
import * as T221 from './schemas-2.2.1.js';
import { titled } from '../../gateway/openapi.js';

/** OCPI 2.1.1 tariffs (OCPI 2.1.1 mod_tariffs.md). Stored in the 2.2.1 shape (`mappers.ts`). */

/**
 * PriceComponent: 2.2.1's without VAT. Its type is held to the closed enumeration of 2.2.1 (the
 * same four values): the stored tariff is served to 2.2.1 partners.
 */
export const PriceComponent = titled('PriceComponent211', Type.Omit(T221.PriceComponent, ['vat']));

/** TariffRestrictions: 2.2.1's without min/max_current and reservation (times as core/schemas.ts TimeOfDay). */
export const TariffRestrictions = titled(
  'TariffRestrictions211',
  Type.Omit(T221.TariffRestrictions, ['min_current', 'max_current', 'reservation']),
);

export const Tariff = titled(
  'Tariff211',
  Type.Object({
    id: ObjectId,
    currency: Currency,
    tariff_alt_text: Type.Optional(Type.Array(DisplayText)),
    tariff_alt_url: Type.Optional(Url),
    // `+` in 2.1.1 too, but not required here: the 2.1.1 view of a 2.2.1 tariff leaves out its
    // reservation elements (mappers.ts) and may have none left
    elements: Type.Array(
      Type.Object({
        price_components: Type.Array(PriceComponent, { minItems: 1 }),
        restrictions: Type.Optional(TariffRestrictions),
      }),
    ),
    energy_mix: Type.Optional(EnergyMix),
    last_updated: DateTime,
  }),
);
export type Tariff = Static<typeof Tariff>;

/**
 * A Tariff a partner sends (PUT, PATCH): at least one element, as 2.1.1 says (`+`). One without
 * was stored and priced every CDR of it at 0.
 */
export const TariffIn = titled(
  'Tariff211In',
  Type.Object({ ...Tariff.properties, elements: Type.Array(Tariff.properties.elements.items, { minItems: 1 }) }),
);

export const TariffPath = Type.Object({ country_code: CountryCode, party_id: PartyId, tariff_id: ObjectId });
/** PATCH: any Tariff field; without `last_updated` it is stamped on receipt (docs/OCPI.md, Decisions 33). */
export const TariffPatch = Type.Partial(TariffIn);
