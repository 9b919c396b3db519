import { jsonNestingExceeds } from '../json-depth.js';
import { RequestValidationError } from './errors.js';

/**
 * Limits on what a request may carry before any schema sees it (docs/SECURITY.md; before, a body nested 5,000
 * levels deep overflowed the stack of the validator and answered a plain-text 500; a NUL in a
 * path id reached SQL and answered 500). Each refusal is a 422 HTTPValidationError, which both
 * surfaces share.
 */

export function assertBodyDepth(text: string, max: number): void {
  if (!jsonNestingExceeds(text, max)) return;
  throw new RequestValidationError([
    {
      loc: ['body'],
      msg: `JSON nesting deeper than ${max} levels`,
      type: 'json_too_deep',
      input: null,
      ctx: { max_depth: max },
    },
  ]);
}

/**
 * The control characters a JSON body's strings may not hold: C0 but tab, line feed and carriage
 * return (OCPI allows none of them, OCPP's CiStrings only printable ASCII; a tab or a line break
 * in a partner's text is common and harmless and stays), and lone surrogates, which no UTF-8
 * consumer can decode (a Rust or Go partner pulling the object fails on the escape we would
 * serve) and which PostgreSQL's jsonb refuses like U+0000.
 */
const UNFIT_IN_BODY =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** JSON text carries those characters only as \u escapes: a body without such an escape needs no walk. */
const SUSPECT_ESCAPE = /\\u(?:00[01][0-9a-fA-F]|[dD][89a-fA-F][0-9a-fA-F]{2})/;

/**
 * A body whose strings (values or keys) hold a control character or a lone surrogate is a 422
 * at that string (docs/SECURITY.md; before, a NUL in an operator's id tag went on to the charger
 * and a partner's location name with one was stored and served to other partners).
 */
export function assertBodyText(text: string, body: unknown): void {
  if (!SUSPECT_ESCAPE.test(text)) return;
  const at = unfitStringAt(body);
  if (at === undefined) return;
  throw new RequestValidationError([
    {
      loc: ['body', ...at],
      msg: 'String should not contain control characters or lone surrogates',
      type: 'string_pattern_mismatch',
      input: null,
      ctx: { pattern: 'no control characters (but tab, CR, LF) and no lone surrogates' },
    },
  ]);
}

/** The path to the first unfit string of a parsed body (its depth is bounded before: assertBodyDepth). */
function unfitStringAt(value: unknown, path: Array<string | number> = []): Array<string | number> | undefined {
  if (typeof value === 'string') return UNFIT_IN_BODY.test(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const at = unfitStringAt(value[i], [...path, i]);
      if (at) return at;
    }
    return undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    if (UNFIT_IN_BODY.test(key)) return [...path, key];
    const at = unfitStringAt(item, [...path, key]);
    if (at) return at;
  }
  return undefined;
}

/**
 * The largest `offset` (and `limit`) a list query takes: a 32-bit integer, which every database
 * binds (docs/SECURITY.md; before, offset=99999999999999999999999 reached SQLite as 1e+23 and answered 500).
 */
export const MAX_OFFSET = 2_147_483_647;

/** The longest path segment a route accepts (the longest id of any surface is 48 characters). */
export const PATH_ID_MAX_LENGTH = 64;

/** The longest query value (ids, dates, enumerations and numbers are far shorter). */
export const QUERY_VALUE_MAX_LENGTH = 256;

/** Control characters (C0, DEL, C1) and lone surrogates: never part of an id or a query value of any surface. */
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function assertPrintable(where: 'path' | 'query', name: string, value: string, maxLength: number): void {
  if (value.length > maxLength) {
    throw new RequestValidationError([
      {
        loc: [where, name],
        msg: `String should have at most ${maxLength} characters`,
        type: 'string_too_long',
        input: value.slice(0, maxLength),
        ctx: { max_length: maxLength },
      },
    ]);
  }
  if (FORBIDDEN.test(value)) {
    throw new RequestValidationError([
      {
        loc: [where, name],
        msg: 'String should not contain control characters',
        type: 'string_pattern_mismatch',
        input: value,
        ctx: { pattern: 'no control characters' },
      },
    ]);
  }
}

/**
 * Every path parameter and query value of every route, whatever its schema: bounded length and
 * no control characters (docs/SECURITY.md; before, a NUL in a path id or a query value reached SQL and answered
 * 500). The route's own schema (OCPI ids: printable ASCII, 36 characters) comes after.
 */
export function assertPrintableRequest(
  params: Record<string, string | undefined>,
  query: Record<string, string | string[] | undefined>,
): void {
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) assertPrintable('path', name, value, PATH_ID_MAX_LENGTH);
  }
  for (const [name, value] of Object.entries(query)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value])
      assertPrintable('query', name, v, QUERY_VALUE_MAX_LENGTH);
  }
}
