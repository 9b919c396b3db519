import type * as C211 from '../cdrs/schemas-2.1.1.js';
import type * as C221 from '../cdrs/schemas-2.2.1.js';
import type * as S211 from './schemas-2.1.1.js';
import type * as S221 from './schemas-2.2.1.js';

/**
 * Sessions and CDRs are stored in the shape of the version they came in (docs/OCPI.md "Storage",
 * Decisions 23): a 2.1.1 session has `start_datetime`, a 2.2.1 one `start_date_time`; a 2.1.1
 * CDR has `stop_date_time`, a 2.2.1 one `end_date_time`.
 */
export type StoredSession = S211.StoredSession | S221.Session;
export type StoredCdr = C211.Cdr | C221.Cdr;

export function isSession221(s: StoredSession): s is S221.Session {
  return 'start_date_time' in s;
}

export function isCdr221(c: StoredCdr): c is C221.Cdr {
  return 'end_date_time' in c;
}
