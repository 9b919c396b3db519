/**
 * Errors a request handler may throw. The error mapper (middleware/error-mapper.ts) is the only
 * code that turns them into answers, in the shape the mount holding the path declares
 * (`MountSpec.errors`).
 */

/**
 * A plain HTTP error: rendered as `{error: {code, message}}` on /v1 and the service endpoints,
 * and as an OCPI envelope under the OCPI mounts (the router's 404/405 and the body parser's 413
 * reach every mount). `headers` go out with the answer (`Allow` of a 405).
 */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(message);
  }
}

export interface OcpiFieldError {
  field: string;
  message: string;
  type: string;
}

/**
 * An OCPI error envelope. `httpStatus` 200 with status_code 2001 is OCPI's "invalid or missing
 * parameters", delivered as HTTP 200 (docs/SECURITY.md "One error shape per surface").
 */
export class OcpiError extends Error {
  override readonly name = 'OcpiError';
  constructor(
    readonly httpStatus: number,
    readonly statusCode: number,
    readonly statusMessage: string,
    readonly errors?: OcpiFieldError[],
  ) {
    super(statusMessage);
  }
}

/** One entry of the 422 HTTPValidationError body, shaped as FastAPI/pydantic shape it. */
export interface ValidationDetail {
  loc: Array<string | number>;
  msg: string;
  type: string;
  input: unknown;
  ctx: Record<string, unknown>;
}

/** A body, path or query that fails its schema: HTTP 422 with {detail: [...]}. */
export class RequestValidationError extends Error {
  override readonly name = 'RequestValidationError';
  constructor(readonly detail: ValidationDetail[]) {
    super(detail[0]?.msg ?? 'validation failed');
  }
}
