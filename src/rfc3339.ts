/**
 * RFC 3339 date-times in their common form, `YYYY-MM-DDThh:mm:ss[.fraction]Z`, read character by
 * character. Chargers and partners send nearly every instant this way, and every OCPP message
 * that carries one checks it against the schemas' `date-time` format and reads it as epoch ms.
 * A regular expression and `Date.parse` cost several times what this does. Anything else (an
 * offset, a lower-case `t`, a leap second, a date that does not exist) is left to the general
 * functions, so the answers do not change, only their cost.
 */

/** Days from 1970-01-01 to the proleptic Gregorian date (month 1-12), the inverse of tariffs/local-time.ts's dateKeyOfDay. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * ((month + 9) % 12) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The number of days of a month (1-12) of a year. */
function daysInMonth(year: number, month: number): number {
  if (month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) return 29;
  return MONTH_DAYS[month - 1] ?? 0;
}

/** The two-digit number at `i`, or -1 when either character is not a digit. */
function twoDigits(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/** Whether the characters from `from` to before `to` are all digits (none: false). */
function digits(s: string, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return false;
  }
  return true;
}

/** What `fields` read last: seconds of the day (whole), and the date. */
let secondOfDay = 0;
let year = 0;
let month = 0;
let day = 0;

/**
 * Reads `YYYY-MM-DDThh:mm:ss` at the start of `s` (its length checked by the caller): true when
 * every field is digits and the date and time exist (no leap second), the fields kept above.
 */
function fields(s: string): boolean {
  if (
    s.charCodeAt(4) !== 45 || // -
    s.charCodeAt(7) !== 45 ||
    s.charCodeAt(10) !== 84 || // T
    s.charCodeAt(13) !== 58 || // :
    s.charCodeAt(16) !== 58
  )
    return false;
  const century = twoDigits(s, 0);
  const yy = twoDigits(s, 2);
  month = twoDigits(s, 5);
  day = twoDigits(s, 8);
  const hour = twoDigits(s, 11);
  const minute = twoDigits(s, 14);
  const second = twoDigits(s, 17);
  if (century < 0 || yy < 0 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23) return false;
  if (minute < 0 || minute > 59 || second < 0 || second > 59) return false;
  year = century * 100 + yy;
  secondOfDay = (hour * 60 + minute) * 60 + second;
  return day <= 28 || day <= daysInMonth(year, month);
}

/** The last date turned into days and its day number: the instants of one message or CDR fall on a day or two. */
let lastDate = -1;
let lastDays = 0;

/**
 * The instant `s` names, written to `out[at]` as epoch ms, when `s` is in the common form with
 * 0 or 3 fraction digits and names a date and time that exist; false otherwise, `out`
 * untouched. The value is the one `Date.parse` gives. Written to an array rather than returned:
 * a caller that reads many instants (a batch of CDRs) then makes no heap number for each.
 */
function writeUtcInstant(s: string, out: Float64Array, at: number): boolean {
  const n = s.length;
  if ((n !== 20 && n !== 24) || s.charCodeAt(n - 1) !== 90 /* Z */ || !fields(s)) return false;
  let ms = 0;
  if (n === 24) {
    if (s.charCodeAt(19) !== 46 /* . */ || !digits(s, 20, 23)) return false;
    ms = (s.charCodeAt(20) - 48) * 100 + (s.charCodeAt(21) - 48) * 10 + (s.charCodeAt(22) - 48);
  }
  const date = (year * 100 + month) * 100 + day;
  if (date !== lastDate) {
    lastDays = daysFromCivil(year, month, day);
    lastDate = date;
  }
  out[at] = lastDays * 86_400_000 + secondOfDay * 1000 + ms;
  return true;
}

/**
 * A date and time of day without a zone designator. `Date.parse` reads it in the host's time zone;
 * OCPI's DateTime says its absence means UTC, and no instant we read may depend on the host.
 */
const NO_DESIGNATOR = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

/**
 * Epoch ms of a date-time, as `Date.parse` reads it (NaN when it does not), written to `out[at]`:
 * the common form read directly, any other through `Date.parse`, a date and time without a zone
 * designator as UTC. False when it is not a finite instant.
 */
export function writeInstant(s: string, out: Float64Array, at: number): boolean {
  if (writeUtcInstant(s, out, at)) return true;
  out[at] = Date.parse(NO_DESIGNATOR.test(s) ? `${s}Z` : s);
  return Number.isFinite(out[at]);
}

const DATE_PREFIX = /^(\d{4})-(\d{2})-(\d{2})/;

/** 0001-01-01T00:00:00Z in epoch ms: the first instant a price is computed for. */
const FIRST_INSTANT = -62_135_596_800_000;

/**
 * As `writeInstant`, but false (and NaN written) for an instant before the year 0001, and for a
 * date the calendar lacks, which `Date.parse` rolls over into the next month (2023-02-31 reads
 * as 3 March): what a price is computed from must be the instant that was sent.
 */
export function writeRealInstant(s: string, out: Float64Array, at: number): boolean {
  if (writeUtcInstant(s, out, at)) {
    if (year >= 1) return true;
  } else {
    const m = DATE_PREFIX.exec(s);
    const y = Number(m?.[1]);
    const mo = Number(m?.[2]);
    const d = Number(m?.[3]);
    // an offset moves an instant across the first day of the year 0001, either way: the date
    // written must exist, the instant decide
    if (!m || (y >= 0 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo)))
      if (writeInstant(s, out, at) && (out[at] as number) >= FIRST_INSTANT) return true;
  }
  out[at] = Number.NaN;
  return false;
}

const SCRATCH = new Float64Array(1);

/** Epoch ms of a date-time as `writeRealInstant` reads it: NaN for a day the calendar lacks. */
export function parseRealInstant(s: string): number {
  writeRealInstant(s, SCRATCH, 0);
  return SCRATCH[0] as number;
}

/** Epoch ms of a date-time, as `Date.parse` reads it (NaN when it does not, UTC without a zone designator), the common form read directly. */
export function parseInstant(s: string): number {
  writeInstant(s, SCRATCH, 0);
  return SCRATCH[0] as number;
}

/**
 * A charger's date-time as the views show every other time: `toISOString` (UTC, milliseconds,
 * `Z`), whatever offset or precision the charger sent it with. One that cannot be read is kept
 * as sent.
 */
export function inUtc(s: string): string {
  const ms = parseInstant(s);
  return Number.isFinite(ms) && Math.abs(ms) <= MAX_DATE_MS ? new Date(ms).toISOString() : s;
}

/** The furthest instant a JavaScript Date holds (ECMA-262 21.4.1.1). */
const MAX_DATE_MS = 8.64e15;

/**
 * Whether `s` is an RFC 3339 date-time in the common form that names a real instant: four-digit
 * year, existing date, hours to 23, minutes and seconds to 59, any number of fraction digits, Z.
 * False says only "not this form": the caller's general check decides then.
 */
export function isCommonDateTime(s: string): boolean {
  const n = s.length;
  if (n < 20 || s.charCodeAt(n - 1) !== 90) return false;
  if (n > 20 && (s.charCodeAt(19) !== 46 || !digits(s, 20, n - 1))) return false;
  return fields(s);
}
