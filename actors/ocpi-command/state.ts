import Type, { type Static } from '#typebox';
import { ChargerCommand } from '../../src/ocpp/domain.js';
import { OcpiCommandType } from './protocol.js';

/** One OCPI command's life: new, sent to the charge point, settled (its result queued for the partner). */
export const OcpiCommandState = Type.Object({
  status: Type.Union([Type.Literal('new'), Type.Literal('sent'), Type.Literal('settled')]),
  partner_key: Type.String(),
  version: Type.Union([Type.Literal('2.1.1'), Type.Literal('2.2.1')]),
  command: Type.Union([OcpiCommandType, Type.Literal('')]),
  response_url: Type.String(),
  charge_point_id: Type.String(),
  charger_command: Type.Union([ChargerCommand, Type.Null()]),
  /** the charge point's id of the call */
  call_id: Type.Union([Type.String(), Type.Null()]),
  /** the charger's answer (Accepted, Rejected, Unlocked, ...) or timeout/failed/expired */
  charger_status: Type.Union([Type.String(), Type.Null()]),
  /** the OCPI result sent to the partner */
  result: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.Integer(),
  settled_at: Type.Union([Type.Integer(), Type.Null()]),
  /** RESERVE_NOW: when the partner was told CANCELED_RESERVATION (the CPO cancelled it) */
  canceled_at: Type.Optional(Type.Integer()),
});
export type OcpiCommandState = Static<typeof OcpiCommandState>;

export function initialOcpiCommandState(): OcpiCommandState {
  return {
    status: 'new',
    partner_key: '',
    version: '2.2.1',
    command: '',
    response_url: '',
    charge_point_id: '',
    charger_command: null,
    call_id: null,
    charger_status: null,
    result: null,
    created_at: 0,
    settled_at: null,
  };
}

/** The OCPI 2.2.1 CommandResultType of a charger's answer to a command (docs/ROAMING.md "Commands"). */
export type CommandResult =
  | 'ACCEPTED'
  | 'CANCELED_RESERVATION'
  | 'EVSE_OCCUPIED'
  | 'EVSE_INOPERATIVE'
  | 'FAILED'
  | 'NOT_SUPPORTED'
  | 'REJECTED'
  | 'TIMEOUT'
  | 'UNKNOWN_RESERVATION';

const ANSWERS: Record<string, CommandResult> = {
  Accepted: 'ACCEPTED',
  Unlocked: 'ACCEPTED',
  Rejected: 'REJECTED',
  Occupied: 'EVSE_OCCUPIED',
  Faulted: 'EVSE_INOPERATIVE',
  Unavailable: 'EVSE_INOPERATIVE',
  UnlockFailed: 'FAILED',
  NotSupported: 'NOT_SUPPORTED',
  OngoingAuthorizedTransaction: 'REJECTED',
  UnknownConnector: 'REJECTED',
  timeout: 'TIMEOUT',
  failed: 'FAILED',
  expired: 'FAILED',
};

/**
 * A charger's CALLERROR that says it does not do the action: OCPP-J "NotImplemented: Requested
 * Action is not known by receiver", "NotSupported: Requested Action is recognized but not supported
 * by the receiver" (1.6 section 4.2.3; 2.0.1 part 4 section 4.3)
 */
const CANNOT = new Set(['NotImplemented', 'NotSupported']);

/**
 * The result of `command` from the charger's status word (or timeout/failed/expired), and the
 * error code of its CALLERROR when it answered with one.
 */
export function resultOf(
  command: OcpiCommandState['command'],
  chargerStatus: string,
  errorCode?: string,
): CommandResult {
  // OCPP CancelReservation answers Rejected when it holds no reservation of that id
  if (command === 'CANCEL_RESERVATION' && chargerStatus === 'Rejected') return 'UNKNOWN_RESERVATION';
  if (errorCode !== undefined && CANNOT.has(errorCode)) return 'NOT_SUPPORTED';
  return ANSWERS[chargerStatus] ?? 'FAILED';
}

/** 2.1.1 has fewer results (CommandResponseType): the rest are REJECTED there. */
export function result211Of(result: CommandResult): 'ACCEPTED' | 'REJECTED' | 'NOT_SUPPORTED' | 'TIMEOUT' {
  if (result === 'ACCEPTED' || result === 'NOT_SUPPORTED' || result === 'TIMEOUT') return result;
  return 'REJECTED';
}
