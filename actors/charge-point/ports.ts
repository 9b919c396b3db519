import Type, { type Static } from '#typebox';
import type {
  ChargerCommand,
  ChargerEventOutcome,
  DeviceVariable,
  RegistrationStatus,
  ReportEntry,
  SignedMeterReading,
} from '../../src/ocpp/domain.js';
import type { ActorMessenger, DeactivationReason, SqlRunner, WriteStep } from '../../src/runtime/types.js';

/**
 * What the charge-point actor is given by the module hosting it (src/csms/module.ts): the
 * charger's socket, the session table and the change feed, as interfaces. The actor imports no
 * CSMS or OCPP internals (the folder rule of scripts/check-import-cycles.mjs).
 */
export interface ChargePointActorDeps {
  /**
   * The command as a CALL on this process's socket for the charger, in the protocol of that
   * socket; undefined when there is none. `send` puts it on the socket and resolves with the
   * charger's status word: called once the turn that records it as sent has committed. Its answer
   * is waited until `answerBy` (epoch ms: a partner's command's deadline, after which an answer no
   * longer counts) when given, else for the call timeout.
   */
  sendCommand(
    chargePointId: string,
    command: ChargerCommand,
    remoteStartId: number,
  ):
    | { connection: string; action: string; send: (answerBy?: number) => Promise<{ status: string; reply: unknown }> }
    | undefined;
  /** The newest connection won elsewhere (or the process stops): close ours. */
  closeSocket(chargePointId: string, reason: DeactivationReason | 'removed'): void;
  publish(event: CsmsEvent): void;
  /** whether a publish now could reach a live view (false: skip building the event) */
  publishing(): boolean;
  /** the session rows behind GET /v1/sessions */
  sessions: SessionWrites;
  /**
   * The last reading of each of these sessions that has one: where a transaction whose end was
   * lost stopped (transactions.ts `endSuperseded`). Read outside the turn's transaction.
   */
  lastReadings(sessionIds: readonly string[]): Promise<ReadonlyMap<string, LastReading>>;
  /**
   * A finished session of this charger's that `query` names, for a transaction message the state
   * no longer remembers (it keeps the last MAX_FINISHED): transactions.ts `recallFinished`. Read
   * outside the turn's transaction.
   */
  finishedSession(chargePointId: string, query: FinishedSessionQuery): Promise<FinishedSession | undefined>;
  /** a session's energy over time, for the console's chart (GET /v1/sessions/{id}/meter-values) */
  meterSamples: MeterSampleWrites;
  /** the event log and device model behind /v1/charge-points/{id}/events and /device-model */
  reports: ReportWrites;
  /** the local authorization list the charger holds, written when it accepts a SendLocalList */
  localLists: LocalListWrites;
  /** DataTransfer from a charger: the handler registered for its vendor answers (none: UnknownVendorId) */
  dataTransfer(
    chargePointId: string,
    request: { vendor_id: string; message_id: string | null; data: unknown },
  ): Promise<NonNullable<ChargerEventOutcome['data_transfer']>>;
  /** OCPP_HEARTBEAT_INTERVAL_S: the interval of an Accepted BootNotification */
  heartbeatIntervalS: number;
  /** OCPP_AUTH_CACHE_S: how long a charger may cache an accepted id tag (0: not said) */
  authCacheS: number;
  /** OCPP_BOOT_RETRY_INTERVAL_S: the interval of a Pending or Rejected one */
  bootRetryIntervalS: number;
  /** The charger's status was lowered (its boot policy changed): its connection here holds it to `status`. */
  holdConnection(chargePointId: string, status: RegistrationStatus): void;
  /** new HTTP Basic passwords on their way to the charger (docs/CSMS.md "Passwords") */
  passwords: PasswordPort;
  /** OCPP_MAX_OPEN_TRANSACTIONS, read when a start arrives (settings exist once the platform runs) */
  maxOpenTransactions(): number;
  /** our OCPI locations, for the charger's EVSEs linked to them (absent: no roaming) */
  roaming?: RoamingPort;
}

/**
 * The port through which the actor sends a charger its new password without writing it down:
 * the password waits in this process's memory (the state keeps its hash), and the charger's
 * answer decides, in the turn that records it, which password the charger logs in with.
 */
export interface PasswordPort {
  /** keeps the password of a queued command until it is sent; answers its hash */
  hold(commandId: string, password: string): string;
  /** the held password; undefined when this process does not hold it (it restarted meanwhile) */
  get(commandId: string): string | undefined;
  forget(commandId: string): void;
  /** the charger took it: it replaces the old password */
  accepted(chargePointId: string, passwordHash: string): WriteStep;
  /** the charger refused it, or never got it: the old password stays the only one */
  refused(chargePointId: string, passwordHash: string): WriteStep;
}

/** One OCPP EVSE of the charger as an EVSE of one of our OCPI locations (docs/ROAMING.md). */
export interface EvseLink {
  evse_number: number;
  location_id: string;
  evse_uid: string;
}

/** OCPI EvseStatus values an OCPP status maps to (docs/ROAMING.md "Status"). */
export type OcpiEvseStatus =
  'AVAILABLE' | 'BLOCKED' | 'CHARGING' | 'INOPERATIVE' | 'OUTOFORDER' | 'RESERVED' | 'UNKNOWN';

/**
 * The port through which the charge-point actor reaches the roaming bridge (src/roaming/): the
 * links of its EVSEs, and the status of a linked EVSE written into our location and queued for
 * the partners in the turn's transaction, so a status is never acknowledged to the charger
 * before it is sure to reach them.
 */
export interface RoamingPort {
  links(chargePointId: string): Promise<EvseLink[]>;
  /**
   * Whether the charger may have links its actor never read (made before its state kept them):
   * false lets a connect skip reading them (links made since arrive as `links-changed`).
   */
  mayHaveUnreadLinks(chargePointId: string): boolean;
  evseStatus(link: EvseLink, status: OcpiEvseStatus): WriteStep;
  /**
   * the OCPI token a charger's id tag is (ours, or one an eMSP partner pushed us), if any; a 2.0.1
   * idToken's type says which token types it may be (src/roaming/token-types.ts)
   */
  tokenOf(idTag: string, idTagType?: string): Promise<RoamingToken | undefined>;
  /** the OCPI session of a transaction on a linked EVSE, stored and queued for its token's eMSP */
  session(session: RoamingSession): WriteStep;
  /**
   * a meter reading of a roamed transaction, kept for its CDR's charging periods (Wh at epoch ms);
   * at an instant that has one, the higher is kept, unless it is `replace` (a corrected first
   * reading). A `last` one (the end's) is kept at the latest reading's time when that is later.
   */
  sample(sessionId: string, at: number, wh: number, kind?: SampleKind): WriteStep;
  /**
   * a transaction roamed only from a later event (a late start, a late token): the readings the
   * CSMS kept of it before (csms_meter_sample) become its CDR's too
   */
  backfill(sessionId: string): WriteStep;
  /**
   * The highest 2.0.1 seqNo the session row has applied (null: none): an update of a roamed
   * transaction that is not above it changes nothing (the row refuses it; its readings must not
   * reach the eMSP's session and CDR either)
   */
  appliedSeq(sessionId: string): Promise<number | null>;
  /** what the charger of a roamed transaction said of its charging at epoch ms `at` (its state, its current, its power) */
  state(
    sessionId: string,
    at: number,
    state: { charging?: boolean; current_a?: number | undefined; power_kw?: number | undefined },
  ): WriteStep;
  /** a signed register reading of a roamed transaction, for its CDR's `signed_data` (epoch ms `at`) */
  signed(sessionId: string, reading: SignedMeterReading & { at: number }): WriteStep;
  /**
   * After the turn that wrote a roamed session committed: a running one is priced so far, an
   * ended one gets its CDR (in the background; a failure is retried by the CDR's send).
   * `priced` runs once that is done (the live views show the cost).
   */
  sessionWritten(sessionId: string, priced: () => void): void;
  /**
   * Real-time authorization at the token's eMSP; `unanswered` with the reason when it did not
   * answer (in time) or cannot be asked.
   */
  authorize(
    token: RoamingToken,
    where: { location_id: string; evse_uids: string[] } | undefined,
    actors: ActorMessenger,
  ): Promise<
    | {
        allowed: 'ALLOWED' | 'BLOCKED' | 'EXPIRED' | 'NO_CREDIT' | 'NOT_ALLOWED';
        authorization_reference?: string;
        /** where the eMSP allows the token (AuthorizationInfo.location; no EVSE: all of the location) */
        location?: { location_id: string; evse_uids: string[] };
      }
    | { refused: string }
    | { unanswered: string }
  >;
  /** OCPP_UNKNOWN_ID_TAGS: what an id tag that is no token gets */
  unknownIdTags: 'accept' | 'reject';
  /** how often a running session's energy is sent to its eMSP (ROAMING_SESSION_PUSH_MS) */
  sessionPushMs: number;
  /** after the turn committed: what it queued is sent now */
  queued(): void;
}

/** An OCPI token as the charge point needs it: whose it is, and whether it may charge. */
export interface RoamingToken {
  country_code: string;
  party_id: string;
  uid: string;
  type: string;
  contract_id: string;
  valid: boolean;
  whitelist: string;
  /** the OCPI token's group_id: the charger is told it, to let a card of the group stop the charge */
  group_id?: string;
  /** issued by our own eMSP (not roamed: no OCPI session for it) */
  own: boolean;
  /** when we stored its last change (our clock, epoch ms) */
  updated_at?: number;
  /** the last change of the registered eMSP link it came by (none: ours, or no link names its party) */
  link_at?: number;
}

/** What the OCPI session of a transaction is made of (docs/ROAMING.md "Sessions"). */
export interface RoamingSession {
  id: string;
  token: Pick<RoamingToken, 'country_code' | 'party_id' | 'uid' | 'type' | 'contract_id'>;
  auth_method: 'AUTH_REQUEST' | 'COMMAND' | 'WHITELIST';
  authorization_reference?: string;
  location_id: string;
  evse_uid: string;
  connector_id: string;
  started_at: number;
  ended_at: number | null;
  /** null: the energy its CSMS session row holds (a session roamed once it had ended) */
  kwh: number | null;
  status: 'ACTIVE' | 'COMPLETED';
}

/**
 * What the dashboard hears about: something about this charge point (or its session) changed.
 * A schema, since events cross processes over Redis and are checked when they arrive
 * (src/csms/events.ts).
 */
export const CsmsEvent = Type.Object({
  type: Type.Union([Type.Literal('charge-point'), Type.Literal('session')]),
  charge_point_id: Type.String(),
  online: Type.Optional(Type.Boolean()),
  session_id: Type.Optional(Type.String()),
  /** a running transaction's update (its meter values): it neither starts nor ends a session */
  progress: Type.Optional(Type.Literal(true)),
});
export type CsmsEvent = Static<typeof CsmsEvent>;

export interface NewSessionRow {
  id: string;
  charge_point_id: string;
  protocol: string;
  transaction_id: string;
  evse_id: number;
  connector_id: number;
  id_tag: string | null;
  started_at: number;
  meter_start_wh: number | null;
  /** 2.0.1: the Started event's seqNo (the updates that follow must come above it) */
  seq_no: number | null;
  /** the remote start command the transaction followed (2.0.1 by remoteStartId, 1.6 by token and connector) */
  remote_start_command_id: string | null;
}

export interface SessionProgress {
  /**
   * the event's meter reading; absent when it carried none (meter and energy stay). `at` is when
   * it was taken (epoch ms): the row keeps the reading with the latest time, so readings that
   * arrive out of order never lower the last reading or the energy.
   */
  meter?: { start_wh: number | null; last_wh: number; energy_wh: number; at: number };
  /**
   * the row's first reading, replaced (a Begin reading that corrects it) or written without a
   * reading of the event's own (a Begin alone): the energy is counted from it, to the event's
   * reading when it is the row's new last, else to the row's last
   */
  start?: number;
  /** the transaction's token, named for the first time (a 2.0.1 start at plug-in names none) */
  id_tag?: string | null;
  /**
   * `id_tag` replaces the token the row has: the transaction's own was refused, and this one,
   * accepted, authorized it later (transactions.ts `authorizesLate`)
   */
  id_tag_replaces?: true;
  /** the token that stopped it: named by the end, or by an update once the transaction has its token */
  stop_id_tag?: string;
  /**
   * 2.0.1 seqNo. An update applies only when it is above every seqNo applied before (a repeat
   * changes nothing); an end applies whatever its seqNo.
   */
  seq_no?: number | null;
  /** set when the session ends */
  stopped?: { at: number; reason: string | null };
  /** the EVSE and connector of a session that had none (its start named no EVSE) */
  evse?: { evse_id: number; connector_id: number };
}

/**
 * Which finished session a transaction message may be about: one of the transaction id (2.0.1,
 * whose ids a charger may reuse: the latest that started at or before `at`; and when
 * `started_at` is given, only one that started then), or a 1.6 start's fields (its retry gets
 * the same id).
 */
export type FinishedSessionQuery =
  | { transaction_id: string; at?: number; started_at?: number }
  | { connector_id: number; id_tag: string; meter_start_wh: number; started_at: number };

/** A finished session as `finishedSession` finds it (epoch ms). */
export interface FinishedSession {
  transaction_id: string;
  started_at: number;
  stopped_at: number;
}

/** A session's last energy register reading: when it was taken (epoch ms) and its Wh. */
export interface LastReading {
  at: number;
  wh: number;
}

/**
 * The port through which the actor writes charging sessions (deps.sessions). Each write runs in
 * the actor turn's fenced transaction.
 */
export interface SessionWrites {
  insert(tx: SqlRunner, s: NewSessionRow): Promise<void>;
  /** the write of one update or of the end (a meter reading alone merges with other turns') */
  progress(sessionId: string, p: SessionProgress): WriteStep;
  /**
   * The write of a start that arrived after the session was opened from a later event (an
   * adopted transaction): its time, its first reading (the energy is counted from it) and its
   * token when the session has none.
   */
  lateStart(sessionId: string, start: LateStart): WriteStep;
  /**
   * The write that names the remote start a running transaction followed, when the session names
   * none (a 2.0.1 transaction started at plug-in, then by our RequestStartTransaction)
   */
  followed(sessionId: string, commandId: string): WriteStep;
}

/** What a start that arrived late tells of its session (`SessionWrites.lateStart`). */
export interface LateStart {
  started_at: number;
  meter_start_wh: number | null;
  /** the start's token, when the session has none */
  id_tag: string | null;
  /** the start's EVSE, when the session had none (its first event named none) */
  evse: { evse_id: number; connector_id: number } | null;
}

/** The port through which the actor keeps a session's energy register over time (deps.meterSamples). */
/** How a roamed transaction's reading is kept (`RoamingPort.sample`) */
export type SampleKind = 'between' | 'replace' | 'last';

export interface MeterSampleWrites {
  /**
   * The write of a reading (Wh at epoch ms) of a session and what to run once it committed, or
   * undefined when one was kept too recently to keep this one too; a transaction's first and last
   * readings are always kept, and a message's peak above its last reading ('peak').
   */
  sample(
    sessionId: string,
    at: number,
    wh: number,
    which: 'first' | 'start' | 'between' | 'last' | 'peak',
    /**
     * a 2.0.1 update's seqNo: the reading is kept only if the session row has applied no seqNo at
     * or above it (a repeat changes nothing, the chart included); written before the row moves
     */
    seq?: number | null,
  ): { write: WriteStep; kept: () => void } | undefined;
  /** the transaction ended without a reading: nothing more to remember for it */
  forget(sessionId: string): void;
}

/** The port through which the actor records a charger's answer to a SendLocalList (deps.localLists). */
export interface LocalListWrites {
  /** the write for the answer `status` to `update`; undefined when there is nothing to write */
  answered(
    chargePointId: string,
    update: Omit<Extract<ChargerCommand, { kind: 'send-local-list' }>, 'kind'>,
    status: string,
  ): WriteStep | undefined;
}

/** The port through which the actor keeps what chargers report (deps.reports), in its turn. */
export interface ReportWrites {
  append(chargePointId: string, action: string, entries: ReportEntry[]): WriteStep;
  /** rows of the device model, upserted by component, variable and attribute */
  deviceModel(chargePointId: string, requestId: number, variables: DeviceVariable[]): WriteStep;
  /** the reply of an operation that returns data, by its command id */
  reply(chargePointId: string, commandId: string, reply: unknown): WriteStep;
}
