import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { Static, TSchema } from '#typebox';
import type { HttpError, OcpiError } from './errors.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a handler returns; the mount's `respond` turns it into the response body. */
export interface RouteResult {
  status?: number;
  /** the payload (`data` of an OCPI envelope, or the whole body of a plain mount) */
  data?: unknown;
  headers?: Record<string, string>;
  /** raw body, bypassing the mount's envelope (metrics text, HTML, a stream) */
  raw?: { body: unknown; type: string };
}

export interface RouteRequest<
  Auth = unknown,
  Params = Record<string, unknown>,
  Query = Record<string, unknown>,
  Body = unknown,
> {
  params: Params;
  query: Query;
  body: Body;
  /** what the mount's authenticator returned (undefined for routes with auth 'none') */
  auth: Auth;
  koa: Context;
  log: Logger;
  requestId: string;
}

/** One endpoint, as data: the router, validation, OCPI endpoint lists and OpenAPI come from it. */
export interface RouteSpec<Auth = unknown> {
  method: HttpMethod;
  /** relative to the mount, koa-router syntax: `/locations/:country_code` */
  path: string;
  summary: string;
  /** OCPI module identifier this route belongs to (version-details lists) */
  module?: string;
  params?: TSchema;
  query?: TSchema;
  body?: TSchema;
  /** the body may be absent (validated only when present) */
  bodyOptional?: boolean;
  /** documents the success payload in OpenAPI */
  response?: TSchema;
  /** the success status the handler answers with (201 for a creation); documented, default 200 */
  status?: number;
  /** extra documented statuses: status -> description (401 and 422 are the router's, documented for every route that can answer them) */
  responses?: Record<number, string>;
  /** the OpenAPI operationId (after the mount's `operationPrefix`); default: derived from method and path (gateway/openapi.ts) */
  operationId?: string;
  /** false: no authentication on this route even when the mount has an authenticator */
  auth?: boolean;
  handler(req: RouteRequest<Auth>): Promise<RouteResult> | RouteResult;
}

/** A group of routes under one prefix sharing authentication and the shape of their bodies. */
export interface MountSpec<Auth = unknown> {
  name: string;
  prefix: string;
  description?: string;
  /** throws (an OcpiError/HttpError) when the request is not authenticated */
  authenticate?: (koa: Context) => Promise<Auth> | Auth;
  /**
   * The request carries credentials this process has seen authenticate, which the back-off on
   * failed authentications of its address does not hold up (auth-failures.ts `guard`); without
   * it, none are.
   */
  vouched?: (koa: Context) => boolean;
  /** wraps a success payload (OCPI envelope); plain mounts send the payload as it is */
  respond?: (data: unknown) => unknown;
  /**
   * How the errors of every path under `prefix` are answered, the router's own 404, 405 and 413
   * included (the error mapper picks the mount with the longest prefix that holds the path).
   * Default: the plain `{error: {code, message}}` shape.
   */
  errors?: ErrorRenderer;
  routes: Array<RouteSpec<Auth>>;
  /** OpenAPI security scheme name of the authenticator */
  security?: 'ocpiToken' | 'bearer';
  /** the schema of the error bodies `errors` renders, for OpenAPI (titled); default: the plain shape */
  errorSchema?: TSchema;
  /** what the operationIds of the mount start with where its paths repeat another mount's (`cpo221`) */
  operationPrefix?: string;
}

/** An error as a mount answers it. The headers an HttpError carries (`Allow`) go out as well. */
export interface ErrorAnswer {
  status: number;
  body: unknown;
}

/** Renders a known error (or the 500 standing in for an unknown one) in a mount's shape. */
export type ErrorRenderer = (error: HttpError | OcpiError, requestId: string | undefined) => ErrorAnswer;

/**
 * The path parameters a koa-router template names, as strings: `/locations/:location_id/:evse_uid`
 * -> `{ location_id: string; evse_uid: string }`. What a route without a `params` schema receives.
 */
export type PathParams<Path extends string> = Path extends `${string}:${infer Name}/${infer Rest}`
  ? { [K in Name]: string } & PathParams<`/${Rest}`>
  : Path extends `${string}:${infer Name}`
    ? { [K in Name]: string }
    : Record<never, never>;

/** The type a schema validates to, or `Otherwise` when the route declares none. */
type StaticOr<S extends TSchema | undefined, Otherwise> = S extends TSchema ? Static<S> : Otherwise;

/** The body a handler sees: the schema's type (possibly absent when `bodyOptional`), else what was sent. */
type BodyOf<B extends TSchema | undefined, Optional extends boolean> = B extends TSchema
  ? Optional extends true
    ? Static<B> | undefined
    : Static<B>
  : unknown;

/** A route whose handler's `params`, `query` and `body` are typed by the route's own schemas. */
export interface TypedRouteSpec<
  Auth,
  Path extends string,
  P extends TSchema | undefined,
  Q extends TSchema | undefined,
  B extends TSchema | undefined,
  Optional extends boolean,
> extends Omit<RouteSpec<Auth>, 'path' | 'params' | 'query' | 'body' | 'bodyOptional' | 'handler'> {
  path: Path;
  params?: P;
  query?: Q;
  body?: B;
  bodyOptional?: Optional;
  handler(
    req: RouteRequest<Auth, StaticOr<P, PathParams<Path>>, StaticOr<Q, Record<string, unknown>>, BodyOf<B, Optional>>,
  ): Promise<RouteResult> | RouteResult;
}

/**
 * Declares a route, typing its handler by its schemas as Fastify's TypeBox type provider does.
 * `Auth` comes from where the route is used (the mount's `routes`, an `OcpiRoute[]`). The router
 * checks path, query and body against these same schemas before the handler runs
 * (gateway/router.ts), so the handler's types hold; the table keeps the route with its request
 * types erased (RouteSpec's `handler` is a method, compared bivariantly), which is why no cast
 * is needed here.
 */
export function route<
  Auth,
  Path extends string,
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
  Optional extends boolean = false,
>(spec: TypedRouteSpec<Auth, Path, P, Q, B, Optional>): RouteSpec<Auth> {
  return spec;
}

/** Builds a mount whose handlers see a typed `auth`. */
export function defineMount<Auth>(mount: MountSpec<Auth>): MountSpec<Auth> {
  return mount;
}
