/**
 * Errors a request handler may throw. The error mapper (middleware/error-mapper.ts) is the only
 * code that turns them into response bodies.
 */

/** A plain HTTP error of the management surface and the service endpoints. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
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
 * An OCPI error envelope. `httpStatus` 200 with status_code 2001 is the spec's "invalid or
 * missing parameters" (documented as 400, delivered as HTTP 200).
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
