import Type, { type TSchema } from '#typebox';
import { Compile, type Validator } from '#typebox/compile';
import type { TLocalizedValidationError } from '#typebox/error';
import { Settings } from '#typebox/system';
import { RequestValidationError, type ValidationDetail } from './errors.js';

export type Location = 'body' | 'query' | 'path' | 'header';

/**
 * Whether a `default` keyword appears anywhere in `schema` (nested schemas, `$defs`). A property
 * that happens to be called `default` counts too: the answer may err towards yes, never no.
 */
function declaresDefault(schema: unknown, seen = new Set<object>()): boolean {
  if (typeof schema !== 'object' || schema === null || seen.has(schema)) return false;
  seen.add(schema);
  if (!Array.isArray(schema) && 'default' in schema) return true;
  return Object.values(schema).some((inner) => declaresDefault(inner, seen));
}

type ScalarKind = 'string' | 'integer' | 'number' | 'boolean';

interface ScalarField {
  kind: ScalarKind;
  /** the schema's `default`, a scalar */
  fallback?: string | number | boolean;
}

const INTEGER_TEXT = /^-?\d{1,15}$/;
const NUMBER_TEXT = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function isScalarKind(v: unknown): v is ScalarKind {
  return v === 'string' || v === 'integer' || v === 'number' || v === 'boolean';
}

/**
 * The properties of an object schema whose properties are all plain scalars (a query, a path),
 * else undefined: for those, `RequestPart` converts the strings itself instead of TypeBox's
 * `Convert` and `Default`, which walk the schema on every request.
 */
function scalarFields(schema: unknown): Map<string, ScalarField> | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  if (!('type' in schema) || schema.type !== 'object' || !('properties' in schema)) return undefined;
  const properties = schema.properties;
  if (typeof properties !== 'object' || properties === null) return undefined;
  const fields = new Map<string, ScalarField>();
  for (const [name, prop] of Object.entries(properties)) {
    if (typeof prop !== 'object' || prop === null || !('type' in prop) || !isScalarKind(prop.type)) return undefined;
    const field: ScalarField = { kind: prop.type };
    if ('default' in prop) {
      const d = prop.default;
      if (typeof d !== 'string' && typeof d !== 'number' && typeof d !== 'boolean') return undefined;
      field.fallback = d;
    }
    fields.set(name, field);
  }
  return fields;
}

/**
 * The properties of an object schema that are plain scalars, by name (an object schema whose
 * other properties are unions or formats included); undefined for any other schema.
 */
function scalarKinds(schema: unknown): Map<string, ScalarKind> | undefined {
  if (typeof schema !== 'object' || schema === null || !('properties' in schema)) return undefined;
  const properties = schema.properties;
  if (typeof properties !== 'object' || properties === null) return undefined;
  const kinds = new Map<string, ScalarKind>();
  for (const [name, prop] of Object.entries(properties))
    if (typeof prop === 'object' && prop !== null && 'type' in prop && isScalarKind(prop.type))
      kinds.set(name, prop.type);
  return kinds;
}

/** One query or path string as its field's type; undefined when it does not read as one. */
function convertScalar(kind: ScalarKind, text: string): string | number | boolean | undefined {
  switch (kind) {
    case 'string':
      return text;
    case 'integer':
      return INTEGER_TEXT.test(text) ? Number(text) : undefined;
    case 'number':
      return NUMBER_TEXT.test(text) ? Number(text) : undefined;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : undefined;
  }
}

interface Compiled {
  validator: Validator;
  hasDefaults: boolean;
  /** every property a plain scalar: converted here, without TypeBox (`convertScalars`) */
  scalars: Map<string, ScalarField> | undefined;
  /** the plain scalar properties, read strictly whatever the others are (`strictly`) */
  kinds: Map<string, ScalarKind> | undefined;
}

/**
 * A compiled schema for one part of a request: compiled once per route and part, on the route's
 * first request (not when the router is built: start-up does not wait for routes nobody calls),
 * never per request.
 */
export class RequestPart {
  private compiled: Compiled | undefined;
  constructor(
    readonly where: Location,
    readonly schema: TSchema,
  ) {}

  private get validator(): Validator {
    return this.compile().validator;
  }

  /**
   * TypeBox's `Default` walks the value against the schema without compiling (on a location body,
   * a few percent of a PUT); a schema that declares no default has nothing for it to fill in.
   */
  private get hasDefaults(): boolean {
    return this.compile().hasDefaults;
  }

  private compile(): Compiled {
    this.compiled ??= {
      validator: Compile(this.schema),
      hasDefaults: declaresDefault(this.schema),
      scalars: this.where === 'body' ? undefined : scalarFields(this.schema),
      kinds: this.where === 'body' ? undefined : scalarKinds(this.schema),
    };
    return this.compiled;
  }

  /**
   * TypeBox's `Convert` reads query and path strings loosely: `1.5` as the integer 1, `0x10` as
   * 16, ` 5` as 5, `true` as 1, `0` as false. A value of a plain scalar field that does not read
   * as its type the strict way (`convertScalar`) is put back as the string it was, so that the
   * check refuses it (422) instead of serving a page the caller did not ask for.
   */
  private strictly(raw: unknown, converted: unknown): unknown {
    const { kinds } = this.compile();
    if (!kinds || !isRecord(raw) || !isRecord(converted)) return converted;
    for (const [name, kind] of kinds) {
      const text = Object.hasOwn(raw, name) ? raw[name] : undefined;
      if (typeof text === 'string' && convertScalar(kind, text) === undefined) converted[name] = text;
    }
    return converted;
  }

  /**
   * The query or path of a schema of plain scalars, converted and defaulted here: undefined when
   * a value does not read as its type, repeats, or is not a field of the schema, so that `parse`
   * takes TypeBox's own way and reports what TypeBox reports.
   */
  private convertScalars(
    input: Record<string, unknown>,
    fields: Map<string, ScalarField>,
  ): Record<string, unknown> | undefined {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(input)) {
      const v = input[key];
      const field = fields.get(key);
      // a field the schema does not name (or `__proto__`): TypeBox's way decides
      if (!field || typeof v !== 'string') return undefined;
      const converted = convertScalar(field.kind, v);
      if (converted === undefined) return undefined;
      out[key] = converted;
    }
    for (const [name, field] of fields)
      if (field.fallback !== undefined && !Object.hasOwn(out, name)) out[name] = field.fallback;
    return out;
  }

  /**
   * Query and path values arrive as strings: they are converted to the schema's types first.
   * Defaults are applied. Throws RequestValidationError on failure.
   */
  parse(input: unknown): unknown {
    const { scalars, validator } = this.compile();
    if (scalars && isRecord(input) && !Array.isArray(input)) {
      const quick = this.convertScalars(input, scalars);
      if (quick && validator.Check(quick)) return quick;
    }
    let value = input;
    // Convert changes the object it is given: the strings as they came are read from a copy
    if (this.where !== 'body')
      value = this.strictly(isRecord(input) ? { ...input } : input, this.validator.Convert(value));
    if (this.hasDefaults) value = this.validator.Default(value);
    if (this.validator.Check(value)) return value;
    throw new RequestValidationError(detailsOf(this.where, this.validator.Errors(value), value));
  }

  /** `parse` for the path and the query, whose schemas are objects: their fields by name. */
  parseFields(input: Record<string, unknown>): Record<string, unknown> {
    const value = this.parse(input);
    if (!isRecord(value)) throw new TypeError(`the ${this.where} schema does not describe an object`);
    return value;
  }
}

/** The most entries a 422's `detail` lists: a body with thousands of bad items gets the first ones. */
export const MAX_DETAILS = 50;
// TypeBox stops at 8 errors by default: a value that is none of a union's constants is one error
// per constant, so a CommandResultType (9) lost its last, and a body with many bad fields told
// only its first. Room for MAX_DETAILS fields of an enumeration of up to 39 values each; the
// errors are only gathered for an input that failed (never on the checked path), and
// boundedDetails trims what a client gets to MAX_DETAILS.
Settings.Set({ maxErrors: 40 * MAX_DETAILS });

/** The longest echo of a string input (characters); a longer one ends in `…`. */
const MAX_ECHO_CHARS = 200;
/** The largest object or array echoed as `input` (bytes of its JSON); a larger one is null. */
const MAX_ECHO_BYTES = 1024;

/**
 * The entries of a 422 as a client can use them: one per place (a field that is not allowed is
 * `extra_forbidden`, not also "schema is false" at the same place), at most MAX_DETAILS, and
 * each `input` echoed within bounds, so that a large body's answer is not larger than the body
 * (its `ctx.input_bytes` says how large an input that is not echoed was).
 */
export function boundedDetails(details: ValidationDetail[]): ValidationDetail[] {
  const seen = new Map<string, ValidationDetail>();
  const kept: ValidationDetail[] = [];
  for (const d of details) {
    const key = `${d.type}\n${JSON.stringify(d.loc)}`;
    const first = seen.get(key);
    if (first) {
      // a value that is none of a union's constants: one entry naming them all
      if (d.type === 'literal_error') mergeExpected(first, d);
      continue;
    }
    const entry = { ...d };
    seen.set(key, entry);
    kept.push(entry);
  }
  // the union's noise goes before the count: it took the places of fields a client must hear of
  return withoutUnionNoise(kept).slice(0, MAX_DETAILS).map(boundedEcho);
}

/**
 * A union's failure says what each branch wanted and then that no branch matched (`anyOf`), and a
 * nullable one also that the value is not null (`none_required`): beside an entry that says what
 * was wanted at the same place or within it (a field of the object the union is of), those two
 * say nothing more and are left out. Before, a tariff with one bad field also got a body-level
 * "must match a schema in anyOf" entry.
 */
function withoutUnionNoise(details: ValidationDetail[]): ValidationDetail[] {
  const noise = (d: ValidationDetail) => d.type === 'anyOf' || d.type === 'none_required';
  // a place as its JSON without the closing bracket: a place within it starts with that and a comma
  const place = (d: ValidationDetail) => JSON.stringify(d.loc).slice(0, -1);
  const said = details.filter((d) => !noise(d)).map(place);
  if (said.length === 0) return details;
  const explained = (at: string) => said.some((p) => p === at || p.startsWith(`${at},`));
  return details.filter((d) => !noise(d) || !explained(place(d)));
}

function mergeExpected(into: ValidationDetail, d: ValidationDetail): void {
  const before: unknown = into.ctx.expected;
  const known = Array.isArray(before) ? (before as unknown[]) : [before];
  // a union nested in another (an enumeration of a field several schemas share) names one value twice
  if (known.includes(d.ctx.expected)) return;
  const values = [...known, d.ctx.expected];
  into.ctx = { ...into.ctx, expected: values };
  into.msg = `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}`;
}

function boundedEcho(d: ValidationDetail): ValidationDetail {
  const input: unknown = d.input;
  if (typeof input === 'string' && input.length > MAX_ECHO_CHARS)
    return { ...d, input: `${input.slice(0, MAX_ECHO_CHARS)}…`, ctx: { ...d.ctx, input_length: input.length } };
  if (typeof input !== 'object' || input === null) return d;
  const bytes = Buffer.byteLength(JSON.stringify(input) ?? '');
  return bytes > MAX_ECHO_BYTES ? { ...d, input: null, ctx: { ...d.ctx, input_bytes: bytes } } : d;
}

/** An object whose fields can be read by name (an array by index). */
function isRecord(v: unknown): v is Record<string | number, unknown> {
  return typeof v === 'object' && v !== null;
}

function pointerToLoc(pointer: string): Array<string | number> {
  if (!pointer) return [];
  return pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
}

/** The part of `value` at `loc` (object keys, array indexes); undefined where the path leaves it. */
export function valueAt(value: unknown, loc: ReadonlyArray<string | number>): unknown {
  let v: unknown = value;
  for (const k of loc) {
    if (!isRecord(v)) return undefined;
    v = v[k];
  }
  return v;
}

const typeNames: Record<string, string> = {
  string: 'string_type',
  integer: 'int_type',
  number: 'float_type',
  boolean: 'bool_type',
  object: 'dict_type',
  array: 'list_type',
  null: 'none_required',
};

/** TypeBox error -> pydantic-style entry: `loc`, `msg`, `type`, `input`, `ctx`. */
/**
 * A 422's entries for a value's errors: those of the branch that came closest when the value's
 * schema is a union (`closestBranch`), one entry per field a `required` names, bounded and merged
 * (`boundedDetails`).
 */
export function detailsOf(
  where: Location,
  errors: readonly TLocalizedValidationError[],
  root: unknown,
): ValidationDetail[] {
  const details: ValidationDetail[] = [];
  for (const e of closestBranch(errors)) {
    if (e.keyword === 'required' && e.params.requiredProperties.length > 1)
      for (const missing of e.params.requiredProperties)
        details.push(toDetail(where, { ...e, params: { ...e.params, requiredProperties: [missing] } }, root));
    else details.push(toDetail(where, e, root));
  }
  return boundedDetails(details);
}

/**
 * How many fields a branch's errors name: each one a `required` says is missing, and each place
 * another error is at once (a value that is none of an enumeration's is an error per value, at
 * one place); a union's own "no branch matched" names none.
 */
function weightOf(errors: readonly TLocalizedValidationError[]): number {
  const places = new Set<string>();
  let missing = 0;
  for (const e of errors) {
    if (e.keyword === 'required') missing += e.params.requiredProperties.length;
    else if (e.keyword !== 'anyOf') places.add(e.instancePath);
  }
  return missing + places.size;
}

/**
 * Of a value that fits no branch of a union (the body of a route that takes a 2.2.1 or a 2.1.1
 * object), the errors of the branch it came closest to: the one naming the fewest fields (the
 * first of equals). Before, every branch's errors were listed, so a 2.1.1 tariff with one bad
 * element was also told that a 2.2.1 one needs a `country_code`.
 */
function closestBranch(errors: readonly TLocalizedValidationError[]): readonly TLocalizedValidationError[] {
  const branches = new Map<string, TLocalizedValidationError[]>();
  for (const e of errors) {
    const branch = /^#\/anyOf\/(\d+)(?:\/|$)/.exec(e.schemaPath)?.[1];
    if (branch === undefined) continue;
    const list = branches.get(branch);
    if (list) list.push(e);
    else branches.set(branch, [e]);
  }
  if (branches.size < 2) return errors;
  let best: TLocalizedValidationError[] | undefined;
  let bestWeight = Infinity;
  for (const list of branches.values()) {
    const weight = weightOf(list);
    if (weight < bestWeight) {
      best = list;
      bestWeight = weight;
    }
  }
  return best ?? errors;
}

export function toDetail(where: Location, e: TLocalizedValidationError, root: unknown): ValidationDetail {
  const base = pointerToLoc(e.instancePath);
  const input = valueAt(root, base);
  switch (e.keyword) {
    case 'required': {
      const missing = e.params.requiredProperties[0] ?? '';
      return { loc: [where, ...base, missing], msg: 'Field required', type: 'missing', input: input ?? null, ctx: {} };
    }
    case 'type': {
      const expected = Array.isArray(e.params.type) ? e.params.type[0] : e.params.type;
      return {
        loc: [where, ...base],
        msg: `Input should be a valid ${String(expected)}`,
        type: typeNames[String(expected)] ?? 'type_error',
        input: input ?? null,
        ctx: { expected_type: expected },
      };
    }
    case 'boolean':
      // TypeBox reports each field that is not allowed as failing `additionalProperties: false`
      // ("schema is false") at the field, and the object once naming the first such field
      if (e.schemaPath.endsWith('/additionalProperties'))
        return {
          loc: [where, ...base],
          msg: 'Extra inputs are not permitted',
          type: 'extra_forbidden',
          input,
          ctx: {},
        };
      return { loc: [where, ...base], msg: e.message, type: e.keyword, input: input ?? null, ctx: { ...e.params } };
    case 'additionalProperties': {
      const extra = e.params.additionalProperties[0] ?? '';
      return {
        loc: [where, ...base, extra],
        msg: 'Extra inputs are not permitted',
        type: 'extra_forbidden',
        input: valueAt(input, [extra]),
        ctx: {},
      };
    }
    default:
      return (
        constraintDetail([where, ...base], e, input) ?? {
          loc: [where, ...base],
          msg: e.message,
          type: e.keyword,
          input: input ?? null,
          ctx: { ...e.params },
        }
      );
  }
}

/** What a 422 says of a value that fails one of these patterns, whose text would not tell a reader why. */
const PATTERN_MESSAGES = new Map<string, string>();

/** `pattern`, registered so that a value failing it is told `message` instead of the pattern's text. */
export function explainedPattern(pattern: string, message: string): string {
  PATTERN_MESSAGES.set(pattern, message);
  return pattern;
}

/** The value failed a constraint of its schema (a value set, a pattern, a bound, a format). */
function constraintDetail(
  loc: Array<string | number>,
  e: TLocalizedValidationError,
  input: unknown,
): ValidationDetail | undefined {
  const detail = (type: string, ctx: Record<string, unknown>): ValidationDetail => ({
    loc,
    msg: e.message,
    type,
    input,
    ctx,
  });
  switch (e.keyword) {
    case 'enum':
      return detail('enum', { expected: e.params.allowedValues });
    case 'const':
      return detail('literal_error', { expected: e.params.allowedValue });
    case 'pattern': {
      const explained = PATTERN_MESSAGES.get(String(e.params.pattern));
      const d = detail('string_pattern_mismatch', { pattern: e.params.pattern });
      return explained === undefined ? d : { ...d, msg: explained };
    }
    case 'minLength':
      return detail('string_too_short', { min_length: e.params.limit });
    case 'maxLength':
      return detail('string_too_long', { max_length: e.params.limit });
    case 'minimum':
      return detail('greater_than_equal', { ge: e.params.limit });
    case 'maximum':
      return detail('less_than_equal', { le: e.params.limit });
    case 'minItems':
      return detail('too_short', { min_length: e.params.limit });
    case 'maxItems':
      return detail('too_long', { max_length: e.params.limit });
    case 'format':
      return detail(`${e.params.format.replace(/-/g, '_')}_parsing`, { format: e.params.format });
    default:
      return undefined;
  }
}

/**
 * A request field the client may leave out and the handler always sees: the router applies the
 * schema's `default` before the handler runs (RequestPart.parse), so in the handler's type the
 * field is present. The schema and the document are those of `Type.Optional(schema)`.
 */
export function Defaulted<T extends TSchema>(schema: T): T {
  // TypeBox does not type a schema's options: a route table without the default fails at startup
  if (!('default' in schema)) throw new TypeError('Defaulted: the schema has no default');
  // TypeBox types an optional property as possibly absent; after Default() it never is
  const optional: T = Type.Optional(schema);
  return optional;
}
