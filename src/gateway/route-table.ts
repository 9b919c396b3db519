import type { Context } from 'koa';
import type { Logger } from 'pino';
import type { TSchema } from 'typebox';

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

export interface RouteRequest<Auth = unknown> {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
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
  /** extra documented statuses: status -> description */
  responses?: Record<number, string>;
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
  /** wraps a success payload (OCPI envelope); plain mounts send the payload as it is */
  respond?: (data: unknown) => unknown;
  /** how the error mapper renders a RequestValidationError on this mount ('fastapi' = 422 detail) */
  routes: Array<RouteSpec<Auth>>;
  /** OpenAPI security scheme name of the authenticator */
  security?: 'ocpiToken' | 'bearer';
}

/** Builds a mount whose handlers see a typed `auth`. */
export function defineMount<Auth>(mount: MountSpec<Auth>): MountSpec<Auth> {
  return mount;
}
