import Type, { type TSchema } from '#typebox';
import type { HttpMethod, MountSpec, RouteSpec } from './route-table.js';

type Json = Record<string, unknown>;

/**
 * The error bodies the surfaces answer with (gateway/errors.ts, middleware/error-mapper.ts;
 * docs/SECURITY.md "One error shape per surface"): a mount names its own in `errorSchema`, the
 * others answer in the plain shape; the 422 of a failed schema is the same everywhere.
 */
export const PlainError = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: 'machine-readable code: not_found, unauthorized, charge_point_offline, ...' }),
      message: Type.String(),
      details: Type.Optional(Type.Unknown()),
    }),
    request_id: Type.Optional(Type.String({ description: 'the X-Request-ID of the request' })),
  },
  { title: 'Error', description: 'The error body of /v1 and the service endpoints' },
);

export const ValidationError = Type.Object(
  {
    loc: Type.Array(Type.Union([Type.String(), Type.Integer()]), {
      description: 'where: body, path or query, then the field',
    }),
    msg: Type.String(),
    type: Type.String(),
    input: Type.Unknown(),
    ctx: Type.Object({}),
  },
  { title: 'ValidationError' },
);

export const HTTPValidationError = Type.Object(
  { detail: Type.Array(ValidationError) },
  { title: 'HTTPValidationError', description: 'A body, query or path parameter fails its schema (HTTP 422)' },
);

const COMPONENTS_PREFIX = '#/components/schemas/';

function toOpenApiPath(prefix: string, path: string): string {
  const p = `${prefix}${path === '/' ? '' : path}` || '/';
  return p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function parametersOf(schema: TSchema | undefined, where: 'path' | 'query'): Json[] {
  if (!schema || !Type.IsObject(schema)) return [];
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, prop]) => ({
    name,
    in: where,
    required: where === 'path' ? true : required.has(name),
    schema: prop,
    ...(descriptionOf(prop) ? { description: descriptionOf(prop) } : {}),
  }));
}

function descriptionOf(schema: TSchema): unknown {
  return 'description' in schema ? schema.description : undefined;
}

function pascal(words: string): string {
  return words
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w.length > 0)
    .map((w) => (w.toUpperCase() === w && w.length > 1 ? w.toLowerCase() : w))
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}

function singular(word: string): string {
  if (/ies$/.test(word)) return `${word.slice(0, -3)}y`;
  if (/(ss|us)$/.test(word)) return word;
  if (/(sses|xes)$/.test(word)) return word.slice(0, -2);
  return word.replace(/s$/, '');
}

/** A path parameter names an object of its own (`{evse_uid}` -> Evse); `{id}`, the party's `{country_code}` and `{party_id}` do not. */
function paramNoun(param: string): string | undefined {
  if (param === 'country_code' || param === 'party_id') return undefined;
  const m = /^(.+)_(id|uid)$/.exec(param);
  return m?.[1];
}

/** Is the documented answer a list (an array, or an OCPI envelope whose data is one)? */
function answersList(schema: TSchema | undefined): boolean {
  if (!schema) return false;
  if (Type.IsArray(schema)) return true;
  if (Type.IsObject(schema)) {
    const data = schema.properties.data;
    return data !== undefined && Type.IsArray(data);
  }
  return false;
}

/**
 * An operationId from the method and the path (`GET /charge-points` -> listChargePoints,
 * `GET /charge-points/:id` -> getChargePoint, `POST /charge-points/:id/reset` ->
 * postChargePointReset): a static segment followed by a parameter is singular, a parameter named
 * `<noun>_id`/`<noun>_uid` adds its noun. `withParams` names every parameter (`ByCountryCode...`),
 * used where the short names of two routes meet.
 */
function derivedOperationId(
  method: HttpMethod,
  path: string,
  response: TSchema | undefined,
  withParams: boolean,
): string {
  const segments = path.split('/').filter((s) => s.length > 0);
  const words: string[] = [];
  const params: string[] = [];
  segments.forEach((segment, i) => {
    const param = /^:(.+)$/.exec(segment)?.[1];
    if (param !== undefined) {
      params.push(param);
      const noun = paramNoun(param);
      if (noun !== undefined && pascal(noun) !== words[words.length - 1]) words.push(pascal(noun));
      return;
    }
    const next = segments[i + 1];
    words.push(pascal(next?.startsWith(':') ? singular(segment) : segment));
  });
  const verb = method === 'GET' ? (answersList(response) ? 'list' : 'get') : method.toLowerCase();
  const by = withParams && params.length > 0 ? `By${params.map(pascal).join('And')}` : '';
  return `${verb}${words.join('')}${by}`;
}

const OPERATION_ID = /^[a-z][A-Za-z0-9]*$/;

/**
 * The operationIds of every route: declared (`RouteSpec.operationId`) or derived from method and
 * path, after the mount's `operationPrefix` (the OCPI mounts: `cpo221`, `emsp211`, ...). Where two
 * derived names meet within a mount, both name their parameters; a name still taken fails the
 * build (a code generator needs them unique).
 */
function operationIds(mounts: ReadonlyArray<MountSpec<unknown>>): Map<RouteSpec<unknown>, string> {
  const ids = new Map<RouteSpec<unknown>, string>();
  for (const mount of mounts) {
    const short = mount.routes.map((r) => r.operationId ?? derivedOperationId(r.method, r.path, r.response, false));
    const clashing = new Set(short.filter((name, i) => short.indexOf(name) !== i));
    mount.routes.forEach((r, i) => {
      const name = short[i] ?? '';
      const local =
        clashing.has(name) && !r.operationId ? derivedOperationId(r.method, r.path, r.response, true) : name;
      const prefix = mount.operationPrefix;
      ids.set(r, prefix ? `${prefix}${local.charAt(0).toUpperCase()}${local.slice(1)}` : local);
    });
  }
  const seen = new Set<string>();
  for (const id of ids.values()) {
    if (!OPERATION_ID.test(id)) throw new Error(`operationId ${id}: not an identifier`);
    if (seen.has(id)) throw new Error(`operationId ${id}: two routes have it`);
    seen.add(id);
  }
  return ids;
}

/** The documented success status: declared, else 200. */
function successStatus(route: RouteSpec<unknown>): number {
  return route.status ?? 200;
}

/** The errors every route of a mount may answer, from what the router does before the handler (gateway/router.ts). */
function routerErrors(mount: MountSpec<unknown>, route: RouteSpec<unknown>): Record<number, string> {
  const errors: Record<number, string> = {};
  if (mount.authenticate && route.auth !== false) errors[401] = 'missing or invalid credentials';
  // every method with a body parses it (a body that is not JSON is a 422), whether or not a schema follows
  if (route.params || route.query || route.body || !['GET', 'DELETE'].includes(route.method))
    errors[422] = 'HTTPValidationError: a body, query or path parameter fails its schema';
  return errors;
}

function ref(name: string): Json {
  return { $ref: `${COMPONENTS_PREFIX}${name}` };
}

function errorResponses(
  mount: MountSpec<unknown>,
  route: RouteSpec<unknown>,
  errorSchemaName: string,
): Record<string, Json> {
  const documented = { ...routerErrors(mount, route), ...route.responses };
  const success = successStatus(route);
  const out: Record<string, Json> = {};
  for (const [status, description] of Object.entries(documented)) {
    if (Number(status) === success) continue;
    const body = Number(status) === 422 ? 'HTTPValidationError' : Number(status) >= 400 ? errorSchemaName : undefined;
    out[status] = { description, ...(body ? { content: { 'application/json': { schema: ref(body) } } } : {}) };
  }
  return out;
}

/**
 * Shared schemas: a titled schema that appears more than once across the document goes to
 * `components.schemas` under its title and is referenced from every place it appeared. Where
 * one title stands for several shapes (a Partial keeps its source's title), the shape seen most
 * often takes it and the others stay inline.
 */
class SharedSchemas {
  private readonly seen = new Map<string, Map<string, { count: number; schema: Json }>>();
  private chosen = new Map<string, string>();
  readonly components: Record<string, unknown> = {};

  count(node: unknown): void {
    if (Array.isArray(node)) {
      for (const x of node) this.count(x);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const schema = node as Json;
    if (typeof schema.title === 'string') {
      const shapes = this.seen.get(schema.title) ?? new Map<string, { count: number; schema: Json }>();
      const key = JSON.stringify(schema);
      const entry = shapes.get(key) ?? { count: 0, schema };
      entry.count += 1;
      shapes.set(key, entry);
      this.seen.set(schema.title, shapes);
    }
    for (const value of Object.values(schema)) this.count(value);
  }

  /** Picks the shared schemas once every use was counted; `fixed` (the error bodies) always are. */
  choose(fixed: readonly TSchema[]): void {
    this.chosen = new Map();
    for (const [title, shapes] of this.seen) {
      const [key, best] = [...shapes.entries()].sort(([, a], [, b]) => b.count - a.count)[0] ?? [];
      if (key !== undefined && best !== undefined && best.count > 1) this.chosen.set(key, title);
    }
    for (const schema of fixed) this.chosen.set(JSON.stringify(schema), String((schema as Json).title));
    for (const [key, title] of this.chosen) this.components[title] = this.inner(JSON.parse(key) as Json);
  }

  /** The node with every shared schema in it (itself included) replaced by a $ref. */
  replace(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((x) => this.replace(x));
    if (node === null || typeof node !== 'object') return node;
    const title = (node as Json).title;
    if (typeof title === 'string' && this.chosen.get(JSON.stringify(node)) === title) return ref(title);
    return this.inner(node as Json);
  }

  private inner(schema: Json): Json {
    return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, this.replace(v)]));
  }
}

/** The `paths` object: one operation per route, its schemas inline. */
function pathsOf(mounts: ReadonlyArray<MountSpec<unknown>>): Record<string, Json> {
  const ids = operationIds(mounts);
  const paths: Record<string, Json> = {};
  for (const mount of mounts) {
    const errorSchemaName = String(((mount.errorSchema ?? PlainError) as Json).title);
    for (const route of mount.routes) {
      const key = toOpenApiPath(mount.prefix, route.path);
      const success = successStatus(route);
      const op: Json = {
        summary: route.summary,
        tags: [mount.name],
        operationId: ids.get(route),
        parameters: [...parametersOf(route.params, 'path'), ...parametersOf(route.query, 'query')],
        responses: {
          [String(success)]: {
            description: route.responses?.[success] ?? 'success',
            ...(route.response ? { content: { 'application/json': { schema: route.response } } } : {}),
          },
          ...errorResponses(mount, route, errorSchemaName),
        },
      };
      if (route.body)
        op.requestBody = { required: !route.bodyOptional, content: { 'application/json': { schema: route.body } } };
      if (mount.security && route.auth !== false) op.security = [{ [mount.security]: [] }];
      paths[key] = { ...(paths[key] ?? {}), [route.method.toLowerCase()]: op };
    }
  }
  return paths;
}

/**
 * OpenAPI 3.1 (JSON Schema 2020-12 compatible, so TypeBox schemas drop in as they are), with the
 * titled schemas used more than once and the error bodies under `components.schemas`.
 */
export function buildOpenApi(
  mounts: ReadonlyArray<MountSpec<unknown>>,
  info: { title: string; version: string; serverUrl: string },
): Json {
  const errorSchemas = [
    PlainError,
    HTTPValidationError,
    ...mounts.flatMap((m) => (m.errorSchema ? [m.errorSchema] : [])),
  ];
  const paths = pathsOf(mounts);
  const shared = new SharedSchemas();
  shared.count(paths);
  shared.count(errorSchemas);
  shared.choose(errorSchemas);
  const tags = mounts
    .filter((m) => m.routes.length > 0)
    .map((m) => ({ name: m.name, ...(m.description ? { description: m.description } : {}) }));
  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version },
    servers: [{ url: info.serverUrl }],
    tags,
    paths: shared.replace(paths),
    components: {
      schemas: shared.components,
      securitySchemes: {
        ocpiToken: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'Token <token> (2.2.1: base64 of the token, or raw)',
        },
        bearer: { type: 'http', scheme: 'bearer', description: 'CSMS_API_KEY' },
      },
    },
  };
}

/**
 * The schema with a title, its name under `components.schemas` wherever the document uses it
 * more than once. A new schema (TypeBox's `With`), so what it was made from stays untitled;
 * a Partial or an Omit of it does not keep the title.
 */
export function titled<S extends TSchema>(title: string, schema: S): S {
  // With's result is S and the annotation; generic S leaves it deferred, hence the cast
  return Type.With(schema, { title }) as unknown as S;
}
