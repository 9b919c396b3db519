import type { PartyIdentity } from '../core/auth.js';
import type * as T211 from './schemas-2.1.1.js';
import type * as T221 from './schemas-2.2.1.js';

/**
 * Tariffs between the versions (docs/OCPI.md "Storage", Decisions 22). Stored in the 2.2.1
 * shape, whose country_code and party_id are the owning CPO's (the key's).
 */

export function tariffFrom211(t: T211.Tariff, party: PartyIdentity): T221.Tariff {
  // 2.1.1 restrictions have the 2.2.1 fields but current and reservation: kept as sent
  return { country_code: party.country_code, party_id: party.party_id, ...t } as T221.Tariff;
}

/**
 * The 2.1.1 view: without the fields 2.1.1 does not have (type, min/max price, start/end
 * date-time, VAT, current restrictions). An element restricted to reservations is left out: in
 * 2.1.1 it would price ordinary charging.
 */
export function tariffTo211(t: T221.Tariff): T211.Tariff {
  const elements = t.elements
    .filter((e) => e.restrictions?.reservation === undefined)
    .map((e) => {
      const price_components = e.price_components.map(({ type, price, step_size }) => ({ type, price, step_size }));
      if (!e.restrictions) return { price_components };
      const {
        min_current: _minCurrent,
        max_current: _maxCurrent,
        reservation: _reservation,
        ...restrictions
      } = e.restrictions;
      return { price_components, restrictions };
    });
  return {
    id: t.id,
    currency: t.currency,
    ...(t.tariff_alt_text !== undefined ? { tariff_alt_text: t.tariff_alt_text } : {}),
    ...(t.tariff_alt_url !== undefined ? { tariff_alt_url: t.tariff_alt_url } : {}),
    elements,
    ...(t.energy_mix !== undefined ? { energy_mix: t.energy_mix } : {}),
    last_updated: t.last_updated,
  };
}
