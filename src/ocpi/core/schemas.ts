import Type, { type TSchema } from '#typebox';
import { MAX_OFFSET } from '../../gateway/request-limits.js';
import { DATETIME_PATTERN } from './datetime.js';

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
 * The string ids OCPI gives objects (location id, EVSE uid, session id, ...): CiString(36) or
 * string(36), "only printable ASCII allowed" (OCPI 2.2.1 types.asciidoc). In a path this also
 * keeps NUL bytes and odd unicode away from the store (docs/SECURITY.md).
 */
export const ObjectId = Type.String({ minLength: 1, maxLength: 36, pattern: '^[\\x20-\\x7E]+$' });
/** OCPI 2.1.1 gives a Location's id and an EVSE's uid 39 characters (string(39), mod_locations). */
export const ObjectId39 = Type.String({ minLength: 1, maxLength: 39, pattern: '^[\\x20-\\x7E]+$' });

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

export const DisplayText = Type.Object({ language: Type.String(), text: Type.String() });
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
export const GeoLocation = geoLocation('5,7');
export const GeoLocation211 = geoLocation('6');

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
export const BusinessDetails = Type.Object({ name: Type.String(), website: Type.Optional(Type.String()) });
export const EnergyMix = Type.Object({
  is_green_energy: Type.Boolean(),
  energy_sources: Type.Optional(Type.Array(Type.Object({ source: openEnum(['SOLAR']), percentage: Type.Number() }))),
});
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

export const PartyPath = Type.Object({ country_code: CountryCode, party_id: PartyId });
