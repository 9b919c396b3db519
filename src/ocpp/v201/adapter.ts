import type { Static } from '#typebox';
import type { OcppCall } from '../messages.js';
import type { VariableRefSchema } from '../domain.js';
import {
  bootReply,
  dataTransferPayload,
  getLogPayload,
  optional,
  oneOf,
  capitalized,
  chargingProfileParts,
  type ChargerCommand,
  type ChargingProfile,
  type ChargerEvent,
  type ChargerEventOutcome,
  type ProtocolAdapter,
} from '../domain.js';
import type {
  AuthorizationStatusEnumType,
  AuthorizeResponse,
  DataTransferResponse,
  Get15118EVCertificateResponse,
  GetCertificateStatusResponse,
  NotifyEVChargingNeedsResponse,
  NotifyEVChargingScheduleResponse,
  SignCertificateResponse,
  BootNotificationRequest,
  HeartbeatResponse,
  IdTokenType,
  MeterValuesRequest,
  MeterValueType,
  StatusNotificationRequest,
  TransactionEventRequest,
  TransactionEventResponse,
  ChargingProfileType,
} from '../generated/ocpp201.js';
import {
  loadReadings,
  earliestRegisterReading,
  latestRegisterReading,
  mixedContexts,
  namesBegin,
  peakAbove,
  signedReading,
  type LoadReading,
  type SignedReading,
  type RegisterReading,
  type SampledReading,
} from '../meter.js';
import { deviceModelOf, isSecretName, report201 } from '../reports.js';
import { salvageEnded201 } from '../salvage.js';
import { hardwareOf } from '../boot-hardware.js';

function samples201(entry: MeterValueType): SampledReading[] {
  return entry.sampledValue.map((s) => ({
    value: s.value,
    measurand: s.measurand,
    phase: s.phase,
    unit: s.unitOfMeasure?.unit ?? 'Wh',
    multiplier: s.unitOfMeasure?.multiplier ?? 0,
    location: s.location,
    context: s.context,
  }));
}

/**
 * The signed register readings of meter values (`signedMeterValue`): its `encodingMethod` names
 * the encoding, `publicKey` the key, the sampled value is the plain reading.
 */
function signed201(meterValue: MeterValueType[] | undefined): SignedReading[] {
  const out: SignedReading[] = [];
  for (const entry of meterValue ?? []) {
    for (const s of entry.sampledValue) {
      const sm = s.signedMeterValue;
      if (!sm) continue;
      const reading = signedReading({
        measurand: s.measurand,
        context: s.context,
        encoding: sm.encodingMethod,
        public_key: sm.publicKey,
        plain: String(s.value),
        signed: sm.signedMeterData,
        timestamp: entry.timestamp,
      });
      if (reading) out.push(reading);
    }
  }
  return out;
}

/**
 * What the event says of the charging besides the register (domain.ts ChargingFacts): its
 * `chargingState`, and the currents, powers and signed readings of its meter values.
 */
function chargingFacts(p: TransactionEventRequest): {
  charging?: boolean;
  currents?: LoadReading[];
  signed?: SignedReading[];
} {
  const state = p.transactionInfo.chargingState;
  const currents = loadReadings(p.meterValue, samples201);
  const signed = signed201(p.meterValue);
  return {
    ...(state === undefined ? {} : { charging: state === 'Charging' }),
    ...(currents.length > 0 ? { currents } : {}),
    ...(signed.length > 0 ? { signed } : {}),
  };
}

/** The register reading with the latest timestamp among the meter values (meter.ts). */
function registerReading(meterValue: MeterValueType[] | undefined): RegisterReading | null {
  return latestRegisterReading(meterValue, samples201);
}

/**
 * The register reading with the earliest timestamp among the meter values, when they hold one:
 * `latest` itself unless they are readings of several instants (TxEndedMeasurands' samples from
 * Transaction.Begin on in an Ended, readings queued offline, clock-aligned and periodic ones) or
 * of several contexts in one meter value (a Begin and an End read together).
 */
function firstReading(
  meterValue: MeterValueType[] | undefined,
  latest: RegisterReading | null,
): RegisterReading | null {
  if (latest === null || meterValue === undefined) return latest;
  const only = meterValue.length === 1 ? meterValue[0] : undefined;
  if (only) {
    const samples = samples201(only);
    // one reading: the first too, named when the charger named it Transaction.Begin
    if (!mixedContexts(samples)) return namesBegin(samples) ? { ...latest, named: true } : latest;
  }
  return earliestRegisterReading(meterValue, samples201) ?? latest;
}

function sameReading(a: RegisterReading, b: RegisterReading): boolean {
  return a.wh === b.wh && a.timestamp === b.timestamp;
}

type EventOf<T extends ChargerEvent['type']> = Extract<ChargerEvent, { type: T }>;

function booted(p: BootNotificationRequest): EventOf<'booted'> {
  return {
    type: 'booted',
    vendor: p.chargingStation.vendorName,
    model: p.chargingStation.model,
    serial_number: p.chargingStation.serialNumber ?? null,
    firmware_version: p.chargingStation.firmwareVersion ?? null,
    reason: p.reason,
    ...hardwareOf({ iccid: p.chargingStation.modem?.iccid, imsi: p.chargingStation.modem?.imsi }),
  };
}

function statusChanged(p: StatusNotificationRequest): EventOf<'status-changed'> {
  return {
    type: 'status-changed',
    evse_id: p.evseId,
    connector_id: p.connectorId,
    status: p.connectorStatus,
    error_code: null,
    timestamp: p.timestamp,
  };
}

/**
 * The token an idToken names, or null for `NoAuthorization`: a charger set to charge without
 * authorization (free vend) names no token to check, and its transaction is not refused for it.
 */
function tokenOf(idToken: IdTokenType | undefined): string | null {
  return idToken && idToken.type !== 'NoAuthorization' ? idToken.idToken : null;
}

/** A TransactionEvent as the start, an update or the end of the transaction it names. */
function transactionEvent(
  p: TransactionEventRequest,
): EventOf<'transaction-started' | 'transaction-updated' | 'transaction-ended'> {
  const transactionId = p.transactionInfo.transactionId;
  const idTag = tokenOf(p.idToken);
  const reading = registerReading(p.meterValue);
  const first = firstReading(p.meterValue, reading);
  // an update's or end's Begin reading alone is no progress of the register: it waits for the end
  const beginOnly =
    p.eventType !== 'Started' && first?.named === true && reading !== null && sameReading(reading, first);
  const wh = beginOnly ? null : (reading?.wh ?? null);
  const facts = chargingFacts(p);
  if (p.eventType === 'Started') {
    const later = reading && first && !sameReading(reading, first) ? reading : null;
    // a register that went back within the start's own readings: its peak counts, as in an update
    const startPeak = later ? peakAbove(p.meterValue, samples201, later.wh) : null;
    return {
      type: 'transaction-started',
      ...facts,
      transaction_id: transactionId,
      // OCPP 2.0.1 part 2 E01: a retried message repeats transactionId and seqNo
      dedupe_key: `${transactionId}|${p.seqNo}`,
      // no evse: not known yet (0), a later event may name it; an EVSE without a connector: its first
      evse_id: p.evse?.id ?? 0,
      connector_id: p.evse ? (p.evse.connectorId ?? 1) : 0,
      id_tag: idTag,
      ...(p.idToken ? { id_tag_type: p.idToken.type } : {}),
      // the energy counts from its first reading; a later one it also carries is its first progress
      meter_start_wh: first?.wh ?? null,
      ...(later ? { meter_last: later } : {}),
      ...(startPeak === null ? {} : { meter_peak: startPeak }),
      timestamp: p.timestamp,
      seq_no: p.seqNo,
      remote_start_id: p.transactionInfo.remoteStartId ?? null,
      reservation_id: p.reservationId ?? null,
    };
  }
  const peak = peakAbove(p.meterValue, samples201, wh);
  const common = {
    transaction_id: transactionId,
    ...facts,
    meter_wh: wh,
    ...(peak === null ? {} : { meter_peak: peak }),
    // an update's readings may be older than the event (queued while offline, E04)
    ...(reading && !beginOnly ? { meter_at: reading.timestamp } : {}),
    ...(first ? { begin: first } : {}),
    timestamp: p.timestamp,
    seq_no: p.seqNo,
    id_tag: idTag,
    ...(p.idToken ? { id_tag_type: p.idToken.type } : {}),
    ...(p.evse ? { evse_id: p.evse.id, connector_id: p.evse.connectorId ?? 1 } : {}),
  };
  if (p.eventType === 'Updated')
    return {
      type: 'transaction-updated',
      ...common,
      ...(p.transactionInfo.remoteStartId === undefined ? {} : { remote_start_id: p.transactionInfo.remoteStartId }),
      ...(p.triggerReason === 'StopAuthorized' ? { stop_authorized: true as const } : {}),
    };
  return { type: 'transaction-ended', ...common, reason: p.transactionInfo.stoppedReason ?? 'Local' };
}

function meterSampled(p: MeterValuesRequest): EventOf<'meter-sampled'> {
  const reading = registerReading(p.meterValue);
  const last = p.meterValue[p.meterValue.length - 1];
  return {
    type: 'meter-sampled',
    transaction_id: null,
    evse_id: p.evseId,
    meter_wh: reading?.wh ?? null,
    timestamp: reading?.timestamp ?? last?.timestamp ?? new Date().toISOString(),
  };
}

const authorizationStatuses: readonly AuthorizationStatusEnumType[] = [
  'Accepted',
  'Blocked',
  'ConcurrentTx',
  'Expired',
  'Invalid',
  'NoCredit',
  'NotAllowedTypeEVSE',
  'NotAtThisLocation',
  'NotAtThisTime',
  'Unknown',
];

type VariableRef = Static<typeof VariableRefSchema>;

/** A variable as 2.0.1 names it: component (with its instance and EVSE) and variable. */
function variableOf(v: VariableRef) {
  return {
    component: {
      name: v.component,
      ...optional('instance', v.component_instance),
      ...(v.evse_id === undefined ? {} : { evse: { id: v.evse_id, ...optional('connectorId', v.connector_id) } }),
    },
    variable: { name: v.variable, ...optional('instance', v.variable_instance) },
    ...optional('attributeType', v.attribute),
  };
}

const REPORT_BASE_201 = {
  configuration: 'ConfigurationInventory',
  full: 'FullInventory',
  summary: 'SummaryInventory',
} as const satisfies Record<Extract<ChargerCommand, { kind: 'get-base-report' }>['report_base'], string>;

/** The operator's operations (docs/CSMS.md "Operations") as 2.0.1 calls. */
function operatorCall201(command: ChargerCommand): OcppCall<'ocpp2.0.1'> | undefined {
  switch (command.kind) {
    case 'change-availability':
      return {
        action: 'ChangeAvailability',
        payload: {
          operationalStatus: command.operative ? 'Operative' : 'Inoperative',
          ...(command.evse_id === null
            ? {}
            : { evse: { id: command.evse_id, ...optional('connectorId', command.connector_id) } }),
        },
      };
    case 'reset':
      // hard: now, whatever runs; soft: once the charger is idle (2.0.1 B11/B12)
      return { action: 'Reset', payload: { type: command.type === 'hard' ? 'Immediate' : 'OnIdle' } };
    case 'clear-cache':
      return { action: 'ClearCache', payload: {} };
    case 'get-variables':
      return { action: 'GetVariables', payload: { getVariableData: command.variables.map(variableOf) } };
    case 'set-variables':
      return {
        action: 'SetVariables',
        payload: { setVariableData: command.variables.map((v) => ({ ...variableOf(v), attributeValue: v.value })) },
      };
    case 'get-local-list-version':
      return { action: 'GetLocalListVersion', payload: {} };
    case 'data-transfer':
      return { action: 'DataTransfer', payload: dataTransferPayload(command, (d) => d) };
    case 'update-firmware':
      return {
        action: 'UpdateFirmware',
        payload: {
          requestId: command.request_id,
          firmware: { location: command.location, retrieveDateTime: command.retrieve_at },
          ...optional('retries', command.retries),
          ...optional('retryInterval', command.retry_interval_s),
        },
      };
    case 'upload-log':
      return { action: 'GetLog', payload: getLogPayload(command) };
    case 'set-password':
      return {
        action: 'SetVariables',
        payload: {
          setVariableData: [
            {
              component: { name: 'SecurityCtrlr' },
              variable: { name: 'BasicAuthPassword' },
              attributeValue: command.password,
            },
          ],
        },
      };
    default:
      return limitCall201(command);
  }
}

const PURPOSE_201 = {
  charger_max: 'ChargingStationMaxProfile',
  tx_default: 'TxDefaultProfile',
  tx: 'TxProfile',
} as const satisfies Record<ChargingProfile['purpose'], string>;

/** A charging profile as 2.0.1 ChargingProfileType: one schedule, numbered as the profile. */
function profile201(p: ChargingProfile): ChargingProfileType {
  const { schedule, ...common } = chargingProfileParts(p);
  return {
    id: p.id,
    chargingProfilePurpose: PURPOSE_201[p.purpose],
    ...common,
    ...optional('transactionId', p.transaction_id),
    chargingSchedule: [{ id: p.id, ...schedule }],
  };
}

/** Smart charging, the local list and the device model as 2.0.1 calls. */
function limitCall201(command: ChargerCommand): OcppCall<'ocpp2.0.1'> | undefined {
  switch (command.kind) {
    case 'get-base-report':
      // the report itself comes as NotifyReport messages, kept as the device model
      return {
        action: 'GetBaseReport',
        payload: { requestId: command.request_id, reportBase: REPORT_BASE_201[command.report_base] },
      };
    case 'set-charging-profile':
      return {
        action: 'SetChargingProfile',
        payload: { evseId: command.evse_id, chargingProfile: profile201(command.profile) },
      };
    case 'clear-charging-profile': {
      const criteria = {
        ...optional('evseId', command.evse_id),
        ...optional('chargingProfilePurpose', command.purpose === null ? null : PURPOSE_201[command.purpose]),
        ...optional('stackLevel', command.stack_level),
      };
      return {
        action: 'ClearChargingProfile',
        payload: {
          ...optional('chargingProfileId', command.profile_id),
          ...(Object.keys(criteria).length > 0 ? { chargingProfileCriteria: criteria } : {}),
        },
      };
    }
    case 'get-composite-schedule':
      return {
        action: 'GetCompositeSchedule',
        payload: {
          evseId: command.evse_id,
          duration: command.duration_s,
          ...optional('chargingRateUnit', command.rate_unit),
        },
      };
    case 'send-local-list':
      return localListCall201(command);
    default:
      return undefined;
  }
}

/** SendLocalList: each entry with its status, expiry and group (2.0.1 groupIdToken). */
function localListCall201(command: Extract<ChargerCommand, { kind: 'send-local-list' }>): OcppCall<'ocpp2.0.1'> {
  return {
    action: 'SendLocalList',
    payload: {
      versionNumber: command.version,
      updateType: capitalized(command.update),
      // an empty full update clears the list: the schema wants no array rather than an empty one
      ...(command.entries.length === 0
        ? {}
        : {
            localAuthorizationList: command.entries.map((e) => ({
              idToken: { idToken: e.id_tag, type: e.type ?? 'ISO14443' },
              ...(e.status === null
                ? {}
                : {
                    idTokenInfo: {
                      status: e.status,
                      ...optional('cacheExpiryDateTime', e.expiry),
                      ...(e.group_id === undefined
                        ? {}
                        : { groupIdToken: { idToken: e.group_id, type: 'Central' as const } }),
                    },
                  }),
            })),
          }),
    },
  };
}

/** OCPP 2.0.1: EVSEs and connectors are numbered separately; the charger names transactions. */
export const ocpp201Adapter: ProtocolAdapter<'ocpp2.0.1'> = {
  version: 'ocpp2.0.1',

  toEvent(call): ChargerEvent | null | undefined {
    switch (call.action) {
      case 'BootNotification':
        return booted(call.payload);
      case 'Heartbeat':
        return null;
      case 'StatusNotification':
        return statusChanged(call.payload);
      case 'Authorize': {
        // NoAuthorization asks for nothing to be checked: answered Accepted, as a Heartbeat is answered
        const idTag = tokenOf(call.payload.idToken);
        return idTag === null
          ? null
          : { type: 'authorize-requested', id_tag: idTag, id_tag_type: call.payload.idToken.type };
      }
      case 'TransactionEvent':
        return transactionEvent(call.payload);
      case 'MeterValues':
        return meterSampled(call.payload);
      case 'ReservationStatusUpdate': {
        const p = call.payload;
        return { type: 'reservation-updated', reservation_id: p.reservationId, status: p.reservationUpdateStatus };
      }
      case 'NotifyReport':
        return deviceModelOf(call.payload);
      default:
        return report201(call);
    }
  },

  toReply(call, outcome: ChargerEventOutcome | undefined, now) {
    // read only by the replies that carry it: an outcome's status word is checked where it is sent
    const idTokenInfo = () => ({
      status: oneOf(authorizationStatuses, outcome?.id_tag_status ?? 'Accepted', 'idTokenInfo.status'),
      ...optional('cacheExpiryDateTime', outcome?.cache_expiry),
      // a group is no card: type Central (an id the CSMS made up), as groupIdToken's are
      ...(outcome?.group_id === undefined
        ? {}
        : { groupIdToken: { idToken: outcome.group_id, type: 'Central' as const } }),
    });
    switch (call.action) {
      case 'BootNotification':
        return bootReply(outcome, now);
      case 'Heartbeat':
        return { currentTime: now.toISOString() } satisfies HeartbeatResponse;
      case 'Authorize':
        return { idTokenInfo: idTokenInfo() } satisfies AuthorizeResponse;
      case 'TransactionEvent': {
        // idTokenInfo is required with an idToken (E01); a refusal is sent even without one, so
        // that the charger learns its transaction was not accepted (StopTxOnInvalidId)
        const info = idTokenInfo();
        return call.payload.idToken || info.status !== 'Accepted'
          ? ({ idTokenInfo: info } satisfies TransactionEventResponse)
          : {};
      }
      case 'DataTransfer': {
        const answer = outcome?.data_transfer ?? { status: 'UnknownVendorId' as const };
        return {
          status: answer.status,
          ...(answer.data === undefined ? {} : { data: answer.data }),
        } satisfies DataTransferResponse;
      }
      // no certificate authority and no OCSP responder here; EV charging needs get no schedule of ours: the
      // operator sets profiles through set-charging-profile (docs/CSMS.md "Smart charging")
      case 'SignCertificate':
        return { status: 'Rejected' } satisfies SignCertificateResponse;
      case 'Get15118EVCertificate':
        return { status: 'Failed', exiResponse: '' } satisfies Get15118EVCertificateResponse;
      case 'GetCertificateStatus':
        return { status: 'Failed' } satisfies GetCertificateStatusResponse;
      case 'NotifyEVChargingNeeds':
        return { status: 'Rejected' } satisfies NotifyEVChargingNeedsResponse;
      case 'NotifyEVChargingSchedule':
        return { status: 'Accepted' } satisfies NotifyEVChargingScheduleResponse;
      default:
        return {};
    }
  },

  toCall(command: ChargerCommand, remoteStartId: number) {
    const central = (idTag: string): IdTokenType => ({ idToken: idTag, type: 'Central' });
    switch (command.kind) {
      case 'start':
        return {
          action: 'RequestStartTransaction',
          payload: {
            idToken: central(command.id_tag),
            remoteStartId,
            ...(command.evse_id ? { evseId: command.evse_id } : {}),
            ...(command.profile ? { chargingProfile: profile201(command.profile) } : {}),
          },
        };
      case 'stop':
        return { action: 'RequestStopTransaction', payload: { transactionId: command.transaction_id } };
      case 'reserve':
        return {
          action: 'ReserveNow',
          payload: {
            id: command.reservation_id,
            expiryDateTime: command.expiry_date,
            idToken: { idToken: command.id_tag, type: command.id_tag_type ?? 'Central' },
            ...(command.evse_id ? { evseId: command.evse_id } : {}),
          },
        };
      case 'cancel-reservation':
        return { action: 'CancelReservation', payload: { reservationId: command.reservation_id } };
      case 'unlock':
        return { action: 'UnlockConnector', payload: { evseId: command.evse_id, connectorId: command.connector_id } };
      case 'trigger':
        return {
          action: 'TriggerMessage',
          payload: {
            requestedMessage:
              command.message === 'DiagnosticsStatusNotification' ? 'LogStatusNotification' : command.message,
            ...(command.evse_id
              ? { evse: { id: command.evse_id, ...optional('connectorId', command.connector_id) } }
              : {}),
          },
        };
      default:
        return operatorCall201(command);
    }
  },

  salvageEnd(action, payload, now) {
    return action === 'TransactionEvent' ? salvageEnded201(payload, now) : undefined;
  },

  answerStatus(payload, command) {
    // a new password is one variable: its own status says whether the charger took it (A01); a
    // result for another variable is no answer to it, and an Accepted there took no password
    if (command.kind === 'set-password' && 'setVariableResult' in payload) {
      const own = payload.setVariableResult.find(
        (r) => r.component.name.toLowerCase() === 'securityctrlr' && isSecretName(r.variable.name),
      );
      return own?.attributeStatus ?? 'Rejected';
    }
    if ('status' in payload && typeof payload.status === 'string') return payload.status;
    if ('setVariableResult' in payload) return resultsStatus(payload.setVariableResult);
    if ('getVariableResult' in payload) return resultsStatus(payload.getVariableResult);
    return 'Accepted';
  },
};

/**
 * A Set/GetVariables answer has no status of its own, only one per variable: the status when
 * they all agree, else the first that is not Accepted (the reply lists each). A charger that
 * took none of them is not shown as Accepted (docs/CSMS.md "Operations").
 */
function resultsStatus(results: ReadonlyArray<{ attributeStatus: string }>): string {
  const first = results[0]?.attributeStatus ?? 'Accepted';
  if (results.every((r) => r.attributeStatus === first)) return first;
  return results.find((r) => r.attributeStatus !== 'Accepted')?.attributeStatus ?? 'Accepted';
}
