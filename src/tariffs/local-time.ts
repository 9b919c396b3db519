/**
 * Local time at a location (docs/TARIFFS.md "Time zones"): tariff restrictions speak of the
 * location's wall clock (mod_tariffs TariffRestrictions: "in local time, the time zone is defined
 * in the time_zone field of the Location"). Offsets come from the platform's IANA database
 * through Intl, once per zone and day: read at each quarter hour, kept as one number on the days
 * the offset does not change, and on a day it does, with the instant of each change found to the
 * second (most changes fall on a quarter hour, not all: America/St_Johns changed at 00:01 local
 * until 2011), so that a CDR of 20 periods costs a few map lookups rather than 20 calls to
 * `formatToParts`.
 */

export type DayOfWeek = 'MONDAY' | 'TUESDAY' | 'WEDNESDAY' | 'THURSDAY' | 'FRIDAY' | 'SATURDAY' | 'SUNDAY';

const DAYS: readonly DayOfWeek[] = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'];

export interface LocalTime {
  /** the local date as a number, YYYYMMDD (compared with restriction dates without strings) */
  date_key: number;
  /** seconds since local midnight */
  second_of_day: number;
  day_of_week: DayOfWeek;
}

const QUARTER_MS = 15 * 60_000;
const DAY_MS = 86_400_000;
const QUARTERS_A_DAY = 96;
/** days of offsets kept per zone (a number each, a few on the days the offset changes) */
const MAX_CACHED_DAYS = 20_000;

/** A day on which the offset changes: the offset from its start, then each change (epoch ms) and the offset after it. */
interface ChangingDay {
  first: number;
  at: number[];
  offsets: number[];
}

interface Zone {
  format: Intl.DateTimeFormat;
  /** by UTC day (epoch ms / 86,400,000) */
  offsets: Map<number, number | ChangingDay>;
}

const zones = new Map<string, Zone>();

let lastName: string | undefined;
let lastZone: Zone | undefined;

function zoneOf(timeZone: string): Zone {
  // one CDR's 20 periods, and a batch's CDRs, are in one zone
  if (timeZone === lastName && lastZone !== undefined) return lastZone;
  let zone = zones.get(timeZone);
  if (!zone) {
    // throws RangeError for a name the IANA database does not have (isTimeZone says so first)
    const format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    zone = { format, offsets: new Map() };
    // names are case-insensitive to Intl: a sender can make many of one zone; keep a bounded set
    if (zones.size >= 1000) zones.clear();
    zones.set(timeZone, zone);
  }
  lastName = timeZone;
  lastZone = zone;
  return zone;
}

/** Whether `timeZone` is a zone of the IANA database this platform has. */
export function isTimeZone(timeZone: string): boolean {
  try {
    zoneOf(timeZone);
    return true;
  } catch {
    return false;
  }
}

/**
 * How the IANA database spells `timeZone`: itself when it is a zone spelled as the database does,
 * the database's spelling when it differs in letter case only ("europe/amsterdam"), undefined for
 * no zone. A link name (US/Eastern) is its own spelling; one that differs in case only from its
 * link is not told apart, as Intl gives the zone it links to.
 */
export function zoneSpelling(timeZone: string): string | undefined {
  if (!isTimeZone(timeZone)) return undefined;
  const resolved = zoneOf(timeZone).format.resolvedOptions().timeZone;
  return resolved !== timeZone && resolved.toLowerCase() === timeZone.toLowerCase() ? resolved : timeZone;
}

/** The zone's offset from UTC at instant `ms`, in ms. */
export function offsetAt(timeZone: string, ms: number): number {
  const zone = zoneOf(timeZone);
  const day = Math.floor(ms / DAY_MS);
  let offsets = zone.offsets.get(day);
  if (offsets === undefined) {
    offsets = offsetsOfDay(zone, day);
    if (zone.offsets.size >= MAX_CACHED_DAYS) zone.offsets.clear();
    zone.offsets.set(day, offsets);
  }
  if (typeof offsets === 'number') return offsets;
  let offset = offsets.first;
  for (let i = 0; i < offsets.at.length && ms >= (offsets.at[i] as number); i++) offset = offsets.offsets[i] as number;
  return offset;
}

/**
 * One UTC day's offsets: one number when it has one, else the changes, each found to the second
 * between the two quarter hours whose offsets differ.
 */
function offsetsOfDay(zone: Zone, day: number): number | ChangingDay {
  const start = day * DAY_MS;
  const first = offsetOfInstant(zone, start);
  const changes: ChangingDay = { first, at: [], offsets: [] };
  let before = first;
  for (let q = 1; q <= QUARTERS_A_DAY; q++) {
    const at = start + q * QUARTER_MS;
    const offset = q === QUARTERS_A_DAY ? offsetOfInstant(zone, at - 1000) : offsetOfInstant(zone, at);
    if (offset === before) continue;
    // the first second in (at - 15 min, at] whose offset is no longer `before`
    let lo = (at - QUARTER_MS) / 1000 + 1;
    let hi = at / 1000;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (offsetOfInstant(zone, mid * 1000) === before) lo = mid + 1;
      else hi = mid;
    }
    changes.at.push(lo * 1000);
    changes.offsets.push(offset);
    before = offset;
  }
  return changes.at.length === 0 ? first : changes;
}

function offsetOfInstant(zone: Zone, at: number): number {
  const parts: Record<string, number> = {};
  for (const p of zone.format.formatToParts(at)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const year = parts.year ?? 1970;
  const wall = new Date(
    Date.UTC(year, (parts.month ?? 1) - 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0),
  );
  // Date.UTC reads the years 0-99 as 1900-1999
  if (year >= 0 && year < 100) wall.setUTCFullYear(year);
  return wall.getTime() - at;
}

const pad = (n: number): string => (n < 10 ? `0${n}` : String(n));

/**
 * YYYYMMDD of the proleptic Gregorian day `days` after 1970-01-01: the civil-from-days
 * computation on 400-year eras (146,097 days each, starting on a 1 March), in integers.
 */
function dateKeyOfDay(days: number): number {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return year * 10000 + month * 100 + day;
}

/** The wall clock of `timeZone` at instant `ms`. */
export function localTimeAt(timeZone: string, ms: number): LocalTime {
  // whole milliseconds, as a Date keeps them
  const wall = Math.trunc(ms) + offsetAt(timeZone, ms);
  const days = Math.floor(wall / DAY_MS);
  if (days !== lastDay) {
    // one CDR's periods fall on a day or two: the date's key and weekday are kept for the last day
    lastDay = days;
    lastDateKey = dateKeyOfDay(days);
    // 1970-01-01 was a Thursday (DAYS[4])
    lastWeekday = DAYS[(((days + 4) % 7) + 7) % 7] ?? 'MONDAY';
  }
  return {
    date_key: lastDateKey,
    second_of_day: Math.floor((wall - days * DAY_MS) / 1000),
    day_of_week: lastWeekday,
  };
}

let lastDay = NaN;
let lastDateKey = 0;
let lastWeekday: DayOfWeek = 'THURSDAY';

/** "YYYY-MM-DD hh:mm:ss+hh:mm DAY" at instant `ms` in `timeZone`, for people (the breakdown). */
export function describeLocal(timeZone: string, ms: number): string {
  const offset = offsetAt(timeZone, ms);
  const w = new Date(ms + offset);
  const date = `${w.getUTCFullYear()}-${pad(w.getUTCMonth() + 1)}-${pad(w.getUTCDate())}`;
  const clock = `${pad(w.getUTCHours())}:${pad(w.getUTCMinutes())}:${pad(w.getUTCSeconds())}`;
  // the offset tells the two passes through an hour the clock repeats (autumn) apart
  const minutes = Math.round(Math.abs(offset) / 60_000);
  const zone = `${offset < 0 ? '-' : '+'}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`;
  return `${date} ${clock}${zone} ${DAYS[w.getUTCDay()] ?? ''}`;
}

/** YYYY-MM-DD as a YYYYMMDD number. */
export function dateKeyOf(day: string): number {
  return Number(day.slice(0, 4)) * 10000 + Number(day.slice(5, 7)) * 100 + Number(day.slice(8, 10));
}

const HALF_DAY_MS = 43_200_000;

/** The first second in [from, to] at which the zone's offset is `offset` (a change in between). */
function changeAt(timeZone: string, from: number, to: number, offset: number): number {
  let lo = Math.floor(from / 1000);
  let hi = Math.ceil(to / 1000);
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(timeZone, mid * 1000) === offset) hi = mid;
    else lo = mid + 1;
  }
  return lo * 1000;
}

/**
 * Every instant at which the wall clock of `timeZone` shows `wallMs` (a local time written as if
 * it were UTC), in order: one; two in an hour that repeats (clocks going back); or, for a time
 * the clock skips (going forward), the instant it jumps past it.
 */
export function instantsOfWall(timeZone: string, wallMs: number): number[] {
  const before = offsetAt(timeZone, wallMs - HALF_DAY_MS);
  const after = offsetAt(timeZone, wallMs + HALF_DAY_MS);
  const found = new Set<number>();
  for (const offset of [before, offsetAt(timeZone, wallMs), after]) {
    const t = wallMs - offset;
    if (offsetAt(timeZone, t) === offset) found.add(t);
  }
  if (found.size > 0) return [...found].sort((a, b) => a - b);
  // skipped: the clock moved from `before` to `after` between these two instants
  return [changeAt(timeZone, wallMs - after, wallMs - before, after)];
}

/** The first instant at which the wall clock shows `wallMs` (see instantsOfWall). */
export function instantOfWall(timeZone: string, wallMs: number): number {
  return instantsOfWall(timeZone, wallMs)[0] ?? wallMs - offsetAt(timeZone, wallMs);
}

/** The instants in [from, to] at which the zone's offset changes (DST), found hour by hour. */
export function offsetChanges(timeZone: string, from: number, to: number): number[] {
  const changes: number[] = [];
  let previous = offsetAt(timeZone, from);
  for (let t = from + 3_600_000; t < to + 3_600_000; t += 3_600_000) {
    const offset = offsetAt(timeZone, Math.min(t, to));
    if (offset !== previous) changes.push(changeAt(timeZone, t - 3_600_000, Math.min(t, to), offset));
    previous = offset;
  }
  return changes;
}

const LOCAL_TIME_RESTRICTIONS = ['start_time', 'end_time', 'start_date', 'end_date', 'day_of_week'] as const;

/**
 * Whether an element of `tariff` (any shape: checked here) has a restriction read on the
 * location's wall clock: priced in a zone that is not the location's, such a tariff gives a total
 * that looks right and is not.
 */
export function readsLocalTime(tariff: unknown): boolean {
  const elements = fieldOf(tariff, 'elements');
  if (!Array.isArray(elements)) return false;
  return elements.some((e) => {
    const restrictions = fieldOf(e, 'restrictions');
    return LOCAL_TIME_RESTRICTIONS.some((k) => fieldOf(restrictions, k) !== undefined);
  });
}

function fieldOf(o: unknown, key: string): unknown {
  return typeof o === 'object' && o !== null && key in o ? (o as Record<string, unknown>)[key] : undefined;
}
