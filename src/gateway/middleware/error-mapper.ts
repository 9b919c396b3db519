import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import { isDependencyOutage } from '../../platform/dependency-health.js';
import { HttpError, OcpiError, RequestValidationError } from '../errors.js';

/** Where the invalid-parameters error points its `doc_url`. */
export const OCPI_ERRORS_DOC_URL =
  'https://github.com/ocpi/ocpi/blob/2.2.1/status_codes.asciidoc#status_codes_2xxx_client_errors';

/**
 * OCPI status codes of the errors that are not a handler's own (docs/SECURITY.md "Error
 * shapes"): an unknown path (404), a wrong method (405), a body too large (413) or any other
 * refused request are 2000 "generic client error" on both versions; a failure of ours is 3000
 * "generic server error" (OCPI 2.2.1 status_codes.asciidoc, 2xxx and 3xxx).
 */
export const OCPI_GENERIC_CLIENT_ERROR = 2000;
export const OCPI_GENERIC_SERVER_ERROR = 3000;

/** The two error shapes: the OCPI envelope under /ocpi, `{error: {code, message}}` elsewhere. */
export type Surface = 'ocpi' | 'plain';

export function surfaceOf(path: string): Surface {
  return path === '/ocpi' || path.startsWith('/ocpi/') ? 'ocpi' : 'plain';
}

/**
 * The only place that builds error bodies, one shape per surface (issue 7):
 * - RequestValidationError -> 422 {detail: [{loc, msg, type, input, ctx}]} on every surface
 * - on /ocpi: the OCPI envelope (status_code, status_message, timestamp; doc_url and errors on 2001),
 *   an HttpError (404, 405, 413, ...) as status_code 2000
 * - elsewhere: {error: {code, message, details?}, request_id}; an OcpiError a shared service threw
 *   under /v1 (unknown location, invalid parameters) is translated into that shape
 * - the actor runtime could not reach an actor in time, or the database or Redis is unreachable
 *   -> 503 with Retry-After, on both surfaces
 * - anything else -> 500 with no internals exposed (logged with the request id)
 */
export function errorMapper(log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new HttpError(404, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
      }
    } catch (thrown) {
      const requestId = ctx.state.requestId as string | undefined;
      const err = unavailable(thrown) ?? thrown;
      if (err instanceof RequestValidationError) {
        ctx.status = 422;
        ctx.body = { detail: err.detail };
        return;
      }
      const known = knownError(err);
      if (!known) {
        ((ctx.state.log as Logger | undefined) ?? log).error({ err, req_id: requestId }, 'unhandled error');
      }
      const error = known ?? new HttpError(500, 'internal_error', 'internal server error');
      if (error instanceof HttpError)
        for (const [name, value] of Object.entries(error.headers ?? {})) ctx.set(name, value);
      if (surfaceOf(ctx.path) === 'ocpi') renderOcpi(ctx, error instanceof OcpiError ? error : ocpiFromHttp(error));
      else renderPlain(ctx, error instanceof HttpError ? error : httpFromOcpi(error), requestId);
    }
  };
}

/** Our own errors, and the client errors of koa and raw-body (body too large, bad encoding), which say when they may be shown. */
function knownError(err: unknown): OcpiError | HttpError | undefined {
  if (err instanceof OcpiError || err instanceof HttpError) return err;
  const e = err as { status?: unknown; expose?: unknown; message?: unknown; type?: unknown } | null;
  if (e && typeof e.status === 'number' && e.status >= 400 && e.status < 500 && e.expose === true) {
    return new HttpError(e.status, typeof e.type === 'string' ? e.type : 'bad_request', String(e.message));
  }
  return undefined;
}

function renderOcpi(ctx: Context, err: OcpiError): void {
  ctx.status = err.httpStatus;
  ctx.body = {
    status_code: err.statusCode,
    status_message: err.statusMessage,
    timestamp: new Date().toISOString(),
    ...(err.errors ? { doc_url: OCPI_ERRORS_DOC_URL, errors: err.errors } : {}),
  };
}

function renderPlain(ctx: Context, err: HttpError, requestId: string | undefined): void {
  ctx.status = err.status;
  ctx.body = {
    error: { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}) },
    request_id: requestId,
  };
}

function ocpiFromHttp(err: HttpError): OcpiError {
  return new OcpiError(
    err.status,
    err.status >= 500 ? OCPI_GENERIC_SERVER_ERROR : OCPI_GENERIC_CLIENT_ERROR,
    err.message,
  );
}

const plainCodes: Record<number, string> = {
  400: 'invalid_parameters',
  401: 'unauthorized',
  404: 'not_found',
  405: 'method_not_allowed',
};

/**
 * An OCPI error outside /ocpi. OCPI delivers "invalid parameters" (2xxx) and "unable to use the
 * client's API" (3xxx) as HTTP 200; the management surface answers 400 and 502 for them.
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
 * 503, never a 500 (issue 7: asks to a killed process answered HTTP 500).
 */
const UNAVAILABLE = new Set(['AskTimeoutError', 'ActorUnavailableError', 'ActorMovedError']);

function unavailable(err: unknown): HttpError | undefined {
  if (isDependencyOutage(err)) {
    return new HttpError(503, 'dependency_unavailable', 'the database or Redis cannot be reached; retry', undefined, {
      'Retry-After': '5',
    });
  }
  if (!(err instanceof Error) || !UNAVAILABLE.has(err.name)) return undefined;
  return new HttpError(503, 'unavailable', 'the service could not answer in time; retry', undefined, {
    'Retry-After': '1',
  });
}
