import { parseInstant } from '../rfc3339.js';

/** One sampled value of a meter value, as both versions give it. */
export interface SampledReading {
  value: number;
  measurand: string | undefined;
  phase: string | undefined;
  /** the reading's unit (Wh when absent); for the register, Wh or kWh (`whPerUnit`) */
  unit: string | undefined;
  multiplier: number;
  /** where the reading was taken: Outlet when absent (Inlet, EV, Body, Cable are other meters) */
  location: string | undefined;
  /** why it was taken (ReadingContext: Transaction.Begin, Sample.Periodic, ...), when the charger says */
  context?: string | undefined;
}

/**
 * The largest register reading taken as one, in Wh (1 TWh): a 350 kW charger running without a
 * pause for 20 years counts about 61 GWh. A larger reading, or a negative one, is no reading of
 * a register (a meter fault, a unit mistake): it would bill a session for more energy than
 * exists, and is left out as if the charger had not sent it.
 */
export const MAX_REGISTER_WH = 1e12;

/**
 * Wh to the thousandth, the precision a register reading is kept and shown in: 12.3456 kWh is
 * 12345.6 Wh, not the binary product 12345.599999999999 (the charge-point actor rounds a
 * difference of two readings the same way, `energyBetween`).
 */
export function toMilliWh(wh: number): number {
  return Math.round(wh * 1000) / 1000;
}

/**
 * Wh in one unit of an energy register's reading: `Wh` (also when no unit is given, the default
 * of both versions) and `kWh`, whatever the case of their letters (2.0.1's unit is free text, and
 * chargers write `kwh` or `KWh`). Undefined for any other unit (`varh` is reactive energy, and
 * `MWh` or `mWh` is no unit of OCPP's list, with two readings a factor of 10^9 apart): such a
 * reading is left out rather than billed as if it were Wh.
 */
function whPerUnit(unit: string | undefined): number | undefined {
  if (unit === undefined) return 1;
  const lower = unit.toLowerCase();
  if (lower === 'wh') return 1;
  if (lower === 'kwh') return 1000;
  return undefined;
}

/** A decimal number as text: digits, an optional point and fraction, an optional exponent. */
const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The number a 1.6 SampledValue's `value` carries, a "Raw" (decimal) number (OCPP 1.6,
 * SampledValue), or NaN when it is none; spaces around it are let pass. `Number` would read an
 * empty or blank value as 0 (a register reset to 0, which a stop reading then could not undo)
 * and `0x7D0` as 2000.
 */
export function decimalOf(text: string): number {
  const trimmed = text.trim();
  return DECIMAL.test(trimmed) ? Number(trimmed) : Number.NaN;
}

/**
 * The energy register reading (Energy.Active.Import.Register, the default measurand in both
 * versions) of the last sample in a list of meter values, in Wh, taken at the outlet (the default
 * location in both versions); when the charger gives it per phase only, the sum of its phases.
 * Null when absent.
 */
export function energyRegisterWh(samples: SampledReading[]): number | null {
  let found: number | null = null;
  // per phase, for a charger that gives its register only per phase (L1, L2, L3, or L1-N ...)
  let l1: number | null = null;
  let l2: number | null = null;
  let l3: number | null = null;
  for (const s of samples) {
    const measurand = s.measurand ?? 'Energy.Active.Import.Register';
    if (measurand !== 'Energy.Active.Import.Register' || !Number.isFinite(s.value)) continue;
    // the energy delivered to the EV is the outlet's: an inlet's register counts the charger's own
    // use too, an EV's is the car's meter
    if (s.location !== undefined && s.location !== 'Outlet') continue;
    const perUnit = whPerUnit(s.unit);
    if (perUnit === undefined) continue;
    const wh = toMilliWh(s.value * 10 ** s.multiplier * perUnit);
    if (!(wh >= 0 && wh <= MAX_REGISTER_WH)) continue;
    if (s.phase === undefined) found = wh;
    else if (s.phase === 'L1' || s.phase === 'L1-N') l1 = wh;
    else if (s.phase === 'L2' || s.phase === 'L2-N') l2 = wh;
    else if (s.phase === 'L3' || s.phase === 'L3-N') l3 = wh;
  }
  // the whole register when given; else the sum of the phases given (a single-phase charger: L1)
  if (found !== null || (l1 === null && l2 === null && l3 === null)) return found;
  return (l1 ?? 0) + (l2 ?? 0) + (l3 ?? 0);
}

/** A register reading and the time the charger took it (its meterValue's timestamp). */
export interface RegisterReading {
  wh: number;
  timestamp: string;
  /** the charger named it Transaction.Begin: the transaction's start reading, whatever its stamp */
  named?: true;
}

/**
 * How a reading's context (OCPP's ReadingContext) ranks it as a transaction's first reading
 * (`earliestRegisterReading`) or last (`latestRegisterReading`): the reading the charger names
 * Transaction.Begin is the first and the one it names Transaction.End the last, whatever their
 * timestamps say (a charger's clock set between them, a Begin stamped at the End's instant); the
 * other end's reading is either only when no other reading is there. Readings of equal rank go by
 * their timestamps.
 */
const RANK_FIRST: Readonly<Record<string, number>> = { 'Transaction.Begin': 2, 'Transaction.End': 0 };
const RANK_LAST: Readonly<Record<string, number>> = { 'Transaction.End': 2, 'Transaction.Begin': 0 };

/** The context of the energy register's sample in a meter value (meter.ts `energyRegisterWh`), when it names one. */
function registerContext(samples: SampledReading[]): string | undefined {
  for (const s of samples) {
    if ((s.measurand ?? 'Energy.Active.Import.Register') !== 'Energy.Active.Import.Register') continue;
    if (s.location !== undefined && s.location !== 'Outlet') continue;
    if (s.context !== undefined) return s.context;
  }
  return undefined;
}

function rankOf(samples: SampledReading[], ranks: Readonly<Record<string, number>>): number {
  const context = registerContext(samples);
  return context === undefined ? 1 : (ranks[context] ?? 1);
}

/**
 * A meter value's register readings, one per context, when its register samples name several
 * (`mixedContexts`): a charger may put a transaction's Transaction.Begin and Transaction.End
 * samples in one meterValue (one timestamp, TxEndedMeasurands read together), and each is a
 * reading of its own.
 */
function byContext(samples: SampledReading[]): SampledReading[][] {
  const groups = new Map<string, SampledReading[]>();
  for (const s of samples) {
    const key = s.context ?? '';
    const group = groups.get(key);
    if (group) group.push(s);
    else groups.set(key, [s]);
  }
  return [...groups.values()];
}

/** Whether the energy register's sample of a meter value is named Transaction.Begin. */
export function namesBegin(samples: SampledReading[]): boolean {
  return registerContext(samples) === 'Transaction.Begin';
}

/**
 * Whether a meter value's register samples name several contexts (`byContext`): one, or none, in
 * every meter value but such an end.
 */
export function mixedContexts(samples: SampledReading[]): boolean {
  let first: string | undefined;
  for (const s of samples) {
    if ((s.measurand ?? 'Energy.Active.Import.Register') !== 'Energy.Active.Import.Register') continue;
    if (first === undefined) first = s.context ?? '';
    else if ((s.context ?? '') !== first) return true;
  }
  return false;
}

/**
 * A transaction's first register reading among meter values whose timestamps parse: the one
 * named Transaction.Begin (a 1.6 StopTransaction's transactionData, a 2.0.1 Ended's
 * TxEndedMeasurands), else the earliest (`RANK_FIRST`).
 */
export function earliestRegisterReading<E extends { timestamp: string }>(
  entries: readonly E[] | undefined,
  samplesOf: (entry: E) => SampledReading[],
): RegisterReading | null {
  let best: RegisterReading | null = null;
  let bestAt = Infinity;
  let bestRank = -1;
  for (const entry of entries ?? []) {
    const at = parseInstant(entry.timestamp);
    if (!Number.isFinite(at)) continue;
    const all = samplesOf(entry);
    for (const samples of mixedContexts(all) ? byContext(all) : [all]) {
      const wh = energyRegisterWh(samples);
      if (wh === null) continue;
      const rank = rankOf(samples, RANK_FIRST);
      if (rank < bestRank || (rank === bestRank && at >= bestAt)) continue;
      best = rank === 2 ? { wh, timestamp: entry.timestamp, named: true } : { wh, timestamp: entry.timestamp };
      bestAt = at;
      bestRank = rank;
    }
  }
  return best;
}

/** The one group of a meter value whose samples name one context (reused: `latestRegisterReading` runs for every meter value). */
const ONE: SampledReading[][] = [[]];

/**
 * A message's last register reading: the one named Transaction.End, else the one with the latest
 * timestamp (a tie goes to the later entry; `RANK_LAST`). Not simply the last entry: a charger may
 * list its values in any order, and the last one may hold other measurands only (docs/CSMS.md
 * "Energy and out-of-order readings"). A timestamp that does not parse ranks below every one that
 * does.
 */
export function latestRegisterReading<E extends { timestamp: string }>(
  entries: readonly E[] | undefined,
  samplesOf: (entry: E) => SampledReading[],
): RegisterReading | null {
  let best: RegisterReading | null = null;
  let bestAt = -Infinity;
  let bestRank = -1;
  const many = entries !== undefined && entries.length > 1;
  for (const entry of entries ?? []) {
    const all = samplesOf(entry);
    // one meter value (every periodic MeterValues): nothing to rank it against, unless it holds
    // readings of several contexts (a Begin and an End read together); no array made for it
    const split = mixedContexts(all);
    const ranked = many || split;
    const parsed = parseInstant(entry.timestamp);
    const at = Number.isFinite(parsed) ? parsed : -Infinity;
    for (const samples of split ? byContext(all) : ONE.fill(all)) {
      const wh = energyRegisterWh(samples);
      if (wh === null) continue;
      const rank = ranked ? rankOf(samples, RANK_LAST) : 1;
      if (rank < bestRank || (rank === bestRank && at < bestAt)) continue;
      best = { wh, timestamp: entry.timestamp };
      bestAt = at;
      bestRank = rank;
    }
  }
  return best;
}

/**
 * A message's highest register reading, when it holds readings of several instants and that one
 * is above `above` (the reading the message ends at): a register that went back within them. The
 * session's energy is its highest reading less its first (docs/CSMS.md "Energy and out-of-order
 * readings"), so the message's peak counts, as it would have sent alone. A reading named
 * Transaction.Begin is none: it is the transaction's first. Nothing is read for a message of one
 * meter value (every periodic MeterValues).
 */
export function peakAbove<E extends { timestamp: string }>(
  entries: readonly E[] | undefined,
  samplesOf: (entry: E) => SampledReading[],
  above: number | null,
): RegisterReading | null {
  if (entries === undefined || entries.length < 2 || above === null) return null;
  let best: RegisterReading | null = null;
  for (const entry of entries) {
    // a reading whose time does not parse counts too, at the time it arrived (as one sent alone)
    const all = samplesOf(entry);
    for (const samples of mixedContexts(all) ? byContext(all) : [all]) {
      const wh = energyRegisterWh(samples);
      if (wh === null || wh <= above || (best !== null && wh <= best.wh)) continue;
      if (rankOf(samples, RANK_FIRST) === 2) continue;
      best = { wh, timestamp: entry.timestamp };
    }
  }
  return best;
}

/** The largest current taken as one, in A over all phases: a reading above is a meter fault or a unit mistake. */
const MAX_CURRENT_A = 10_000;

/** The largest power taken as one, kW over all phases (10 MW): a reading above is a meter fault or a unit mistake. */
const MAX_POWER_KW = 10_000;

/**
 * A measurand drawn at the outlet over all phases, in its unit: the phases summed (L1, L2, L3, or
 * L1-N ...), else the value without a phase. Null when the sample has none. `perUnit` gives the
 * value of one of a sample's units (undefined: a unit of another quantity, left out); `max` bounds
 * a reading taken as one.
 */
function outletSum(
  samples: SampledReading[],
  measurand: string,
  perUnit: (unit: string | undefined) => number | undefined,
  max: number,
): number | null {
  let whole: number | null = null;
  let phases: number | null = null;
  for (const s of samples) {
    if (s.measurand !== measurand || !Number.isFinite(s.value)) continue;
    if (s.location !== undefined && s.location !== 'Outlet') continue;
    const scale = perUnit(s.unit?.toLowerCase());
    if (scale === undefined) continue;
    const v = s.value * 10 ** s.multiplier * scale;
    if (!(v >= 0 && v <= max)) continue;
    if (s.phase === undefined) whole = v;
    else if (/^L[123](-N)?$/.test(s.phase)) phases = (phases ?? 0) + v;
  }
  // to a millionth: three phases of 2.4 kW are 7.2, not the binary sum 7.199999999999999
  const sum = phases ?? whole;
  return sum === null ? null : Math.round(sum * 1e6) / 1e6;
}

/**
 * The current drawn at the outlet (Current.Import), in A over all phases as OCPI's current
 * restrictions count it ("sum of the current over all phases"): the phases summed (L1, L2, L3, or
 * L1-N ...), else the value without a phase. Null when the sample has none. A unit other than A
 * (2.0.1 writes Wh when the charger gives none: that default is taken as A) leaves it out.
 */
export function currentImportA(samples: SampledReading[]): number | null {
  return outletSum(
    samples,
    'Current.Import',
    (unit) => (unit === undefined || unit === 'a' || unit === 'wh' ? 1 : undefined),
    MAX_CURRENT_A,
  );
}

/**
 * The power drawn at the outlet (Power.Active.Import), in kW over all phases, as OCPI's power
 * restrictions and `MAX_POWER` count it. W or kW; no unit, or the Wh both versions write when the
 * charger gives none, is taken as W (OCPP's unit of power). Null when the sample has none.
 */
export function powerImportKw(samples: SampledReading[]): number | null {
  return outletSum(
    samples,
    'Power.Active.Import',
    (unit) => (unit === undefined || unit === 'w' || unit === 'wh' ? 0.001 : unit === 'kw' ? 1 : undefined),
    MAX_POWER_KW,
  );
}

/** A current or power (or both) and the time the charger took them. */
export interface LoadReading {
  /** A over all phases (Current.Import) */
  a?: number;
  /** kW over all phases (Power.Active.Import) */
  kw?: number;
  timestamp: string;
}

/**
 * The currents and powers of a message's meter values, one per entry that has either
 * (`currentImportA`, `powerImportKw`), in the order sent. An entry that names neither (most: a
 * register alone) is passed over as sent, without reading its values again: this runs for every
 * MeterValues of a transaction.
 */
export function loadReadings<
  E extends { timestamp: string; sampledValue: ReadonlyArray<{ measurand?: string | undefined }> },
>(entries: readonly E[] | undefined, samplesOf: (entry: E) => SampledReading[]): LoadReading[] {
  const out: LoadReading[] = [];
  for (const entry of entries ?? []) {
    if (!entry.sampledValue.some((s) => s.measurand === 'Current.Import' || s.measurand === 'Power.Active.Import'))
      continue;
    if (!Number.isFinite(parseInstant(entry.timestamp))) continue;
    const samples = samplesOf(entry);
    const a = currentImportA(samples);
    const kw = powerImportKw(samples);
    if (a === null && kw === null) continue;
    out.push({ ...(a === null ? {} : { a }), ...(kw === null ? {} : { kw }), timestamp: entry.timestamp });
  }
  return out;
}

/** A signed meter value as a CDR carries it (mod_cdrs SignedData and SignedValue), and when it was taken. */
export interface SignedReading {
  /** Start (Transaction.Begin), End (Transaction.End), Intermediate (any other context) */
  nature: 'Start' | 'End' | 'Intermediate';
  /** the encoding's name (OCMF, ...): CiString(36) */
  encoding_method: string;
  /** base64, string(512); left out when the charger gave none or a longer one */
  public_key?: string;
  /** the reading as sent, string(512) */
  plain_data: string;
  /** the signed blob as sent, string(5000) */
  signed_data: string;
  timestamp: string;
}

/** The bounds of SignedData's fields (mod_cdrs). */
const SIGNED_MAX = { encoding_method: 36, public_key: 512, plain_data: 512, signed_data: 5000 };

/**
 * A signed meter value of an energy register (a sample naming no measurand, or
 * Energy.Active.Import.Register), or null: of another measurand, without an encoding or a
 * signature, or longer than a CDR's SignedData holds (it is left out rather than cut, as a cut
 * signature verifies nothing).
 */
export function signedReading(v: {
  measurand: string | undefined;
  context: string | undefined;
  encoding: string;
  public_key: string | undefined;
  plain: string;
  signed: string;
  timestamp: string;
}): SignedReading | null {
  if (v.measurand !== undefined && v.measurand !== 'Energy.Active.Import.Register') return null;
  const encoding = v.encoding.trim();
  if (encoding === '' || encoding.length > SIGNED_MAX.encoding_method) return null;
  if (v.signed === '' || v.signed.length > SIGNED_MAX.signed_data || v.plain.length > SIGNED_MAX.plain_data)
    return null;
  if (!Number.isFinite(parseInstant(v.timestamp))) return null;
  const key = v.public_key !== undefined && v.public_key !== '' && v.public_key.length <= SIGNED_MAX.public_key;
  return {
    nature: v.context === 'Transaction.Begin' ? 'Start' : v.context === 'Transaction.End' ? 'End' : 'Intermediate',
    encoding_method: encoding,
    ...(key ? { public_key: v.public_key } : {}),
    plain_data: v.plain,
    signed_data: v.signed,
    timestamp: v.timestamp,
  };
}
