import Type, { type Static } from '#typebox';
import {
  CountryCode,
  DateTime,
  DisplayText,
  EnergyMix,
  ObjectId,
  OpenObject,
  PartyId,
  openEnum,
} from '../core/schemas.js';

/** OCPI 2.1.1 tariffs (OCPI 2.1.1 mod_tariffs.md). Stored in this shape. */

export const PriceComponent = Type.Object({
  type: openEnum(['TIME', 'ENERGY']),
  price: Type.Number(),
  step_size: Type.Integer(),
});
export const Tariff = Type.Object({
  id: ObjectId,
  currency: Type.String(),
  tariff_alt_text: Type.Optional(Type.Array(DisplayText)),
  tariff_alt_url: Type.Optional(Type.String()),
  elements: Type.Array(
    Type.Object({ price_components: Type.Array(PriceComponent), restrictions: Type.Optional(OpenObject) }),
  ),
  energy_mix: Type.Optional(EnergyMix),
  last_updated: DateTime,
});
export type Tariff = Static<typeof Tariff>;

export const TariffPath = Type.Object({ country_code: CountryCode, party_id: PartyId, tariff_id: ObjectId });
/** PATCH: any Tariff field; without `last_updated` it is stamped on receipt (docs/OCPI.md, Decisions 33). */
export const TariffPatch = Type.Partial(Tariff);
