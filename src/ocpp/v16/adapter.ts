import { clockReply, type ChargerCommand, type ChargerEvent, type ChargerEventOutcome, type ProtocolAdapter, type WireCall } from '../domain.js';
import { energyRegisterWh, type SampledReading } from '../meter.js';

/*
 * Wire shapes of the OCPP 1.6-J messages handled here. Payloads reach this file only after they
 * passed the official schema, so these describe what the schema guarantees.
 */
interface BootNotificationReq {
  chargePointVendor: string;
  chargePointModel: string;
  chargePointSerialNumber?: string;
  chargeBoxSerialNumber?: string;
  firmwareVersion?: string;
}
interface StatusNotificationReq {
  connectorId: number;
  errorCode: string;
  status: string;
  timestamp?: string;
}
interface AuthorizeReq {
  idTag: string;
}
interface StartTransactionReq {
  connectorId: number;
  idTag: string;
  meterStart: number;
  timestamp: string;
  reservationId?: number;
}
interface StopTransactionReq {
  transactionId: number;
  meterStop: number;
  timestamp: string;
  idTag?: string;
  reason?: string;
}
interface SampledValue16 {
  value: string;
  measurand?: string;
  phase?: string;
  unit?: string;
}
interface MeterValuesReq {
  connectorId: number;
  transactionId?: number;
  meterValue: Array<{ timestamp: string; sampledValue: SampledValue16[] }>;
}

function readings(meterValue: MeterValuesReq['meterValue']): { wh: number | null; timestamp: string | undefined } {
  const last = meterValue[meterValue.length - 1];
  if (!last) return { wh: null, timestamp: undefined };
  const samples: SampledReading[] = last.sampledValue.map((s) => ({
    value: Number(s.value),
    measurand: s.measurand,
    phase: s.phase,
    unit: s.unit,
    multiplier: 0,
  }));
  return { wh: energyRegisterWh(samples), timestamp: last.timestamp };
}

/** OCPP 1.6-J: connector ids double as EVSE ids (one connector per EVSE). */
export const ocpp16Adapter: ProtocolAdapter = {
  version: 'ocpp1.6',

  toEvent(action, payload): ChargerEvent | null | undefined {
    switch (action) {
      case 'BootNotification': {
        const p = payload as BootNotificationReq;
        return {
          type: 'booted',
          vendor: p.chargePointVendor,
          model: p.chargePointModel,
          serial_number: p.chargePointSerialNumber ?? p.chargeBoxSerialNumber ?? null,
          firmware_version: p.firmwareVersion ?? null,
          reason: null,
        };
      }
      case 'Heartbeat':
        return null;
      case 'StatusNotification': {
        const p = payload as StatusNotificationReq;
        return {
          type: 'status-changed',
          evse_id: p.connectorId,
          connector_id: p.connectorId,
          status: p.status,
          error_code: p.errorCode === 'NoError' ? null : p.errorCode,
          timestamp: p.timestamp ?? new Date().toISOString(),
        };
      }
      case 'Authorize':
        return { type: 'authorize-requested', id_tag: (payload as AuthorizeReq).idTag };
      case 'StartTransaction': {
        const p = payload as StartTransactionReq;
        return {
          type: 'transaction-started',
          transaction_id: null,
          // a retried StartTransaction repeats these four fields exactly (1.6 section 4.8)
          dedupe_key: `${p.connectorId}|${p.idTag}|${p.meterStart}|${p.timestamp}`,
          evse_id: p.connectorId,
          connector_id: p.connectorId,
          id_tag: p.idTag,
          meter_start_wh: p.meterStart,
          timestamp: p.timestamp,
          seq_no: null,
          remote_start_id: null,
        };
      }
      case 'StopTransaction': {
        const p = payload as StopTransactionReq;
        return {
          type: 'transaction-ended',
          transaction_id: String(p.transactionId),
          meter_wh: p.meterStop,
          timestamp: p.timestamp,
          reason: p.reason ?? 'Local',
          seq_no: null,
          id_tag: p.idTag ?? null,
        };
      }
      case 'MeterValues': {
        const p = payload as MeterValuesReq;
        const { wh, timestamp } = readings(p.meterValue);
        const ts = timestamp ?? new Date().toISOString();
        if (p.transactionId !== undefined) {
          return { type: 'transaction-updated', transaction_id: String(p.transactionId), meter_wh: wh, timestamp: ts, seq_no: null, id_tag: null };
        }
        return { type: 'meter-sampled', transaction_id: null, evse_id: p.connectorId, meter_wh: wh, timestamp: ts };
      }
      default:
        return undefined;
    }
  },

  toReply(action, payload, outcome: ChargerEventOutcome | undefined, now) {
    const idTagInfo = { status: outcome?.id_tag_status ?? 'Accepted' };
    const clock = clockReply(action, outcome, now);
    if (clock) return clock;
    switch (action) {
      case 'Authorize':
        return { idTagInfo };
      case 'StartTransaction':
        return { transactionId: Number(outcome?.transaction_id ?? 0), idTagInfo };
      case 'StopTransaction':
        return (payload as StopTransactionReq).idTag !== undefined ? { idTagInfo } : {};
      default:
        return {};
    }
  },

  toCall(command: ChargerCommand): WireCall {
    switch (command.kind) {
      case 'start':
        return {
          action: 'RemoteStartTransaction',
          payload: { idTag: command.id_tag, ...(command.connector_id ?? command.evse_id ? { connectorId: command.connector_id ?? command.evse_id } : {}) },
        };
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
        return { action: 'TriggerMessage', payload: { requestedMessage: command.message, ...(command.evse_id ? { connectorId: command.evse_id } : {}) } };
    }
  },

  answerStatus(_action, payload) {
    const status = (payload as { status?: unknown }).status;
    return typeof status === 'string' ? status : 'Accepted';
  },
};
