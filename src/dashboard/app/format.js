// Formatting shared by the screens.
export const fmtTime = (t) => (t ? new Date(t).toLocaleString() : '');
export const kwh = (wh) => (wh / 1000).toFixed(3);

/**
 * The browser's decimal separator. Numbers on screen read as the dates beside them do, in the
 * browser's locale: a Dutch reader took "6.640" kWh beside "3-12-2026" for six thousand. Files
 * (the sessions CSV) keep the point.
 */
const DECIMAL = new Intl.NumberFormat().formatToParts(1.5).find((p) => p.type === 'decimal')?.value ?? '.';
/** A number written with a point (`kwh`, `cents`), with the browser's decimal separator. */
export const localNumber = (text) => (DECIMAL === '.' ? String(text) : String(text).replace('.', DECIMAL));
/** kWh on screen: `kwh` in the browser's notation. */
export const fmtKwh = (wh) => localNumber(kwh(wh));

/** "1 h 05 min", "4 min 10 s" */
export function fmtDuration(ms) {
  if (!(ms >= 0)) return '';
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h} h ${String(m).padStart(2, '0')} min`;
  return `${m} min ${String(s % 60).padStart(2, '0')} s`;
}

export function sessionDurationMs(s, now = Date.now()) {
  const start = Date.parse(s.started_at);
  const end = s.stopped_at ? Date.parse(s.stopped_at) : now;
  return end - start;
}

/** Mean power over the session in kW, or '' when it is too short to say. */
export function meanKw(s, now = Date.now()) {
  const ms = sessionDurationMs(s, now);
  if (!(ms > 1000)) return '';
  return (s.energy_wh / 1000 / (ms / 3_600_000)).toFixed(2);
}

/**
 * An amount with two decimals, rounded half away from zero on its decimal digits, as the prices
 * are (docs/TARIFFS.md "Rounding"). `toFixed(2)` rounds the binary double: 0.605 (0.6049999...)
 * showed 0.60, and a price's lines added up to a cent less than its total. The digits are those
 * the API wrote: a JSON number's shortest text (`String`) gives them back, where `toFixed(10)`
 * lost the half of 1234567.005. An amount JavaScript writes with an exponent is zero to the cent
 * (below 1e-6) or shown as written (1e21 and above).
 */
export function cents(amount) {
  const x = Number(amount);
  if (!Number.isFinite(x)) return String(amount);
  const text = String(Math.abs(x));
  if (/e/i.test(text) && Math.abs(x) >= 1) return String(x);
  const [int, frac = ''] = (/e/i.test(text) ? Math.abs(x).toFixed(20) : text).split('.');
  const hundredths = BigInt(int + frac.slice(0, 2).padEnd(2, '0')) + (frac[2] >= '5' ? 1n : 0n);
  const digits = String(hundredths).padStart(3, '0');
  return `${x < 0 && hundredths > 0n ? '-' : ''}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/**
 * A roamed session's price: the CDR's total once it ended, its running cost before (marked ~).
 * Including VAT, as the column says; a price that has no amount with VAT says so.
 */
export function fmtCost(c) {
  if (!c) return '';
  const amount = `${c.currency} ${localNumber(cents(c.incl_vat ?? c.excl_vat))}${c.incl_vat == null ? ' excl. VAT' : ''}`;
  return c.final ? amount : `~${amount}`;
}

/** A CSS class for a connector, command, outbox or CDR check status: ok, busy, warn, bad, off. */
export function tone(status, errorCode) {
  if (errorCode && errorCode !== 'NoError') return 'bad';
  switch (status) {
    case 'Available':
    case 'Accepted':
    case 'Unlocked': // like Scheduled and RebootRequired, an answer a command succeeds with (operations.js)
    case 'Scheduled':
    case 'RebootRequired':
    case 'ACCEPTED':
    case 'COMPLETED':
    case 'agrees':
      return 'ok';
    case 'Charging':
    case 'Occupied':
    case 'Preparing':
    case 'SuspendedEV':
    case 'SuspendedEVSE':
    case 'Finishing':
    case 'ACTIVE':
    case 'sent':
    case 'queued':
      return 'busy';
    case 'Reserved':
    case 'Unavailable':
    case 'Pending':
    case 'pending':
    case 'unpriced':
      return 'warn';
    case 'Faulted':
    case 'Rejected':
    case 'Failed':
    case 'UnlockFailed':
    case 'OngoingAuthorizedTransaction':
    case 'UnknownConnector':
    case 'VersionMismatch':
    case 'NotImplemented':
    case 'Invalid':
    case 'Blocked':
    case 'timeout':
    case 'failed':
    case 'expired':
    case 'refused':
    case 'NotSupported':
    case 'UnknownVendorId':
    case 'dead':
    case 'disagrees':
    case 'REJECTED':
    case 'FAILED':
    case 'TIMEOUT':
    case 'NOT_SUPPORTED':
    case 'UNKNOWN_SESSION':
    case 'UNKNOWN_RESERVATION':
    case 'EVSE_OCCUPIED':
    case 'EVSE_INOPERATIVE':
      return 'bad';
    default:
      return 'off';
  }
}
