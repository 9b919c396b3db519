import Type, { type Static, type TNumberOptions, type TSchema } from '#typebox';
import type { OcppCall, OcppResponse } from './messages.js';

/**
 * What chargers tell the CSMS, independent of the protocol version. Each version's adapter maps
 * its wire messages onto these (the table in docs/CSMS.md, "Messages handled"); the charge-point
 * actor only sees these.
 */
export const ProtocolName = Type.Union([Type.Literal('ocpp1.6'), Type.Literal('ocpp2.0.1')]);
export type ProtocolName = Static<typeof ProtocolName>;

const Timestamp = Type.String({ description: 'ISO 8601 date-time as the charger sent it' });

/**
 * What a BootNotification tells beyond vendor, model, serial and firmware: the SIM of its modem
 * (1.6 `iccid`, `imsi`; 2.0.1 `modem`), its meter (1.6 `meterType`, `meterSerialNumber`), and a
 * 1.6 charger's `chargeBoxSerialNumber` beside its `chargePointSerialNumber`.
 */
export const BootHardware = Type.Object({
  iccid: Type.Optional(Type.String({ maxLength: 20 })),
  imsi: Type.Optional(Type.String({ maxLength: 20 })),
  meter_type: Type.Optional(Type.String({ maxLength: 25 })),
  meter_serial_number: Type.Optional(Type.String({ maxLength: 25 })),
  charge_box_serial_number: Type.Optional(Type.String({ maxLength: 25 })),
});

export const BootedEvent = Type.Object({
  type: Type.Literal('booted'),
  vendor: Type.String(),
  model: Type.String(),
  serial_number: Type.Union([Type.String(), Type.Null()]),
  firmware_version: Type.Union([Type.String(), Type.Null()]),
  reason: Type.Union([Type.String(), Type.Null()]),
  /** the rest of what the charger tells of itself, when it does */
  hardware: Type.Optional(BootHardware),
});

export const StatusChangedEvent = Type.Object({
  type: Type.Literal('status-changed'),
  /** 0 = the charger as a whole (1.6 connectorId 0) */
  evse_id: Type.Integer({ minimum: 0 }),
  connector_id: Type.Integer({ minimum: 0 }),
  status: Type.String(),
  error_code: Type.Union([Type.String(), Type.Null()]),
  /** 1.6 `info`, `vendorId` and `vendorErrorCode`: the charger's own words for a fault (2.0.1 reports none here) */
  info: Type.Optional(Type.String()),
  vendor_id: Type.Optional(Type.String()),
  vendor_error_code: Type.Optional(Type.String()),
  timestamp: Timestamp,
});

export const AuthorizeRequestedEvent = Type.Object({
  type: Type.Literal('authorize-requested'),
  id_tag: Type.String(),
  /**
   * 2.0.1 idToken `type` (ISO14443, Central, ...): a RequestStartTransaction names its token as
   * Central, so a start without remoteStartId naming a card is no remote start of ours
   */
  id_tag_type: Type.Optional(Type.String()),
});

/** A signed register reading (meter.ts `SignedReading`), for a roamed session's CDR `signed_data`. */
const SignedReading = Type.Object({
  nature: Type.Union([Type.Literal('Start'), Type.Literal('End'), Type.Literal('Intermediate')]),
  encoding_method: Type.String({ maxLength: 36 }),
  public_key: Type.Optional(Type.String({ maxLength: 512 })),
  plain_data: Type.String({ maxLength: 512 }),
  signed_data: Type.String({ maxLength: 5000 }),
  timestamp: Timestamp,
});
export type SignedMeterReading = Static<typeof SignedReading>;

/**
 * What a transaction event says of the charging besides the register: 2.0.1 `chargingState`
 * (Charging: true; SuspendedEV, SuspendedEVSE, EVConnected, Idle: false), and the currents and
 * powers its meter values give (`a`: Current.Import, A; `kw`: Power.Active.Import, kW; each over
 * all phases, either or both an entry), and its signed register readings. A roamed session keeps
 * them for its CDR's periods and `signed_data` (docs/TARIFFS.md "CDRs from transactions").
 */
const ChargingFacts = {
  charging: Type.Optional(Type.Boolean()),
  /** the signed register readings of its meter values (docs/TARIFFS.md "Signed meter values") */
  signed: Type.Optional(Type.Array(SignedReading)),
  currents: Type.Optional(
    Type.Array(
      Type.Object({ a: Type.Optional(Type.Number()), kw: Type.Optional(Type.Number()), timestamp: Timestamp }),
    ),
  ),
};

/** A register reading (Wh) and when the charger took it. */
const TimedReading = Type.Object({ wh: Type.Number(), timestamp: Timestamp });

/** A transaction's earliest reading: `named` when the charger named it Transaction.Begin (meter.ts `RegisterReading`). */
const BeginReading = Type.Object({ wh: Type.Number(), timestamp: Timestamp, named: Type.Optional(Type.Literal(true)) });

/**
 * The earliest register reading an update or end carries, when it carries one (the latest is its
 * `meter_wh`): a 1.6 StopTransaction's `transactionData`, a 2.0.1 TransactionEvent's `meterValue`
 * (readings of several instants: TxEndedMeasurands from Transaction.Begin on, readings queued
 * offline). A transaction whose first reading is not known yet (a Started without one, a start
 * that never arrived) counts its energy from it, and one opened from the event starts at its time.
 * One the charger named Transaction.Begin also corrects a first reading taken before (an update's
 * reading, a 1.6 `meterStart` of 0): charge-point actor, `correctedStart`.
 */
const Begin = { begin: Type.Optional(BeginReading) };

/**
 * The highest register reading a start, an update or an end carries, when it is above the one it
 * ends at (`meter_last`, `meter_wh`: readings of several instants, a register that went back
 * within them: meter.ts `peakAbove`): the energy counts to it, and it is kept among the session's
 * readings.
 */
const Peak = { meter_peak: Type.Optional(TimedReading) };

export const TransactionStartedEvent = Type.Object({
  type: Type.Literal('transaction-started'),
  ...ChargingFacts,
  /** given by the charger (2.0.1); absent when the CSMS allocates it (1.6) */
  transaction_id: Type.Union([Type.String(), Type.Null()]),
  /** what makes a retry of the same start recognisable (1.6: connector, tag, meter, time; 2.0.1: id + seqNo) */
  dedupe_key: Type.String(),
  evse_id: Type.Integer({ minimum: 0 }),
  connector_id: Type.Integer({ minimum: 0 }),
  id_tag: Type.Union([Type.String(), Type.Null()]),
  /**
   * 2.0.1 idToken `type` (ISO14443, Central, ...): a RequestStartTransaction names its token as
   * Central, so a start without remoteStartId naming a card is no remote start of ours
   */
  id_tag_type: Type.Optional(Type.String()),
  /** the earliest register reading the start carries (the transaction's energy counts from it) */
  meter_start_wh: Type.Union([Type.Number(), Type.Null()]),
  /**
   * a later register reading the start also carries (2.0.1: a Started whose meterValue holds
   * readings of several instants): applied as the transaction's first progress
   */
  meter_last: Type.Optional(TimedReading),
  ...Peak,
  timestamp: Timestamp,
  seq_no: Type.Union([Type.Integer(), Type.Null()]),
  /** 2.0.1 RequestStartTransaction's remoteStartId when the start was remote */
  remote_start_id: Type.Union([Type.Integer(), Type.Null()]),
  /** the reservation the start uses (1.6 StartTransaction.reservationId, 2.0.1 TransactionEvent.reservationId) */
  reservation_id: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
});

export const TransactionUpdatedEvent = Type.Object({
  type: Type.Literal('transaction-updated'),
  transaction_id: Type.String(),
  ...ChargingFacts,
  /** absolute energy register reading (Energy.Active.Import.Register) in Wh */
  meter_wh: Type.Union([Type.Number(), Type.Null()]),
  /** when the reading was taken (its meterValue's timestamp); absent: the event's timestamp */
  meter_at: Type.Optional(Timestamp),
  ...Begin,
  ...Peak,
  timestamp: Timestamp,
  seq_no: Type.Union([Type.Integer(), Type.Null()]),
  /** 2.0.1 sends the idToken later when the transaction started before authorization */
  id_tag: Type.Union([Type.String(), Type.Null()]),
  /**
   * 2.0.1 idToken `type` (ISO14443, Central, ...): a RequestStartTransaction names its token as
   * Central, so a start without remoteStartId naming a card is no remote start of ours
   */
  id_tag_type: Type.Optional(Type.String()),
  /**
   * the EVSE and connector the event names (2.0.1 `evse`), when it names one: a transaction that
   * started without one gets them from the first event that does
   */
  evse_id: Type.Optional(Type.Integer({ minimum: 0 })),
  connector_id: Type.Optional(Type.Integer({ minimum: 0 })),
  /**
   * 2.0.1 `remoteStartId` of a transaction a RequestStartTransaction authorized after it started
   * (the cable plugged in first): the remote start its token comes from
   */
  remote_start_id: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  /** 2.0.1 triggerReason StopAuthorized: the token named stops the transaction (an end follows) */
  stop_authorized: Type.Optional(Type.Literal(true)),
});

export const TransactionEndedEvent = Type.Object({
  type: Type.Literal('transaction-ended'),
  transaction_id: Type.String(),
  ...ChargingFacts,
  meter_wh: Type.Union([Type.Number(), Type.Null()]),
  /** when the reading was taken (its meterValue's timestamp); absent: the event's timestamp */
  meter_at: Type.Optional(Timestamp),
  timestamp: Timestamp,
  reason: Type.Union([Type.String(), Type.Null()]),
  seq_no: Type.Union([Type.Integer(), Type.Null()]),
  id_tag: Type.Union([Type.String(), Type.Null()]),
  /** 2.0.1 idToken `type` (as the update's) */
  id_tag_type: Type.Optional(Type.String()),
  /**
   * the EVSE and connector the event names (2.0.1 `evse`), when it names one: a transaction that
   * started without one gets them from the first event that does
   */
  evse_id: Type.Optional(Type.Integer({ minimum: 0 })),
  connector_id: Type.Optional(Type.Integer({ minimum: 0 })),
  /**
   * read from a StopTransaction / TransactionEvent Ended that failed its schema (src/ocpp/salvage.ts):
   * it closes an open transaction, never opens one
   */
  salvaged: Type.Optional(Type.Boolean()),
  ...Begin,
  ...Peak,
});

/** 1.6 MeterValues outside or inside a transaction; 2.0.1 MeterValues (never in a transaction). */
export const MeterSampledEvent = Type.Object({
  type: Type.Literal('meter-sampled'),
  transaction_id: Type.Union([Type.String(), Type.Null()]),
  evse_id: Type.Integer({ minimum: 0 }),
  meter_wh: Type.Union([Type.Number(), Type.Null()]),
  timestamp: Timestamp,
});

export const ReservationUpdatedEvent = Type.Object({
  type: Type.Literal('reservation-updated'),
  reservation_id: Type.Integer(),
  status: Type.String(),
});

/** How much an entry of a charger's event log asks of an operator. */
export const ReportSeverity = Type.Union([Type.Literal('info'), Type.Literal('warning'), Type.Literal('error')]);
export type ReportSeverity = Static<typeof ReportSeverity>;

/**
 * A message a charger sends to tell what happened (src/ocpp/reports.ts): a security event, a
 * 2.0.1 NotifyEvent, the progress of a firmware update, a diagnostics or log upload, a vendor's
 * DataTransfer, a certificate request, a charging limit or need. It goes to the charger's event
 * log; the status words of long operations are also kept on the charge point.
 */
export const ReportEntry = Type.Object({
  severity: ReportSeverity,
  /** one line for people */
  summary: Type.String(),
  /** when the charger says it happened (else when it arrived) */
  timestamp: Timestamp,
  /** the part of the message this entry is about, as the charger sent it */
  detail: Type.Unknown(),
});
export type ReportEntry = Static<typeof ReportEntry>;

export const ChargerReportedEvent = Type.Object({
  type: Type.Literal('reported'),
  /** the OCPP action */
  action: Type.String(),
  /** one per thing that happened (a NotifyEvent carries several) */
  entries: Type.Array(ReportEntry),
  /** the status of a long operation, kept on the charge point */
  progress: Type.Optional(
    Type.Object({
      operation: Type.Union([Type.Literal('firmware'), Type.Literal('diagnostics'), Type.Literal('log')]),
      status: Type.String(),
      request_id: Type.Union([Type.Integer(), Type.Null()]),
    }),
  ),
  /** DataTransfer: what the vendor's handler is asked */
  data_transfer: Type.Optional(
    Type.Object({
      vendor_id: Type.String(),
      message_id: Type.Union([Type.String(), Type.Null()]),
      data: Type.Unknown(),
    }),
  ),
});

/** One variable of a 2.0.1 charger's device model, as NotifyReport gives it (one row per attribute). */
export const DeviceVariable = Type.Object({
  component: Type.String(),
  component_instance: Type.Union([Type.String(), Type.Null()]),
  evse_id: Type.Union([Type.Integer(), Type.Null()]),
  connector_id: Type.Union([Type.Integer(), Type.Null()]),
  variable: Type.String(),
  variable_instance: Type.Union([Type.String(), Type.Null()]),
  /** Actual, Target, MinSet or MaxSet */
  attribute: Type.String(),
  value: Type.Union([Type.String(), Type.Null()]),
  mutability: Type.Union([Type.String(), Type.Null()]),
  data_type: Type.Union([Type.String(), Type.Null()]),
  unit: Type.Union([Type.String(), Type.Null()]),
});
export type DeviceVariable = Static<typeof DeviceVariable>;

/** 2.0.1 NotifyReport: a part of the charger's device model (a report may come in several parts). */
export const DeviceModelReportedEvent = Type.Object({
  type: Type.Literal('device-model-reported'),
  request_id: Type.Integer(),
  seq_no: Type.Integer(),
  /** more parts follow */
  tbc: Type.Boolean(),
  generated_at: Timestamp,
  variables: Type.Array(DeviceVariable),
});

/**
 * The status a BootNotification is answered with (1.6 RegistrationStatus, 2.0.1
 * RegistrationStatusEnumType: the same three words), and an operator's boot policy.
 */
export const RegistrationStatus = Type.Union([
  Type.Literal('Accepted'),
  Type.Literal('Pending'),
  Type.Literal('Rejected'),
]);
export type RegistrationStatus = Static<typeof RegistrationStatus>;

export const ChargerEvent = Type.Union([
  ChargerReportedEvent,
  DeviceModelReportedEvent,
  BootedEvent,
  StatusChangedEvent,
  AuthorizeRequestedEvent,
  TransactionStartedEvent,
  TransactionUpdatedEvent,
  TransactionEndedEvent,
  MeterSampledEvent,
  ReservationUpdatedEvent,
]);
export type ChargerEvent = Static<typeof ChargerEvent>;

/** What the actor answers to an event; the adapter turns it into the wire reply. */
export const ChargerEventOutcome = Type.Object({
  /** Accepted / Invalid / ... for authorizations and starts */
  id_tag_status: Type.Optional(Type.String()),
  transaction_id: Type.Optional(Type.String()),
  /** an accepted id tag: when the charger drops it from its authorization cache */
  cache_expiry: Type.Optional(Type.String({ format: 'date-time' })),
  /**
   * the id tag's group (its OCPI token's `group_id`): 1.6 `parentIdTag` (when it fits its 20
   * characters), 2.0.1 `groupIdToken`, so that a charger lets another card of the group stop
   * the transaction (1.6 section 3.5.1, 2.0.1 C09)
   */
  group_id: Type.Optional(Type.String()),
  /** BootNotification: the registration status and its interval (heartbeat, or the wait before the next boot) */
  boot: Type.Optional(Type.Object({ status: RegistrationStatus, interval_s: Type.Integer({ minimum: 0 }) })),
  /** DataTransfer: the vendor handler's answer (no handler for the vendor: UnknownVendorId) */
  data_transfer: Type.Optional(
    Type.Object({
      status: Type.Union([
        Type.Literal('Accepted'),
        Type.Literal('Rejected'),
        Type.Literal('UnknownMessageId'),
        Type.Literal('UnknownVendorId'),
      ]),
      data: Type.Optional(Type.Unknown()),
    }),
  ),
});
export type ChargerEventOutcome = Static<typeof ChargerEventOutcome>;

/** What the charge-point actor answers when a connection of its charger is set up. */
export interface ConnectedReply {
  /** the charger has sent a BootNotification at some time (on this connection or an earlier one) */
  booted: boolean;
  /**
   * The status the CSMS holds the charger to from now on (docs/CSMS.md "Boot and registration
   * policy"); undefined: it has not booted and its policy is Accepted (its calls are served).
   */
  registration?: RegistrationStatus;
}

/** The BootNotification reply: the same fields in 1.6 and 2.0.1, so both adapters answer it from here. */
export function bootReply(
  outcome: ChargerEventOutcome | undefined,
  now: Date,
): { status: RegistrationStatus; currentTime: string; interval: number } {
  // the actor always decides; no outcome is a bug, answered as the safe choice
  const boot = outcome?.boot ?? { status: 'Pending', interval_s: 60 };
  return { status: boot.status, currentTime: now.toISOString(), interval: boot.interval_s };
}

/**
 * `value` as one of a wire enum's values: the actor's outcome carries plain strings, the replies
 * the generated enum types. A value outside the enum is a bug here; the connection answers the
 * call with InternalError, as it did when the reply then failed its schema.
 */
export function oneOf<T extends string>(values: readonly T[], value: string, field: string): T {
  const known = values.find((v) => v === value);
  if (known === undefined) throw new Error(`${field}: ${value} is not one of ${values.join(', ')}`);
  return known;
}

/**
 * OCPP's integer (1.6 and 2.0.1 "Data types": 32 bits with the sign), for the numbers an operator
 * gives that go to a charger: a larger one is a 422 at the edge, not a command that fails later.
 */
export function ocppInteger(options: TNumberOptions = {}) {
  return Type.Integer({ minimum: -2_147_483_648, maximum: 2_147_483_647, ...options });
}

const VariableRef = {
  component: Type.String({ minLength: 1, maxLength: 50 }),
  component_instance: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  evse_id: Type.Optional(ocppInteger({ minimum: 1 })),
  connector_id: Type.Optional(ocppInteger({ minimum: 1 })),
  variable: Type.String({ minLength: 1, maxLength: 50 }),
  variable_instance: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  attribute: Type.Optional(
    Type.Union([Type.Literal('Actual'), Type.Literal('Target'), Type.Literal('MinSet'), Type.Literal('MaxSet')]),
  ),
};
export const VariableRefSchema = Type.Object(VariableRef, { additionalProperties: false });

const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const DateTime = Type.String({ format: 'date-time' });

/**
 * A charging profile (1.6 csChargingProfiles, 2.0.1 ChargingProfileType with one schedule): the
 * same fields in both versions; the adapters rename the purposes (`charger_max` is 1.6
 * ChargePointMaxProfile, 2.0.1 ChargingStationMaxProfile).
 */
export const ChargingProfileSchema = Type.Object(
  {
    id: ocppInteger({ minimum: 1, description: 'the profile id; a profile with the same id is replaced' }),
    stack_level: ocppInteger({ minimum: 0, maximum: 1000 }),
    purpose: Type.Union([Type.Literal('charger_max'), Type.Literal('tx_default'), Type.Literal('tx')]),
    kind: Type.Union([Type.Literal('absolute'), Type.Literal('recurring'), Type.Literal('relative')]),
    recurrency: Type.Optional(Type.Union([Type.Literal('daily'), Type.Literal('weekly')])),
    valid_from: Type.Optional(DateTime),
    valid_to: Type.Optional(DateTime),
    /** purpose tx: the open transaction it limits */
    transaction_id: Type.Optional(Type.String({ minLength: 1, maxLength: 36 })),
    schedule: Type.Object(
      {
        start: Type.Optional(DateTime),
        duration_s: Type.Optional(ocppInteger({ minimum: 1 })),
        rate_unit: Type.Union([Type.Literal('A'), Type.Literal('W')]),
        min_rate: Type.Optional(Type.Number({ minimum: 0 })),
        periods: Type.Array(
          Type.Object(
            {
              start_s: ocppInteger({ minimum: 0, description: 'seconds from the start of the schedule' }),
              limit: Type.Number({ minimum: 0, description: 'in rate_unit' }),
              phases: Type.Optional(ocppInteger({ minimum: 1, maximum: 3 })),
            },
            { additionalProperties: false },
          ),
          { minItems: 1, maxItems: 1024 },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type ChargingProfile = Static<typeof ChargingProfileSchema>;

export const ChargingProfilePurpose = ChargingProfileSchema.properties.purpose;

/** An id tag's status in a local authorization list: the words both versions share. */
export const LocalListStatus = Type.Union([
  Type.Literal('Accepted'),
  Type.Literal('Blocked'),
  Type.Literal('Expired'),
  Type.Literal('Invalid'),
]);

/**
 * An id tag as an operator gives it: printable ASCII (space to tilde), not blank. OCPP 1.6's idTag
 * is a CiString ("only printable ASCII"); 2.0.1's schema says only "case insensitive", and the tags
 * stations read and OCPI token uids (CiString too) are ASCII, so both versions take the same. A
 * tag of spaces only is no card (a slip in the console sent a charger the token " ").
 */
export const ID_TAG_PATTERN = '^[ -~]*[!-~][ -~]*$';
export function idTagText(maxLength: number, description?: string) {
  return Type.String({ minLength: 1, maxLength, pattern: ID_TAG_PATTERN, ...(description ? { description } : {}) });
}

/** The 2.0.1 IdTokenEnumType of an id tag the CSMS names (NoAuthorization names none); 1.6 has none. */
export const IdTokenKind = Type.Union([
  Type.Literal('Central'),
  Type.Literal('eMAID'),
  Type.Literal('ISO14443'),
  Type.Literal('ISO15693'),
  Type.Literal('KeyCode'),
  Type.Literal('Local'),
  Type.Literal('MacAddress'),
]);
export type IdTokenKind = Static<typeof IdTokenKind>;

/** One entry of a SendLocalList: a null status removes the id tag (a differential update only). */
export const LocalListEntry = Type.Object(
  {
    id_tag: idTagText(36),
    /** 2.0.1 IdTokenEnumType; 1.6 has none (default ISO14443, an RFID card) */
    type: Type.Optional(IdTokenKind),
    status: nullable(LocalListStatus),
    expiry: Type.Optional(Type.String({ format: 'date-time', maxLength: 40 })),
    /**
     * the id tag's group (its OCPI token's group_id): 1.6 `parentIdTag` when it fits its 20
     * characters, 2.0.1 `groupIdToken`
     */
    group_id: Type.Optional(idTagText(36)),
  },
  { additionalProperties: false },
);
export type LocalListEntry = Static<typeof LocalListEntry>;

/** The most id tags one SendLocalList carries (a longer list goes in several). */
export const LOCAL_LIST_MESSAGE_MAX = 500;

/** Smart charging and the local authorization list. */
function limitAndListCommands() {
  return [
    Type.Object({
      kind: Type.Literal('set-charging-profile'),
      /** 0: the charger as a whole */
      evse_id: Type.Integer({ minimum: 0 }),
      profile: ChargingProfileSchema,
    }),
    Type.Object({
      kind: Type.Literal('clear-charging-profile'),
      profile_id: nullable(Type.Integer({ minimum: 1 })),
      evse_id: nullable(Type.Integer({ minimum: 0 })),
      purpose: nullable(ChargingProfilePurpose),
      stack_level: nullable(Type.Integer({ minimum: 0 })),
    }),
    Type.Object({
      kind: Type.Literal('get-composite-schedule'),
      evse_id: Type.Integer({ minimum: 0 }),
      duration_s: Type.Integer({ minimum: 1 }),
      rate_unit: nullable(Type.Union([Type.Literal('A'), Type.Literal('W')])),
    }),
    Type.Object({
      kind: Type.Literal('send-local-list'),
      version: Type.Integer({ minimum: 1 }),
      update: Type.Union([Type.Literal('full'), Type.Literal('differential')]),
      entries: Type.Array(LocalListEntry, { maxItems: LOCAL_LIST_MESSAGE_MAX }),
    }),
  ] as const;
}

/** The operations an operator runs on a charger (docs/CSMS.md "Operations"). */
function operatorCommands() {
  return [
    Type.Object({
      kind: Type.Literal('change-availability'),
      /** null: the whole charger */
      evse_id: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
      connector_id: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
      operative: Type.Boolean(),
    }),
    Type.Object({ kind: Type.Literal('reset'), type: Type.Union([Type.Literal('soft'), Type.Literal('hard')]) }),
    Type.Object({ kind: Type.Literal('clear-cache') }),
    Type.Object({
      kind: Type.Literal('get-configuration'),
      keys: Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 100 }),
    }),
    Type.Object({
      kind: Type.Literal('change-configuration'),
      key: Type.String({ minLength: 1, maxLength: 50 }),
      value: Type.String({ maxLength: 500 }),
    }),
    Type.Object({
      kind: Type.Literal('get-variables'),
      variables: Type.Array(VariableRefSchema, { minItems: 1, maxItems: 100 }),
    }),
    Type.Object({
      kind: Type.Literal('set-variables'),
      variables: Type.Array(Type.Object({ ...VariableRef, value: Type.String({ maxLength: 1000 }) }), {
        minItems: 1,
        maxItems: 100,
      }),
    }),
    Type.Object({ kind: Type.Literal('get-local-list-version') }),
    Type.Object({
      kind: Type.Literal('get-base-report'),
      report_base: Type.Union([Type.Literal('configuration'), Type.Literal('full'), Type.Literal('summary')]),
      /** 2.0.1 requestId, echoed by the NotifyReport messages that carry the report */
      request_id: Type.Integer(),
    }),
    Type.Object({
      kind: Type.Literal('data-transfer'),
      vendor_id: Type.String({ minLength: 1, maxLength: 255 }),
      message_id: Type.Union([Type.String({ minLength: 1, maxLength: 50 }), Type.Null()]),
      /** 1.6: text; 2.0.1: any JSON (its DataTransfer data is anyType); null: none */
      data: Type.Unknown(),
    }),
    Type.Object({
      kind: Type.Literal('update-firmware'),
      location: Type.String({ minLength: 1, maxLength: 512 }),
      retrieve_at: Type.String({ format: 'date-time' }),
      retries: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
      retry_interval_s: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
      /** 2.0.1 requestId, echoed by its FirmwareStatusNotifications */
      request_id: Type.Integer(),
    }),
    Type.Object({
      kind: Type.Literal('upload-log'),
      location: Type.String({ minLength: 1, maxLength: 512 }),
      /** 2.0.1 logType; 1.6 GetDiagnostics uploads the diagnostics log */
      log_type: Type.Union([Type.Literal('diagnostics'), Type.Literal('security')]),
      since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      until: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
      request_id: Type.Integer(),
    }),
  ] as const;
}

/** The messages a TriggerMessage may ask for in both versions. */
/**
 * The messages an operator may ask a charger to send now (TriggerMessage). The status of a log
 * upload is 1.6 DiagnosticsStatusNotification and 2.0.1 LogStatusNotification: either name asks
 * for it, in the charger's version.
 */
export const TriggeredMessage = Type.Union([
  Type.Literal('BootNotification'),
  Type.Literal('Heartbeat'),
  Type.Literal('StatusNotification'),
  Type.Literal('MeterValues'),
  Type.Literal('FirmwareStatusNotification'),
  Type.Literal('DiagnosticsStatusNotification'),
  Type.Literal('LogStatusNotification'),
]);

/** A GetLog's payload, the same in 2.0.1 and in the 1.6 security whitepaper. */
export function getLogPayload(command: Extract<ChargerCommand, { kind: 'upload-log' }>): {
  logType: 'DiagnosticsLog' | 'SecurityLog';
  requestId: number;
  log: { remoteLocation: string; oldestTimestamp?: string; latestTimestamp?: string };
} {
  return {
    logType: command.log_type === 'security' ? 'SecurityLog' : 'DiagnosticsLog',
    requestId: command.request_id,
    log: {
      remoteLocation: command.location,
      ...optional('oldestTimestamp', command.since),
      ...optional('latestTimestamp', command.until),
    },
  };
}

/** What the CSMS asks of chargers, independent of the version (but for a new password: below). */
const commands = [
  Type.Object({
    kind: Type.Literal('start'),
    id_tag: Type.String({ minLength: 1, maxLength: 36 }),
    evse_id: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    connector_id: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    /** a tx profile for the transaction it starts (the operator's remote start) */
    profile: Type.Optional(ChargingProfileSchema),
  }),
  Type.Object({ kind: Type.Literal('stop'), transaction_id: Type.String() }),
  Type.Object({
    kind: Type.Literal('reserve'),
    reservation_id: Type.Integer(),
    id_tag: Type.String({ minLength: 1, maxLength: 36 }),
    /** 2.0.1 idToken type (default Central); a card's is ISO14443, so that the charger knows it when tapped */
    id_tag_type: Type.Optional(IdTokenKind),
    expiry_date: Type.String(),
    evse_id: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    connector_id: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  }),
  Type.Object({ kind: Type.Literal('cancel-reservation'), reservation_id: Type.Integer() }),
  Type.Object({
    kind: Type.Literal('unlock'),
    evse_id: Type.Integer({ minimum: 1 }),
    connector_id: Type.Integer({ minimum: 1 }),
  }),
  Type.Object({
    kind: Type.Literal('trigger'),
    message: TriggeredMessage,
    evse_id: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    /** 2.0.1: a connector of the EVSE (optional: commands queued before it was added have none) */
    connector_id: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  }),
  ...operatorCommands(),
  ...limitAndListCommands(),
] as const;

/**
 * A new HTTP Basic password for the charger (docs/CSMS.md "Passwords"): 1.6 ChangeConfiguration
 * AuthorizationKey, 2.0.1 SetVariables SecurityCtrlr.BasicAuthPassword. Its rule per version is
 * src/ocpp/basic-auth-password.ts, checked before the command is made.
 */
const SetPassword = Type.Object({
  kind: Type.Literal('set-password'),
  password: Type.String({ minLength: 16, maxLength: 40 }),
});

export const ChargerCommand = Type.Union([...commands, SetPassword]);
export type ChargerCommand = Static<typeof ChargerCommand>;

/**
 * A command as the charge-point actor's state keeps it while it is queued or outstanding: the
 * same, but a new password only as its hash. The password itself stays in the memory of the
 * process holding the charger's socket until it is sent (the state is a database row).
 */
export const QueuedCommand = Type.Union([
  ...commands,
  Type.Object({ kind: Type.Literal('set-password'), password_hash: Type.String() }),
]);
export type QueuedCommand = Static<typeof QueuedCommand>;

/** `{ [key]: value }`, or nothing when the value is absent: optional fields of a payload. */
export const optional = <K extends string, T>(key: K, value: T | null | undefined): Partial<Record<K, T>> =>
  value === null || value === undefined ? {} : ({ [key]: value } as Record<K, T>);

/** An enum word of the domain as the wire's ('full' -> 'Full'). */
export const capitalized = <T extends string>(word: T): Capitalize<T> =>
  (word.charAt(0).toUpperCase() + word.slice(1)) as Capitalize<T>;

/**
 * The parts of a charging profile that are the same in 1.6 and 2.0.1: its kind and validity, and
 * its schedule (one in 1.6, the only one of the list in 2.0.1). The adapters add the id, the
 * purpose's name and the transaction in their version's form.
 */
export function chargingProfileParts(p: ChargingProfile) {
  return {
    stackLevel: p.stack_level,
    chargingProfileKind: capitalized(p.kind),
    ...optional('recurrencyKind', p.recurrency === undefined ? undefined : capitalized(p.recurrency)),
    ...optional('validFrom', p.valid_from),
    ...optional('validTo', p.valid_to),
    schedule: {
      ...optional('startSchedule', p.schedule.start),
      ...optional('duration', p.schedule.duration_s),
      chargingRateUnit: p.schedule.rate_unit,
      ...optional('minChargingRate', p.schedule.min_rate),
      chargingSchedulePeriod: p.schedule.periods.map((q) => ({
        startPeriod: q.start_s,
        limit: q.limit,
        ...optional('numberPhases', q.phases),
      })),
    },
  };
}

/**
 * A DataTransfer's payload, the same in both versions but for `data`, which `dataOf` turns into
 * the version's (any JSON on 2.0.1, text on 1.6).
 */
export function dataTransferPayload<D>(
  command: Extract<ChargerCommand, { kind: 'data-transfer' }>,
  dataOf: (data: unknown) => D,
): { vendorId: string; messageId?: string; data?: D } {
  return {
    vendorId: command.vendor_id,
    ...optional('messageId', command.message_id),
    ...optional('data', command.data === null || command.data === undefined ? null : dataOf(command.data)),
  };
}

/**
 * Which versions can carry each command (docs/CSMS.md "Operations"); the /v1 routes answer 422
 * naming the version for the others.
 */
export const COMMAND_VERSIONS: Readonly<Record<ChargerCommand['kind'], readonly ProtocolName[]>> = {
  start: ['ocpp1.6', 'ocpp2.0.1'],
  stop: ['ocpp1.6', 'ocpp2.0.1'],
  reserve: ['ocpp1.6', 'ocpp2.0.1'],
  'cancel-reservation': ['ocpp1.6', 'ocpp2.0.1'],
  unlock: ['ocpp1.6', 'ocpp2.0.1'],
  trigger: ['ocpp1.6', 'ocpp2.0.1'],
  'change-availability': ['ocpp1.6', 'ocpp2.0.1'],
  reset: ['ocpp1.6', 'ocpp2.0.1'],
  'clear-cache': ['ocpp1.6', 'ocpp2.0.1'],
  'get-configuration': ['ocpp1.6'],
  'change-configuration': ['ocpp1.6'],
  'get-variables': ['ocpp2.0.1'],
  'set-variables': ['ocpp2.0.1'],
  'get-local-list-version': ['ocpp1.6', 'ocpp2.0.1'],
  'get-base-report': ['ocpp2.0.1'],
  'data-transfer': ['ocpp1.6', 'ocpp2.0.1'],
  'update-firmware': ['ocpp1.6', 'ocpp2.0.1'],
  'upload-log': ['ocpp1.6', 'ocpp2.0.1'],
  'set-charging-profile': ['ocpp1.6', 'ocpp2.0.1'],
  'clear-charging-profile': ['ocpp1.6', 'ocpp2.0.1'],
  'get-composite-schedule': ['ocpp1.6', 'ocpp2.0.1'],
  'send-local-list': ['ocpp1.6', 'ocpp2.0.1'],
  'set-password': ['ocpp1.6', 'ocpp2.0.1'],
};

/**
 * How long a command's outcome (its record on the charge point, its stored reply) is kept at
 * least, beyond the newest 20: a route waits up to 30 s for it (`wait_ms`), and a batch of
 * operations sent to one charger at once must not push a record out before its route read it.
 */
export const COMMAND_OUTCOME_KEEP_MS = 35_000;
/** The most outcomes of one charger kept even within COMMAND_OUTCOME_KEEP_MS. */
export const COMMAND_OUTCOMES_MAX = 200;

/** Commands whose answer carries data an operator reads (kept with the command's outcome). */
export const COMMANDS_WITH_DATA: ReadonlySet<ChargerCommand['kind']> = new Set([
  'get-configuration',
  'get-variables',
  'set-variables',
  'get-local-list-version',
  'data-transfer',
  'get-composite-schedule',
  // the file the charger will upload (1.6 fileName, 2.0.1 filename): none means nothing to upload
  'upload-log',
]);

/**
 * One protocol version's mapping between its wire messages and the domain. Calls are typed by
 * action (OcppCall: `switch (call.action)` narrows the payload); the connection hands over only
 * calls that passed OcppSchemas.checkRequest.
 */
export interface ProtocolAdapter<V extends ProtocolName> {
  readonly version: V;
  /**
   * A charger's CALL as a domain event; `null` for calls answered without the actor (Heartbeat);
   * `undefined` when the action is not handled (NotImplemented).
   */
  toEvent(call: OcppCall<V>): ChargerEvent | null | undefined;
  /** The CALLRESULT payload for a handled call. */
  toReply(call: OcppCall<V>, outcome: ChargerEventOutcome | undefined, now: Date): OcppResponse<V>;
  /**
   * The end of a transaction read from a call of `action` that failed its schema (salvage.ts):
   * undefined when the call is not a transaction's end, null when it names no transaction.
   * `valid` says whether a call of the version, as the adapter rebuilds it, passes its schema.
   */
  salvageEnd(
    action: string,
    payload: unknown,
    now: Date,
    valid: (action: string, payload: unknown) => boolean,
  ): Extract<ChargerEvent, { type: 'transaction-ended' }> | null | undefined;
  /** The version's CALL for the command; undefined when the version has none (COMMAND_VERSIONS). */
  toCall(command: ChargerCommand, remoteStartId: number): OcppCall<V> | undefined;
  /**
   * The charger's (schema-checked) answer to the CSMS call made of `command`: its status word
   * (Accepted when it has none; a new password's SetVariables: the attributeStatus).
   */
  answerStatus(payload: OcppResponse<V>, command: ChargerCommand): string;
}
