import { expect } from 'chai';
import {
  aCdr211,
  aCdr221,
  aConnector,
  aConnector211,
  aLocation,
  aLocation211,
  aSession,
  aSession221,
  aTariff,
  aTariff221,
  aToken,
  aToken221,
  anEvse,
  anEvse211,
  credentials211,
  credentials221,
  type Json,
  type PartyOf,
} from '../support/ocpi-builders.js';
import { embeddedTarget, uniqueParty, useOcpiTarget, type RegisteredPartner } from '../support/ocpi-harness.js';

/**
 * The field rules of OCPI objects a partner sends (string(n) / CiString(n) lengths, closed
 * enumerations, patterns, number ranges), per module and version: each broken object breaks one
 * rule of the builder's valid object and is refused with 422 naming that field; the builder's
 * object itself is accepted.
 */

type Loc = Array<string | number>;

interface Broken {
  /** what is wrong, for the test title */
  rule: string;
  /** top-level fields replacing the valid object's */
  over: Json;
  /** where the 422 points, below `body` */
  loc: Loc;
}

interface ModuleCase {
  module: string;
  version: '2.1.1' | '2.2.1';
  /** the partner that writes these objects: a CPO (eMSP mounts) or an eMSP (CPO mounts) */
  writer: 'CPO' | 'EMSP';
  /** the request that stores `body` for the partner of `party` */
  send(party: PartyOf, body: Json): { method: 'PUT' | 'POST'; path: string };
  valid(party: PartyOf): Json;
  /** fields at the limits of their rules (the longest string, the last hour), accepted too */
  limits: Json;
  broken: Broken[];
}

const long = (n: number): string => 'x'.repeat(n);
const url = (n: number): string => `https://example.com/${long(n - 20)}`;

/** A PUT to `/{module}/{cc}/{pid}/{id}` of `mount`, the id being the body's `idField`. */
function putAt(mount: string, idField: string): ModuleCase['send'] {
  return (party, body) => ({
    method: 'PUT',
    path: `${mount}/${party.country_code}/${party.party_id}/${String(body[idField])}`,
  });
}

const hours = (weekday: number, begin: string, end: string): Json => ({
  twentyfourseven: false,
  regular_hours: [{ weekday, period_begin: begin, period_end: end }],
});

const locations221: ModuleCase = {
  module: 'locations',
  version: '2.2.1',
  writer: 'CPO',
  send: putAt('/ocpi/emsp/2.2.1/locations', 'id'),
  valid: (party) => aLocation({ ...party }),
  limits: {
    name: long(255),
    address: long(45),
    city: long(45),
    postal_code: long(10),
    state: long(20),
    evses: [anEvse({ evse_id: long(48), floor_level: '-1', physical_reference: long(16) })],
    directions: [{ language: 'EN', text: long(512) }],
    opening_times: hours(7, '00:00', '23:59'),
  },
  broken: [
    { rule: 'name string(255)', over: { name: long(256) }, loc: ['name'] },
    { rule: 'address string(45)', over: { address: long(46) }, loc: ['address'] },
    { rule: 'city string(45)', over: { city: long(46) }, loc: ['city'] },
    { rule: 'postal_code string(10)', over: { postal_code: long(11) }, loc: ['postal_code'] },
    { rule: 'state string(20)', over: { state: long(21) }, loc: ['state'] },
    { rule: 'country ISO 3166-1 alpha-3, uppercase', over: { country: 'nld' }, loc: ['country'] },
    { rule: 'time_zone string(255)', over: { time_zone: long(256) }, loc: ['time_zone'] },
    {
      rule: 'EVSE evse_id CiString(48)',
      over: { evses: [anEvse({ evse_id: long(49) })] },
      loc: ['evses', 0, 'evse_id'],
    },
    {
      rule: 'EVSE uid unique within the location',
      over: { evses: [anEvse({ uid: 'E-1' }), anEvse({ uid: 'E-2' }), anEvse({ uid: 'E-1' })] },
      loc: ['evses', 2, 'uid'],
    },
    {
      rule: 'Connector id unique within the EVSE',
      over: { evses: [anEvse({ connectors: [aConnector({ id: '1' }), aConnector({ id: '1' })] })] },
      loc: ['evses', 0, 'connectors', 1, 'id'],
    },
    {
      rule: 'EVSE floor_level string(4)',
      over: { evses: [anEvse({ floor_level: '-1234' })] },
      loc: ['evses', 0, 'floor_level'],
    },
    {
      rule: 'EVSE physical_reference string(16)',
      over: { evses: [anEvse({ physical_reference: long(17) })] },
      loc: ['evses', 0, 'physical_reference'],
    },
    {
      rule: 'Connector tariff_ids CiString(36)',
      over: { evses: [anEvse({ connectors: [aConnector({ tariff_ids: [long(37)] })] })] },
      loc: ['evses', 0, 'connectors', 0, 'tariff_ids', 0],
    },
    {
      rule: 'Connector terms_and_conditions URL(255)',
      over: { evses: [anEvse({ connectors: [aConnector({ terms_and_conditions: url(256) })] })] },
      loc: ['evses', 0, 'connectors', 0, 'terms_and_conditions'],
    },
    {
      rule: 'Connector max_voltage not negative',
      over: { evses: [anEvse({ connectors: [aConnector({ max_voltage: -230 })] })] },
      loc: ['evses', 0, 'connectors', 0, 'max_voltage'],
    },
    {
      rule: 'DisplayText language ISO 639-1',
      over: { directions: [{ language: 'dutch', text: 'Left' }] },
      loc: ['directions', 0, 'language'],
    },
    {
      rule: 'DisplayText text string(512)',
      over: { directions: [{ language: 'nl', text: long(513) }] },
      loc: ['directions', 0, 'text'],
    },
    { rule: 'BusinessDetails name string(100)', over: { operator: { name: long(101) } }, loc: ['operator', 'name'] },
    {
      rule: 'BusinessDetails website URL(255)',
      over: { owner: { name: 'Owner', website: url(256) } },
      loc: ['owner', 'website'],
    },
    {
      rule: 'RegularHours weekday 1-7',
      over: { opening_times: hours(8, '08:00', '18:00') },
      loc: ['opening_times', 'regular_hours', 0, 'weekday'],
    },
    {
      rule: 'RegularHours period_begin hh:mm',
      over: { opening_times: hours(1, '24:00', '18:00') },
      loc: ['opening_times', 'regular_hours', 0, 'period_begin'],
    },
    {
      rule: 'EnergySource percentage 0-100',
      over: { energy_mix: { is_green_energy: true, energy_sources: [{ source: 'SOLAR', percentage: 101 }] } },
      loc: ['energy_mix', 'energy_sources', 0, 'percentage'],
    },
    {
      rule: 'EnergyMix supplier_name string(64)',
      over: { energy_mix: { is_green_energy: true, supplier_name: long(65) } },
      loc: ['energy_mix', 'supplier_name'],
    },
    {
      rule: 'PublishTokenType type a TokenType',
      over: { publish: false, publish_allowed_to: [{ uid: 'RFID-1', type: 'CARD' }] },
      loc: ['publish_allowed_to', 0, 'type'],
    },
    {
      rule: 'PublishTokenType visual_number string(64)',
      over: { publish: false, publish_allowed_to: [{ visual_number: long(65), issuer: 'Issuer' }] },
      loc: ['publish_allowed_to', 0, 'visual_number'],
    },
  ],
};

const locations211: ModuleCase = {
  module: 'locations',
  version: '2.1.1',
  writer: 'CPO',
  send: putAt('/ocpi/emsp/2.1.1/locations', 'id'),
  valid: () => aLocation211(),
  limits: {
    address: long(45),
    postal_code: long(10),
    evses: [anEvse211({ uid: long(39), evse_id: long(48) })],
    opening_times: hours(1, '06:30', '22:00'),
  },
  broken: [
    { rule: 'name string(255)', over: { name: long(256) }, loc: ['name'] },
    { rule: 'address string(45)', over: { address: long(46) }, loc: ['address'] },
    { rule: 'city string(45)', over: { city: long(46) }, loc: ['city'] },
    { rule: 'postal_code string(10)', over: { postal_code: long(11) }, loc: ['postal_code'] },
    { rule: 'country ISO 3166-1 alpha-3', over: { country: 'NL' }, loc: ['country'] },
    {
      rule: 'EVSE evse_id string(48)',
      over: { evses: [anEvse211({ evse_id: long(49) })] },
      loc: ['evses', 0, 'evse_id'],
    },
    {
      rule: 'EVSE uid unique within the location',
      over: { evses: [anEvse211({ uid: 'E-1' }), anEvse211({ uid: 'E-1' })] },
      loc: ['evses', 1, 'uid'],
    },
    {
      rule: 'Connector id unique within the EVSE',
      over: { evses: [anEvse211({ connectors: [aConnector211({ id: '2' }), aConnector211({ id: '2' })] })] },
      loc: ['evses', 0, 'connectors', 1, 'id'],
    },
    {
      rule: 'Connector tariff_id string(36)',
      over: { evses: [anEvse211({ connectors: [aConnector211({ tariff_id: long(37) })] })] },
      loc: ['evses', 0, 'connectors', 0, 'tariff_id'],
    },
    {
      rule: 'Connector amperage not negative',
      over: { evses: [anEvse211({ connectors: [aConnector211({ amperage: -16 })] })] },
      loc: ['evses', 0, 'connectors', 0, 'amperage'],
    },
    {
      rule: 'RegularHours weekday 1-7',
      over: { opening_times: hours(0, '08:00', '18:00') },
      loc: ['opening_times', 'regular_hours', 0, 'weekday'],
    },
    {
      rule: 'RegularHours period_end hh:mm',
      over: { opening_times: hours(1, '08:00', '25:00') },
      loc: ['opening_times', 'regular_hours', 0, 'period_end'],
    },
    { rule: 'BusinessDetails name string(100)', over: { operator: { name: long(101) } }, loc: ['operator', 'name'] },
  ],
};

const tariffs221: ModuleCase = {
  module: 'tariffs',
  version: '2.2.1',
  writer: 'CPO',
  send: putAt('/ocpi/emsp/2.2.1/tariffs', 'id'),
  valid: (party) => aTariff221({ ...party }),
  limits: {
    tariff_alt_url: url(255),
    elements: [
      {
        price_components: [{ type: 'TIME', price: 0, vat: 100, step_size: 0 }],
        restrictions: { start_time: '00:00', end_time: '23:59', start_date: '2026-12-31', day_of_week: ['SUNDAY'] },
      },
    ],
  },
  broken: [
    { rule: 'currency ISO 4217, uppercase', over: { currency: 'eur' }, loc: ['currency'] },
    { rule: 'type a TariffType', over: { type: 'SPECIAL' }, loc: ['type'] },
    { rule: 'tariff_alt_url URL(255)', over: { tariff_alt_url: url(256) }, loc: ['tariff_alt_url'] },
    {
      rule: 'tariff_alt_text DisplayText text string(512)',
      over: { tariff_alt_text: [{ language: 'en', text: long(513) }] },
      loc: ['tariff_alt_text', 0, 'text'],
    },
    {
      rule: 'PriceComponent vat a percentage',
      over: { elements: [{ price_components: [{ type: 'ENERGY', price: 0.3, vat: 121, step_size: 1 }] }] },
      loc: ['elements', 0, 'price_components', 0, 'vat'],
    },
    ...restrictionRules(),
    {
      rule: 'TariffRestrictions reservation a ReservationRestrictionType',
      over: restricted({ reservation: 'ALWAYS' }),
      loc: ['elements', 0, 'restrictions', 'reservation'],
    },
  ],
};

const tariffs211: ModuleCase = {
  module: 'tariffs',
  version: '2.1.1',
  writer: 'CPO',
  send: putAt('/ocpi/emsp/2.1.1/tariffs', 'id'),
  valid: () => aTariff(),
  limits: {
    elements: [
      {
        price_components: [{ type: 'FLAT', price: 0, step_size: 0 }],
        restrictions: { start_time: '20:00', end_date: '2026-02-28', min_kwh: 0, day_of_week: ['MONDAY'] },
      },
    ],
  },
  broken: [
    { rule: 'currency ISO 4217', over: { currency: 'EURO' }, loc: ['currency'] },
    { rule: 'tariff_alt_url URL(255)', over: { tariff_alt_url: url(256) }, loc: ['tariff_alt_url'] },
    {
      rule: 'PriceComponent type a TariffDimensionType',
      over: { elements: [{ price_components: [{ type: 'PARKING', price: 2, step_size: 60 }] }] },
      loc: ['elements', 0, 'price_components', 0, 'type'],
    },
    {
      rule: 'PriceComponent step_size not negative',
      over: { elements: [{ price_components: [{ type: 'TIME', price: 2, step_size: -60 }] }] },
      loc: ['elements', 0, 'price_components', 0, 'step_size'],
    },
    {
      rule: 'TariffElement price_components: one or more',
      over: { elements: [{ price_components: [] }] },
      loc: ['elements', 0, 'price_components'],
    },
    ...restrictionRules(),
    {
      rule: 'EnergySource percentage 0-100',
      over: { energy_mix: { is_green_energy: false, energy_sources: [{ source: 'COAL', percentage: -1 }] } },
      loc: ['energy_mix', 'energy_sources', 0, 'percentage'],
    },
  ],
};

/** A tariff whose one element has `restrictions`. */
function restricted(restrictions: Json): Json {
  return { elements: [{ price_components: [{ type: 'ENERGY', price: 0.3, step_size: 1 }], restrictions }] };
}

/** TariffRestrictions rules both versions have. */
function restrictionRules(): Broken[] {
  const at = (field: string): Loc => ['elements', 0, 'restrictions', field];
  return [
    { rule: 'TariffRestrictions start_time hh:mm', over: restricted({ start_time: '24:00' }), loc: at('start_time') },
    { rule: 'TariffRestrictions end_time hh:mm', over: restricted({ end_time: '7:30' }), loc: at('end_time') },
    {
      rule: 'TariffRestrictions start_date YYYY-MM-DD',
      over: restricted({ start_date: '2026-13-01' }),
      loc: at('start_date'),
    },
    {
      rule: 'TariffRestrictions end_date YYYY-MM-DD',
      over: restricted({ end_date: '31-12-2026' }),
      loc: at('end_date'),
    },
    { rule: 'TariffRestrictions min_kwh not negative', over: restricted({ min_kwh: -1 }), loc: at('min_kwh') },
    {
      rule: 'TariffRestrictions day_of_week a DayOfWeek',
      over: restricted({ day_of_week: ['MONDAY', 'FUNDAY'] }),
      loc: [...at('day_of_week'), 1],
    },
  ];
}

const longId = long(37);

const sessions221: ModuleCase = {
  module: 'sessions',
  version: '2.2.1',
  writer: 'CPO',
  send: putAt('/ocpi/emsp/2.2.1/sessions', 'id'),
  valid: (party) => aSession221({ ...party }),
  limits: { kwh: 0, meter_id: long(255), location_id: long(36) },
  broken: [
    { rule: 'kwh not negative', over: { kwh: -0.1 }, loc: ['kwh'] },
    { rule: 'currency ISO 4217', over: { currency: 'Euro' }, loc: ['currency'] },
    { rule: 'meter_id string(255)', over: { meter_id: long(256) }, loc: ['meter_id'] },
    { rule: 'location_id CiString(36)', over: { location_id: longId }, loc: ['location_id'] },
    {
      rule: 'authorization_reference CiString(36)',
      over: { authorization_reference: longId },
      loc: ['authorization_reference'],
    },
    { rule: 'status a SessionStatus', over: { status: 'DONE' }, loc: ['status'] },
    {
      rule: 'CdrToken contract_id CiString(36)',
      over: {
        cdr_token: { country_code: 'DE', party_id: 'EMP', uid: 'RFID-1', type: 'RFID', contract_id: longId },
      },
      loc: ['cdr_token', 'contract_id'],
    },
  ],
};

const sessions211: ModuleCase = {
  module: 'sessions',
  version: '2.1.1',
  writer: 'CPO',
  send: putAt('/ocpi/emsp/2.1.1/sessions', 'id'),
  valid: () => aSession(),
  limits: { kwh: 0, auth_id: long(36), meter_id: long(255) },
  broken: [
    { rule: 'kwh not negative', over: { kwh: -1 }, loc: ['kwh'] },
    { rule: 'auth_id string(36)', over: { auth_id: longId }, loc: ['auth_id'] },
    { rule: 'currency ISO 4217', over: { currency: 'eur' }, loc: ['currency'] },
    { rule: 'meter_id string(255)', over: { meter_id: long(256) }, loc: ['meter_id'] },
    {
      rule: 'Location address string(45)',
      over: { location: aLocation211({ address: long(46) }) },
      loc: ['location', 'address'],
    },
    {
      rule: 'ChargingPeriod dimensions: one or more',
      over: { charging_periods: [{ start_date_time: '2026-01-01T12:00:00Z', dimensions: [] }] },
      loc: ['charging_periods', 0, 'dimensions'],
    },
  ],
};

const cdrLocation = aCdr221().cdr_location as Json;

const cdrs221: ModuleCase = {
  module: 'cdrs',
  version: '2.2.1',
  writer: 'CPO',
  send: () => ({ method: 'POST', path: '/ocpi/emsp/2.2.1/cdrs' }),
  valid: (party) => aCdr221({ ...party }),
  limits: { id: `${long(37)}-C`, total_energy: 0, total_parking_time: 0, remark: long(255) },
  broken: [
    { rule: 'id CiString(39)', over: { id: long(40) }, loc: ['id'] },
    { rule: 'session_id CiString(36)', over: { session_id: longId }, loc: ['session_id'] },
    // total_energy may be negative here: energy fed back to the grid (test/ocpi/cdr-checks.test.ts)
    { rule: 'total_time not negative', over: { total_time: -1 }, loc: ['total_time'] },
    { rule: 'total_parking_time not negative', over: { total_parking_time: -0.5 }, loc: ['total_parking_time'] },
    { rule: 'currency ISO 4217', over: { currency: 'EU' }, loc: ['currency'] },
    { rule: 'remark string(255)', over: { remark: long(256) }, loc: ['remark'] },
    {
      rule: 'CdrLocation country ISO 3166-1 alpha-3',
      over: { cdr_location: { ...cdrLocation, country: 'nl' } },
      loc: ['cdr_location', 'country'],
    },
    {
      rule: 'CdrLocation evse_id CiString(48)',
      over: { cdr_location: { ...cdrLocation, evse_id: long(49) } },
      loc: ['cdr_location', 'evse_id'],
    },
    {
      rule: 'CdrLocation city string(45)',
      over: { cdr_location: { ...cdrLocation, city: long(46) } },
      loc: ['cdr_location', 'city'],
    },
  ],
};

const cdrs211: ModuleCase = {
  module: 'cdrs',
  version: '2.1.1',
  writer: 'CPO',
  send: () => ({ method: 'POST', path: '/ocpi/emsp/2.1.1/cdrs' }),
  valid: () => aCdr211(),
  limits: { auth_id: long(36), total_energy: 0, total_time: 0 },
  broken: [
    { rule: 'auth_id string(36)', over: { auth_id: longId }, loc: ['auth_id'] },
    { rule: 'total_energy not negative', over: { total_energy: -1 }, loc: ['total_energy'] },
    { rule: 'total_time not negative', over: { total_time: -1 }, loc: ['total_time'] },
    { rule: 'meter_id string(255)', over: { meter_id: long(256) }, loc: ['meter_id'] },
    {
      rule: 'Location country ISO 3166-1 alpha-3',
      over: { location: aLocation211({ country: 'Netherlands' }) },
      loc: ['location', 'country'],
    },
    {
      rule: 'Tariff currency ISO 4217',
      over: { tariffs: [aTariff({ currency: 'eur' })] },
      loc: ['tariffs', 0, 'currency'],
    },
  ],
};

const tokens221: ModuleCase = {
  module: 'tokens',
  version: '2.2.1',
  writer: 'EMSP',
  send: putAt('/ocpi/cpo/2.2.1/tokens', 'uid'),
  valid: (party) => aToken221({ ...party }),
  limits: { visual_number: long(64), issuer: long(64), group_id: long(36), language: 'de' },
  broken: [
    { rule: 'contract_id CiString(36)', over: { contract_id: longId }, loc: ['contract_id'] },
    { rule: 'visual_number string(64)', over: { visual_number: long(65) }, loc: ['visual_number'] },
    { rule: 'issuer string(64)', over: { issuer: long(65) }, loc: ['issuer'] },
    { rule: 'group_id CiString(36)', over: { group_id: longId }, loc: ['group_id'] },
    { rule: 'language ISO 639-1', over: { language: 'nld' }, loc: ['language'] },
    { rule: 'language letters', over: { language: 'n1' }, loc: ['language'] },
    { rule: 'whitelist a WhitelistType', over: { whitelist: 'SOMETIMES' }, loc: ['whitelist'] },
    {
      rule: 'EnergyContract supplier_name string(64)',
      over: { energy_contract: { supplier_name: long(65) } },
      loc: ['energy_contract', 'supplier_name'],
    },
  ],
};

const tokens211: ModuleCase = {
  module: 'tokens',
  version: '2.1.1',
  writer: 'EMSP',
  send: putAt('/ocpi/cpo/2.1.1/tokens', 'uid'),
  valid: () => aToken(),
  limits: { auth_id: long(36), visual_number: long(64), issuer: long(64), language: 'EN' },
  broken: [
    { rule: 'auth_id string(36)', over: { auth_id: longId }, loc: ['auth_id'] },
    { rule: 'visual_number string(64)', over: { visual_number: long(65) }, loc: ['visual_number'] },
    { rule: 'issuer string(64)', over: { issuer: long(65) }, loc: ['issuer'] },
    { rule: 'language ISO 639-1', over: { language: 'eng' }, loc: ['language'] },
    { rule: 'type a 2.1.1 TokenType', over: { type: 'APP_USER' }, loc: ['type'] },
  ],
};

/**
 * Credentials a party POSTs with its Token A. The builders' valid ones are accepted by every
 * handshake (`OcpiApi.register`); these never reach one.
 */
const credentialRules: Array<{ rule: string; over: (valid: Json) => Json; loc: Loc }> = [
  { rule: 'url URL(255)', over: () => ({ url: url(256) }), loc: ['url'] },
  { rule: 'token printable ASCII', over: () => ({ token: 'tökén' }), loc: ['token'] },
  {
    rule: 'BusinessDetails name string(100)',
    // 2.1.1 has business_details on the Credentials, 2.2.1 on each role
    over: (valid) => {
      const business_details = { name: long(101) };
      const roles = valid.roles as Json[] | undefined;
      return roles ? { roles: roles.map((r) => ({ ...r, business_details })) } : { business_details };
    },
    loc: ['business_details', 'name'],
  },
];

const CASES: ModuleCase[] = [
  locations221,
  locations211,
  tariffs221,
  tariffs211,
  sessions221,
  sessions211,
  cdrs221,
  cdrs211,
  tokens221,
  tokens211,
];

describe('OCPI field rules of the objects partners send (embedded)', function () {
  this.timeout(60_000);
  const t = useOcpiTarget(() => embeddedTarget());
  const writers = new Map<string, RegisteredPartner>();

  before(async () => {
    const [cpo221, cpo211, emsp221, emsp211] = await Promise.all([
      t.api.register('CPO'),
      t.api.register('CPO', '/ocpi/emsp/2.1.1/credentials'),
      t.api.register('EMSP'),
      t.api.register('EMSP', '/ocpi/cpo/2.1.1/credentials'),
    ]);
    writers.set('CPO 2.2.1', cpo221).set('CPO 2.1.1', cpo211).set('EMSP 2.2.1', emsp221).set('EMSP 2.1.1', emsp211);
  });

  function writerOf(c: ModuleCase): RegisteredPartner {
    const writer = writers.get(`${c.writer} ${c.version}`);
    if (!writer) throw new Error(`no ${c.writer} partner for ${c.version}`);
    return writer;
  }

  async function send(c: ModuleCase, body: Json) {
    const writer = writerOf(c);
    const { method, path } = c.send(writer.party, body);
    return t.api.request(method, path, {
      token: writer.token,
      encoding: c.version === '2.2.1' ? 'base64' : 'raw',
      body,
    });
  }

  for (const c of CASES)
    describe(`${c.module} ${c.version}`, () => {
      it("accepts the builder's object", async () => {
        const res = await send(c, c.valid(writerOf(c).party));
        expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 201]);
        expect(res.body.status_code).to.equal(1000);
      });

      it('accepts values at the limits of the rules', async () => {
        const res = await send(c, { ...c.valid(writerOf(c).party), ...c.limits });
        expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 201]);
        expect(res.body.status_code).to.equal(1000);
      });

      for (const b of c.broken)
        it(`refuses ${b.rule} (422 at ${b.loc.join('.')})`, async () => {
          const res = await send(c, { ...c.valid(writerOf(c).party), ...b.over });
          expect(res.status, JSON.stringify(res.body)).to.equal(422);
          const detail = res.body.detail as Array<{ loc: Loc }> | undefined;
          expect(detail?.[0]?.loc, JSON.stringify(res.body)).to.deep.equal(['body', ...b.loc]);
        });
    });

  for (const version of ['2.2.1', '2.1.1'] as const)
    describe(`credentials ${version}`, () => {
      for (const b of credentialRules)
        it(`refuses ${b.rule}`, async () => {
          const party = uniqueParty();
          const { token } = await t.api.onboard(party, 'CPO');
          const valid =
            version === '2.1.1'
              ? credentials211(party, 'B-token', 'https://cpo.example.com/ocpi/versions')
              : credentials221(party, 'B-token', 'https://cpo.example.com/ocpi/versions');
          const res = await t.api.request('POST', `/ocpi/emsp/${version}/credentials`, {
            token,
            encoding: version === '2.2.1' ? 'base64' : 'raw',
            body: { ...valid, ...b.over(valid) },
          });
          expect(res.status, JSON.stringify(res.body)).to.equal(422);
          const detail = res.body.detail as Array<{ loc: Loc }> | undefined;
          const loc = version === '2.2.1' && b.loc[0] === 'business_details' ? ['roles', 0, ...b.loc] : b.loc;
          expect(detail?.[0]?.loc, JSON.stringify(res.body)).to.deep.equal(['body', ...loc]);
        });
    });
});
