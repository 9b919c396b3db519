import { clockReply, type ChargerCommand, type ChargerEvent, type ChargerEventOutcome, type ProtocolAdapter, type WireCall } from '../domain.js';
import { energyRegisterWh, type SampledReading } from '../meter.js';

/* Wire shapes of the OCPP 2.0.1 messages handled here, as their official schemas guarantee. */
interface IdToken {
  idToken: string;
  type: string;
}
interface BootNotificationReq {
  chargingStation: { model: string; vendorName: string; serialNumber?: string; firmwareVersion?: string };
  reason: string;
}
interface StatusNotificationReq {
  timestamp: string;
  connectorStatus: string;
  evseId: number;
  connectorId: number;
}
interface SampledValue201 {
  value: number;
  measurand?: string;
  phase?: string;
  unitOfMeasure?: { unit?: string; multiplier?: number };
}
interface MeterValue201 {
  timestamp: string;
  sampledValue: SampledValue201[];
}
interface TransactionEventReq {
  eventType: 'Started' | 'Updated' | 'Ended';
  timestamp: string;
  triggerReason: string;
  seqNo: number;
  transactionInfo: { transactionId: string; stoppedReason?: string; remoteStartId?: number };
  idToken?: IdToken;
  evse?: { id: number; connectorId?: number };
  meterValue?: MeterValue201[];
}
interface MeterValuesReq {
  evseId: number;
  meterValue: MeterValue201[];
}
interface ReservationStatusUpdateReq {
  reservationId: number;
  reservationUpdateStatus: string;
}

function energyWh(meterValue: MeterValue201[] | undefined): number | null {
  const last = meterValue?.[meterValue.length - 1];
  if (!last) return null;
  const samples: SampledReading[] = last.sampledValue.map((s) => ({
    value: s.value,
    measurand: s.measurand,
    phase: s.phase,
    unit: s.unitOfMeasure?.unit ?? 'Wh',
    multiplier: s.unitOfMeasure?.multiplier ?? 0,
  }));
  return energyRegisterWh(samples);
}

/** OCPP 2.0.1: EVSEs and connectors are numbered separately; the charger names transactions. */
export const ocpp201Adapter: ProtocolAdapter = {
  version: 'ocpp2.0.1',

  toEvent(action, payload): ChargerEvent | null | undefined {
    switch (action) {
      case 'BootNotification': {
        const p = payload as BootNotificationReq;
        return {
          type: 'booted',
          vendor: p.chargingStation.vendorName,
          model: p.chargingStation.model,
          serial_number: p.chargingStation.serialNumber ?? null,
          firmware_version: p.chargingStation.firmwareVersion ?? null,
          reason: p.reason,
        };
      }
      case 'Heartbeat':
        return null;
      case 'StatusNotification': {
        const p = payload as StatusNotificationReq;
        return { type: 'status-changed', evse_id: p.evseId, connector_id: p.connectorId, status: p.connectorStatus, error_code: null, timestamp: p.timestamp };
      }
      case 'Authorize':
        return { type: 'authorize-requested', id_tag: (payload as { idToken: IdToken }).idToken.idToken };
      case 'TransactionEvent': {
        const p = payload as TransactionEventReq;
        const transactionId = p.transactionInfo.transactionId;
        const idTag = p.idToken?.idToken ?? null;
        const wh = energyWh(p.meterValue);
        if (p.eventType === 'Started') {
          return {
            type: 'transaction-started',
            transaction_id: transactionId,
            // 2.0.1 part 2 E01: a retried message repeats transactionId and seqNo
            dedupe_key: `${transactionId}|${p.seqNo}`,
            evse_id: p.evse?.id ?? 0,
            connector_id: p.evse?.connectorId ?? 1,
            id_tag: idTag,
            meter_start_wh: wh,
            timestamp: p.timestamp,
            seq_no: p.seqNo,
            remote_start_id: p.transactionInfo.remoteStartId ?? null,
          };
        }
        if (p.eventType === 'Updated') {
          return { type: 'transaction-updated', transaction_id: transactionId, meter_wh: wh, timestamp: p.timestamp, seq_no: p.seqNo, id_tag: idTag };
        }
        return {
          type: 'transaction-ended',
          transaction_id: transactionId,
          meter_wh: wh,
          timestamp: p.timestamp,
          reason: p.transactionInfo.stoppedReason ?? 'Local',
          seq_no: p.seqNo,
          id_tag: idTag,
        };
      }
      case 'MeterValues': {
        const p = payload as MeterValuesReq;
        const last = p.meterValue[p.meterValue.length - 1];
        return { type: 'meter-sampled', transaction_id: null, evse_id: p.evseId, meter_wh: energyWh(p.meterValue), timestamp: last?.timestamp ?? new Date().toISOString() };
      }
      case 'ReservationStatusUpdate': {
        const p = payload as ReservationStatusUpdateReq;
        return { type: 'reservation-updated', reservation_id: p.reservationId, status: p.reservationUpdateStatus };
      }
      default:
        return undefined;
    }
  },

  toReply(action, payload, outcome: ChargerEventOutcome | undefined, now) {
    const idTokenInfo = { status: outcome?.id_tag_status ?? 'Accepted' };
    const clock = clockReply(action, outcome, now);
    if (clock) return clock;
    switch (action) {
      case 'Authorize':
        return { idTokenInfo };
      case 'TransactionEvent':
        // idTokenInfo is required with an idToken (E01); a refusal is sent even without one, so
        // that the charger learns its transaction was not accepted (StopTxOnInvalidId)
        return (payload as TransactionEventReq).idToken || idTokenInfo.status !== 'Accepted' ? { idTokenInfo } : {};
      default:
        return {};
    }
  },

  toCall(command: ChargerCommand, remoteStartId: number): WireCall {
    const central = (idTag: string): IdToken => ({ idToken: idTag, type: 'Central' });
    switch (command.kind) {
      case 'start':
        return {
          action: 'RequestStartTransaction',
          payload: { idToken: central(command.id_tag), remoteStartId, ...(command.evse_id ? { evseId: command.evse_id } : {}) },
        };
      case 'stop':
        return { action: 'RequestStopTransaction', payload: { transactionId: command.transaction_id } };
      case 'reserve':
        return {
          action: 'ReserveNow',
          payload: {
            id: command.reservation_id,
            expiryDateTime: command.expiry_date,
            idToken: central(command.id_tag),
            ...(command.evse_id ? { evseId: command.evse_id } : {}),
          },
        };
      case 'cancel-reservation':
        return { action: 'CancelReservation', payload: { reservationId: command.reservation_id } };
      case 'unlock':
        return { action: 'UnlockConnector', payload: { evseId: command.evse_id, connectorId: command.connector_id } };
      case 'trigger':
        return { action: 'TriggerMessage', payload: { requestedMessage: command.message, ...(command.evse_id ? { evse: { id: command.evse_id } } : {}) } };
    }
  },

  answerStatus(_action, payload) {
    const status = (payload as { status?: unknown }).status;
    return typeof status === 'string' ? status : 'Accepted';
  },
};
