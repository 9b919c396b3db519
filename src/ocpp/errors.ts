/**
 * The error codes a CALLERROR may carry. 1.6-J (section 4.2.3) and 2.0.1 (OCPP-J part 4,
 * section 4.3) use different names for the same ideas: 1.6 says FormationViolation and spells
 * OccurenceConstraintViolation with one "r"; 2.0.1 says FormatViolation and adds
 * RpcFrameworkError and MessageTypeNotSupported.
 */
export type OcppErrorKind =
  | 'NotImplemented'
  | 'NotSupported'
  | 'InternalError'
  | 'ProtocolError'
  | 'SecurityError'
  | 'FormatViolation'
  | 'PropertyConstraintViolation'
  | 'OccurrenceConstraintViolation'
  | 'TypeConstraintViolation'
  | 'GenericError'
  | 'RpcFrameworkError'
  | 'MessageTypeNotSupported';

export type OcppVersion = 'ocpp1.6' | 'ocpp2.0.1';

/** The wire name of an error kind in one protocol version. */
export function errorCodeFor(version: OcppVersion, kind: OcppErrorKind): string {
  if (version === 'ocpp1.6') {
    switch (kind) {
      case 'FormatViolation':
        return 'FormationViolation';
      case 'OccurrenceConstraintViolation':
        return 'OccurenceConstraintViolation';
      case 'RpcFrameworkError':
        return 'FormationViolation';
      case 'MessageTypeNotSupported':
        return 'NotSupported';
      default:
        return kind;
    }
  }
  return kind;
}

/** Anything an inbound handler throws that should reach the charger as a CALLERROR of this kind. */
export class OcppCallError extends Error {
  override readonly name = 'OcppCallError';
  constructor(
    readonly kind: OcppErrorKind,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** The charger answered a CSMS call with a CALLERROR. */
export class ChargerCallError extends Error {
  override readonly name = 'ChargerCallError';
  readonly code = 'CHARGER_CALL_ERROR';
  constructor(
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
  }
}

/** The charger did not answer a CSMS call in time, or its socket closed first. */
export class ChargerCallTimeoutError extends Error {
  override readonly name = 'ChargerCallTimeoutError';
  readonly code = 'CHARGER_CALL_TIMEOUT';
}

export class ChargerDisconnectedError extends Error {
  override readonly name = 'ChargerDisconnectedError';
  readonly code = 'CHARGER_DISCONNECTED';
}
