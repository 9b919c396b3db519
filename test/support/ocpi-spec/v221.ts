/**
 * JSON Schemas (draft-07, for ajv) of the OCPI 2.2.1 objects, written from the specification text
 * only (github.com/ocpi/ocpi, 2.2.1 documents: transport_and_format.asciidoc, status_codes.asciidoc,
 * version_information_endpoint.asciidoc, credentials.asciidoc, types.asciidoc, mod_locations,
 * mod_sessions, mod_cdrs, mod_tariffs, mod_tokens, mod_commands). Not derived from the platform's
 * own schemas: they are here to catch its mistakes.
 *
 * Cardinality: `1` is required, `?` optional, `*` an optional array, `+` a required non-empty array.
 * Unknown fields are allowed (receivers ignore what they do not know); `null` is not a value of any
 * typed field.
 */
import type { Schema } from './v211.js';

export type { Schema };

export const OCPI_221_ID = 'https://ocpi-spec.test/2.2.1/objects.json';

/** types.asciidoc "CiString": case insensitive, only printable ASCII. */
const PRINTABLE_ASCII = '^[\\x20-\\x7E]*$';
/** types.asciidoc "string": case sensitive, only printable UTF-8 (no control characters). */
const PRINTABLE_UTF8 = '^[^\\x00-\\x1F\\x7F]*$';

// a local name is checked when ajv compiles the document (an unknown one fails to resolve)
const ref = (name: string): Schema => ({ $ref: `#/definitions/${name}` });
const str = (max: number): Schema => ({ type: 'string', maxLength: max, pattern: PRINTABLE_UTF8 });
const ci = (max: number): Schema => ({ type: 'string', maxLength: max, pattern: PRINTABLE_ASCII });
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
/** ISO-3166 alpha-2 country code of a party, CiString(2). */
const countryCode: Schema = { type: 'string', maxLength: 2, pattern: '^[A-Za-z]{2}$' };
/** Party id (ISO-15118), CiString(3). */
const partyId: Schema = { type: 'string', minLength: 1, maxLength: 3, pattern: PRINTABLE_ASCII };

const definitions = {
  // types.asciidoc DateTime: string(25), RFC 3339, UTC; no designator means UTC; fractional seconds
  // MAY be used; "other formats/patterns are not allowed" (so no offsets, not even +00:00)
  DateTime: {
    type: 'string',
    maxLength: 25,
    pattern:
      '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]+)?Z?$',
  },
  // types.asciidoc URL: string(255) following the w3.org URL spec
  URL: { type: 'string', maxLength: 255, format: 'uri' },
  DisplayText: obj(['language', 'text'], { language: str(2), text: str(512) }),
  // types.asciidoc Price
  Price: obj(['excl_vat'], { excl_vat: num, incl_vat: num }),
  Role: oneOf('CPO', 'EMSP', 'HUB', 'NAP', 'NSP', 'OTHER', 'SCSP'),
  // ISO 4217, string(3)
  Currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },

  // transport_and_format.asciidoc "Response format"; status_codes.asciidoc: four digits
  Envelope: obj(['status_code', 'timestamp'], {
    data: {},
    status_code: { type: 'integer', minimum: 1000, maximum: 9999 },
    status_message: { type: 'string' },
    timestamp: ref('DateTime'),
  }),

  // version_information_endpoint.asciidoc
  VersionNumber: oneOf('2.0', '2.1', '2.1.1', '2.2', '2.2.1'),
  // custom module ids may only be sent to parties that agreed to them: none here
  ModuleID: oneOf(
    'cdrs',
    'chargingprofiles',
    'commands',
    'credentials',
    'hubclientinfo',
    'locations',
    'sessions',
    'tariffs',
    'tokens',
  ),
  InterfaceRole: oneOf('SENDER', 'RECEIVER'),
  Version: obj(['version', 'url'], { version: ref('VersionNumber'), url: ref('URL') }),
  Endpoint: obj(['identifier', 'role', 'url'], {
    identifier: ref('ModuleID'),
    role: ref('InterfaceRole'),
    url: ref('URL'),
  }),
  VersionDetails: obj(['version', 'endpoints'], { version: ref('VersionNumber'), endpoints: some(ref('Endpoint')) }),

  // credentials.asciidoc
  Credentials: obj(['token', 'url', 'roles'], {
    token: ci(64),
    url: ref('URL'),
    roles: some(ref('CredentialsRole')),
  }),
  CredentialsRole: obj(['role', 'business_details', 'party_id', 'country_code'], {
    role: ref('Role'),
    business_details: ref('BusinessDetails'),
    party_id: partyId,
    country_code: countryCode,
  }),

  // mod_locations.asciidoc "Location Object"
  Location: obj(
    [
      'country_code',
      'party_id',
      'id',
      'publish',
      'address',
      'city',
      'country',
      'coordinates',
      'time_zone',
      'last_updated',
    ],
    {
      country_code: countryCode,
      party_id: partyId,
      id: ci(36),
      publish: bool,
      publish_allowed_to: many(ref('PublishTokenType')),
      name: str(255),
      address: str(45),
      city: str(45),
      postal_code: str(10),
      state: str(20),
      // ISO 3166-1 alpha-3
      country: { type: 'string', pattern: '^[A-Za-z]{3}$' },
      coordinates: ref('GeoLocation'),
      related_locations: many(ref('AdditionalGeoLocation')),
      parking_type: ref('ParkingType'),
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
    },
  ),
  EVSE: obj(['uid', 'status', 'connectors', 'last_updated'], {
    uid: ci(36),
    evse_id: ci(48),
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
  Connector: obj(['id', 'standard', 'format', 'power_type', 'max_voltage', 'max_amperage', 'last_updated'], {
    id: ci(36),
    standard: ref('ConnectorType'),
    format: oneOf('SOCKET', 'CABLE'),
    power_type: ref('PowerType'),
    max_voltage: int,
    max_amperage: int,
    max_electric_power: int,
    tariff_ids: many(ci(36)),
    terms_and_conditions: ref('URL'),
    last_updated: ref('DateTime'),
  }),
  // GeoLocation / AdditionalGeoLocation: "Regex: -?[0-9]{1,2}\.[0-9]{5,7}" (latitude),
  // "-?[0-9]{1,3}\.[0-9]{5,7}" (longitude)
  GeoLocation: obj(['latitude', 'longitude'], {
    latitude: { type: 'string', maxLength: 10, pattern: '^-?[0-9]{1,2}\\.[0-9]{5,7}$' },
    longitude: { type: 'string', maxLength: 11, pattern: '^-?[0-9]{1,3}\\.[0-9]{5,7}$' },
  }),
  AdditionalGeoLocation: obj(['latitude', 'longitude'], {
    latitude: { type: 'string', maxLength: 10, pattern: '^-?[0-9]{1,2}\\.[0-9]{5,7}$' },
    longitude: { type: 'string', maxLength: 11, pattern: '^-?[0-9]{1,3}\\.[0-9]{5,7}$' },
    name: ref('DisplayText'),
  }),
  BusinessDetails: obj(['name'], { name: str(100), website: ref('URL'), logo: ref('Image') }),
  Capability: oneOf(
    'CHARGING_PROFILE_CAPABLE',
    'CHARGING_PREFERENCES_CAPABLE',
    'CHIP_CARD_SUPPORT',
    'CONTACTLESS_CARD_SUPPORT',
    'CREDIT_CARD_PAYABLE',
    'DEBIT_CARD_PAYABLE',
    'PED_TERMINAL',
    'REMOTE_START_STOP_CAPABLE',
    'RESERVABLE',
    'RFID_READER',
    'START_SESSION_CONNECTOR_REQUIRED',
    'TOKEN_GROUP_CAPABLE',
    'UNLOCK_CAPABLE',
  ),
  ConnectorType: oneOf(
    'CHADEMO',
    'CHAOJI',
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
    'DOMESTIC_M',
    'DOMESTIC_N',
    'DOMESTIC_O',
    'GBT_AC',
    'GBT_DC',
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
    'NEMA_5_20',
    'NEMA_6_30',
    'NEMA_6_50',
    'NEMA_10_30',
    'NEMA_10_50',
    'NEMA_14_30',
    'NEMA_14_50',
    'PANTOGRAPH_BOTTOM_UP',
    'PANTOGRAPH_TOP_DOWN',
    'TESLA_R',
    'TESLA_S',
  ),
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
  EnvironmentalImpact: obj(['category', 'amount'], {
    category: oneOf('NUCLEAR_WASTE', 'CARBON_DIOXIDE'),
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
    'BIKE_SHARING',
    'BUS_STOP',
    'TAXI_STAND',
    'TRAM_STOP',
    'METRO_STATION',
    'TRAIN_STATION',
    'AIRPORT',
    'PARKING_LOT',
    'CARPOOL_PARKING',
    'FUEL_STATION',
    'WIFI',
  ),
  // Hours: twentyfourseven is required; regular_hours only when it is false
  Hours: obj(['twentyfourseven'], {
    twentyfourseven: bool,
    regular_hours: many(ref('RegularHours')),
    exceptional_openings: many(ref('ExceptionalPeriod')),
    exceptional_closings: many(ref('ExceptionalPeriod')),
  }),
  Image: obj(['url', 'category', 'type'], {
    url: ref('URL'),
    thumbnail: ref('URL'),
    category: oneOf('CHARGER', 'ENTRANCE', 'LOCATION', 'NETWORK', 'OPERATOR', 'OTHER', 'OWNER'),
    type: ci(4),
    width: { type: 'integer', maximum: 99999 },
    height: { type: 'integer', maximum: 99999 },
  }),
  ParkingRestriction: oneOf('EV_ONLY', 'PLUGGED', 'DISABLED', 'CUSTOMERS', 'MOTORCYCLES'),
  ParkingType: oneOf(
    'ALONG_MOTORWAY',
    'PARKING_GARAGE',
    'PARKING_LOT',
    'ON_DRIVEWAY',
    'ON_STREET',
    'UNDERGROUND_GARAGE',
  ),
  PowerType: oneOf('AC_1_PHASE', 'AC_2_PHASE', 'AC_2_PHASE_SPLIT', 'AC_3_PHASE', 'DC'),
  PublishTokenType: {
    type: 'object',
    properties: {
      uid: ci(36),
      type: ref('TokenType'),
      visual_number: str(64),
      issuer: str(64),
      group_id: ci(36),
    },
    // "At least one of the following fields SHALL be set: uid, visual_number, or group_id"
    anyOf: [{ required: ['uid'] }, { required: ['visual_number'] }, { required: ['group_id'] }],
  },
  // RegularHours: "Regex: ([0-1][0-9]|2[0-3]):[0-5][0-9]"
  RegularHours: obj(['weekday', 'period_begin', 'period_end'], {
    weekday: { type: 'integer', minimum: 1, maximum: 7 },
    period_begin: { type: 'string', maxLength: 5, pattern: '^([0-1][0-9]|2[0-3]):[0-5][0-9]$' },
    period_end: { type: 'string', maxLength: 5, pattern: '^([0-1][0-9]|2[0-3]):[0-5][0-9]$' },
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

  // mod_sessions.asciidoc
  Session: obj(
    [
      'country_code',
      'party_id',
      'id',
      'start_date_time',
      'kwh',
      'cdr_token',
      'auth_method',
      'location_id',
      'evse_uid',
      'connector_id',
      'currency',
      'status',
      'last_updated',
    ],
    {
      country_code: countryCode,
      party_id: partyId,
      id: ci(36),
      start_date_time: ref('DateTime'),
      end_date_time: ref('DateTime'),
      kwh: num,
      cdr_token: ref('CdrToken'),
      auth_method: ref('AuthMethod'),
      authorization_reference: ci(36),
      location_id: ci(36),
      evse_uid: ci(36),
      connector_id: ci(36),
      meter_id: str(255),
      currency: ref('Currency'),
      charging_periods: many(ref('ChargingPeriod')),
      total_cost: ref('Price'),
      status: oneOf('ACTIVE', 'COMPLETED', 'INVALID', 'PENDING', 'RESERVATION'),
      last_updated: ref('DateTime'),
    },
  ),
  ChargingPreferences: obj(['profile_type'], {
    profile_type: ref('ProfileType'),
    departure_time: ref('DateTime'),
    energy_need: num,
    discharge_allowed: bool,
  }),
  ChargingPreferencesResponse: oneOf(
    'ACCEPTED',
    'DEPARTURE_REQUIRED',
    'ENERGY_NEED_REQUIRED',
    'NOT_POSSIBLE',
    'PROFILE_TYPE_NOT_SUPPORTED',
  ),
  ProfileType: oneOf('CHEAP', 'FAST', 'GREEN', 'REGULAR'),

  // mod_cdrs.asciidoc
  CDR: obj(
    [
      'country_code',
      'party_id',
      'id',
      'start_date_time',
      'end_date_time',
      'cdr_token',
      'auth_method',
      'cdr_location',
      'currency',
      'charging_periods',
      'total_cost',
      'total_energy',
      'total_time',
      'last_updated',
    ],
    {
      country_code: countryCode,
      party_id: partyId,
      // CiString(39): room for a credit CDR's suffix
      id: ci(39),
      start_date_time: ref('DateTime'),
      end_date_time: ref('DateTime'),
      session_id: ci(36),
      cdr_token: ref('CdrToken'),
      auth_method: ref('AuthMethod'),
      authorization_reference: ci(36),
      cdr_location: ref('CdrLocation'),
      meter_id: str(255),
      currency: ref('Currency'),
      tariffs: many(ref('Tariff')),
      charging_periods: some(ref('ChargingPeriod')),
      signed_data: ref('SignedData'),
      total_cost: ref('Price'),
      total_fixed_cost: ref('Price'),
      total_energy: num,
      total_energy_cost: ref('Price'),
      total_time: num,
      total_time_cost: ref('Price'),
      total_parking_time: num,
      total_parking_cost: ref('Price'),
      total_reservation_cost: ref('Price'),
      remark: str(255),
      invoice_reference_id: ci(39),
      credit: bool,
      credit_reference_id: ci(39),
      home_charging_compensation: bool,
      last_updated: ref('DateTime'),
    },
  ),
  AuthMethod: oneOf('AUTH_REQUEST', 'COMMAND', 'WHITELIST'),
  CdrDimension: obj(['type', 'volume'], {
    type: oneOf(
      'CURRENT',
      'ENERGY',
      'ENERGY_EXPORT',
      'ENERGY_IMPORT',
      'MAX_CURRENT',
      'MIN_CURRENT',
      'MAX_POWER',
      'MIN_POWER',
      'PARKING_TIME',
      'POWER',
      'RESERVATION_TIME',
      'STATE_OF_CHARGE',
      'TIME',
    ),
    volume: num,
  }),
  CdrLocation: obj(
    [
      'id',
      'address',
      'city',
      'country',
      'coordinates',
      'evse_uid',
      'evse_id',
      'connector_id',
      'connector_standard',
      'connector_format',
      'connector_power_type',
    ],
    {
      id: ci(36),
      name: str(255),
      address: str(45),
      city: str(45),
      postal_code: str(10),
      state: str(20),
      country: { type: 'string', pattern: '^[A-Za-z]{3}$' },
      coordinates: ref('GeoLocation'),
      evse_uid: ci(36),
      evse_id: ci(48),
      connector_id: ci(36),
      connector_standard: ref('ConnectorType'),
      connector_format: oneOf('SOCKET', 'CABLE'),
      connector_power_type: ref('PowerType'),
    },
  ),
  CdrToken: obj(['country_code', 'party_id', 'uid', 'type', 'contract_id'], {
    country_code: countryCode,
    party_id: partyId,
    uid: ci(36),
    type: ref('TokenType'),
    contract_id: ci(36),
  }),
  ChargingPeriod: obj(['start_date_time', 'dimensions'], {
    start_date_time: ref('DateTime'),
    dimensions: some(ref('CdrDimension')),
    tariff_id: ci(36),
  }),
  SignedData: obj(['encoding_method', 'signed_values'], {
    encoding_method: ci(36),
    encoding_method_version: int,
    public_key: str(512),
    signed_values: some(ref('SignedValue')),
    url: str(512),
  }),
  SignedValue: obj(['nature', 'plain_data', 'signed_data'], {
    nature: ci(32),
    plain_data: str(512),
    signed_data: str(5000),
  }),

  // mod_tariffs.asciidoc
  Tariff: obj(['country_code', 'party_id', 'id', 'currency', 'elements', 'last_updated'], {
    country_code: countryCode,
    party_id: partyId,
    id: ci(36),
    currency: ref('Currency'),
    type: oneOf('AD_HOC_PAYMENT', 'PROFILE_CHEAP', 'PROFILE_FAST', 'PROFILE_GREEN', 'REGULAR'),
    tariff_alt_text: many(ref('DisplayText')),
    tariff_alt_url: ref('URL'),
    min_price: ref('Price'),
    max_price: ref('Price'),
    elements: some(ref('TariffElement')),
    start_date_time: ref('DateTime'),
    end_date_time: ref('DateTime'),
    energy_mix: ref('EnergyMix'),
    last_updated: ref('DateTime'),
  }),
  DayOfWeek: oneOf('MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'),
  PriceComponent: obj(['type', 'price', 'step_size'], {
    type: oneOf('ENERGY', 'FLAT', 'PARKING_TIME', 'TIME'),
    price: num,
    vat: num,
    step_size: int,
  }),
  TariffElement: obj(['price_components'], {
    price_components: some(ref('PriceComponent')),
    restrictions: ref('TariffRestrictions'),
  }),
  // start_time/end_time: the spec's regex reads `([0-1][0-9]|2[1-3]):[0-5][0-9]`, which would refuse
  // 20:00-20:59 (a typo: RegularHours in mod_locations has `2[0-3]`); the intended form is used
  TariffRestrictions: obj([], {
    start_time: { type: 'string', maxLength: 5, pattern: '^([0-1][0-9]|2[0-3]):[0-5][0-9]$' },
    end_time: { type: 'string', maxLength: 5, pattern: '^([0-1][0-9]|2[0-3]):[0-5][0-9]$' },
    start_date: { type: 'string', maxLength: 10, pattern: '^([12][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$' },
    end_date: { type: 'string', maxLength: 10, pattern: '^([12][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$' },
    min_kwh: num,
    max_kwh: num,
    min_current: num,
    max_current: num,
    min_power: num,
    max_power: num,
    min_duration: int,
    max_duration: int,
    day_of_week: many(ref('DayOfWeek')),
    reservation: oneOf('RESERVATION', 'RESERVATION_EXPIRES'),
  }),

  // mod_tokens.asciidoc
  Token: obj(
    ['country_code', 'party_id', 'uid', 'type', 'contract_id', 'issuer', 'valid', 'whitelist', 'last_updated'],
    {
      country_code: countryCode,
      party_id: partyId,
      uid: ci(36),
      type: ref('TokenType'),
      contract_id: ci(36),
      visual_number: str(64),
      issuer: str(64),
      group_id: ci(36),
      valid: bool,
      whitelist: oneOf('ALWAYS', 'ALLOWED', 'ALLOWED_OFFLINE', 'NEVER'),
      language: str(2),
      default_profile_type: ref('ProfileType'),
      energy_contract: obj(['supplier_name'], { supplier_name: str(64), contract_id: str(64) }),
      last_updated: ref('DateTime'),
    },
  ),
  TokenType: oneOf('AD_HOC_USER', 'APP_USER', 'OTHER', 'RFID'),
  AuthorizationInfo: obj(['allowed', 'token'], {
    allowed: oneOf('ALLOWED', 'BLOCKED', 'EXPIRED', 'NO_CREDIT', 'NOT_ALLOWED'),
    token: ref('Token'),
    location: ref('LocationReferences'),
    authorization_reference: ci(36),
    info: ref('DisplayText'),
  }),
  LocationReferences: obj(['location_id'], { location_id: ci(36), evse_uids: many(ci(36)) }),

  // mod_commands.asciidoc
  CommandResponse: obj(['result', 'timeout'], {
    result: oneOf('NOT_SUPPORTED', 'REJECTED', 'ACCEPTED', 'UNKNOWN_SESSION'),
    timeout: int,
    message: many(ref('DisplayText')),
  }),
  CommandResult: obj(['result'], {
    result: oneOf(
      'ACCEPTED',
      'CANCELED_RESERVATION',
      'EVSE_OCCUPIED',
      'EVSE_INOPERATIVE',
      'FAILED',
      'NOT_SUPPORTED',
      'REJECTED',
      'TIMEOUT',
      'UNKNOWN_RESERVATION',
    ),
    message: many(ref('DisplayText')),
  }),
  CommandType: oneOf('CANCEL_RESERVATION', 'RESERVE_NOW', 'START_SESSION', 'STOP_SESSION', 'UNLOCK_CONNECTOR'),
} satisfies Record<string, Schema>;

export type Definition221 = keyof typeof definitions;

/** The document ajv registers; refer to one object with `ref221('Location')`. */
export const ocpi221: Schema = { $id: OCPI_221_ID, definitions };

export function ref221(name: Definition221): Schema {
  return { $ref: `${OCPI_221_ID}#/definitions/${name}` };
}
