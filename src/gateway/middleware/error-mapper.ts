import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { ConcurrentUpdateError } from '../../ocpi/store/object-store.js';
import { isDependencyOutage } from '../../platform/dependency-health.js';
import { HttpError, OcpiError, RequestValidationError } from '../errors.js';
import { setBody } from '../json-body.js';
import type { ErrorRenderer, MountSpec } from '../route-table.js';
import '../request-state.js';

/**
 * The only place that turns a thrown error into an answer (docs/SECURITY.md). The shape is the mount's:
 * each mount declares its `errors` renderer, and the mapper uses that of the mount with the
 * longest prefix that holds the path, so the router's own answers (unknown path, wrong method,
 * body too large) have the shape of the mount too; a path under no mount, or a mount that
 * declares none, gets the plain shape (`plainErrors`).
 * - RequestValidationError -> 422 {detail: [{loc, msg, type, input, ctx}]} on every mount
 * - OcpiError and HttpError (404, 405, 413, ...) -> the mount's renderer, with the HttpError's
 *   headers (`Allow` of a 405)
 * - the actor runtime could not reach an actor in time, the database or Redis is unreachable, or
 *   an OCPI object kept changing under every attempt of an update -> 503 with Retry-After, in
 *   the mount's shape
 * - anything else -> 500 with no internals exposed (logged with the request id)
 */
export function errorMapper(log: Logger, mounts: ReadonlyArray<MountSpec<unknown>> = []): Middleware {
  const rendererOf = errorRenderers(mounts);
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new HttpError(404, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
      }
    } catch (thrown) {
      const requestId = ctx.state.requestId;
      const err = unavailable(thrown) ?? thrown;
      if (err instanceof RequestValidationError) {
        ctx.status = 422;
        setBody(ctx, { detail: err.detail });
        return;
      }
      const known = knownError(err);
      if (!known) (ctx.state.requestLog?.log ?? log).error({ err, req_id: requestId }, 'unhandled error');
      const error = known ?? new HttpError(500, 'internal_error', 'internal server error');
      if (error instanceof HttpError)
        for (const [name, value] of Object.entries(error.headers ?? {})) ctx.set(name, value);
      const answer = rendererOf(ctx.path)(error, requestId);
      ctx.status = answer.status;
      setBody(ctx, answer.body);
    } finally {
      // answered before its body was read (refused: no credentials, too large; or a route that
      // reads none, a GET that declares one): the connection ends with the answer instead of
      // reading out a body the client may trickle for minutes
      if (!ctx.req.complete) ctx.set('Connection', 'close');
    }
  };
}

/**
 * Path -> the renderer of the mount with the longest prefix holding it (`/ocpi/cpo/2.1.1` holds
 * itself and `/ocpi/cpo/2.1.1/...`, the prefix `''` every path). Mounts sharing a prefix (the
 * `/v1` ones) must render alike: the router serves their paths side by side.
 */
export function errorRenderers(mounts: ReadonlyArray<MountSpec<unknown>>): (path: string) => ErrorRenderer {
  const byPrefix = new Map<string, ErrorRenderer>();
  for (const mount of mounts) {
    const render = mount.errors ?? plainErrors;
    const declared = byPrefix.get(mount.prefix);
    if (declared && declared !== render)
      throw new Error(`mount ${mount.name}: another mount under ${mount.prefix || '/'} renders errors differently`);
    byPrefix.set(mount.prefix, render);
  }
  const prefixes = [...byPrefix.keys()].sort((a, b) => b.length - a.length);
  return (path) => {
    const prefix = prefixes.find((p) => path === p || path.startsWith(`${p}/`));
    return (prefix === undefined ? undefined : byPrefix.get(prefix)) ?? plainErrors;
  };
}

/** The shape of koa's and raw-body's client errors (body too large, bad encoding). */
interface ExposedError {
  status: number;
  expose: true;
  message?: unknown;
  type?: unknown;
}

function isExposedClientError(err: unknown): err is ExposedError {
  if (err === null || (typeof err !== 'object' && typeof err !== 'function')) return false;
  if (!('status' in err) || !('expose' in err)) return false;
  return typeof err.status === 'number' && err.status >= 400 && err.status < 500 && err.expose === true;
}

/** raw-body's words, with the limit a too large body passed (BODY_LIMIT) when it gives it. */
function clientMessage(err: ExposedError): string {
  const limit = (err as { limit?: unknown }).limit;
  if (err.type === 'entity.too.large' && typeof limit === 'number')
    return `request body larger than the limit of ${limit} bytes (BODY_LIMIT)`;
  return String(err.message);
}

/** Our own errors, and the client errors of koa and raw-body, which say when they may be shown. */
function knownError(err: unknown): OcpiError | HttpError | undefined {
  if (err instanceof OcpiError || err instanceof HttpError) return err;
  if (isExposedClientError(err)) {
    // raw-body names its errors with dots (`entity.too.large`); our codes are snake_case
    const code = typeof err.type === 'string' ? err.type.replace(/\./g, '_') : 'bad_request';
    return new HttpError(err.status, code, clientMessage(err));
  }
  return undefined;
}

/** `{error: {code, message, details?}, request_id}`: /v1, the service endpoints, anything under no mount. */
export const plainErrors: ErrorRenderer = (error, requestId) => {
  const err = error instanceof HttpError ? error : httpFromOcpi(error);
  return {
    status: err.status,
    body: {
      error: { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}) },
      request_id: requestId,
    },
  };
};

const plainCodes: Record<number, string> = {
  400: 'invalid_parameters',
  401: 'unauthorized',
  404: 'not_found',
  405: 'method_not_allowed',
};

/**
 * An OCPI error a shared service threw on a plain mount (unknown location, invalid parameters
 * under /v1). OCPI delivers "invalid parameters" (2xxx) and "unable to use the client's API"
 * (3xxx) as HTTP 200; the plain shape answers 400 and 502 for them.
 */
function httpFromOcpi(err: OcpiError): HttpError {
  let status = err.httpStatus;
  if (status < 400) status = err.statusCode >= 3000 ? 502 : 400;
  const details = err.errors ? { errors: err.errors } : undefined;
  return new HttpError(status, plainCodes[status] ?? `ocpi_${err.statusCode}`, err.statusMessage, details);
}

/**
 * The actor runtime's "no answer now" errors, matched by name as errors that may have crossed a
 * process boundary are: the actor's owner is moving or gone and the request may be retried, a
 * 503, never a 500 (docs/SECURITY.md; before, asks to a killed process answered HTTP 500).
 */
const UNAVAILABLE = new Set(['AskTimeoutError', 'ActorUnavailableError', 'ActorMovedError', 'ActorLostError']);

function unavailable(err: unknown): HttpError | undefined {
  if (isDependencyOutage(err)) {
    return new HttpError(503, 'dependency_unavailable', 'the database or Redis cannot be reached; retry', undefined, {
      'Retry-After': '5',
    });
  }
  if (err instanceof ConcurrentUpdateError) {
    return new HttpError(503, 'busy', 'the object kept changing under other writes; retry', undefined, {
      'Retry-After': '1',
    });
  }
  if (!(err instanceof Error) || !UNAVAILABLE.has(err.name)) return undefined;
  return new HttpError(503, 'unavailable', 'the service could not answer in time; retry', undefined, {
    'Retry-After': '1',
  });
}
