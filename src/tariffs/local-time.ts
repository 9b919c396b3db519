/**
 * Local time at a location (docs/TARIFFS.md "Time zones"): tariff restrictions speak of the
 * location's wall clock (mod_tariffs TariffRestrictions: "in local time, the time zone is defined
 * in the time_zone field of the Location"). Offsets come from the platform's IANA database
 * through Intl, once per zone and quarter hour (every offset change in the database falls on a
 * quarter hour), so that a CDR of 20 periods costs a few map lookups rather than 20 calls to
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
const MAX_CACHED = 50_000;

interface Zone {
  format: Intl.DateTimeFormat;
  offsets: Map<number, number>;
}

const zones = new Map<string, Zone>();

function zoneOf(timeZone: string): Zone {
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

/** The zone's offset from UTC at instant `ms`, in ms. */
export function offsetAt(timeZone: string, ms: number): number {
  const zone = zoneOf(timeZone);
  const quarter = Math.floor(ms / QUARTER_MS);
  const cached = zone.offsets.get(quarter);
  if (cached !== undefined) return cached;
  const at = quarter * QUARTER_MS;
  const parts: Record<string, number> = {};
  for (const p of zone.format.formatToParts(at)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  const wall = Date.UTC(
    parts.year ?? 1970,
    (parts.month ?? 1) - 1,
    parts.day ?? 1,
    parts.hour ?? 0,
    parts.minute ?? 0,
    parts.second ?? 0,
  );
  const offset = wall - at;
  if (zone.offsets.size >= MAX_CACHED) zone.offsets.clear();
  zone.offsets.set(quarter, offset);
  return offset;
}

const pad = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** The wall clock of `timeZone` at instant `ms`. */
export function localTimeAt(timeZone: string, ms: number): LocalTime {
  const wall = new Date(ms + offsetAt(timeZone, ms));
  return {
    date_key: wall.getUTCFullYear() * 10000 + (wall.getUTCMonth() + 1) * 100 + wall.getUTCDate(),
    second_of_day: wall.getUTCHours() * 3600 + wall.getUTCMinutes() * 60 + wall.getUTCSeconds(),
    day_of_week: DAYS[wall.getUTCDay()] ?? 'MONDAY',
  };
}

/** "YYYY-MM-DD hh:mm:ss DAY" at instant `ms` in `timeZone`, for people (the breakdown). */
export function describeLocal(timeZone: string, ms: number): string {
  const w = new Date(ms + offsetAt(timeZone, ms));
  const date = `${w.getUTCFullYear()}-${pad(w.getUTCMonth() + 1)}-${pad(w.getUTCDate())}`;
  const clock = `${pad(w.getUTCHours())}:${pad(w.getUTCMinutes())}:${pad(w.getUTCSeconds())}`;
  return `${date} ${clock} ${DAYS[w.getUTCDay()] ?? ''}`;
}

/** YYYY-MM-DD as a YYYYMMDD number. */
export function dateKeyOf(day: string): number {
  return Number(day.slice(0, 4)) * 10000 + Number(day.slice(5, 7)) * 100 + Number(day.slice(8, 10));
}

const HALF_DAY_MS = 43_200_000;

/** The first quarter hour in [from, to] at which the zone's offset is `offset` (a change in between). */
function changeAt(timeZone: string, from: number, to: number, offset: number): number {
  let lo = Math.floor(from / QUARTER_MS);
  let hi = Math.ceil(to / QUARTER_MS);
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(timeZone, mid * QUARTER_MS) === offset) hi = mid;
    else lo = mid + 1;
  }
  return lo * QUARTER_MS;
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
