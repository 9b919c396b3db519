import Type, { type Static } from '#typebox';
import {
  BootHardware,
  ChargerCommand,
  ChargerEvent,
  ProtocolName,
  RegistrationStatus,
  QueuedCommand,
  type ChargerEventOutcome,
  type ConnectedReply,
} from '../../src/ocpp/domain.js';
import { defineProtocol } from '../../src/runtime/protocol.js';

/**
 * The charge-point actor's protocol: what the OCPP endpoint, the `/v1` API and other actors send
 * it, what each message is answered with, and its state (the `get` reply, also read from the
 * runtime's state table by the `/v1` API). Callers import this, not the actor.
 */

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const ConnectorStatus = Type.Object({
  evse_id: Type.Integer(),
  connector_id: Type.Integer(),
  status: Type.String(),
  error_code: Nullable(Type.String()),
  /** 1.6 StatusNotification `info`, `vendorId` and `vendorErrorCode` of the last report, when it had them */
  info: Type.Optional(Type.String()),
  vendor_id: Type.Optional(Type.String()),
  vendor_error_code: Type.Optional(Type.String()),
  updated_at: Type.String(),
  /** when the report arrived (ms; absent in states from before): a report after a reboot is not outranked by one before it */
  received_at: Type.Optional(Type.Integer()),
});

/**
 * A transaction in progress, kept in state so that retries and meter values need no reads. What
 * changes with every meter value (the last reading, the 2.0.1 seqNo) lives in the session row
 * only, so a meter value does not rewrite the state. States stored before carry `meter_last_wh`
 * and `seq_nos` here too; they are ignored.
 */
/**
 * The OCPI session of a transaction on a linked EVSE with a partner's token (docs/ROAMING.md
 * "Sessions"): what every push of it is made of. `null`: not roamed (no link, not a partner's
 * token); absent: not known yet (a 2.0.1 transaction that has no token yet).
 */
/** An OCPI token as a roamed session names it (its `cdr_token`). */
const SessionToken = Type.Object({
  country_code: Type.String(),
  party_id: Type.String(),
  uid: Type.String(),
  type: Type.String(),
  contract_id: Type.String(),
});

/**
 * A partner's START_SESSION as the start call carries it: the token the eMSP authorized, and its
 * authorization_reference. The transaction that follows the call is that eMSP's, whoever else
 * holds a token of the same uid (docs/ROAMING.md "Commands").
 */
export const CommandAuthorization = Type.Object({
  token: SessionToken,
  authorization_reference: Type.Optional(Type.String()),
});
export type CommandAuthorization = Static<typeof CommandAuthorization>;

const Reservation = Type.Object({
  reservation_id: Type.Integer(),
  evse_id: Nullable(Type.Integer()),
  id_tag: Type.String(),
  expiry_date: Type.String(),
  status: Type.String(),
  /**
   * a partner's RESERVE_NOW: the token it authorized and its authorization_reference; its start is
   * that eMSP's, billed as COMMAND (authorization.ts `reservationFor`)
   */
  authorization: Type.Optional(CommandAuthorization),
  /** when the charger accepted it (epoch ms; absent in states stored before) */
  reserved_at: Type.Optional(Type.Integer()),
  /** a partner's: the address of its RESERVE_NOW's command actor, told when the operator cancels it */
  notify: Type.Optional(Type.String()),
});

const RoamedTransaction = Type.Object({
  token: SessionToken,
  auth_method: Type.Union([Type.Literal('AUTH_REQUEST'), Type.Literal('COMMAND'), Type.Literal('WHITELIST')]),
  authorization_reference: Type.Optional(Type.String()),
  location_id: Type.String(),
  evse_uid: Type.String(),
  connector_id: Type.String(),
  started_at: Type.Integer(),
  kwh: Type.Number(),
  /** when the session was last written for the eMSP (epoch ms) */
  pushed_at: Type.Integer(),
});

/**
 * What the answer for a transaction's token said beyond its status, which a later event naming
 * the same token, or its start delivered again, is answered again (actor.ts `tokenNamed`,
 * `started`): the charger may not cache it (`each_use`), its group; absent when neither.
 */
const IdTagAnswer = Type.Object({
  each_use: Type.Optional(Type.Literal(true)),
  group_id: Type.Optional(Type.String()),
});

const OpenTransaction = Type.Object({
  transaction_id: Type.String(),
  session_id: Type.String(),
  dedupe_key: Type.String(),
  evse_id: Type.Integer(),
  meter_start_wh: Nullable(Type.Number()),
  /**
   * `meter_start_wh` is a later reading taken as the first (an update's, or the earliest of several
   * the charger did not name Transaction.Begin): a Begin reading below it, sent later, replaces it
   */
  meter_start_guessed: Type.Optional(Type.Literal(true)),
  /**
   * the lowest register reading an update reported (Wh): the register only grows, so no reading
   * above it is the transaction's first (transactions.ts `correctedStart`)
   */
  low_wh: Type.Optional(Type.Number()),
  /**
   * a reading the charger named Transaction.Begin while the transaction ran (the earliest
   * stamped): the end decides whether it corrects `meter_start_wh` (transactions.ts `correctsStart`)
   */
  named_begin: Type.Optional(
    Type.Object({ wh: Type.Number(), timestamp: Type.String(), named: Type.Optional(Type.Literal(true)) }),
  ),
  /** when the charger says it started (epoch ms); absent in states stored before */
  started_at: Type.Optional(Type.Integer()),
  ocpi: Type.Optional(Nullable(RoamedTransaction)),
  /**
   * the last token the charger named for it and the authorization status it was answered; absent
   * in states stored before, and until a token is named
   */
  id_tag: Type.Optional(Type.String()),
  id_tag_status: Type.Optional(Type.String()),
  /**
   * what the answer for `id_tag` said beyond its status, which a later event naming the same
   * token is answered again (actor.ts `tokenNamed`): the charger may not cache it (`each_use`),
   * its group; absent when neither
   */
  id_tag_answer: Type.Optional(IdTagAnswer),
});

/** A CSMS-to-charger call waiting for its turn or for the charger's answer. */
const OutboundCall = Type.Object({
  command_id: Type.String(),
  /** as sent, but a new password only as its hash (the password waits in memory: ports.ts PasswordPort) */
  command: QueuedCommand,
  queued_at: Type.Integer(),
  /** set while it is the one outstanding call (OCPP-J: at most one per direction) */
  sent_at: Nullable(Type.Integer()),
  /** the connection it was sent on; a call sent on an older connection has no answer coming */
  connection: Nullable(Type.String()),
  /** actor address that gets the final outcome (durably), e.g. an OCPI command actor */
  notify: Type.Optional(Type.String()),
  /** not sent after this time (ms): the partner was told its command timed out */
  expires_at: Type.Optional(Type.Integer()),
  /** a partner's START_SESSION: whose the transaction that follows is */
  authorization: Type.Optional(CommandAuthorization),
});

/**
 * A call sent on a connection that closed before the charger answered: OCPP-J answers a call on
 * the connection it came on, so no answer can come. The actor records it so when the charger
 * connects again (`onConnected`); a read while the charger is offline shows it so at once.
 */
export const CONNECTION_CLOSED_DETAIL = 'connection closed before the answer';

/** a queued command that could not be sent for this long is dropped rather than sent late */
export const COMMAND_EXPIRY_MS = 120_000;

/** Why a queued command expired: the charger was not there to take it in time. */
export const NOT_SENT_DETAIL = `not sent within ${COMMAND_EXPIRY_MS / 1000} s: the charger was offline or busy`;

/**
 * A command record as a read shows it: a call still sent to a charger that is offline has failed,
 * and one queued longer than COMMAND_EXPIRY_MS has expired. The actor records both so when the
 * charger connects again, which one that never comes back never does: its reset showed `queued`
 * for good. The expiry holds for a connected charger too: its queue moves when the call ahead is
 * answered or times out (30 s), and a call queued past its expiry is dropped then, never sent; it
 * showed `queued` until then, up to 30 s after it had expired.
 */
export function recordAsSeen<R extends { status: string; detail: string | null; updated_at: string }>(
  record: R,
  online: boolean,
  now = Date.now(),
): R {
  if (record.status === 'sent')
    return online ? record : { ...record, status: 'failed', detail: CONNECTION_CLOSED_DETAIL };
  const queuedAt = Date.parse(record.updated_at);
  if (record.status === 'queued' && now - queuedAt > COMMAND_EXPIRY_MS)
    // updated when it expired, not when it was queued
    return {
      ...record,
      status: 'expired',
      detail: NOT_SENT_DETAIL,
      updated_at: new Date(queuedAt + COMMAND_EXPIRY_MS).toISOString(),
    };
  return record;
}

const CommandRecord = Type.Object({
  command_id: Type.String(),
  kind: Type.String(),
  /** queued, sent, then the charger's answer (Accepted, Rejected, ...) or timeout / failed / expired */
  status: Type.String(),
  detail: Nullable(Type.String()),
  updated_at: Type.String(),
  /** the charger's reply (GetConfiguration, GetVariables, ...) is stored (csms_command_reply) */
  has_reply: Type.Optional(Type.Boolean()),
});

export const ChargePointState = Type.Object({
  protocol: Nullable(ProtocolName),
  /** the status of the last BootNotification reply (registration.ts); absent in states from before: Accepted once booted */
  registration: Type.Optional(RegistrationStatus),
  /** the boot policy as last heard (with a connection, or the operator's change); absent: Accepted */
  boot_policy: Type.Optional(RegistrationStatus),
  boot: Nullable(
    Type.Object({
      vendor: Type.String(),
      model: Type.String(),
      serial_number: Nullable(Type.String()),
      firmware_version: Nullable(Type.String()),
      booted_at: Type.String(),
      /** SIM, meter, 1.6 charge box serial (absent: the charger told none) */
      hardware: Type.Optional(BootHardware),
    }),
  ),
  connectors: Type.Array(ConnectorStatus),
  reservations: Type.Array(Reservation),
  transactions: Type.Array(OpenTransaction),
  /**
   * the last few finished starts, so a late retry of a StartTransaction still gets its id, with
   * their start time, so that a 2.0.1 Started delivered again after its Ended opens nothing
   * (transactions.ts `retriedStart`); of a transaction opened from a later event (its Started not
   * arrived), its session and end instead, so that a Started delivered after its Ended is applied
   * to it (transactions.ts `endedAdopted`), and
   * whether it is roamed (its eMSP has its session and CDR: a token arriving later roams nothing)
   */
  finished: Type.Array(
    Type.Object({
      dedupe_key: Type.String(),
      transaction_id: Type.String(),
      session_id: Type.Optional(Type.String()),
      started_at: Type.Optional(Type.Integer()),
      ended_at: Type.Optional(Type.Number()),
      roamed: Type.Optional(Type.Literal(true)),
      /** how its start's token was answered: a retry of the start gets the same answer */
      id_tag_status: Type.Optional(Type.String()),
      /** and what that answer said beyond its status (its cache expiry, its group) */
      id_tag_answer: Type.Optional(IdTagAnswer),
      /** the token its end named and how it was answered: the end delivered again gets the same */
      ended_by: Type.Optional(
        Type.Object({ id_tag: Type.String(), status: Type.String(), answer: Type.Optional(IdTagAnswer) }),
      ),
    }),
  ),
  next_transaction_id: Type.Integer(),
  next_remote_start_id: Type.Integer(),
  outbound: Type.Array(OutboundCall),
  commands: Type.Array(CommandRecord),
  /** the last status each long operation reported (firmware, diagnostics, log upload) */
  operations: Type.Optional(
    Type.Record(
      Type.String(),
      Type.Object({ status: Type.String(), request_id: Nullable(Type.Integer()), updated_at: Type.String() }),
    ),
  ),
  /**
   * Which EVSEs are EVSEs of our OCPI locations (docs/ROAMING.md "EVSE links"), read from the
   * links table when it changes; absent until first read.
   */
  /**
   * The starts sent to the charger lately (remote start, an OCPI START_SESSION): a transaction
   * that follows one of them with its token was started by that command.
   */
  recent_starts: Type.Optional(
    Type.Array(
      Type.Object({
        id_tag: Type.String(),
        evse_id: Nullable(Type.Integer()),
        remote_start_id: Type.Integer(),
        at: Type.Integer(),
        /** an OCPI command (a partner's), not the operator */
        roaming: Type.Boolean(),
        /** the start command's id (a session that follows it names it) */
        command_id: Type.Optional(Type.String()),
        /** a partner's START_SESSION: the token it authorized */
        authorization: Type.Optional(CommandAuthorization),
        /** the dedupe key of the transaction start that followed it: it starts no other */
        used_by: Type.Optional(Type.String()),
      }),
    ),
  ),
  /** the last authorizations of id tags (authorization.ts), kept a few minutes */
  recent_auths: Type.Optional(
    Type.Array(
      Type.Object({
        id_tag: Type.String(),
        at: Type.Integer(),
        /** the token as the answer found it (authorization.ts `tokenState`): the answer holds while it is so */
        token: Type.Optional(Type.String()),
        decision: Type.Object({
          status: Type.String(),
          reason: Type.String(),
          authorization_reference: Type.Optional(Type.String()),
          real_time: Type.Optional(Type.Boolean()),
          group_id: Type.Optional(Type.String()),
          each_use: Type.Optional(Type.Boolean()),
          allowed_at: Type.Optional(Type.Object({ location_id: Type.String(), evse_uids: Type.Array(Type.String()) })),
        }),
      }),
    ),
  ),
  evse_links: Type.Optional(
    Type.Array(Type.Object({ evse_number: Type.Integer(), location_id: Type.String(), evse_uid: Type.String() })),
  ),
});
export type ChargePointState = Static<typeof ChargePointState>;

export const ChargePointMessage = Type.Union([
  Type.Object({
    type: Type.Literal('connected'),
    protocol: ProtocolName,
    /**
     * the version it is registered with: a charger never seen before that connects speaking the
     * other one is recorded as speaking it at once, not at its first event (a Heartbeat is none)
     */
    registered: Type.Optional(ProtocolName),
    connection: Type.String(),
    /** the charger's boot policy as the login read it (its own, else OCPP_BOOT_POLICY) */
    policy: RegistrationStatus,
  }),
  Type.Object({ type: Type.Literal('event'), protocol: ProtocolName, event: ChargerEvent }),
  Type.Object({
    type: Type.Literal('command'),
    command: ChargerCommand,
    /** actor address that receives a ChargePointCommandResult once the charger answered (or did not) */
    notify: Type.Optional(Type.String()),
    /** a call still queued at this time (ms) is dropped, settled `expired`, not sent late */
    expires_at: Type.Optional(Type.Integer()),
    /** a partner's START_SESSION: the token the eMSP authorized, for the transaction that follows */
    authorization: Type.Optional(CommandAuthorization),
  }),
  Type.Object({
    type: Type.Literal('answer'),
    command_id: Type.String(),
    status: Type.String(),
    detail: Nullable(Type.String()),
    /** the charger answered with a CALLERROR: its error code (NotSupported, NotImplemented, ...) */
    error_code: Type.Optional(Type.String()),
    /** the charger's reply, for the commands whose answer carries data (COMMANDS_WITH_DATA) */
    reply: Type.Optional(Type.Unknown()),
  }),
  Type.Object({ type: Type.Literal('get') }),
  /** the operator removed the charge point: its socket is closed and its state starts over */
  Type.Object({ type: Type.Literal('retire') }),
  /** the operator changed the charger's boot policy (the effective one: its own, else the default) */
  Type.Object({ type: Type.Literal('boot-policy-changed'), policy: RegistrationStatus }),
  /** the operator linked or unlinked an EVSE: read the links again */
  Type.Object({ type: Type.Literal('links-changed') }),
  /**
   * a roamed session's energy waited out ROAMING_SESSION_PUSH_MS with no later reading to carry
   * it: sent now (an in-memory timer of the actor, transactions.ts `onSessionPushDue`)
   */
  Type.Object({ type: Type.Literal('session-push-due'), session_id: Type.String() }),
]);
export type ChargePointMessage = Static<typeof ChargePointMessage>;

/**
 * Sent durably (dedupe key `charge-point-command:<command_id>`) to the `notify` address of a
 * command once it is settled: the charger's status word (Accepted, Rejected, Unlocked, ...) or
 * timeout / failed / expired. A schema, so that a protocol that takes it (an OCPI command's)
 * includes it as it is.
 */
export const ChargePointCommandResult = Type.Object({
  type: Type.Literal('charge-point-command-result'),
  charge_point_id: Type.String(),
  command_id: Type.String(),
  kind: Type.String(),
  status: Type.String(),
  detail: Nullable(Type.String()),
  /** `failed` because the charger answered with a CALLERROR: its error code */
  error_code: Type.Optional(Type.String()),
});
export type ChargePointCommandResult = Static<typeof ChargePointCommandResult>;

export interface CommandAccepted {
  command_id: string;
  status: string;
  /** why a command was refused as it came (a full queue: outbound-queue.ts `queueFull`) */
  detail?: string;
}

/** What each message of a charge point is answered with, by its `type`. */
export interface ChargePointReplies {
  /** the socket of `connection` is now the charger's: whether it has booted before */
  connected: ConnectedReply;
  event: ChargerEventOutcome;
  command: CommandAccepted;
  /** the charger's answer to an outbound call (a tell from the actor to itself) */
  answer: null;
  get: ChargePointState;
  'links-changed': null;
  retire: null;
  'boot-policy-changed': null;
  'session-push-due': null;
}

export const chargePointProtocol = defineProtocol<ChargePointReplies>()({
  kind: 'charge-point',
  discriminant: 'type',
  messages: ChargePointMessage,
});
