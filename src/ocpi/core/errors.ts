import { OcpiError, type HttpError, type OcpiFieldError } from '../../gateway/errors.js';
import type { ErrorRenderer } from '../../gateway/route-table.js';
import type { OcpiVersion } from './envelope.js';

/**
 * The OCPI errors handlers throw (OCPI 2.2.1 status_codes.asciidoc; docs/SECURITY.md "One error
 * shape per surface"), and `ocpiErrors`, the error renderer every OCPI mount declares: any error
 * under an OCPI prefix, the router's own 404, 405 and 413 included, answers as an OCPI envelope.
 */

/**
 * Where the invalid-parameters error points its `doc_url`: the status codes of the mount's
 * version (2.2.1 where no version applies, as under `/ocpi` itself).
 */
export const OCPI_ERRORS_DOC_URLS: Readonly<Record<OcpiVersion, string>> = {
  '2.2.1': 'https://github.com/ocpi/ocpi/blob/2.2.1/status_codes.asciidoc#status_codes_2xxx_client_errors',
  '2.1.1': 'https://github.com/ocpi/ocpi/blob/release-2.1.1-bugfixes/status_codes.md#2xxx-client-errors',
};

/**
 * OCPI status codes of the errors that are not a handler's own (docs/SECURITY.md): an unknown
 * path (404), a wrong method (405), a body too large (413) or any other refused request are 2000
 * "generic client error" on both versions; a failure of ours is 3000 "generic server error"
 * (OCPI 2.2.1 status_codes.asciidoc, 2xxx and 3xxx).
 */
export const OCPI_GENERIC_CLIENT_ERROR = 2000;
export const OCPI_GENERIC_SERVER_ERROR = 3000;

/**
 * The OCPI error envelope of a mount of `version`: status_code, status_message, timestamp;
 * doc_url and errors on 2001.
 */
export function ocpiErrorsOf(version: OcpiVersion = '2.2.1'): ErrorRenderer {
  const docUrl = OCPI_ERRORS_DOC_URLS[version];
  return (error) => {
    const err = error instanceof OcpiError ? error : ocpiFromHttp(error);
    return {
      status: err.httpStatus,
      body: {
        status_code: err.statusCode,
        status_message: err.statusMessage,
        timestamp: new Date().toISOString(),
        ...(err.errors ? { doc_url: docUrl, errors: err.errors } : {}),
      },
    };
  };
}

/** The envelope where no version applies (`/ocpi` itself). */
export const ocpiErrors: ErrorRenderer = ocpiErrorsOf();

function ocpiFromHttp(err: HttpError): OcpiError {
  return new OcpiError(
    err.status,
    err.status >= 500 ? OCPI_GENERIC_SERVER_ERROR : OCPI_GENERIC_CLIENT_ERROR,
    err.message,
  );
}

/** 2001, delivered as HTTP 200 (docs/SECURITY.md "One error shape per surface"). */
export function invalidParameters(errors: OcpiFieldError[]): OcpiError {
  return new OcpiError(200, 2001, 'Invalid or missing parameters', errors);
}

/** The caller named a party its token is not bound to (docs/OCPI.md "Who sees what"). */
export function identityMismatch(field: 'country_code' | 'party_id', given: string, bound: string): OcpiError {
  return invalidParameters([
    {
      field,
      message: `${field} ${given} does not match the identity tied to the token (${bound})`,
      type: 'value_error.identity_mismatch',
    },
  ]);
}

/** Credentials naming the onboarded party only in another role than the one it was onboarded in. */
export function roleMismatch(
  party: { country_code: string; party_id: string; role: string },
  named: string[],
): OcpiError {
  return invalidParameters([
    {
      field: 'roles',
      message: `${party.country_code}-${party.party_id} was onboarded as ${party.role}; the roles name it as ${named.join(', ')}`,
      type: 'value_error.role_mismatch',
    },
  ]);
}

/** Credentials listing a party and role another partner's link holds (docs/OCPI.md "Platforms and hubs"). */
export function partyTaken(party: { country_code: string; party_id: string; role: string }): OcpiError {
  return invalidParameters([
    {
      field: 'roles',
      message: `${party.country_code}-${party.party_id} (${party.role}) belongs to another partner of ours`,
      type: 'value_error.party_taken',
    },
  ]);
}

/** A PUT whose body names its own id must name the id of the path. */
export function idMismatch(field: string, pathValue: string, bodyValue: string): OcpiError {
  return invalidParameters([
    {
      field,
      message: `path ${field} ${pathValue} differs from body ${field} ${bodyValue}`,
      type: 'value_error.id_mismatch',
    },
  ]);
}

/** 401: status_code 2001 on 2.2.1 endpoints, 2000 on 2.1.1 endpoints. */
export function unauthorized(version: OcpiVersion): OcpiError {
  return new OcpiError(401, version === '2.2.1' ? 2001 : 2000, 'Unauthorized');
}

/**
 * 403: a valid token of a partner whose role this interface does not serve (an eMSP partner on
 * our eMSP mount, a CPO partner on our CPO mount). OCPI names no status for it; 2000 is its
 * generic client error (docs/OCPI.md "Mounts").
 */
export function wrongRole(
  serves: 'CPO' | 'EMSP',
  caller: 'CPO' | 'EMSP',
  routedAs?: { country_code: string; party_id: string },
): OcpiError {
  const role = (r: 'CPO' | 'EMSP') => (r === 'CPO' ? 'a CPO' : 'an EMSP');
  // a platform's party chosen by its OCPI-from headers: that party has the other role, not the token
  const who = routedAs
    ? `the party the request acts as (${routedAs.country_code}-${routedAs.party_id}, OCPI-from) is ${role(caller)}`
    : `the token is of ${role(caller)} partner`;
  return new OcpiError(403, OCPI_GENERIC_CLIENT_ERROR, `this interface serves ${serves} partners; ${who}`);
}

export function unknownLocation(): OcpiError {
  return new OcpiError(404, 2003, 'Unknown location');
}

/** An EVSE or connector not in the location (2003, as the location itself). */
export function unknownLocationPart(what: 'EVSE' | 'connector'): OcpiError {
  return new OcpiError(404, 2003, `Unknown ${what}`);
}

/**
 * 2003 for a place a request's body names (a command's location, EVSE or connector): HTTP 200,
 * as the endpoint exists; `what` names the unknown part (`location L1`, `EVSE E9 at location L1`).
 */
export function unknownPlace(what: string): OcpiError {
  return new OcpiError(200, 2003, `Unknown ${what}`);
}

/** 404 with 2000: OCPI has no status of its own for an unknown tariff or session. */
export function unknownObject(what: 'tariff' | 'session' | 'CDR' | 'command'): OcpiError {
  return new OcpiError(404, OCPI_GENERIC_CLIENT_ERROR, `Unknown ${what}`);
}

/**
 * A session whose EVSE is not CHARGING_PROFILE_CAPABLE takes no charging preferences: the 404
 * mod_sessions asks for, saying why (an "Unknown session" sent an eMSP looking for a session
 * that exists).
 */
export function noChargingPreferences(sessionId: string): OcpiError {
  return new OcpiError(
    404,
    OCPI_GENERIC_CLIENT_ERROR,
    `The EVSE of session ${sessionId} is not CHARGING_PROFILE_CAPABLE: it takes no charging preferences`,
  );
}

/**
 * 409 with 2000: a command result POSTed for a command its CPO answered `answered` (not ACCEPTED);
 * OCPI has a result follow only an ACCEPTED command, so taking it would show both.
 */
export function noResultExpected(answered: string): OcpiError {
  return new OcpiError(409, OCPI_GENERIC_CLIENT_ERROR, `No result is expected: the command was answered ${answered}`);
}

/**
 * 404 for a token we do not hold: 2004 on 2.2.1, 2000 on 2.1.1, whose status codes stop at 2003
 * (2.1.1 status_codes.md; 2004 "Unknown Token" came with 2.2).
 */
export function unknownToken(version: OcpiVersion = '2.2.1'): OcpiError {
  return version === '2.1.1'
    ? new OcpiError(404, OCPI_GENERIC_CLIENT_ERROR, 'Unknown token')
    : new OcpiError(404, 2004, 'Resource not found');
}

/** 405 with an OCPI body: POST /credentials when registered, PUT /credentials with Token A. */
export function credentialsMethodNotAllowed(message: string): OcpiError {
  return new OcpiError(405, 2000, message);
}

/** 3001: the partner's versions URL or version details could not be used. */
export function unableToUseClientApi(message: string): OcpiError {
  return new OcpiError(200, 3001, `Unable to use the client's API: ${message}`);
}

/** 3002: no OCPI version in common with the partner. */
export function unsupportedVersion(message: string): OcpiError {
  return new OcpiError(200, 3002, `Unsupported version: ${message}`);
}

/** 3003: the partner's version details list no endpoint we could use (no mutual module). */
export function noMatchingEndpoints(message: string): OcpiError {
  return new OcpiError(200, 3003, `No matching endpoints: ${message}`);
}

export function unknownVersion(version: string): OcpiError {
  return new OcpiError(404, 3002, `Unsupported version ${version}`);
}
