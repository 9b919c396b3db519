import Type, { type TSchema } from '#typebox';
import { MAX_OFFSET } from '../../gateway/request-limits.js';
import { DATETIME_PATTERN } from './datetime.js';
import { titled } from '../../gateway/openapi.js';
import { explainedPattern } from '../../gateway/validation.js';

/**
 * Field types every OCPI module uses, in both versions (OCPI 2.2.1 types.asciidoc), the list
 * query and the response envelope. Objects stay open (unknown fields are kept), as OCPI
 * receivers must accept fields added by later versions. Enumerations the OCPI specification
 * leaves open are strings; closed ones are unions of their values. The shapes of one module
 * live in its folder (`locations/schemas-2.2.1.ts`, ...).
 */

/** OCPI DateTime: UTC; without a designator it means UTC; stored and served with `Z` (datetime.ts) */
export const DateTime = Type.String({
  pattern: DATETIME_PATTERN,
  description: 'OCPI DateTime (RFC 3339): no designator means UTC; an offset is converted; served in UTC with Z',
});

/** country_code is 2 letters (ISO 3166-1 alpha-2, uppercase in paths; docs/SECURITY.md "Limits") */
export const CountryCode = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, uppercase' });
/** party_id is 3 characters (uppercase alphanumerics in paths; docs/SECURITY.md "Limits") */
export const PartyId = Type.String({ pattern: '^[A-Z0-9]{3}$', description: '3-character party id' });

/**
 * A credentials token (Token A, B or C): CiString(64) in 2.2.1, string(64) in 2.1.1, printable
 * ASCII without whitespace in both (2.2.1 transport_and_format: it is sent as `Authorization:
 * Token <token>`).
 */
export const CredentialsToken = Type.String({ minLength: 1, maxLength: 64, pattern: '^[\\x21-\\x7E]+$' });

/**
 * Printable ASCII, but not `.` or `..` alone: an id is a segment of the URLs that name its object
 * (the `Location` our cdrs Receiver answers, a GET of one object), and URL parsers remove those
 * two as dot segments (RFC 3986 5.2.4), so such an object could never be fetched.
 */
const OBJECT_ID_PATTERN = '^(?!\\.\\.?$)[\\x20-\\x7E]+$';

/**
 * The string ids OCPI gives objects (location id, EVSE uid, session id, ...): CiString(36) or
 * string(36), "only printable ASCII allowed" (OCPI 2.2.1 types.asciidoc). In a path this also
 * keeps NUL bytes and odd unicode away from the store (docs/SECURITY.md).
 */
export const ObjectId = Type.String({ minLength: 1, maxLength: 36, pattern: OBJECT_ID_PATTERN });
/** OCPI 2.1.1 gives a Location's id and an EVSE's uid 39 characters (string(39), mod_locations). */
export const ObjectId39 = Type.String({ minLength: 1, maxLength: 39, pattern: OBJECT_ID_PATTERN });

/**
 * OCPI `string(n)`: at most n characters (OCPI 2.2.1 types.asciidoc, 2.1.1 types.md). Free text
 * (names, addresses) is not held to the "printable ASCII" of 2.1.1: partners send UTF-8 there.
 */
export function ocpiString(max: number) {
  return Type.String({ maxLength: max });
}
/** OCPI `CiString(n)`: at most n characters, "only printable ASCII allowed" (OCPI 2.2.1 types.asciidoc). */
export function ciString(max: number) {
  return Type.String({ maxLength: max, pattern: '^[\\x20-\\x7E]*$' });
}
/** OCPI URL: a string(255) (types.asciidoc). */
export const Url = Type.String({ maxLength: 255, description: 'URL, at most 255 characters' });
/** A currency: ISO 4217, three uppercase letters (string(3)). */
export const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217' });
/** The country of a location: ISO 3166-1 alpha-3, three uppercase letters (string(3)). */
export const CountryAlpha3 = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 3166-1 alpha-3, uppercase' });
/** A language: ISO 639-1, two letters (string(2)). */
export const Language = Type.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 639-1' });
/**
 * A time of day, hh:mm (RegularHours period_begin/period_end, TariffRestrictions start_time/end_time).
 * 2.2.1's regex `([0-1][0-9]|2[0-3]):[0-5][0-9]` is used for 2.1.1 too, whose `[0-2][0-9]:[0-5][0-9]`
 * lets 24:00-29:59 through: hours and tariffs are stored in the 2.2.1 shape and served to 2.2.1
 * partners, and a stored location must pass the 2.2.1 schema on every later PATCH.
 */
export const TimeOfDay = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'hh:mm, local time' });
/**
 * A date, YYYY-MM-DD (TariffRestrictions start_date/end_date), and one the calendar has: 2.2.1's
 * regex lets 2024-02-30 or 2023-02-29 through, which would price from a day that never comes
 * (read as the next one). Months of 30 days, February's 28, and its 29th in leap years only.
 */
export const Day = Type.String({
  pattern: explainedPattern(
    '^(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))' +
      '|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[048]|[2468][048]|[13579][26])00)-02-29)$',
    'must be a day of the calendar, YYYY-MM-DD',
  ),
  description: 'YYYY-MM-DD, a day of the calendar',
});
/** An amount that cannot be negative (kWh, hours, volts, ...). */
export const NonNegative = Type.Number({ minimum: 0 });

/** A closed enumeration; its static type is the union of `values` (a union built from an array would be `never`). */
export function oneOf<const V extends string>(values: readonly V[], description?: string) {
  return Type.Unsafe<V>(
    Type.Union(
      values.map((v) => Type.Literal(v)),
      description ? { description } : {},
    ),
  );
}

export function openEnum(shown: readonly string[]) {
  return Type.String({ description: `open enumeration; values shown: ${shown.join(', ')}`, examples: [...shown] });
}

/** DisplayText (types.asciidoc): language ISO 639-1, string(2); text string(512). */
export const DisplayText = titled('DisplayText', Type.Object({ language: Language, text: ocpiString(512) }));
/**
 * GeoLocation (WGS 84, decimal degrees as strings): the specification's patterns, 5 to 7 decimals
 * in 2.2.1 and exactly 6 in 2.1.1, narrowed to the globe (latitude within ±90, longitude within
 * ±180), so that no partner's point off the map is stored or served (docs/OCPI.md, Decisions 31).
 */
function geoLocation(decimals: string) {
  const d = `[0-9]{${decimals}}`;
  return Type.Object({
    latitude: Type.String({ pattern: `^-?(?:90\\.0{${decimals}}|[1-8]?[0-9]\\.${d})$`, maxLength: 10 }),
    longitude: Type.String({
      pattern: `^-?(?:180\\.0{${decimals}}|(?:1[0-7][0-9]|[1-9]?[0-9])\\.${d})$`,
      maxLength: 11,
    }),
  });
}
export const GeoLocation = titled('GeoLocation221', geoLocation('5,7'));
export const GeoLocation211 = titled('GeoLocation211', geoLocation('6'));

/** A 2.2.1 coordinate (5 to 7 decimals) with the 6 decimals 2.1.1 requires. */
export function coordinate211(value: string): string {
  const negative = value.startsWith('-');
  const [whole = '0', fraction = ''] = (negative ? value.slice(1) : value).split('.');
  const micro = Math.round(Number(`${fraction}0000000`.slice(0, 7)) / 10);
  // 7 decimals may round up into the next whole degree
  const carry = micro === 1_000_000;
  const out = `${carry ? Number(whole) + 1 : whole}.${String(carry ? 0 : micro).padStart(6, '0')}`;
  return negative && /[1-9]/.test(out) ? `-${out}` : out;
}
/** BusinessDetails (mod_locations): name string(100), website URL; `logo` is an Image (Decisions 14: any shape). */
export const BusinessDetails = titled(
  'BusinessDetails',
  Type.Object({ name: ocpiString(100), website: Type.Optional(Url) }),
);
/**
 * EnergyMix (mod_locations): a source's percentage is 0-100; supplier and product names string(64).
 * `environ_impact` stays any shape: 2.1.1 names its category `source`, 2.2.1 `category`; the
 * mappers give each version its own name (energy-mix.ts).
 */
export const EnergyMix = titled(
  'EnergyMix',
  Type.Object({
    is_green_energy: Type.Boolean(),
    energy_sources: Type.Optional(
      Type.Array(Type.Object({ source: openEnum(['SOLAR']), percentage: Type.Number({ minimum: 0, maximum: 100 }) })),
    ),
    supplier_name: Type.Optional(ocpiString(64)),
    energy_product_name: Type.Optional(ocpiString(64)),
  }),
);
/** Fields whose shape docs/OCPI.md leaves open (Decisions 14): an open JSON object. */
export const OpenObject = Type.Object({});

/** Query of the list endpoints (docs/OCPI.md "Lists"). */
export const ListQuery = Type.Object({
  date_from: Type.Optional(DateTime),
  date_to: Type.Optional(DateTime),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0 })),
  // a larger limit is served as MAX_LIMIT (pagination.ts); this bound only keeps the number sane
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_OFFSET })),
});

/** The response envelope with a typed `data` (OpenAPI documentation of the success bodies). */
export function Envelope(data: TSchema): TSchema {
  return Type.Object({
    status_code: Type.Optional(Type.Integer({ default: 1000 })),
    status_message: Type.Optional(Type.String()),
    timestamp: Type.Optional(DateTime),
    data: Type.Optional(data),
  });
}

/** The OCPI error envelope (core/errors.ts `ocpiErrors`): `data` absent; doc_url and errors on 2001. */
export const ErrorEnvelope = Type.Object(
  {
    status_code: Type.Integer({
      description:
        '2000 generic client error, 2001 invalid or missing parameters or (2.2.1) unauthorized, 2003 unknown location, 2004 unknown token, 3xxx server errors',
    }),
    status_message: Type.String(),
    timestamp: DateTime,
    doc_url: Type.Optional(Type.String({ description: 'on the invalid-parameters error (2001)' })),
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String(), type: Type.String() }), {
        description: 'on the invalid-parameters error (2001)',
      }),
    ),
  },
  { title: 'OcpiError', description: 'The error body of the OCPI mounts (2001 is delivered as HTTP 200)' },
);

export const PartyPath = Type.Object({ country_code: CountryCode, party_id: PartyId });
