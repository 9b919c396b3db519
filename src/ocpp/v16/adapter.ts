import type { OcppCall } from '../messages.js';
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
  AuthorizeResponse,
  BootNotificationRequest,
  DataTransferResponse,
  SignCertificateResponse,
  HeartbeatResponse,
  MeterValuesRequest,
  SetChargingProfileRequest,
  StartTransactionRequest,
  StartTransactionResponse,
  StatusNotificationRequest,
  StopTransactionRequest,
  StopTransactionResponse,
} from '../generated/ocpp16.js';
import { authorizationKeyOf } from '../basic-auth-password.js';
import { hardwareOf } from '../boot-hardware.js';
import {
  loadReadings,
  decimalOf,
  earliestRegisterReading,
  latestRegisterReading,
  peakAbove,
  signedReading,
  type RegisterReading,
  type SignedReading,
  type SampledReading,
} from '../meter.js';
import { report16 } from '../reports.js';
import { salvageStop16 } from '../salvage.js';

/**
 * The signed register readings of meter values: a `SignedData` value in OCMF (it begins with
 * `OCMF|`, the encoding the value names itself; another encoding has no name in 1.6 and is left
 * out), with the Raw register reading of the same entry and context as its plain data.
 */
function signed16(meterValue: MeterValuesRequest['meterValue'] | undefined): SignedReading[] {
  const out: SignedReading[] = [];
  for (const entry of meterValue ?? []) {
    for (const s of entry.sampledValue) {
      if (s.format !== 'SignedData' || !s.value.startsWith('OCMF|')) continue;
      const plain = entry.sampledValue.find(
        (r) =>
          r.format !== 'SignedData' &&
          (r.measurand ?? 'Energy.Active.Import.Register') === (s.measurand ?? 'Energy.Active.Import.Register') &&
          r.context === s.context,
      );
      const reading = signedReading({
        measurand: s.measurand,
        context: s.context,
        encoding: 'OCMF',
        public_key: undefined,
        plain: plain?.value ?? '',
        signed: s.value,
        timestamp: entry.timestamp,
      });
      if (reading) out.push(reading);
    }
  }
  return out;
}

function samples16(entry: MeterValuesRequest['meterValue'][number]): SampledReading[] {
  return entry.sampledValue.map((s) => ({
    // a SignedData value is a signed block in hex (ValueFormat), no number, even when its digits
    // happen to be all decimal: read as Wh, it made a 500 Wh session 30 MWh
    value: s.format === 'SignedData' ? Number.NaN : decimalOf(s.value),
    measurand: s.measurand,
    phase: s.phase,
    unit: s.unit,
    multiplier: 0,
    location: s.location,
    context: s.context,
  }));
}

/** The register reading with the latest timestamp (meter.ts), and the time of the message's last entry. */
function readings(meterValue: MeterValuesRequest['meterValue']): {
  reading: RegisterReading | null;
  timestamp: string | undefined;
} {
  return {
    reading: latestRegisterReading(meterValue, samples16),
    timestamp: meterValue[meterValue.length - 1]?.timestamp,
  };
}

type EventOf<T extends ChargerEvent['type']> = Extract<ChargerEvent, { type: T }>;

function booted(p: BootNotificationRequest): EventOf<'booted'> {
  return {
    type: 'booted',
    vendor: p.chargePointVendor,
    model: p.chargePointModel,
    serial_number: p.chargePointSerialNumber ?? p.chargeBoxSerialNumber ?? null,
    firmware_version: p.firmwareVersion ?? null,
    reason: null,
    ...hardwareOf({
      iccid: p.iccid,
      imsi: p.imsi,
      meter_type: p.meterType,
      meter_serial_number: p.meterSerialNumber,
      charge_box_serial_number: p.chargeBoxSerialNumber,
    }),
  };
}

function statusChanged(p: StatusNotificationRequest): EventOf<'status-changed'> {
  return {
    type: 'status-changed',
    evse_id: p.connectorId,
    connector_id: p.connectorId,
    status: p.status,
    error_code: p.errorCode === 'NoError' ? null : p.errorCode,
    ...(p.info === undefined || p.info === '' ? {} : { info: p.info }),
    ...(p.vendorId === undefined || p.vendorId === '' ? {} : { vendor_id: p.vendorId }),
    ...(p.vendorErrorCode === undefined || p.vendorErrorCode === '' ? {} : { vendor_error_code: p.vendorErrorCode }),
    timestamp: p.timestamp ?? new Date().toISOString(),
  };
}

function transactionStarted(p: StartTransactionRequest): EventOf<'transaction-started'> {
  return {
    type: 'transaction-started',
    transaction_id: null,
    // a retried StartTransaction repeats these four fields exactly (OCPP 1.6 section 4.8)
    dedupe_key: `${p.connectorId}|${p.idTag}|${p.meterStart}|${p.timestamp}`,
    evse_id: p.connectorId,
    connector_id: p.connectorId,
    id_tag: p.idTag,
    // a negative register is none (src/ocpp/meter.ts MAX_REGISTER_WH); 1.6's integer stays below the top
    meter_start_wh: p.meterStart >= 0 ? p.meterStart : null,
    timestamp: p.timestamp,
    seq_no: null,
    remote_start_id: null,
    reservation_id: p.reservationId ?? null,
  };
}

function transactionEnded(p: StopTransactionRequest): EventOf<'transaction-ended'> {
  const data = p.transactionData;
  const begin = data === undefined ? null : earliestRegisterReading(data, samples16);
  const found = data === undefined ? null : latestRegisterReading(data, samples16);
  // the Begin reading alone (no later reading) tells nothing of the end
  const latest = found && begin?.named && found.wh === begin.wh && found.timestamp === begin.timestamp ? null : found;
  // a register only grows: a meterStop below a reading the stop itself carries (a failed read
  // sends 0) is no end of the register, that reading is (docs/CSMS.md "Energy and out-of-order readings")
  const stop = p.meterStop >= 0 ? p.meterStop : null;
  const failedRead = latest !== null && (stop === null || stop < latest.wh);
  const end = failedRead ? latest.wh : stop;
  const peak = peakAbove(data, samples16, end);
  const signed = signed16(data);
  return {
    type: 'transaction-ended',
    transaction_id: String(p.transactionId),
    ...(signed.length > 0 ? { signed } : {}),
    meter_wh: end,
    ...(failedRead ? { meter_at: latest.timestamp } : {}),
    ...(peak === null ? {} : { meter_peak: peak }),
    timestamp: p.timestamp,
    reason: p.reason ?? 'Local',
    seq_no: null,
    id_tag: p.idTag ?? null,
    ...(begin === null ? {} : { begin }),
  };
}

/**
 * MeterValues with a transactionId update that transaction; without, they are a plain sample. So
 * are those of connector 0, whatever transaction they name: connector 0 is the charger's main
 * meter (OCPP 1.6 section 4.7), whose register counts every connector, not the transaction's.
 */
function meterValues(p: MeterValuesRequest): EventOf<'transaction-updated' | 'meter-sampled'> {
  const { reading, timestamp } = readings(p.meterValue);
  const ts = reading?.timestamp ?? timestamp ?? new Date().toISOString();
  const wh = reading?.wh ?? null;
  if (p.transactionId !== undefined && p.connectorId !== 0) {
    const currents = loadReadings(p.meterValue, samples16);
    const signed = signed16(p.meterValue);
    // a reading named Transaction.Begin may correct the transaction's first (charge-point actor)
    const named = p.meterValue.some((m) => m.sampledValue.some((v) => v.context === 'Transaction.Begin'));
    const begin = named ? earliestRegisterReading(p.meterValue, samples16) : null;
    // the Begin reading alone is no progress of the register: it waits for the end
    const beginOnly =
      begin?.named && reading !== null && reading.wh === begin.wh && reading.timestamp === begin.timestamp;
    const peak = beginOnly ? null : peakAbove(p.meterValue, samples16, wh);
    return {
      type: 'transaction-updated',
      transaction_id: String(p.transactionId),
      ...(currents.length > 0 ? { currents } : {}),
      ...(signed.length > 0 ? { signed } : {}),
      ...(begin?.named ? { begin } : {}),
      ...(peak === null ? {} : { meter_peak: peak }),
      meter_wh: beginOnly ? null : wh,
      timestamp: ts,
      seq_no: null,
      id_tag: null,
      // a 1.6 connector is an EVSE: a transaction whose start never arrived is on it (0 names none)
      evse_id: p.connectorId,
      connector_id: p.connectorId,
    };
  }
  return { type: 'meter-sampled', transaction_id: null, evse_id: p.connectorId, meter_wh: wh, timestamp: ts };
}

const idTagStatuses: ReadonlyArray<AuthorizeResponse['idTagInfo']['status']> = [
  'Accepted',
  'Blocked',
  'Expired',
  'Invalid',
  'ConcurrentTx',
];

/** GetDiagnostics, or the security whitepaper's GetLog for the security log. */
function logCall16(command: Extract<ChargerCommand, { kind: 'upload-log' }>): OcppCall<'ocpp1.6'> {
  if (command.log_type === 'security') return { action: 'GetLog', payload: getLogPayload(command) };
  return {
    action: 'GetDiagnostics',
    payload: {
      location: command.location,
      ...optional('startTime', command.since),
      ...optional('stopTime', command.until),
    },
  };
}

const PURPOSE_16 = {
  charger_max: 'ChargePointMaxProfile',
  tx_default: 'TxDefaultProfile',
  tx: 'TxProfile',
} as const satisfies Record<ChargingProfile['purpose'], string>;

/** A charging profile as 1.6 csChargingProfiles (its transactionId is the number the CSMS gave). */
function profile16(p: ChargingProfile): SetChargingProfileRequest['csChargingProfiles'] {
  const { schedule, ...common } = chargingProfileParts(p);
  return {
    chargingProfileId: p.id,
    chargingProfilePurpose: PURPOSE_16[p.purpose],
    ...common,
    ...optional('transactionId', p.transaction_id === undefined ? undefined : Number(p.transaction_id)),
    chargingSchedule: schedule,
  };
}

/** Smart charging and the local list as 1.6 calls. */
function limitCall16(command: ChargerCommand): OcppCall<'ocpp1.6'> | undefined {
  switch (command.kind) {
    case 'set-charging-profile':
      return {
        action: 'SetChargingProfile',
        payload: { connectorId: command.evse_id, csChargingProfiles: profile16(command.profile) },
      };
    case 'clear-charging-profile':
      return {
        action: 'ClearChargingProfile',
        payload: {
          ...optional('id', command.profile_id),
          ...optional('connectorId', command.evse_id),
          ...optional('chargingProfilePurpose', command.purpose === null ? null : PURPOSE_16[command.purpose]),
          ...optional('stackLevel', command.stack_level),
        },
      };
    case 'get-composite-schedule':
      return {
        action: 'GetCompositeSchedule',
        payload: {
          connectorId: command.evse_id,
          duration: command.duration_s,
          ...optional('chargingRateUnit', command.rate_unit),
        },
      };
    case 'send-local-list':
      return {
        action: 'SendLocalList',
        payload: {
          listVersion: command.version,
          updateType: capitalized(command.update),
          // an empty full update clears the list; 2.0.1 forbids an empty array, 1.6 takes none too
          ...(command.entries.length === 0
            ? {}
            : {
                localAuthorizationList: command.entries.map((e) => ({
                  idTag: e.id_tag,
                  ...(e.status === null
                    ? {}
                    : {
                        idTagInfo: {
                          status: e.status,
                          ...optional('expiryDate', e.expiry),
                          // IdToken is CiString20: a longer group is not sent (as in Authorize)
                          ...optional(
                            'parentIdTag',
                            e.group_id !== undefined && e.group_id.length <= 20 ? e.group_id : undefined,
                          ),
                        },
                      }),
                })),
              }),
        },
      };
    default:
      return undefined;
  }
}

/** The operator's operations (docs/CSMS.md "Operations") as 1.6 calls (the security whitepaper's GetLog included). */
function operatorCall16(command: ChargerCommand): OcppCall<'ocpp1.6'> | undefined {
  switch (command.kind) {
    case 'change-availability':
      return {
        action: 'ChangeAvailability',
        payload: { connectorId: command.evse_id ?? 0, type: command.operative ? 'Operative' : 'Inoperative' },
      };
    case 'reset':
      return { action: 'Reset', payload: { type: command.type === 'hard' ? 'Hard' : 'Soft' } };
    case 'clear-cache':
      return { action: 'ClearCache', payload: {} };
    case 'get-configuration':
      return { action: 'GetConfiguration', payload: command.keys.length > 0 ? { key: command.keys } : {} };
    case 'change-configuration':
      return { action: 'ChangeConfiguration', payload: { key: command.key, value: command.value } };
    case 'get-local-list-version':
      return { action: 'GetLocalListVersion', payload: {} };
    case 'data-transfer':
      // text on 1.6: a JSON value (which the /v1 route refuses here) would go as its text
      return {
        action: 'DataTransfer',
        payload: dataTransferPayload(command, (d) => (typeof d === 'string' ? d : JSON.stringify(d))),
      };
    case 'update-firmware':
      return {
        action: 'UpdateFirmware',
        payload: {
          location: command.location,
          retrieveDate: command.retrieve_at,
          ...optional('retries', command.retries),
          ...optional('retryInterval', command.retry_interval_s),
        },
      };
    case 'upload-log':
      return logCall16(command);
    case 'set-password':
      // the security whitepaper: the new password's octets, hexadecimal
      return {
        action: 'ChangeConfiguration',
        payload: { key: 'AuthorizationKey', value: authorizationKeyOf(command.password) },
      };
    default:
      return limitCall16(command);
  }
}

/** OCPP 1.6-J: connector ids double as EVSE ids (one connector per EVSE). */
export const ocpp16Adapter: ProtocolAdapter<'ocpp1.6'> = {
  version: 'ocpp1.6',

  toEvent(call): ChargerEvent | null | undefined {
    switch (call.action) {
      case 'BootNotification':
        return booted(call.payload);
      case 'Heartbeat':
        return null;
      case 'StatusNotification':
        return statusChanged(call.payload);
      case 'Authorize':
        return { type: 'authorize-requested', id_tag: call.payload.idTag };
      case 'StartTransaction':
        return transactionStarted(call.payload);
      case 'StopTransaction':
        return transactionEnded(call.payload);
      case 'MeterValues':
        return meterValues(call.payload);
      default:
        return report16(call);
    }
  },

  toReply(call, outcome: ChargerEventOutcome | undefined, now) {
    // read only by the replies that carry it: an outcome's status word is checked where it is sent
    const idTagInfo = () => ({
      status: oneOf(idTagStatuses, outcome?.id_tag_status ?? 'Accepted', 'idTagInfo.status'),
      ...optional('expiryDate', outcome?.cache_expiry),
      // IdToken is CiString20: a longer group is not sent (the charger then matches tags only)
      ...optional(
        'parentIdTag',
        outcome?.group_id !== undefined && outcome.group_id.length <= 20 ? outcome.group_id : undefined,
      ),
    });
    switch (call.action) {
      case 'BootNotification':
        return bootReply(outcome, now);
      case 'Heartbeat':
        return { currentTime: now.toISOString() } satisfies HeartbeatResponse;
      case 'Authorize':
        return { idTagInfo: idTagInfo() } satisfies AuthorizeResponse;
      case 'StartTransaction':
        return {
          transactionId: Number(outcome?.transaction_id ?? 0),
          idTagInfo: idTagInfo(),
        } satisfies StartTransactionResponse;
      case 'StopTransaction':
        return call.payload.idTag !== undefined ? ({ idTagInfo: idTagInfo() } satisfies StopTransactionResponse) : {};
      case 'DataTransfer': {
        const answer = outcome?.data_transfer ?? { status: 'UnknownVendorId' as const };
        // 1.6 data is text: a handler's structured answer goes as its JSON
        const data =
          answer.data === undefined
            ? undefined
            : typeof answer.data === 'string'
              ? answer.data
              : JSON.stringify(answer.data);
        return { status: answer.status, ...(data === undefined ? {} : { data }) } satisfies DataTransferResponse;
      }
      // no certificate authority here (docs/CSMS.md)
      case 'SignCertificate':
        return { status: 'Rejected' } satisfies SignCertificateResponse;
      default:
        return {};
    }
  },

  toCall(command: ChargerCommand) {
    switch (command.kind) {
      case 'start': {
        const connectorId = command.connector_id ?? command.evse_id;
        return {
          action: 'RemoteStartTransaction',
          payload: {
            idTag: command.id_tag,
            ...(connectorId ? { connectorId } : {}),
            ...(command.profile ? { chargingProfile: profile16(command.profile) } : {}),
          },
        };
      }
      case 'stop':
        return { action: 'RemoteStopTransaction', payload: { transactionId: Number(command.transaction_id) } };
      case 'reserve':
        return {
          action: 'ReserveNow',
          payload: {
            connectorId: command.connector_id ?? command.evse_id ?? 0,
            expiryDate: command.expiry_date,
            idTag: command.id_tag,
            reservationId: command.reservation_id,
          },
        };
      case 'cancel-reservation':
        return { action: 'CancelReservation', payload: { reservationId: command.reservation_id } };
      case 'unlock':
        return { action: 'UnlockConnector', payload: { connectorId: command.evse_id } };
      case 'trigger':
        return {
          action: 'TriggerMessage',
          payload: {
            requestedMessage:
              command.message === 'LogStatusNotification' ? 'DiagnosticsStatusNotification' : command.message,
            ...(command.evse_id ? { connectorId: command.evse_id } : {}),
          },
        };
      default:
        return operatorCall16(command);
    }
  },

  salvageEnd(action, payload, now, valid) {
    if (action !== 'StopTransaction') return undefined;
    const salvaged = salvageStop16(payload, now);
    const data =
      payload !== null && typeof payload === 'object'
        ? Object.getOwnPropertyDescriptor(payload, 'transactionData')?.value
        : undefined;
    if (!salvaged || data === undefined) return salvaged;
    // the stop's own readings (transactionData), when they are valid, count as a valid stop's do:
    // a Transaction.End reading beside a meterStop that failed its schema was lost, and the CDR
    // billed the last MeterValues. Checked as the stop rebuilt of its valid fields (meterStop
    // for the schema; its salvaged value is used)
    const rebuilt = {
      transactionId: Number(salvaged.transaction_id),
      meterStop: -1,
      timestamp: salvaged.timestamp,
      transactionData: data,
    };
    if (!valid('StopTransaction', rebuilt)) return salvaged;
    const read = transactionEnded({ ...(rebuilt as StopTransactionRequest), meterStop: salvaged.meter_wh ?? -1 });
    return { ...read, reason: salvaged.reason, salvaged: true };
  },

  answerStatus(payload) {
    return 'status' in payload && typeof payload.status === 'string' ? payload.status : 'Accepted';
  },
};
