import type { ChargerEvent } from './domain.js';
import type { StopTransactionRequest } from './generated/ocpp16.js';
import type { ReasonEnumType } from './generated/ocpp201.js';
import { latestRegisterReading, type SampledReading } from './meter.js';

/**
 * The end of a transaction read from a StopTransaction (1.6) or TransactionEvent Ended (2.0.1)
 * that failed its schema (docs/CSMS.md "Transaction ends that fail their schema"): the charger
 * gets its CALLERROR, and the transaction is closed all the same from the fields that are valid
 * on their own, so that a charger's bug does not leave a session ACTIVE forever.
 *
 * The payload is any JSON. Only a few fields at known places are read, each checked against its
 * schema's constraints here, with no recursion and bounded loops; a field that fails is treated
 * as absent. `undefined`: the message is not a transaction's end; `null`: it is one, but names no
 * transaction that could be closed.
 */
export type SalvagedEnd = Extract<ChargerEvent, { type: 'transaction-ended' }>;

/** meter values and samples looked at in a salvaged 2.0.1 end (a frame is at most 256 KiB anyway) */
const MAX_ENTRIES = 100;
const MAX_SAMPLES = 100;

type JsonObject = Record<string, unknown>;

function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function objectOf(v: unknown): JsonObject | undefined {
  return isJsonObject(v) ? v : undefined;
}

/** A field of the object itself (a JSON key `__proto__` or `constructor` is data, not inherited). */
function own(o: JsonObject | undefined, key: string): unknown {
  return o !== undefined && Object.hasOwn(o, key) ? o[key] : undefined;
}

/** A string the stores can hold: within its length, without U+0000 (src/ocpp/text-guard.ts). */
function text(v: unknown, maxLength: number): string | undefined {
  return typeof v === 'string' && v.length >= 1 && v.length <= maxLength && !v.includes('\u0000') ? v : undefined;
}

/** RFC 3339 date-time, as the schemas' `date-time` format (a time zone required). */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

function dateTime(v: unknown): string | undefined {
  const s = text(v, 40);
  return s !== undefined && DATE_TIME.test(s) && Number.isFinite(Date.parse(s)) ? s : undefined;
}

function integer(v: unknown, minimum = Number.MIN_SAFE_INTEGER): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= minimum ? v : undefined;
}

/** A register reading written as a decimal: digits, a fraction of up to 9 digits. */
const DECIMAL = /^\d{1,15}(\.\d{1,9})?$/;

/**
 * 1.6 meterStop, which the schema makes an integer of Wh: also a number with a fraction (7845.6)
 * and a decimal string ("7846"), the readings firmware sends that way (a MeterValues `value` is a
 * string), within the range of safe integers. Anything else is absent: the last known reading
 * stays. A register read is what the charger billed; dropped, the session kept its last meter
 * value (0 Wh when it sent none) and the CDR billed that.
 */
function registerReading(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER ? v : undefined;
  const s = text(v, 30)?.trim();
  return s !== undefined && DECIMAL.test(s) ? Number(s) : undefined;
}

/**
 * A reason in its enumeration; present but not in it: `Other` (the charger gave a reason this CSMS
 * cannot read); absent: `absent`.
 */
function reasonOf<R extends string>(v: unknown, known: Readonly<Record<R, true>>, absent: R | null): string | null {
  if (v === undefined) return absent;
  return typeof v === 'string' && Object.hasOwn(known, v) ? v : 'Other';
}

type Reason16 = NonNullable<StopTransactionRequest['reason']>;

const reasons16: Readonly<Record<Reason16, true>> = {
  EmergencyStop: true,
  EVDisconnected: true,
  HardReset: true,
  Local: true,
  Other: true,
  PowerLoss: true,
  Reboot: true,
  Remote: true,
  SoftReset: true,
  UnlockCommand: true,
  DeAuthorized: true,
};

const reasons201: Readonly<Record<ReasonEnumType, true>> = {
  DeAuthorized: true,
  EmergencyStop: true,
  EnergyLimitReached: true,
  EVDisconnected: true,
  GroundFault: true,
  ImmediateReset: true,
  Local: true,
  LocalOutOfCredit: true,
  MasterPass: true,
  Other: true,
  OvercurrentFault: true,
  PowerLoss: true,
  PowerQuality: true,
  Reboot: true,
  Remote: true,
  SOCLimitReached: true,
  StoppedByEV: true,
  TimeLimitReached: true,
  Timeout: true,
};

/**
 * 1.6 StopTransaction: transactionId (integer) is required; timestamp (else the arrival time),
 * meterStop (`registerReading`, else the last known reading stays) and reason (absent: Local, the 1.6
 * default; not one of the enumeration: Other) when valid. idTag and transactionData are not read.
 */
export function salvageStop16(payload: unknown, now: Date): SalvagedEnd | null {
  const p = objectOf(payload);
  const transactionId = integer(own(p, 'transactionId'));
  if (transactionId === undefined) return null;
  return {
    type: 'transaction-ended',
    transaction_id: String(transactionId),
    meter_wh: registerReading(own(p, 'meterStop')) ?? null,
    timestamp: dateTime(own(p, 'timestamp')) ?? now.toISOString(),
    reason: reasonOf(own(p, 'reason'), reasons16, 'Local'),
    seq_no: null,
    id_tag: null,
    salvaged: true,
  };
}

/** One 2.0.1 sampledValue whose fields used for the register are well formed, else undefined. */
function sample201(v: unknown): SampledReading | undefined {
  const s = objectOf(v);
  const value = own(s, 'value');
  const measurand = own(s, 'measurand');
  const phase = own(s, 'phase');
  const location = own(s, 'location');
  const unitOfMeasure = own(s, 'unitOfMeasure');
  const uom = objectOf(unitOfMeasure);
  const unit = own(uom, 'unit');
  const multiplier = own(uom, 'multiplier');
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  if (measurand !== undefined && typeof measurand !== 'string') return undefined;
  if (phase !== undefined && typeof phase !== 'string') return undefined;
  if (location !== undefined && typeof location !== 'string') return undefined;
  if (unitOfMeasure !== undefined && uom === undefined) return undefined;
  if (unit !== undefined && typeof unit !== 'string') return undefined;
  const scale = multiplier === undefined ? 0 : integer(multiplier);
  // the schema allows any integer; 10^scale must stay a finite number of Wh here
  if (scale === undefined || Math.abs(scale) > 12) return undefined;
  const context = own(s, 'context');
  return {
    value,
    measurand,
    phase,
    unit: unit ?? 'Wh',
    multiplier: scale,
    location,
    // the End reading is the end's, whatever its stamp (meter.ts `latestRegisterReading`)
    context: typeof context === 'string' ? context : undefined,
  };
}

/** The latest register reading among the well-formed meter values of a 2.0.1 end, if any. */
function reading201(meterValue: unknown): { wh: number; timestamp: string } | null {
  if (!Array.isArray(meterValue)) return null;
  const entries: Array<{ timestamp: string; samples: SampledReading[] }> = [];
  for (const raw of meterValue.slice(0, MAX_ENTRIES)) {
    const entry = objectOf(raw);
    const timestamp = dateTime(own(entry, 'timestamp'));
    const sampled = own(entry, 'sampledValue');
    if (timestamp === undefined || !Array.isArray(sampled)) continue;
    const samples: SampledReading[] = [];
    for (const s of sampled.slice(0, MAX_SAMPLES)) {
      const sample = sample201(s);
      if (sample) samples.push(sample);
    }
    entries.push({ timestamp, samples });
  }
  const reading = latestRegisterReading(entries, (e) => e.samples);
  return reading !== null && Number.isFinite(reading.wh) ? reading : null;
}

/**
 * 2.0.1 TransactionEvent: only an `Ended` one is an end. transactionInfo.transactionId (1-36
 * characters) is required; timestamp (else the arrival time), stoppedReason (absent: Local, as the
 * valid path; not one of the enumeration: Other), seqNo and the register reading of meterValue
 * (else the last known reading stays) when valid. idToken is not read.
 */
export function salvageEnded201(payload: unknown, now: Date): SalvagedEnd | null | undefined {
  const p = objectOf(payload);
  if (own(p, 'eventType') !== 'Ended') return undefined;
  const info = objectOf(own(p, 'transactionInfo'));
  const transactionId = text(own(info, 'transactionId'), 36);
  if (transactionId === undefined) return null;
  const reading = reading201(own(p, 'meterValue'));
  return {
    type: 'transaction-ended',
    transaction_id: transactionId,
    meter_wh: reading?.wh ?? null,
    ...(reading ? { meter_at: reading.timestamp } : {}),
    timestamp: dateTime(own(p, 'timestamp')) ?? now.toISOString(),
    reason: reasonOf(own(info, 'stoppedReason'), reasons201, 'Local'),
    seq_no: integer(own(p, 'seqNo'), 0) ?? null,
    id_tag: null,
    salvaged: true,
  };
}
