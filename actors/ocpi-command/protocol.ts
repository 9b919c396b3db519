import Type, { type Static } from '#typebox';
import { ChargerCommand } from '../../src/ocpp/domain.js';
import { defineProtocol } from '../../src/runtime/protocol.js';
import { ChargePointCommandResult, CommandAuthorization } from '../charge-point/protocol.js';

/**
 * The command actor's protocol (actor.ts): `ocpi-command/<uuid>`, one per OCPI command a partner
 * eMSP sent us that goes to one of our chargers (docs/ROAMING.md "Commands"). The commands
 * Receiver starts it with `start`; the charge point tells it the charger's answer
 * (`charge-point-command-result`, durably); a reminder ends it with TIMEOUT when no answer came.
 */

/** how long `start` waits for the charge point to take the call (whoever asks `start` waits longer) */
export const HAND_OVER_MS = 10_000;

export const OcpiCommandType = Type.Union([
  Type.Literal('START_SESSION'),
  Type.Literal('STOP_SESSION'),
  Type.Literal('RESERVE_NOW'),
  Type.Literal('CANCEL_RESERVATION'),
  Type.Literal('UNLOCK_CONNECTOR'),
]);

export const StartCommand = Type.Object({
  op: Type.Literal('start'),
  /** the partner the result goes to (its outbox) */
  partner_key: Type.String(),
  version: Type.Union([Type.Literal('2.1.1'), Type.Literal('2.2.1')]),
  command: OcpiCommandType,
  response_url: Type.String(),
  charge_point_id: Type.String(),
  charger_command: ChargerCommand,
  /** seconds after which the result is TIMEOUT when the charger has not answered */
  timeout_s: Type.Integer({ minimum: 1 }),
  /** START_SESSION, RESERVE_NOW: the token the eMSP authorized, for the transaction that follows */
  authorization: Type.Optional(CommandAuthorization),
});

export const OcpiCommandMessage = Type.Union([
  StartCommand,
  /** the charge point's settlement of the call */
  ChargePointCommandResult,
  Type.Object({ op: Type.Literal('timeout') }),
  /** RESERVE_NOW: the CPO's operator cancelled the reservation (its charger accepted the cancel) */
  Type.Object({ op: Type.Literal('reservation-canceled') }),
]);
export type OcpiCommandMessage = Static<typeof OcpiCommandMessage>;

/** `start`: whether the command reached the charge point (ACCEPTED) or why not. Other messages: null. */
export type OcpiCommandReply = { accepted: true } | { accepted: false; reason: string } | null;

export const ocpiCommandProtocol = defineProtocol<OcpiCommandReply>()({
  kind: 'ocpi-command',
  messages: OcpiCommandMessage,
});
