/**
 * OCPI DateTime (2.1.1 and 2.2.1 types, "DateTime"): RFC 3339 / ISO 8601, "All timestamps SHALL
 * be in UTC. The absence of the timezone designator implies a UTC timestamp." 2.2.1 allows
 * fractional seconds and notes that `+00:00` is not the same as UTC. What we accept, store and
 * serve (docs/OCPI.md, Decisions 20):
 * - accepted: `YYYY-MM-DDThh:mm:ss`, an optional fraction, then `Z`, an offset `±hh:mm`, or nothing;
 * - nothing means UTC: `Z` is appended;
 * - an offset (which 2.1.1's examples show and 2.2.1 does not allow) is converted to the same
 *   instant in UTC, so we never store or pass on anything but UTC.
 */

/** The pattern of the OCPI DateTime schema (`schemas.ts`); the normalization finds fields by it. */
export const DATETIME_PATTERN =
  '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,9})?(Z|[+-]([01]\\d|2[0-3]):[0-5]\\d)?$';

const OFFSET = /[+-]\d{2}:\d{2}$/;
const DATETIME = new RegExp(DATETIME_PATTERN);

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** A day that exists (the pattern allows a 31st of every month) in years 0001-9999. */
function isCalendarDay(text: string): boolean {
  const year = Number(text.slice(0, 4));
  const month = Number(text.slice(5, 7));
  const day = Number(text.slice(8, 10));
  return year >= 1 && day <= daysIn(year, month);
}

/** Fraction digits past the millisecond, before the `Z`. */
const PAST_MILLISECONDS = /(\.\d{3})\d+Z$/;

/**
 * One accepted timestamp as UTC with `Z` (what was sent, when it already was; an offset is
 * converted to the millisecond), its fraction cut to the millisecond: a DateTime is string(25) in
 * 2.2.1, and one with nine digits (30 characters) was stored and served back as sent, longer than
 * a strict partner reads. Undefined for a day that does not exist, or an offset that moves the
 * instant out of the years 0001-9999.
 */
export function toUtc(text: string): string | undefined {
  if (!isCalendarDay(text)) return undefined;
  if (text.endsWith('Z')) return text.replace(PAST_MILLISECONDS, '$1Z');
  if (!OFFSET.test(text)) return `${text}Z`.replace(PAST_MILLISECONDS, '$1Z');
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return undefined;
  const iso = new Date(ms).toISOString();
  if (!/^\d{4}-/.test(iso) || iso.startsWith('0000')) return undefined;
  // no fraction in, no `.000` out
  return text.includes('.') ? iso : iso.replace(/\.\d{3}Z$/, 'Z');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isDateTimeSchema(schema: Record<string, unknown>): boolean {
  return schema.type === 'string' && schema.pattern === DATETIME_PATTERN;
}

/** Whether `schema` holds a DateTime anywhere the normalization walks (properties, items, unions). */
export function declaresDateTime(schema: unknown): boolean {
  if (!isRecord(schema)) return false;
  if (isDateTimeSchema(schema)) return true;
  if (declaresDateTime(schema.items)) return true;
  const properties = schema.properties;
  if (isRecord(properties) && Object.values(properties).some(declaresDateTime)) return true;
  return (['anyOf', 'oneOf', 'allOf'] as const).some((k) => {
    const alternatives = schema[k];
    return Array.isArray(alternatives) && alternatives.some(declaresDateTime);
  });
}

/** Where a DateTime that is not a real instant was found (a path into the value). */
export type DateTimePath = Array<string | number>;

/**
 * Rewrites, in place, every DateTime of `value` that `schema` declares (object properties, array
 * items, unions) to UTC; returns the value (a bare DateTime string is returned rewritten). A
 * DateTime that is no real instant (`toUtc` undefined) is left as it was and its path added to
 * `invalid`, once however many members of a union declare it: the caller refuses the value.
 */
export function normalizeDateTimes(
  schema: unknown,
  value: unknown,
  invalid: DateTimePath[] = [],
  at: DateTimePath = [],
): unknown {
  const normalize = normalizerOf(schema);
  return normalize ? normalize(value, invalid, [...at]) : value;
}

/**
 * One schema's normalization, made once (`normalizerOf`): it visits only the properties, items
 * and union members that can hold a DateTime, and `at` is one stack pushed and popped on the way
 * down, copied only for a DateTime that is no real instant. What it does to a value is what a
 * walk of the whole schema would do: the parts it skips declare no DateTime, so the walk would
 * leave them as they are.
 */
type Normalize = (value: unknown, invalid: DateTimePath[], at: DateTimePath) => unknown;

/** by schema object: the route's and the pull's schemas are made once, so each is compiled once */
const normalizers = new WeakMap<object, Normalize | null>();

/** The normalization of `schema`; undefined when it declares no DateTime (nothing to rewrite). */
function normalizerOf(schema: unknown): Normalize | undefined {
  if (!isRecord(schema)) return undefined;
  const known = normalizers.get(schema);
  if (known !== undefined) return known ?? undefined;
  const made = declaresDateTime(schema) ? compileNormalizer(schema) : undefined;
  normalizers.set(schema, made ?? null);
  return made;
}

function compileNormalizer(schema: Record<string, unknown>): Normalize {
  const dateTime = isDateTimeSchema(schema);
  const items = normalizerOf(schema.items);
  const properties: Array<[string, Normalize]> = [];
  if (isRecord(schema.properties))
    for (const [key, inner] of Object.entries(schema.properties)) {
      const normalize = normalizerOf(inner);
      if (normalize) properties.push([key, normalize]);
    }
  const alternatives: Normalize[] = [];
  for (const keyword of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = schema[keyword];
    if (Array.isArray(list))
      for (const alt of list) {
        const normalize = normalizerOf(alt);
        if (normalize) alternatives.push(normalize);
      }
  }
  return (value, invalid, at) => {
    // a string of a union's other member is left alone: only what reads as a DateTime is rewritten
    if (dateTime && typeof value === 'string') {
      if (!DATETIME.test(value)) return value;
      const utc = toUtc(value);
      // the members of a union that both declare it see the same string: one error for it
      if (utc === undefined && !invalid.some((p) => samePath(p, at))) invalid.push([...at]);
      return utc ?? value;
    }
    if (Array.isArray(value)) {
      if (items)
        for (let i = 0; i < value.length; i++) {
          at.push(i);
          value[i] = items(value[i], invalid, at);
          at.pop();
        }
      return value;
    }
    if (isRecord(value))
      for (const [key, normalize] of properties)
        if (Object.hasOwn(value, key)) {
          at.push(key);
          value[key] = normalize(value[key], invalid, at);
          at.pop();
        }
    for (const normalize of alternatives) value = normalize(value, invalid, at);
    return value;
  };
}

function samePath(a: DateTimePath, b: DateTimePath): boolean {
  return a.length === b.length && a.every((k, i) => k === b[i]);
}

/** The later of two ISO date-times (a child's update also updates its location). */
export function later(a: string, b: string): string {
  return Date.parse(a) >= Date.parse(b) ? a : b;
}

/**
 * The `last_updated` of a 2.1.1 PATCH that carries none, applied to an object (or EVSE, or
 * connector) held with the stamp `held`: our clock less AHEAD_TOLERANCE_MS, in UTC to the second,
 * or `held` when that is later (docs/OCPI.md, Decisions 33). Not our clock itself: the stamp then
 * orders the partner's next update, stamped by its own clock, and a PUT made a moment after the
 * PATCH by a clock a second or two behind ours was answered 1000 and dropped as older (a session
 * left ACTIVE, a location's new EVSE lost). The cost: a late copy of an update stamped less than
 * AHEAD_TOLERANCE_MS before the PATCH arrived is applied over it (nothing tells the two apart; the
 * one that arrives last wins). OCPI 2.1.1 asks a PATCH for the changed fields only; 2.2.1 requires
 * `last_updated`.
 */
export function stampOfReceipt(held: string): string {
  const allowed = new Date(Date.now() - AHEAD_TOLERANCE_MS).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return later(held, allowed);
}

/**
 * How far ahead of our clock a held `last_updated` may lie and still order the updates that follow
 * it: two clocks a few seconds apart must not reorder a partner's pushes.
 */
export const AHEAD_TOLERANCE_MS = 10_000;

/**
 * Whether an update stamped `incoming` is older than the object it would change, stamped `held`:
 * a partner's stale PUT or PATCH, not applied (docs/OCPI.md, Decisions 38). An update without a
 * stamp (a 2.1.1 PATCH, stamped on receipt) is never older, and neither is any update of an object
 * held with a stamp more than AHEAD_TOLERANCE_MS ahead of our clock: no real change happened
 * then, and one push from a clock far ahead (2099) would otherwise make every later update of
 * the object, a token's block included, answered 1000 and never applied.
 */
export function olderThan(incoming: string | undefined, held: string): boolean {
  if (incoming === undefined) return false;
  const heldAt = Date.parse(held);
  return heldAt <= Date.now() + AHEAD_TOLERANCE_MS && Date.parse(incoming) < heldAt;
}
