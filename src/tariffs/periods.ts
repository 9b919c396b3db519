import type { PricingPeriod, PricingTariff } from './types.js';
import { instantsOfWall, localTimeAt, offsetAt, offsetChanges } from './local-time.js';
import { quantityOf } from './money.js';
import { holds, readRestriction, type Restriction } from './restrictions.js';

/**
 * The charging periods of a CDR built from what a charger reported (docs/TARIFFS.md "Charging
 * periods from a transaction"): its energy register readings, in time. A new period starts
 * wherever the price may change: when charging starts or stops (energy flowing or not), and at
 * every boundary of the tariff's restrictions (times of day and dates in the location's zone,
 * session durations, kWh reached, a power band left). Within a period nothing price-relevant
 * changes, so pricing each period by its start (engine.ts) prices every moment of it right.
 */

export interface MeterSample {
  /** epoch ms */
  at: number;
  /** the energy register, Wh */
  wh: number;
}

/** What a charger said at an instant besides its register: whether it charges, the current it draws. */
export interface ChargerState {
  /** epoch ms */
  at: number;
  /** its charging state from then on (2.0.1 chargingState, 1.6 StatusNotification): true while Charging */
  charging?: boolean;
  /**
   * the current drawn, A over all phases (Current.Import), read as that of the time up to it since
   * the report before (as a register reading tells the energy of that time); the last one holds
   * to the end
   */
  current_a?: number;
  /**
   * the power drawn, kW over all phases (Power.Active.Import), read as a current is; where the
   * charger gave one it is the period's power (`MAX_POWER`, power restrictions) instead of the
   * energy over time
   */
  power_kw?: number;
}

export interface PeriodsInput {
  start: number;
  end: number;
  samples: readonly MeterSample[];
  /** the charger's charging states and currents, in any order (none: the energy alone decides) */
  states?: readonly ChargerState[];
  tariff: PricingTariff | undefined;
  timeZone: string;
  /**
   * the session's first reading (Wh), when known: the energy counts from it, as the session's
   * does. The readings are kept one an instant, the highest: a first reading stamped before the
   * start and moved to it, where a later reading is, was lost, and so was the first of a session
   * that lasted no time
   */
  first_wh?: number | undefined;
}

interface Piece {
  from: number;
  to: number;
  /** Wh in the piece */
  wh: number;
  /** TIME (true) or PARKING_TIME */
  charging: boolean;
  /** A over all phases, when the charger said */
  current?: number;
  /** kW over all phases, when the charger said */
  power?: number;
}

/** Whole days of tariff boundaries looked at, at most: a session longer than this is cut by charging state only. */
const MAX_DAYS = 62;
const DAY_MS = 86_400_000;

/** The readings within the session, ordered, one per instant, with the session's ends. */
function pointsOf(input: PeriodsInput): MeterSample[] {
  const byTime = new Map<number, number>();
  for (const s of input.samples) {
    if (!Number.isFinite(s.wh) || !Number.isFinite(s.at)) continue;
    // a reading stamped after the session's end is its last all the same (a 2.0.1 Transaction.End
    // stamped a second after its Ended): every reading kept for the session is the session's, and
    // one dropped here billed nothing of the energy the session says. It counts at the end
    const at = Math.min(input.end, Math.max(input.start, s.at));
    byTime.set(at, Math.max(byTime.get(at) ?? s.wh, s.wh));
  }
  const points = [...byTime].sort((a, b) => a[0] - b[0]).map(([at, wh]) => ({ at, wh }));
  const first = points[0];
  const last = points[points.length - 1];
  if (!first || !last)
    return [
      { at: input.start, wh: 0 },
      { at: input.end, wh: 0 },
    ];
  if (first.at > input.start) points.unshift({ at: input.start, wh: first.wh });
  if (last.at < input.end) points.push({ at: input.end, wh: last.wh });
  // the session's first reading begins the readings: before the highest kept at the start, or in
  // place of one below it (a reading the session did not take as its first)
  const given = input.first_wh;
  const head = points[0] as MeterSample;
  if (given !== undefined && Number.isFinite(given)) {
    if (head.wh > given) points.unshift({ at: input.start, wh: given });
    else head.wh = given;
  }
  return points;
}

/**
 * Consecutive readings as pieces. The register only rises: a reading below the highest one before
 * it (a failed read, a meter that went back) adds nothing, and energy counts again only above that
 * highest one, so the pieces add up to the highest reading less the first, as the session's
 * energy in /v1 does (docs/TARIFFS.md).
 */
function piecesOf(points: MeterSample[]): Piece[] {
  const pieces: Piece[] = [];
  let carried = 0;
  let highest = points[0]?.wh ?? 0;
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1] as MeterSample;
    const b = points[i] as MeterSample;
    const wh = Math.max(0, b.wh - highest) + carried;
    highest = Math.max(highest, b.wh);
    // two readings at one instant: their energy goes to the next piece
    if (b.at === a.at) {
      carried = wh;
      continue;
    }
    carried = 0;
    pieces.push({ from: a.at, to: b.at, wh, charging: wh > 0 });
  }
  if (carried > 0 && pieces.length > 0) (pieces[pieces.length - 1] as Piece).wh += carried;
  return pieces;
}

/**
 * Reports in time order, read at instants that never go back (the pieces' parts, in time): one
 * pass over them whatever their number, as a session may have thousands of readings and states.
 */
class Said<T extends { at: number }> {
  /** the first report after the last instant asked with `lastAt` */
  private after = 0;
  /** the first report at or after the last instant asked with `nextFrom` */
  private next = 0;

  constructor(private readonly reports: readonly T[]) {}

  /** The last report at or before `at`. */
  lastAt(at: number): T | undefined {
    while (this.after < this.reports.length && (this.reports[this.after] as T).at <= at) this.after++;
    return this.reports[this.after - 1];
  }

  /** The first report at or after `at`, else the last of all. */
  nextFrom(at: number): T | undefined {
    while (this.next < this.reports.length && (this.reports[this.next] as T).at < at) this.next++;
    return this.reports[this.next] ?? this.reports[this.reports.length - 1];
  }
}

interface Part {
  from: number;
  to: number;
  /** what the charger said of the charging at `from`: undefined before its first word */
  said: boolean | undefined;
  current: number | undefined;
  power: number | undefined;
}

/** A piece cut at the instants in `cuts` (sorted) within it, from `k` on; answers the parts and the next `k`. */
function partsOf(
  p: Piece,
  cuts: number[],
  k: number,
  told: Said<ChargerState>,
  amps: Said<ChargerState>,
  watts: Said<ChargerState>,
) {
  const parts: Part[] = [];
  let i = k;
  while (i < cuts.length && (cuts[i] as number) <= p.from) i++;
  let from = p.from;
  const add = (to: number): void => {
    parts.push({
      from,
      to,
      said: told.lastAt(from)?.charging,
      current: amps.nextFrom(to)?.current_a,
      power: watts.nextFrom(to)?.power_kw,
    });
    from = to;
  };
  for (; i < cuts.length && (cuts[i] as number) < p.to; i++) add(cuts[i] as number);
  add(p.to);
  return { parts, k: i };
}

/**
 * The pieces cut where the charger said its charging state, current or power changed (docs/TARIFFS.md
 * "CDRs from transactions"). A piece's energy flows in its parts the charger did not call
 * suspended (SuspendedEV, EVConnected, Finishing, ...), evenly in time; when it called every part
 * suspended, the energy measured wins and flows in all. A part is charging when energy flows in it
 * or the charger said Charging (a charger that reports no readings still charges): mod_cdrs
 * PARKING_TIME is "time not charging".
 */
function withStates(pieces: Piece[], input: PeriodsInput): Piece[] {
  const byTime = [...(input.states ?? [])].filter((t) => Number.isFinite(t.at)).sort((a, b) => a.at - b.at);
  const told = byTime.filter((t) => t.charging !== undefined);
  const amps = byTime.filter((t) => t.current_a !== undefined && Number.isFinite(t.current_a));
  const watts = byTime.filter((t) => t.power_kw !== undefined && Number.isFinite(t.power_kw));
  if (told.length === 0 && amps.length === 0 && watts.length === 0) return pieces;
  const cuts = [...new Set([...told, ...amps, ...watts].map((t) => t.at))].sort((a, b) => a - b);
  const saidTold = new Said(told);
  const saidAmps = new Said(amps);
  const saidWatts = new Said(watts);
  const out: Piece[] = [];
  let k = 0;
  for (const p of pieces) {
    const cut = partsOf(p, cuts, k, saidTold, saidAmps, saidWatts);
    k = cut.k;
    const flowing = cut.parts.some((x) => x.said !== false);
    const carries = (x: Part): boolean => !flowing || x.said !== false;
    const time = cut.parts.reduce((n, x) => n + (carries(x) ? x.to - x.from : 0), 0);
    for (const x of cut.parts) {
      const wh = carries(x) && time > 0 ? (p.wh * (x.to - x.from)) / time : 0;
      const piece: Piece = { from: x.from, to: x.to, wh, charging: wh > 0 || x.said === true };
      if (x.current !== undefined) piece.current = x.current;
      if (x.power !== undefined) piece.power = x.power;
      out.push(piece);
    }
  }
  return out;
}

/** The instants at which a restriction of the tariff may start or stop holding, by time alone. */
function timeCuts(restrictions: Restriction[], input: PeriodsInput): number[] {
  const cuts: number[] = [];
  for (const r of restrictions) {
    if (r.min_duration !== undefined) cuts.push(input.start + r.min_duration * 1000);
    if (r.max_duration !== undefined) cuts.push(input.start + r.max_duration * 1000);
  }
  const seconds = new Set<number>();
  let midnights = false;
  for (const r of restrictions) {
    if (r.start_s !== undefined) seconds.add(r.start_s);
    if (r.end_s !== undefined) seconds.add(r.end_s);
    if (r.start_date !== undefined || r.end_date !== undefined || r.days !== undefined) midnights = true;
  }
  if (midnights) seconds.add(0);
  if (seconds.size === 0) return cuts;
  // local midnight of the day before the start, as a wall-clock instant written in UTC
  const wallStart = input.start + offsetAt(input.timeZone, input.start);
  const firstDay = Math.floor(wallStart / DAY_MS) * DAY_MS - DAY_MS;
  const days = Math.min(MAX_DAYS, Math.ceil((input.end - input.start) / DAY_MS) + 2);
  for (let d = 0; d <= days; d++) {
    // a time the clock shows twice (the hour repeated when it goes back) is a boundary twice
    for (const s of seconds) cuts.push(...instantsOfWall(input.timeZone, firstDay + d * DAY_MS + s * 1000));
  }
  // and where the clock itself jumps (a window may start or stop holding there)
  const until = Math.min(input.end, input.start + MAX_DAYS * DAY_MS);
  cuts.push(...offsetChanges(input.timeZone, input.start, until));
  return cuts;
}

/**
 * The instants at which the energy charged reaches a kWh bound of the tariff, each with the
 * energy charged by then: exactly the bound, so that the period starting there is priced past it.
 */
function energyCuts(restrictions: Restriction[], pieces: Piece[]): Map<number, number> {
  const bounds = new Set<number>();
  for (const r of restrictions) for (const kwh of r.kwh_bounds) bounds.add(kwh * 1000);
  const cuts = new Map<number, number>();
  let before = 0;
  for (const p of pieces) {
    for (const b of bounds) {
      if (b > before && b < before + p.wh) cuts.set(p.from + Math.round(((b - before) / p.wh) * (p.to - p.from)), b);
    }
    before += p.wh;
  }
  return cuts;
}

/**
 * The pieces split at the cut instants, energy shared in proportion to time, except where a cut
 * says how much was charged by then (`energyAt`, Wh since the start).
 */
function splitAt(pieces: Piece[], cuts: number[], energyAt: Map<number, number>): Piece[] {
  const sorted = [...new Set([...cuts, ...energyAt.keys()])].sort((a, b) => a - b);
  const out: Piece[] = [];
  let charged = 0;
  // pieces and cuts are both in time order: one pass over each
  let next = 0;
  for (const p of pieces) {
    let from = p.from;
    let left = p.wh;
    while (next < sorted.length && (sorted[next] as number) <= from) next++;
    while (next < sorted.length && (sorted[next] as number) < p.to) {
      const c = sorted[next++] as number;
      const known = energyAt.get(c);
      const wh =
        known === undefined ? (left * (c - from)) / (p.to - from) : Math.min(left, Math.max(0, known - charged));
      out.push({ ...p, from, to: c, wh });
      charged += wh;
      left -= wh;
      from = c;
    }
    out.push({ ...p, from, to: p.to, wh: left });
    charged += left;
  }
  return out;
}

/** The average power of a piece, kW: the energy over the time. */
const kw = (p: Piece): number => p.wh / 1000 / ((p.to - p.from) / 3_600_000);

/**
 * The power of a charging piece, kW: what the charger reported for it, else its energy over its
 * time. Two register readings a second apart, one rounded up and one down, make the second of
 * them 1.8 MW on a 32 A connector; the charger's own Power.Active.Import does not.
 */
const powerOf = (p: Piece): number => p.power ?? kw(p);

/** Which restrictions hold at the start of a piece: pieces alike in this and in charging merge. */
function signatureOf(restrictions: Restriction[], p: Piece, input: PeriodsInput, whBefore: number): string {
  const power = p.wh > 0 ? powerOf(p) : 0;
  // as the periods will carry them (periodOf): a current only while charging
  const current = p.charging && p.current !== undefined ? p.current : undefined;
  const facts = {
    local: localTimeAt(input.timeZone, p.from),
    duration_s: (p.from - input.start) / 1000,
    // as the periods will carry it: kWh to 4 decimals (chargingPeriodsOf)
    energy_before: quantityOf(round4(whBefore / 1000)),
    min_power: power,
    max_power: power,
    min_current: current === undefined ? undefined : Math.ceil(current * 1000) / 1000,
    max_current: current === undefined ? undefined : Math.floor(current * 1000) / 1000,
  };
  let sig = p.charging ? 'C' : 'P';
  for (const r of restrictions) sig += holds(r, facts) ? '1' : '0';
  return sig;
}

/** OCPI's numbers have 4 decimals unless said otherwise (types "number"): 0.1 Wh, 0.36 s. */
const round4 = (n: number): number => Math.round(n * 1e4) / 1e4;

/** The CDR charging periods of a session (see the module comment). */
export function chargingPeriodsOf(input: PeriodsInput): PricingPeriod[] {
  const restrictions = (input.tariff?.elements ?? []).map((e) => readRestriction(e.restrictions));
  const points = pointsOf(input);
  let pieces = piecesOf(points);
  // a session that ended as it started (or a clock that went back) still has one period
  if (pieces.length === 0) return [zeroLength(input)];
  pieces = withStates(pieces, input);
  pieces = splitAt(pieces, timeCuts(restrictions, input), energyCuts(restrictions, pieces));
  const least = {
    power: restrictions.some((r) => r.min_power !== undefined),
    current: restrictions.some((r) => r.min_current !== undefined),
  };
  const periods: { pieces: Piece[]; sig: string }[] = [];
  let whBefore = 0;
  for (const p of pieces) {
    const sig = signatureOf(restrictions, p, input, whBefore);
    whBefore += p.wh;
    const open = periods[periods.length - 1];
    if (open && open.sig === sig) open.pieces.push(p);
    else periods.push({ sig, pieces: [p] });
  }
  // kWh, charging hours and parking hours as differences of their running totals, rounded:
  // the periods add up to the session's energy, TIME and PARKING_TIME, each
  let whSoFar = 0;
  const msSoFar = { charging: 0, parking: 0 };
  return periods.map(({ pieces: ps }) => {
    const kind = ps.every((p) => !p.charging) ? 'parking' : 'charging';
    const kwhBefore = round4(whSoFar / 1000);
    const hoursBefore = round4(msSoFar[kind] / 3_600_000);
    whSoFar += ps.reduce((n, p) => n + p.wh, 0);
    msSoFar[kind] += ps.reduce((n, p) => n + (p.to - p.from), 0);
    const volumes = {
      kwh: round4(round4(whSoFar / 1000) - kwhBefore),
      hours: round4(round4(msSoFar[kind] / 3_600_000) - hoursBefore),
    };
    return periodOf(ps, volumes, least);
  });
}

/**
 * The one period of a session that lasted no time: every reading is at its one instant, so the
 * energy is the highest less the first, the session's first reading when it is given (`first_wh`:
 * readings kept one an instant keep only the highest), else the lowest. Before, a 2.0.1 Ended
 * with no Started, its Begin and End readings at its one instant, billed 0 kWh beside the 4 the
 * session said.
 */
function zeroLength(input: PeriodsInput): PricingPeriod {
  let lo = Infinity;
  let hi = -Infinity;
  for (const s of input.samples) {
    if (!Number.isFinite(s.wh) || !Number.isFinite(s.at)) continue;
    lo = Math.min(lo, s.wh);
    hi = Math.max(hi, s.wh);
  }
  const first = input.first_wh !== undefined && Number.isFinite(input.first_wh) ? input.first_wh : lo;
  const wh = hi > first ? hi - first : 0;
  return {
    start_date_time: new Date(input.start).toISOString(),
    dimensions: [
      { type: 'ENERGY', volume: round4(wh / 1000) },
      { type: 'TIME', volume: 0 },
    ],
  };
}

/** The highest and lowest of `values`, to 3 decimals rounded away from the bounds they meet (10.9996 kW is below 11). */
function range(values: number[]): { max: number; min: number } {
  return { max: Math.floor(Math.max(...values) * 1000) / 1000, min: Math.ceil(Math.min(...values) * 1000) / 1000 };
}

/**
 * One charging period of merged pieces: charging (ENERGY, TIME, power, and current when the
 * charger said it) or not (PARKING_TIME). MIN_POWER and MIN_CURRENT only where the tariff bounds them.
 */
function periodOf(
  ps: Piece[],
  { kwh, hours }: { kwh: number; hours: number },
  least: { power: boolean; current: boolean },
): PricingPeriod {
  const first = ps[0] as Piece;
  const start_date_time = new Date(first.from).toISOString();
  // as chargingPeriodsOf counts it: a period of pieces none of which charges is parking
  if (ps.every((p) => !p.charging)) return { start_date_time, dimensions: [{ type: 'PARKING_TIME', volume: hours }] };
  const power = range(ps.map(powerOf));
  const amps = ps.flatMap((p) => (p.current === undefined ? [] : [p.current]));
  const current = amps.length > 0 ? range(amps) : undefined;
  return {
    start_date_time,
    dimensions: [
      { type: 'ENERGY', volume: kwh },
      { type: 'TIME', volume: hours },
      { type: 'MAX_POWER', volume: power.max },
      ...(least.power ? [{ type: 'MIN_POWER', volume: power.min }] : []),
      ...(current ? [{ type: 'MAX_CURRENT', volume: current.max }] : []),
      ...(current && least.current ? [{ type: 'MIN_CURRENT', volume: current.min }] : []),
    ],
  };
}
