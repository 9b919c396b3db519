import type { PartyIdentity } from '../core/auth.js';
import type * as T211 from './schemas-2.1.1.js';
import type * as T221 from './schemas-2.2.1.js';
import { energyMixAs, withEnergyMixAs } from '../core/energy-mix.js';

/**
 * Tariffs between the versions (docs/OCPI.md "Storage", Decisions 22). Stored in the 2.2.1
 * shape, whose country_code and party_id are the owning CPO's (the key's).
 */

export function tariffFrom211(t: T211.Tariff, party: PartyIdentity): T221.Tariff {
  // 2.1.1 restrictions have the 2.2.1 fields but current and reservation: kept as sent
  return { country_code: party.country_code, party_id: party.party_id, ...withEnergyMixAs('2.2.1', t) } as T221.Tariff;
}

/**
 * The 2.1.1 view: without the fields 2.1.1 does not have (type, min/max price, start/end
 * date-time, VAT, current restrictions). An element restricted to reservations is left out: in
 * 2.1.1 it would price ordinary charging. So is one restricted by current (`elementsFor211`).
 */
export function tariffTo211(t: T221.Tariff): T211.Tariff {
  const elements = elementsFor211(t.elements).map((e) => {
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
    ...(t.energy_mix !== undefined ? { energy_mix: energyMixAs('2.1.1', t.energy_mix) } : {}),
    last_updated: t.last_updated,
  };
}

type Element221 = T221.Tariff['elements'][number];

/**
 * The elements a 2.1.1 reader is given. Reservation elements are left out. An element restricted
 * by current (`min_current`, `max_current`, which 2.1.1 cannot say) is left out when each of its
 * dimensions is priced by a later element without restrictions: the reader is then told the price
 * that applies whenever the current does not match. Kept without its current restriction, such an
 * element came first for every session and hid the rest: "0.20 a kWh below 16 A" read as the price
 * of every kWh, beside a CDR billed at the 0.40 of the next element. One with no such fallback is
 * kept without the restriction (left out, its dimension would read as free).
 */
function elementsFor211(elements: readonly Element221[]): Element221[] {
  const kept: Element221[] = [];
  const fallback = new Set<string>();
  for (let i = elements.length - 1; i >= 0; i--) {
    const e = elements[i];
    if (!e || e.restrictions?.reservation !== undefined) continue;
    const r = e.restrictions;
    const byCurrent = r?.min_current !== undefined || r?.max_current !== undefined;
    if (byCurrent && e.price_components.every((c) => fallback.has(c.type))) continue;
    if (!r || Object.keys(r).length === 0) for (const c of e.price_components) fallback.add(c.type);
    kept.unshift(e);
  }
  return kept;
}
