/**
 * Test-data builders for OCPI objects: a valid object by default, overrides for what a test is
 * about (`aLocation({ id: 'LOC-2' })`).
 */

export type Json = Record<string, unknown>;

let seq = 0;
function next(prefix: string): string {
  seq += 1;
  return `${prefix}-${seq}`;
}

export function isoAt(offsetSeconds = 0): string {
  return new Date(Date.UTC(2026, 0, 1, 12, 0, 0) + offsetSeconds * 1000).toISOString();
}

/** Connector, 2.2.1 shape. */
export function aConnector(over: Json = {}): Json {
  return {
    id: '1',
    standard: 'IEC_62196_T2',
    format: 'SOCKET',
    power_type: 'AC_3_PHASE',
    max_voltage: 400,
    max_amperage: 32,
    tariff_ids: ['T-1'],
    last_updated: isoAt(),
    ...over,
  };
}

/** Connector, 2.1.1 shape. */
export function aConnector211(over: Json = {}): Json {
  return {
    id: '1',
    standard: 'IEC_62196_T2',
    format: 'CABLE',
    power_type: 'DC',
    voltage: 500,
    amperage: 125,
    tariff_id: 'T-1',
    last_updated: isoAt(),
    ...over,
  };
}

/** EVSE, 2.2.1 shape. */
export function anEvse(over: Json = {}): Json {
  return {
    uid: next('EVSE'),
    evse_id: 'NL*EVP*E1',
    status: 'AVAILABLE',
    capabilities: ['RFID_READER'],
    connectors: [aConnector()],
    last_updated: isoAt(),
    ...over,
  };
}

/** EVSE, 2.1.1 shape. */
export function anEvse211(over: Json = {}): Json {
  return { uid: next('EVSE'), status: 'CHARGING', connectors: [aConnector211()], last_updated: isoAt(), ...over };
}

/** Location, 2.2.1 shape (PUT body). */
export function aLocation(over: Json = {}): Json {
  return {
    country_code: 'NL',
    party_id: 'EVP',
    id: next('LOC'),
    publish: true,
    name: 'Station',
    address: 'Main street 1',
    city: 'Utrecht',
    postal_code: '3511AA',
    country: 'NLD',
    coordinates: { latitude: '52.090000', longitude: '5.121000' },
    parking_type: 'ON_STREET',
    evses: [anEvse()],
    facilities: ['CAFE'],
    time_zone: 'Europe/Amsterdam',
    opening_times: { twentyfourseven: true },
    last_updated: isoAt(),
    ...over,
  };
}

/** Token, 2.1.1 shape. */
export function aToken(over: Json = {}): Json {
  return {
    uid: next('TOK'),
    type: 'RFID',
    auth_id: 'NL-EVP-C12345678',
    visual_number: '12345678',
    issuer: 'EV Roaming Platform',
    valid: true,
    whitelist: 'ALLOWED',
    language: 'nl',
    last_updated: isoAt(),
    ...over,
  };
}

/** Location nested in a 2.1.1 session. */
export function aLocation211(over: Json = {}): Json {
  return {
    id: next('LOC'),
    type: 'ON_STREET',
    address: 'Main street 1',
    city: 'Utrecht',
    country: 'NLD',
    coordinates: { latitude: '52.090000', longitude: '5.121000' },
    evses: [anEvse211()],
    last_updated: isoAt(),
    ...over,
  };
}

/** SessionCreate, 2.1.1. */
export function aSession(over: Json = {}): Json {
  return {
    id: next('SES'),
    start_datetime: isoAt(),
    kwh: 12.5,
    auth_id: 'NL-EVP-C12345678',
    auth_method: 'WHITELIST',
    location: aLocation211(),
    currency: 'EUR',
    charging_periods: [{ start_date_time: isoAt(), dimensions: [{ type: 'ENERGY', volume: 12.5 }] }],
    status: 'ACTIVE',
    last_updated: isoAt(),
    ...over,
  };
}

/** Tariff, 2.1.1. */
export function aTariff(over: Json = {}): Json {
  return {
    id: next('TAR'),
    currency: 'EUR',
    elements: [{ price_components: [{ type: 'ENERGY', price: 0.35, step_size: 1 }] }],
    energy_mix: { is_green_energy: true, energy_sources: [{ source: 'SOLAR', percentage: 100 }] },
    last_updated: isoAt(),
    ...over,
  };
}

/** Token, 2.2.1 shape. */
export function aToken221(over: Json = {}): Json {
  return {
    country_code: 'NL',
    party_id: 'EVP',
    uid: next('TOK'),
    type: 'RFID',
    contract_id: 'NL-EVP-C12345678',
    visual_number: '12345678',
    issuer: 'EV Roaming Platform',
    valid: true,
    whitelist: 'ALLOWED',
    language: 'nl',
    last_updated: isoAt(),
    ...over,
  };
}

/** Tariff, 2.2.1 shape: an energy price, a parking price after 18:00, and a reservation fee. */
export function aTariff221(over: Json = {}): Json {
  return {
    country_code: 'NL',
    party_id: 'EVP',
    id: next('TAR'),
    currency: 'EUR',
    type: 'REGULAR',
    min_price: { excl_vat: 1, incl_vat: 1.21 },
    elements: [
      { price_components: [{ type: 'ENERGY', price: 0.35, vat: 21, step_size: 1 }] },
      {
        price_components: [{ type: 'PARKING_TIME', price: 2, vat: 21, step_size: 300 }],
        restrictions: { start_time: '18:00', end_time: '08:00', max_current: 32 },
      },
      {
        price_components: [{ type: 'FLAT', price: 3, vat: 21, step_size: 1 }],
        restrictions: { reservation: 'RESERVATION' },
      },
    ],
    last_updated: isoAt(),
    ...over,
  };
}

/** Session, 2.2.1 shape. */
export function aSession221(over: Json = {}): Json {
  return {
    country_code: 'NL',
    party_id: 'EVP',
    id: next('SES'),
    start_date_time: isoAt(),
    kwh: 12.5,
    cdr_token: { country_code: 'DE', party_id: 'EMP', uid: 'RFID-1', type: 'RFID', contract_id: 'DE-EMP-C1' },
    auth_method: 'WHITELIST',
    location_id: 'LOC-1',
    evse_uid: 'EVSE-1',
    connector_id: '1',
    currency: 'EUR',
    charging_periods: [{ start_date_time: isoAt(), dimensions: [{ type: 'ENERGY', volume: 12.5 }] }],
    total_cost: { excl_vat: 4.38, incl_vat: 5.3 },
    status: 'ACTIVE',
    last_updated: isoAt(),
    ...over,
  };
}

/** CDR, 2.2.1 shape. */
export function aCdr221(over: Json = {}): Json {
  return {
    country_code: 'NL',
    party_id: 'EVP',
    id: next('CDR'),
    start_date_time: isoAt(),
    end_date_time: isoAt(3600),
    session_id: 'SES-1',
    cdr_token: { country_code: 'DE', party_id: 'EMP', uid: 'RFID-1', type: 'RFID', contract_id: 'DE-EMP-C1' },
    auth_method: 'WHITELIST',
    cdr_location: {
      id: 'LOC-1',
      address: 'Main street 1',
      city: 'Utrecht',
      country: 'NLD',
      coordinates: { latitude: '52.090000', longitude: '5.121000' },
      evse_uid: 'EVSE-1',
      evse_id: 'NL*EVP*E1',
      connector_id: '1',
      connector_standard: 'IEC_62196_T2',
      connector_format: 'SOCKET',
      connector_power_type: 'AC_3_PHASE',
    },
    currency: 'EUR',
    charging_periods: [{ start_date_time: isoAt(), dimensions: [{ type: 'ENERGY', volume: 12.5 }] }],
    total_cost: { excl_vat: 4.38, incl_vat: 5.3 },
    total_energy: 12.5,
    total_time: 1,
    last_updated: isoAt(3600),
    ...over,
  };
}

/** CDR, 2.1.1 shape. */
export function aCdr211(over: Json = {}): Json {
  return {
    id: next('CDR'),
    start_date_time: isoAt(),
    stop_date_time: isoAt(3600),
    auth_id: 'NL-EVP-C12345678',
    auth_method: 'WHITELIST',
    location: aLocation211(),
    currency: 'EUR',
    charging_periods: [{ start_date_time: isoAt(), dimensions: [{ type: 'ENERGY', volume: 12.5 }] }],
    total_cost: 4.38,
    total_energy: 12.5,
    total_time: 1,
    last_updated: isoAt(3600),
    ...over,
  };
}

export interface PartyOf {
  country_code: string;
  party_id: string;
}

/** Credentials 2.2.1 of a partner. */
export function credentials221(party: PartyOf, token: string, url: string, role = 'CPO'): Json {
  return {
    token,
    url,
    roles: [
      {
        role,
        party_id: party.party_id,
        country_code: party.country_code,
        business_details: { name: `Partner ${party.party_id}` },
      },
    ],
  };
}

/** Credentials 2.1.1 of a partner. */
export function credentials211(party: PartyOf, token: string, url: string): Json {
  return {
    token,
    url,
    business_details: { name: `Partner ${party.party_id}` },
    party_id: party.party_id,
    country_code: party.country_code,
  };
}
