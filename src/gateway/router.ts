import type { Context, Middleware, Next } from 'koa';
import type bodyParserOf from 'koa-bodyparser';
import { HttpError, RequestValidationError, type ValidationDetail } from './errors.js';
import { setBody } from './json-body.js';
import { assertBodyDepth, assertBodyText, assertPrintableRequest } from './request-limits.js';
import { requestContext } from './request-state.js';
import { PrefixRoutes, type Registration } from './prefix-routes.js';
import type { AuthFailures } from './auth-failures.js';
import type { MountSpec, RouteSpec } from './route-table.js';
import { MAX_DETAILS, RequestPart } from './validation.js';

export interface RouterOptions {
  bodyLimit: string;
  /** deepest nesting of a JSON body (BODY_MAX_DEPTH) */
  bodyMaxDepth: number;
  /** failed authentications per address and surface (HTTP_AUTH_FAILURES); none when absent */
  authFailures?: AuthFailures;
}

/** The order of the methods an `Allow` header lists. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

function fullPath(prefix: string, path: string): string {
  const p = path === '/' ? '' : path;
  return `${prefix}${p}` || '/';
}

/**
 * Generates the router from the mounts. Per route: authentication, body parsing with a size
 * limit, TypeBox validation of path, query and body, then the handler and the mount's envelope.
 * Paths answer with and without a trailing slash (the router is not strict), never a redirect.
 */
export function buildRouter(mounts: ReadonlyArray<MountSpec<unknown>>, opts: RouterOptions): Middleware {
  // koa-bodyparser (with co-body, qs and their dependencies, ~60 ms of a cold start) is loaded by
  // the first request that has a body to read, not at start
  let parser: Middleware | undefined;
  let loading: Promise<Middleware> | undefined;
  const loadParser = async (): Promise<Middleware> => {
    const { default: bodyParser } = await import('koa-bodyparser');
    parser = makeParser(bodyParser, opts);
    return parser;
  };
  // an import that failed is tried again by the next request, not kept as every request's answer
  const loaded = (): Promise<Middleware> =>
    (loading ??= loadParser().catch((err: unknown) => {
      loading = undefined;
      throw err;
    }));
  // the depth and the characters are checked once the text is read, before any schema walks the parsed value
  const parseBody: Middleware = async (ctx, next) => {
    assertJsonType(ctx);
    await (parser ?? (await loaded()))(ctx, async () => {
      const raw = ctx.request.rawBody;
      if (typeof raw === 'string') {
        assertBodyDepth(raw, opts.bodyMaxDepth);
        assertBodyText(raw, ctx.request.body);
      }
      await next();
    });
  };

  const registrations: Registration[] = [];
  for (const mount of mounts) {
    for (const route of mount.routes) {
      const template = fullPath(mount.prefix, route.path);
      const chain = routeChain(mount, route, template, parseBody, opts.authFailures);
      registrations.push({ prefix: mount.prefix, template, method: route.method, chain });
    }
  }
  return dispatch(new PrefixRoutes(registrations));
}

/** The media types a body is read as JSON in: given to the parser, and checked before it (assertJsonType). */
const JSON_TYPES = [
  'application/json',
  'application/json-patch+json',
  'application/vnd.api+json',
  'application/csp-report',
  'application/scim+json',
];

/**
 * A body sent with another Content-Type (none, `text/plain`, curl's default form type) is a 422
 * that says so. It was left unread: a route whose body is required said "Input should be a valid
 * object", and one whose body is optional ran as if none had come (a remote stop for another
 * transaction than the one named).
 */
function assertJsonType(ctx: Parameters<Middleware>[0]): void {
  // Content-Length 0 is no body (type-is counts any Content-Length as one); then null: no body
  // at all (Koa's request.is), false: a body of another type
  if (ctx.request.length === 0 || ctx.request.is(JSON_TYPES) !== false) return;
  const type = ctx.request.get('content-type');
  throw new RequestValidationError([
    {
      loc: ['body'],
      msg: `a body is read as JSON only: send Content-Type: application/json (got ${type === '' ? 'none' : type})`,
      type: 'content_type',
      input: null,
      ctx: { content_type: type },
    },
  ]);
}

/** JSON bodies only, up to the limit; a body that does not parse is a 422 with the decoder's words. */
function makeParser(bodyParser: typeof bodyParserOf, opts: RouterOptions): Middleware {
  return bodyParser({
    enableTypes: ['json'],
    extendTypes: { json: JSON_TYPES },
    jsonLimit: opts.bodyLimit,
    strict: false,
    onerror: (err: Error & { status?: number; expose?: boolean }) => {
      // too large (413) and the other client errors raw-body says it may show; a body that does not parse is a 422
      if (err.status !== undefined && err.status !== 400 && err.expose) throw err;
      throw new RequestValidationError([
        {
          loc: ['body', 0],
          msg: `JSON decode error: ${err.message}`,
          type: 'json_invalid',
          input: {},
          ctx: { error: err.message },
        },
      ]);
    },
  });
}

/**
 * Runs the route the path and method name (looked up among the routes its mount prefixes hold,
 * gateway/prefix-routes.ts); a path with routes but none for the method is its 405 (OPTIONS:
 * 204 with `Allow`).
 */
function dispatch(prefixRoutes: PrefixRoutes): Middleware {
  return async (ctx: Context, next: Next) => {
    const { router, routes } = prefixRoutes.routerFor(ctx.path);
    await routes(ctx, async () => {
      if (ctx.status !== 404 || ctx.body !== undefined) return next();
      const allowed = new Set(router.match(ctx.path, ctx.method).path.flatMap((layer) => layer.methods));
      if (allowed.size === 0) return next();
      const allow = METHOD_ORDER.filter((m) => allowed.has(m)).join(', ');
      if (ctx.method === 'OPTIONS') {
        ctx.status = 204;
        ctx.set('Allow', allow);
        return undefined;
      }
      // any other method, known to HTTP or not, is this path's 405 (never a 501: no 5xx for bad input, docs/SECURITY.md)
      throw new HttpError(405, 'method_not_allowed', `${ctx.method} is not allowed on this path`, undefined, {
        Allow: allow,
      });
    });
  };
}

/**
 * Reads one part of a request (path, query, body), its failures gathered in `failures`: every
 * part is read before a 422, which names the failures of all three together (before, a bad query
 * hid the body's errors until it was mended).
 */
function partReader(failures: ValidationDetail[]) {
  return <T>(part: () => T): T | undefined => {
    try {
      return part();
    } catch (err) {
      if (!(err instanceof RequestValidationError)) throw err;
      failures.push(...err.detail);
      return undefined;
    }
  };
}

/** The mount's caller of the request, through the back-off on failed authentications when there is one. */
function authenticated(
  ctx: Context,
  mount: MountSpec<unknown>,
  authFailures: AuthFailures | undefined,
): Promise<unknown> {
  const authenticate = mount.authenticate;
  if (!authenticate) return Promise.resolve(undefined);
  if (!authFailures) return Promise.resolve(authenticate(ctx));
  const vouched = mount.vouched;
  return authFailures.guard(
    ctx,
    mount.security ?? mount.name,
    () => authenticate(ctx),
    vouched && (() => vouched(ctx)),
  );
}

function routeChain(
  mount: MountSpec<unknown>,
  route: RouteSpec<unknown>,
  template: string,
  parseBody: Middleware,
  authFailures: AuthFailures | undefined,
): Middleware[] {
  const params = route.params ? new RequestPart('path', route.params) : undefined;
  const query = route.query ? new RequestPart('query', route.query) : undefined;
  const body = route.body ? new RequestPart('body', route.body) : undefined;
  const hasBody = route.method !== 'GET' && route.method !== 'DELETE';
  const chain: Middleware[] = [
    async (ctx, next) => {
      ctx.state.routeTemplate = template;
      if (authFailures) ctx.state.authFailures = authFailures;
      if (route.auth !== false && mount.authenticate) ctx.state.auth = await authenticated(ctx, mount, authFailures);
      assertPrintableRequest(ctx.params, ctx.query);
      await next();
    },
  ];
  if (hasBody) chain.push(parseBody);
  chain.push(async (ctx) => {
    const request = ctx.request;
    // koa-bodyparser leaves {} when nothing was sent; rawBody tells a real (even empty-object) body apart
    const sent = typeof request.rawBody === 'string' && request.rawBody.trim().length > 0;
    // an optional body sent as JSON null is no body: serializers write an absent optional body so
    // (OCPI mod_tokens authorize, "an optional LocationReferences object"); it was 422
    const bodyPresent = sent && !(route.bodyOptional === true && request.body === null);
    const rawBody = bodyPresent ? request.body : undefined;
    const failures: ValidationDetail[] = [];
    const read = partReader(failures);
    const path = params ? read(() => params.parseFields({ ...ctx.params })) : { ...ctx.params };
    const fields = query ? read(() => query.parseFields({ ...ctx.query })) : { ...ctx.query };
    const payload = body && (bodyPresent || !route.bodyOptional) ? read(() => body.parse(rawBody)) : rawBody;
    if (failures.length > 0 || path === undefined || fields === undefined)
      throw new RequestValidationError(failures.slice(0, MAX_DETAILS));
    const { logger, requestId } = requestContext(ctx);
    const result = await route.handler({
      params: path,
      query: fields,
      body: payload,
      auth: ctx.state.auth,
      koa: ctx,
      get log() {
        return logger.log;
      },
      requestId,
    });
    if (result.headers) for (const [k, v] of Object.entries(result.headers)) ctx.set(k, v);
    ctx.status = result.status ?? 200;
    if (result.raw) {
      ctx.type = result.raw.type;
      ctx.body = result.raw.body;
      return;
    }
    setBody(ctx, mount.respond ? mount.respond(result.data) : (result.data ?? null));
  });
  return chain;
}
