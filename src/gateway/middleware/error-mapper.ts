import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { HttpError, OcpiError, RequestValidationError } from '../errors.js';

/** Where the invalid-parameters error points its `doc_url`. */
export const OCPI_ERRORS_DOC_URL = 'https://github.com/ocpi/ocpi/blob/2.2.1/status_codes.asciidoc#status_codes_2xxx_client_errors';

/**
 * The only place that builds error bodies:
 * - OcpiError -> the OCPI envelope (status_code, status_message, timestamp; doc_url and errors on 2001)
 * - RequestValidationError -> 422 {detail: [{loc, msg, type, input, ctx}]}
 * - HttpError -> {error: {code, message, details?}, request_id}
 * - the actor runtime could not reach an actor in time -> 503 with Retry-After
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
      if (err instanceof OcpiError) {
        ctx.status = err.httpStatus;
        ctx.body = {
          status_code: err.statusCode,
          status_message: err.statusMessage,
          timestamp: new Date().toISOString(),
          ...(err.errors ? { doc_url: OCPI_ERRORS_DOC_URL, errors: err.errors } : {}),
        };
        return;
      }
      if (err instanceof RequestValidationError) {
        ctx.status = 422;
        ctx.body = { detail: err.detail };
        return;
      }
      if (err instanceof HttpError) {
        ctx.status = err.status;
        ctx.body = { error: { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}) }, request_id: requestId };
        if (err.status === 503) ctx.set('Retry-After', '1');
        if (err.status === 405 && typeof err.details === 'object' && err.details && 'allow' in err.details) {
          ctx.set('Allow', String((err.details as { allow: unknown }).allow));
        }
        return;
      }
      const e = err as { status?: unknown; expose?: unknown; message?: unknown; type?: unknown };
      // koa/raw-body errors (body too large, bad encoding) carry a status and say when they may be shown
      if (typeof e.status === 'number' && e.status >= 400 && e.status < 500 && e.expose === true) {
        ctx.status = e.status;
        ctx.body = { error: { code: typeof e.type === 'string' ? e.type : 'bad_request', message: String(e.message) }, request_id: requestId };
        return;
      }
      ((ctx.state.log as Logger | undefined) ?? log).error({ err, req_id: requestId }, 'unhandled error');
      ctx.status = 500;
      ctx.body = { error: { code: 'internal_error', message: 'internal server error' }, request_id: requestId };
    }
  };
}

/**
 * The actor runtime's "no answer now" errors, matched by name as errors that may have crossed a
 * process boundary are: the actor's owner is moving or gone and the request may be retried, a
 * 503, never a 500 (issue 7: asks to a killed process answered HTTP 500).
 */
const UNAVAILABLE = new Set(['AskTimeoutError', 'ActorUnavailableError', 'ActorMovedError']);

function unavailable(err: unknown): HttpError | undefined {
  if (!(err instanceof Error) || !UNAVAILABLE.has(err.name)) return undefined;
  return new HttpError(503, 'unavailable', 'the service could not answer in time; retry');
}
