/**
 * JSON Schemas (draft-07, for ajv) of the OCPI 2.1.1 objects, written from the specification text
 * only (github.com/ocpi/ocpi, 2.1.1 / 2.1.1-d2 release documents: transport_and_format.md,
 * version_information_endpoint.md, credentials.md, types.md, mod_locations.md, mod_sessions.md,
 * mod_cdrs.md, mod_tariffs.md, mod_tokens.md, mod_commands.md). Not derived from the platform's
 * own schemas: they are here to catch its mistakes.
 *
 * Cardinality: `1` is required, `?` optional, `*` an optional array, `+` a required non-empty array.
 * Unknown fields are allowed (receivers ignore what they do not know); `null` is not a value of any
 * typed field.
 */

export type Schema = Record<string, unknown>;

export const OCPI_211_ID = 'https://ocpi-spec.test/2.1.1/objects.json';

/** types.md "string": case sensitive, only printable ASCII. Also CiString (types.md 1.1). */
const PRINTABLE_ASCII = '^[\\x20-\\x7E]*$';

// a local name is checked when ajv compiles the document (an unknown one fails to resolve)
const ref = (name: string): Schema => ({ $ref: `#/definitions/${name}` });
const str = (max: number): Schema => ({ type: 'string', maxLength: max, pattern: PRINTABLE_ASCII });
const many = (items: Schema): Schema => ({ type: 'array', items });
const some = (items: Schema): Schema => ({ type: 'array', items, minItems: 1 });
const oneOf = (...values: string[]): Schema => ({ type: 'string', enum: values });
const int: Schema = { type: 'integer' };
const num: Schema = { type: 'number' };
const bool: Schema = { type: 'boolean' };
const obj = (required: string[], properties: Record<string, Schema>): Schema => ({
  type: 'object',
  required,
  properties,
});

const definitions = {
  // types.md 1.2: ISO 8601 combined date and time, string(25), UTC; no designator means UTC. The
  // section's own examples carry an offset (`2015-06-29T22:39:09+02:00`), so one is accepted here.
  DateTime: {
    type: 'string',
    maxLength: 25,
    pattern:
      '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])?$',
  },
  // types.md 1.6: a string(255) following the w3.org URL spec
  URL: { type: 'string', maxLength: 255, format: 'uri' },
  // types.md 1.4
  DisplayText: obj(['language', 'text'], { language: str(2), text: str(512) }),

  // transport_and_format.md "Response format"
  Envelope: obj(['status_code', 'timestamp'], {
    data: {},
    status_code: { type: 'integer', minimum: 1000, maximum: 9999 },
    status_message: { type: 'string' },
    timestamp: ref('DateTime'),
  }),

  // version_information_endpoint.md
  VersionNumber: oneOf('2.0', '2.1', '2.1.1'),
  ModuleID: oneOf('cdrs', 'commands', 'credentials', 'locations', 'sessions', 'tariffs', 'tokens'),
  Version: obj(['version', 'url'], { version: ref('VersionNumber'), url: ref('URL') }),
  Endpoint: obj(['identifier', 'url'], { identifier: ref('ModuleID'), url: ref('URL') }),
  VersionDetails: obj(['version', 'endpoints'], { version: ref('VersionNumber'), endpoints: some(ref('Endpoint')) }),

  // credentials.md 2.1
  Credentials: obj(['token', 'url', 'business_details', 'party_id', 'country_code'], {
    token: str(64),
    url: ref('URL'),
    business_details: ref('BusinessDetails'),
    party_id: str(3),
    country_code: str(2),
  }),

  // mod_locations.md 3.1
  Location: obj(['id', 'type', 'address', 'city', 'postal_code', 'country', 'coordinates', 'last_updated'], {
    id: str(39),
    type: ref('LocationType'),
    name: str(255),
    address: str(45),
    city: str(45),
    postal_code: str(10),
    // ISO 3166-1 alpha-3
    country: { type: 'string', pattern: '^[A-Za-z]{3}$' },
    coordinates: ref('GeoLocation'),
    related_locations: many(ref('AdditionalGeoLocation')),
    evses: many(ref('EVSE')),
    directions: many(ref('DisplayText')),
    operator: ref('BusinessDetails'),
    suboperator: ref('BusinessDetails'),
    owner: ref('BusinessDetails'),
    facilities: many(ref('Facility')),
    time_zone: str(255),
    opening_times: ref('Hours'),
    charging_when_closed: bool,
    images: many(ref('Image')),
    energy_mix: ref('EnergyMix'),
    last_updated: ref('DateTime'),
  }),
  // mod_locations.md 3.2
  EVSE: obj(['uid', 'status', 'connectors', 'last_updated'], {
    uid: str(39),
    evse_id: str(48),
    status: ref('Status'),
    status_schedule: many(ref('StatusSchedule')),
    capabilities: many(ref('Capability')),
    connectors: some(ref('Connector')),
    floor_level: str(4),
    coordinates: ref('GeoLocation'),
    physical_reference: str(16),
    directions: many(ref('DisplayText')),
    parking_restrictions: many(ref('ParkingRestriction')),
    images: many(ref('Image')),
    last_updated: ref('DateTime'),
  }),
  // mod_locations.md 3.3
  Connector: obj(['id', 'standard', 'format', 'power_type', 'voltage', 'amperage', 'last_updated'], {
    id: str(36),
    standard: ref('ConnectorType'),
    format: ref('ConnectorFormat'),
    power_type: ref('PowerType'),
    voltage: int,
    amperage: int,
    tariff_id: str(36),
    terms_and_conditions: ref('URL'),
    last_updated: ref('DateTime'),
  }),
  // mod_locations.md 4.1 (AdditionalGeoLocation) and 4.12 (GeoLocation)
  AdditionalGeoLocation: obj(['latitude', 'longitude'], {
    latitude: { type: 'string', maxLength: 10, pattern: '^-?[0-9]{1,2}\\.[0-9]{6}$' },
    longitude: { type: 'string', maxLength: 11, pattern: '^-?[0-9]{1,3}\\.[0-9]{6}$' },
    name: ref('DisplayText'),
  }),
  GeoLocation: obj(['latitude', 'longitude'], {
    latitude: { type: 'string', maxLength: 10, pattern: '^-?[0-9]{1,2}\\.[0-9]{6}$' },
    longitude: { type: 'string', maxLength: 11, pattern: '^-?[0-9]{1,3}\\.[0-9]{6}$' },
  }),
  // mod_locations.md 4.1 (second one: BusinessDetails)
  BusinessDetails: obj(['name'], { name: str(100), website: ref('URL'), logo: ref('Image') }),
  Capability: oneOf(
    'CHARGING_PROFILE_CAPABLE',
    'CREDIT_CARD_PAYABLE',
    'REMOTE_START_STOP_CAPABLE',
    'RESERVABLE',
    'RFID_READER',
    'UNLOCK_CAPABLE',
  ),
  ConnectorFormat: oneOf('SOCKET', 'CABLE'),
  ConnectorType: oneOf(
    'CHADEMO',
    'DOMESTIC_A',
    'DOMESTIC_B',
    'DOMESTIC_C',
    'DOMESTIC_D',
    'DOMESTIC_E',
    'DOMESTIC_F',
    'DOMESTIC_G',
    'DOMESTIC_H',
    'DOMESTIC_I',
    'DOMESTIC_J',
    'DOMESTIC_K',
    'DOMESTIC_L',
    'IEC_60309_2_single_16',
    'IEC_60309_2_three_16',
    'IEC_60309_2_three_32',
    'IEC_60309_2_three_64',
    'IEC_62196_T1',
    'IEC_62196_T1_COMBO',
    'IEC_62196_T2',
    'IEC_62196_T2_COMBO',
    'IEC_62196_T3A',
    'IEC_62196_T3C',
    'TESLA_R',
    'TESLA_S',
  ),
  // mod_locations.md 4.5 - 4.9
  EnergyMix: obj(['is_green_energy'], {
    is_green_energy: bool,
    energy_sources: many(ref('EnergySource')),
    environ_impact: many(ref('EnvironmentalImpact')),
    supplier_name: str(64),
    energy_product_name: str(64),
  }),
  EnergySource: obj(['source', 'percentage'], {
    source: oneOf('NUCLEAR', 'GENERAL_FOSSIL', 'COAL', 'GAS', 'GENERAL_GREEN', 'SOLAR', 'WIND', 'WATER'),
    percentage: num,
  }),
  // 2.1.1 names the category field `source` (2.2.1 renamed it `category`)
  EnvironmentalImpact: obj(['source', 'amount'], {
    source: oneOf('NUCLEAR_WASTE', 'CARBON_DIOXIDE'),
    amount: num,
  }),
  ExceptionalPeriod: obj(['period_begin', 'period_end'], {
    period_begin: ref('DateTime'),
    period_end: ref('DateTime'),
  }),
  Facility: oneOf(
    'HOTEL',
    'RESTAURANT',
    'CAFE',
    'MALL',
    'SUPERMARKET',
    'SPORT',
    'RECREATION_AREA',
    'NATURE',
    'MUSEUM',
    'BUS_STOP',
    'TAXI_STAND',
    'TRAIN_STATION',
    'AIRPORT',
    'CARPOOL_PARKING',
    'FUEL_STATION',
    'WIFI',
  ),
  // mod_locations.md 4.13: "Choice: one of two" of regular_hours and twentyfourseven
  Hours: {
    type: 'object',
    properties: {
      regular_hours: many(ref('RegularHours')),
      twentyfourseven: bool,
      exceptional_openings: many(ref('ExceptionalPeriod')),
      exceptional_closings: many(ref('ExceptionalPeriod')),
    },
    anyOf: [{ required: ['twentyfourseven'] }, { required: ['regular_hours'] }],
  },
  Image: obj(['url', 'category', 'type'], {
    url: ref('URL'),
    thumbnail: ref('URL'),
    category: oneOf('CHARGER', 'ENTRANCE', 'LOCATION', 'NETWORK', 'OPERATOR', 'OTHER', 'OWNER'),
    type: str(4),
    width: { type: 'integer', maximum: 99999 },
    height: { type: 'integer', maximum: 99999 },
  }),
  LocationType: oneOf('ON_STREET', 'PARKING_GARAGE', 'UNDERGROUND_GARAGE', 'PARKING_LOT', 'OTHER', 'UNKNOWN'),
  ParkingRestriction: oneOf('EV_ONLY', 'PLUGGED', 'DISABLED', 'CUSTOMERS', 'MOTORCYCLES'),
  PowerType: oneOf('AC_1_PHASE', 'AC_3_PHASE', 'DC'),
  // mod_locations.md 4.19
  RegularHours: obj(['weekday', 'period_begin', 'period_end'], {
    weekday: { type: 'integer', minimum: 1, maximum: 7 },
    period_begin: { type: 'string', maxLength: 5, pattern: '^[0-2][0-9]:[0-5][0-9]$' },
    period_end: { type: 'string', maxLength: 5, pattern: '^[0-2][0-9]:[0-5][0-9]$' },
  }),
  Status: oneOf(
    'AVAILABLE',
    'BLOCKED',
    'CHARGING',
    'INOPERATIVE',
    'OUTOFORDER',
    'PLANNED',
    'REMOVED',
    'RESERVED',
    'UNKNOWN',
  ),
  StatusSchedule: obj(['period_begin', 'status'], {
    period_begin: ref('DateTime'),
    period_end: ref('DateTime'),
    status: ref('Status'),
  }),

  // mod_sessions.md 3.1, 4.1
  Session: obj(
    ['id', 'start_datetime', 'kwh', 'auth_id', 'auth_method', 'location', 'currency', 'status', 'last_updated'],
    {
      id: str(36),
      start_datetime: ref('DateTime'),
      end_datetime: ref('DateTime'),
      kwh: num,
      auth_id: str(36),
      auth_method: ref('AuthMethod'),
      location: ref('Location'),
      meter_id: str(255),
      currency: ref('Currency'),
      charging_periods: many(ref('ChargingPeriod')),
      total_cost: num,
      status: oneOf('ACTIVE', 'COMPLETED', 'INVALID', 'PENDING'),
      last_updated: ref('DateTime'),
    },
  ),
  // ISO 4217, string(3)
  Currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },

  // mod_cdrs.md 3.1, 4.1 - 4.4
  CDR: obj(
    [
      'id',
      'start_date_time',
      'stop_date_time',
      'auth_id',
      'auth_method',
      'location',
      'currency',
      'charging_periods',
      'total_cost',
      'total_energy',
      'total_time',
      'last_updated',
    ],
    {
      id: str(36),
      start_date_time: ref('DateTime'),
      stop_date_time: ref('DateTime'),
      auth_id: str(36),
      auth_method: ref('AuthMethod'),
      location: ref('Location'),
      meter_id: str(255),
      currency: ref('Currency'),
      tariffs: many(ref('Tariff')),
      charging_periods: some(ref('ChargingPeriod')),
      total_cost: num,
      total_energy: num,
      total_time: num,
      total_parking_time: num,
      remark: str(255),
      last_updated: ref('DateTime'),
    },
  ),
  AuthMethod: oneOf('AUTH_REQUEST', 'WHITELIST'),
  CdrDimension: obj(['type', 'volume'], {
    type: oneOf('ENERGY', 'FLAT', 'MAX_CURRENT', 'MIN_CURRENT', 'PARKING_TIME', 'TIME'),
    volume: num,
  }),
  ChargingPeriod: obj(['start_date_time', 'dimensions'], {
    start_date_time: ref('DateTime'),
    dimensions: some(ref('CdrDimension')),
  }),

  // mod_tariffs.md 3.1, 4.1 - 4.5
  Tariff: obj(['id', 'currency', 'elements', 'last_updated'], {
    id: str(36),
    currency: ref('Currency'),
    tariff_alt_text: many(ref('DisplayText')),
    tariff_alt_url: ref('URL'),
    elements: some(ref('TariffElement')),
    energy_mix: ref('EnergyMix'),
    last_updated: ref('DateTime'),
  }),
  DayOfWeek: oneOf('MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'),
  PriceComponent: obj(['type', 'price', 'step_size'], {
    type: oneOf('ENERGY', 'FLAT', 'PARKING_TIME', 'TIME'),
    price: num,
    step_size: int,
  }),
  TariffElement: obj(['price_components'], {
    price_components: some(ref('PriceComponent')),
    restrictions: ref('TariffRestrictions'),
  }),
  TariffRestrictions: obj([], {
    start_time: { type: 'string', maxLength: 5, pattern: '^[0-2][0-9]:[0-5][0-9]$' },
    end_time: { type: 'string', maxLength: 5, pattern: '^[0-2][0-9]:[0-5][0-9]$' },
    start_date: str(10),
    end_date: str(10),
    min_kwh: num,
    max_kwh: num,
    min_power: num,
    max_power: num,
    min_duration: int,
    max_duration: int,
    day_of_week: many(ref('DayOfWeek')),
  }),

  // mod_tokens.md 3.1, 3.2, 4.1 - 4.4
  Token: obj(['uid', 'type', 'auth_id', 'issuer', 'valid', 'whitelist', 'last_updated'], {
    uid: str(36),
    type: oneOf('OTHER', 'RFID'),
    auth_id: str(36),
    visual_number: str(64),
    issuer: str(64),
    valid: bool,
    whitelist: oneOf('ALWAYS', 'ALLOWED', 'ALLOWED_OFFLINE', 'NEVER'),
    language: str(2),
    last_updated: ref('DateTime'),
  }),
  AuthorizationInfo: obj(['allowed'], {
    allowed: oneOf('ALLOWED', 'BLOCKED', 'EXPIRED', 'NO_CREDIT', 'NOT_ALLOWED'),
    location: ref('LocationReferences'),
    info: ref('DisplayText'),
  }),
  LocationReferences: obj(['location_id'], {
    location_id: str(39),
    evse_uids: many({ type: 'string' }),
    connector_ids: many({ type: 'string' }),
  }),

  // mod_commands.md 3.1, 4.1: the CPO's answer, and (2.2.1 has CommandResult for this) the body of
  // the asynchronous POST to the eMSP
  CommandResponse: obj(['result'], {
    result: oneOf('NOT_SUPPORTED', 'REJECTED', 'ACCEPTED', 'TIMEOUT', 'UNKNOWN_SESSION'),
  }),
  CommandType: oneOf('RESERVE_NOW', 'START_SESSION', 'STOP_SESSION', 'UNLOCK_CONNECTOR'),
} satisfies Record<string, Schema>;

export type Definition211 = keyof typeof definitions;

/** The document ajv registers; refer to one object with `ref211('Location')`. */
export const ocpi211: Schema = { $id: OCPI_211_ID, definitions };

export function ref211(name: Definition211): Schema {
  return { $ref: `${OCPI_211_ID}#/definitions/${name}` };
}
