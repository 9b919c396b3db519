import Type, { type TSchema } from '#typebox';
import type { Context } from 'koa';
import type { OperatorAuth } from '../../gateway/csms-auth.js';
import { pageHeaders, Paging } from '../../gateway/operator-paging.js';
import { pagingHeaders } from '../../gateway/paging.js';
import {
  defineMount,
  route,
  type MountSpec,
  type RouteRequest,
  type RouteResult,
  type RouteSpec,
} from '../../gateway/route-table.js';
import type { ListOptions, ObjectKey, ObjectStore, PageRenderer } from '../store/object-store.js';
import type { OcpiCaller, PartnerRole, PartyIdentity } from './auth.js';
import type { OcpiContext } from './context.js';
import { RequestValidationError, type OcpiError } from '../../gateway/errors.js';
import { valueAt } from '../../gateway/validation.js';
import { declaresDateTime, normalizeDateTimes, type DateTimePath } from './datetime.js';
import { SerializedJson, ocpiEnvelope, type OcpiVersion } from './envelope.js';
import { ocpiErrorsOf, unauthorized } from './errors.js';
import { assertOwnParty, requireLink } from './guards.js';
import { listWindow } from './pagination.js';
import { actingAs, actingFrom, assertAddressedToUs, responseRoutingHeaders, routingHeaders } from './routing.js';
import { Envelope, ErrorEnvelope, ListQuery } from './schemas.js';

/**
 * What the module folders build routes with: the OCPI mount (token authentication, the success
 * envelope, the OCPI error shape), the paged list route, and the checks a partner's write to its
 * own objects starts with.
 */

export type OcpiRoute = RouteSpec<OcpiCaller>;
export type OcpiRequest = RouteRequest<OcpiCaller>;
/** A route of the operator's management surface (/v1, Bearer CSMS_API_KEY). */
export type OperatorRoute = RouteSpec<OperatorAuth>;

export interface OcpiMountOptions {
  name: string;
  prefix: string;
  version: OcpiVersion;
  description: string;
  /** 2.2.1 accepts the base64-encoded token and the raw one, 2.1.1 the raw one (docs/OCPI.md "Mounts") */
  accept: 'raw' | 'base64-or-raw';
  routes: OcpiRoute[];
  /** the role of the partners this mount serves (a role mount); others get 403 */
  serves?: PartnerRole;
}

/**
 * An OCPI mount: `Authorization: Token` authentication, the success envelope as `respond`, and
 * the OCPI error envelope for every error under its prefix.
 */
export function ocpiMount(ctx: OcpiContext, o: OcpiMountOptions): MountSpec<OcpiCaller> {
  return defineMount<OcpiCaller>({
    name: o.name,
    prefix: o.prefix,
    description: o.description,
    security: 'ocpiToken',
    vouched: (koa: Context) => ctx.tokens.vouched(koa, o.accept),
    authenticate: async (koa: Context) => {
      const caller = await ctx.tokens.authenticate(koa, o.version, o.accept);
      // Token A after the registration: only the credentials module still answers it
      if (caller.tokenKind === 'retired' && koa.path !== `${o.prefix}/credentials`) throw unauthorized(o.version);
      // Token A only registers: 401 on every module endpoint, and on every endpoint of the other
      // role's mounts, before the mount's role is looked at (a 403 naming the token's role told a
      // guesser it was real)
      if (
        caller.tokenKind === 'initial' &&
        (isModuleEndpoint(koa.path, o.prefix) || (o.serves !== undefined && !speaksAs(caller, o.serves)))
      )
        throw unauthorized(o.version);
      // 2.2.1 routing headers, on functional modules only (configuration modules carry none)
      if (o.version !== '2.2.1' || !isFunctionalModule(koa.path, o.prefix)) return actingAs(caller, o.serves);
      // a direct response names us as its sender and the requesting party as its receiver, an
      // error answer too: the token's own party until the headers named another of its parties
      koa.set(responseRoutingHeaders(ctx.ownParty(), caller));
      const routing = routingHeaders(koa);
      const sender = actingFrom(caller, routing.from);
      koa.set(responseRoutingHeaders(ctx.ownParty(), sender));
      assertAddressedToUs(routing.to, ctx.ownParty());
      const acting = actingAs(sender, o.serves);
      koa.set(responseRoutingHeaders(ctx.ownParty(), acting));
      return acting;
    },
    respond: ocpiEnvelope,
    errors: ocpiErrorsOf(o.version),
    errorSchema: ErrorEnvelope,
    operationPrefix: operationPrefix(o.name),
    routes: o.routes.map((r) =>
      utcDateTimes({ ...r, responses: { ...documentedErrors(r, o.version, o.serves), ...r.responses } }),
    ),
  });
}

/** `ocpi-cpo-2.2.1` -> `cpo221`: the OCPI mounts serve the same paths, their operationIds differ by it. */
function operationPrefix(name: string): string {
  const [first = '', ...rest] = name
    .replace(/^ocpi-/, '')
    .replace(/\./g, '')
    .split('-');
  return first + rest.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

/** Whether the token speaks for a party of `role` (its own, or one a platform's credentials list). */
function speaksAs(caller: OcpiCaller, role: PartnerRole): boolean {
  return caller.role === role || caller.parties.some((p) => p.role === role);
}

/** Below the mount's prefix, a module endpoint: not the versions list, not the version details, not credentials. */
function isModuleEndpoint(path: string, prefix: string): boolean {
  return isFunctionalModule(path, prefix) && !/^versions(\/|$)/.test(path.slice(prefix.length).replace(/^\/+/, ''));
}

/** Below the mount's prefix, a path of a functional module: not the version details, not credentials. */
function isFunctionalModule(path: string, prefix: string): boolean {
  const below = path.slice(prefix.length).replace(/^\/+/, '');
  return below !== '' && !/^credentials(\/|$)/.test(below);
}

/**
 * Routes only partners of `role` may call (the overview mount, which has no role of its own):
 * others get the role mounts' 403 (`wrongRole`).
 */
export function forPartners(role: PartnerRole, routes: OcpiRoute[]): OcpiRoute[] {
  return routes.map((r) => {
    const gated: OcpiRoute = {
      ...r,
      handler: (req) => {
        if (req.auth.role === role) return r.handler(req);
        const acting = actingAs(req.auth, role);
        // the answer goes to the party the request acts as (it went to the token's own party, a
        // CPO, while a platform's eMSP party was served), from us as the authenticator set it
        const ours = req.koa.response.get('OCPI-from-party-id');
        if (ours) {
          const from = { country_code: req.koa.response.get('OCPI-from-country-code'), party_id: ours };
          req.koa.set(responseRoutingHeaders(from, acting));
        }
        return r.handler({ ...req, auth: acting });
      },
    };
    partnerRoles.set(gated, role);
    return gated;
  });
}

/** The routes `forPartners` made, and the partner role each serves (the overview's version details). */
const partnerRoles = new WeakMap<OcpiRoute, PartnerRole>();

/** The role of the partners a route made by `forPartners` serves; undefined for any partner. */
export function partnerRoleOf(route: OcpiRoute): PartnerRole | undefined {
  return partnerRoles.get(route);
}

/** A route whose handler sees the body and query with every OCPI DateTime in UTC (`withUtcDateTimes`). */
export function utcDateTimes<A>(r: RouteSpec<A>): RouteSpec<A> {
  // decided once per route: most bodies and queries have no DateTime to walk for
  if (!declaresDateTime(r.body) && !declaresDateTime(r.query)) return r;
  return { ...r, handler: (req) => r.handler(withUtcDateTimes(r, req)) };
}

/**
 * The request's body and query with every OCPI DateTime in UTC (core/datetime.ts), before the
 * handler sees them: nothing a partner sends in another form is stored or passed on in it.
 */
function withUtcDateTimes<A>(route: RouteSpec<A>, req: RouteRequest<A>): RouteRequest<A> {
  const invalid: Array<{ where: 'body' | 'query'; path: DateTimePath; input: unknown }> = [];
  const check = (where: 'body' | 'query', schema: TSchema, value: unknown): void => {
    const found: DateTimePath[] = [];
    normalizeDateTimes(schema, value, found);
    for (const path of found) invalid.push({ where, path, input: valueAt(value, path) });
  };
  if (route.body && req.body !== undefined) check('body', route.body, req.body);
  if (route.query) check('query', route.query, req.query);
  if (invalid.length > 0)
    throw new RequestValidationError(
      invalid.map(({ where, path, input }) => ({
        loc: [where, ...path],
        msg: 'Input should be a valid datetime: no such day or instant',
        type: 'datetime_from_date_parsing',
        input,
        ctx: {},
      })),
    );
  return req;
}

/** The error answers every OCPI route shares, for the OpenAPI document (docs/SECURITY.md). */
function documentedErrors(
  route: OcpiRoute,
  version: OcpiVersion,
  serves: PartnerRole | undefined,
): Record<number, string> {
  const errors: Record<number, string> = {};
  if (route.body || route.query || route.params)
    errors[400] = 'invalid or missing parameters (status_code 2001), delivered as HTTP 200 (OCPI)';
  if (route.auth !== false) errors[401] = `missing or unknown token (status_code ${version === '2.2.1' ? 2001 : 2000})`;
  const role = serves ?? partnerRoleOf(route);
  if (route.auth !== false && role) errors[403] = `the token is not of a ${role} partner (status_code 2000)`;
  if (route.body || route.query || route.params || !['GET', 'DELETE'].includes(route.method))
    errors[422] = 'HTTPValidationError: a body, query or path parameter fails its schema';
  return errors;
}

/**
 * A list answer: one page of `store` rendered by `render` (named by `renderName`, the key of
 * the page cache), with the paging headers.
 */
async function listAnswer<T extends { last_updated: string }>(
  ctx: OcpiContext,
  req: OcpiRequest,
  store: ObjectStore<T>,
  parties: readonly PartyIdentity[] | undefined,
  renderName: string,
  render: PageRenderer<T>,
  opts: ListOptions = {},
): Promise<RouteResult> {
  const window = listWindow(req.query);
  const page = await store.renderedList(window, parties, renderName, render, opts);
  return {
    data: new SerializedJson(page.json),
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      ...pagingHeaders({
        origin: ctx.baseUrl(req.koa),
        path: req.koa.path,
        query: req.koa.query,
        offset: window.offset,
        limit: window.limit,
        total: page.total,
      }),
    },
  };
}

export interface ListRouteOptions<T extends { last_updated: string }> {
  path: string;
  module: string;
  summary: string;
  version: OcpiVersion;
  store: ObjectStore<T>;
  /**
   * whose objects the list shows: our own party's, the calling partner's, or ours written for
   * the caller (`PutOptions.audience`: our sessions and CDRs for the eMSP of their token)
   */
  owner: 'ours' | 'caller' | 'ours-for-caller';
  /** one listed object, for the OpenAPI document of the answer */
  item: TSchema;
  /**
   * the served shape when it is not the stored one, object by object (`as`) or a page at a time
   * (`page`, which may read what the objects refer to); `name` keys the page cache
   */
  render?: { name: string; as: (stored: T) => unknown } | { name: string; page: PageRenderer<T> };
  publishedOnly?: ListOptions['publishedOnly'];
}

/**
 * GET of a paged list (docs/OCPI.md "Lists"): every list of every mount needs a registered link
 * and answers one page of one store through `listAnswer`.
 */
export function listRoute<T extends { last_updated: string }>(ctx: OcpiContext, o: ListRouteOptions<T>): OcpiRoute {
  const renderName = o.render?.name ?? 'as-stored';
  const render = pageRenderer(o.render);
  const baseOptions: ListOptions = o.publishedOnly ? { publishedOnly: o.publishedOnly } : {};
  return {
    method: 'GET',
    path: o.path,
    module: o.module,
    summary: o.summary,
    query: ListQuery,
    response: Envelope(Type.Array(o.item)),
    handler: (req) => {
      const caller = requireLink(req.auth, o.version);
      const listOptions = o.owner === 'ours-for-caller' ? { ...baseOptions, audience: caller } : baseOptions;
      return listAnswer(
        ctx,
        req,
        o.store,
        o.owner === 'caller' ? [caller] : [ctx.own],
        renderName,
        render,
        listOptions,
      );
    },
  };
}

function pageRenderer<T extends { last_updated: string }>(r: ListRouteOptions<T>['render']): PageRenderer<T> {
  if (!r) return (items) => items;
  if ('page' in r) return r.page;
  const as = r.as;
  return (items) => items.map(as);
}

/** The party named by a path with country_code and party_id. */
export function pathParty(req: OcpiRequest): PartyIdentity {
  return { country_code: String(req.params.country_code), party_id: String(req.params.party_id) };
}

/**
 * The caller's own object at the path's party and `id` (2001 for another party's path, 401 with
 * Token A): its key, and the object, or `unknown()` thrown when we hold none.
 */
export async function callersObject<T extends { last_updated: string }>(
  req: OcpiRequest,
  version: OcpiVersion,
  store: ObjectStore<T>,
  id: string,
  unknown: () => OcpiError,
): Promise<{ key: ObjectKey; object: T }> {
  const { party } = callerOwnPath(req, version);
  const key = { ...party, id };
  const object = await store.get(key);
  if (!object) throw unknown();
  return { key, object };
}

/**
 * How every write of a partner to its own objects starts: a registered link, and the party the
 * path names must be the caller's (docs/OCPI.md "Who sees what").
 */
export function callerOwnPath(req: OcpiRequest, version: OcpiVersion): { caller: OcpiCaller; party: PartyIdentity } {
  const caller = requireLink(req.auth, version);
  const party = pathParty(req);
  assertOwnParty(caller, party);
  return { caller, party };
}

/**
 * The operator's list of one module of our own objects (`GET /v1/ocpi/{module}`): paged with
 * `offset`/`limit` and the operator's paging headers, in the order the objects were first stored.
 */
export function ownListRoute<T extends { last_updated: string }>(
  ctx: OcpiContext,
  o: { path: string; summary: string; item: TSchema; store: ObjectStore<T> },
): OperatorRoute {
  return route({
    method: 'GET',
    path: o.path,
    summary: o.summary,
    query: Type.Object(Paging),
    response: Type.Array(o.item),
    handler: async (req) => {
      const { offset, limit } = req.query;
      const page = await o.store.list({ offset, limit }, [ctx.ownParty()]);
      return { data: page.items, headers: pageHeaders(ctx.services.config, req, page.total, offset, limit) };
    },
  });
}
