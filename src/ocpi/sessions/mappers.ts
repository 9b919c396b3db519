import type { PartyIdentity } from '../core/auth.js';
import { defined } from '../core/defined.js';
import type * as V211 from '../locations/schemas-2.1.1.js';
import type * as S211 from './schemas-2.1.1.js';
import type * as S221 from './schemas-2.2.1.js';
import { isSession221, type StoredSession } from './stored.js';

/**
 * Sessions between the versions (docs/OCPI.md, Decisions 23). A 2.1.1 session names its token by
 * auth_id (2.2.1's contract_id) and carries its location; a 2.2.1 session names the token in a
 * CdrToken and refers to its location, EVSE and connector by id.
 */

const STATUSES_221 = new Set(['ACTIVE', 'COMPLETED', 'INVALID', 'PENDING', 'RESERVATION']);
const AUTH_METHODS_221 = new Set(['AUTH_REQUEST', 'COMMAND', 'WHITELIST']);

/** A 2.1.1 token reference as a CdrToken: the uid is not in 2.1.1, so the auth_id stands for it. */
export function cdrTokenFrom211(authId: string, tokenParty: PartyIdentity): S221.CdrToken {
  return { ...tokenParty, uid: authId, type: 'OTHER', contract_id: authId };
}

export function authMethod221(m: string): S221.Session['auth_method'] {
  // a value 2.2.1 does not know (the enumeration is open in 2.1.1) is taken as a request
  return AUTH_METHODS_221.has(m) ? (m as S221.Session['auth_method']) : 'AUTH_REQUEST';
}

/** 2.1.1 has no COMMAND: a session started by a command was authorized by the eMSP's request. */
export function authMethod211(m: S221.Session['auth_method']): 'AUTH_REQUEST' | 'WHITELIST' {
  return m === 'COMMAND' ? 'AUTH_REQUEST' : m;
}

/** the dimensions 2.1.1 has (CdrDimensionType); 2.2.1 added the others */
const DIMENSIONS_211 = new Set(['ENERGY', 'FLAT', 'MAX_CURRENT', 'MIN_CURRENT', 'PARKING_TIME', 'TIME']);

/**
 * Charging periods as 2.1.1 has them: only the dimensions it knows (a strict 2.1.1 partner
 * refuses a `MAX_POWER`); a period left with none is left out, as 2.1.1 wants at least one.
 */
export function periodsTo211<
  P extends { start_date_time: string; dimensions: Array<{ type: string; volume: number }> },
>(periods: readonly P[]): Array<{ start_date_time: string; dimensions: Array<{ type: string; volume: number }> }> {
  return periods
    .map(({ start_date_time, dimensions }) => ({
      start_date_time,
      dimensions: dimensions.filter((d) => DIMENSIONS_211.has(d.type)),
    }))
    .filter((p) => p.dimensions.length > 0);
}

/**
 * A stored session in the 2.2.1 shape. `owner` is the CPO that sent it (the row's party),
 * `tokenParty` the eMSP of its token: ours, when a CPO pushed it to our eMSP.
 */
export function sessionTo221(s: StoredSession, owner: PartyIdentity, tokenParty: PartyIdentity): S221.Session {
  if (isSession221(s)) return s;
  const evse = s.location.evses?.[0];
  return defined({
    ...owner,
    id: s.id,
    start_date_time: s.start_datetime,
    end_date_time: s.end_datetime,
    kwh: s.kwh,
    cdr_token: cdrTokenFrom211(s.auth_id, tokenParty),
    auth_method: authMethod221(s.auth_method),
    location_id: s.location.id,
    evse_uid: evse?.uid ?? '',
    connector_id: evse?.connectors[0]?.id ?? '',
    meter_id: s.meter_id,
    currency: s.currency,
    charging_periods: s.charging_periods,
    total_cost: s.total_cost === undefined ? undefined : { excl_vat: s.total_cost },
    status: STATUSES_221.has(s.status) ? (s.status as S221.Session['status']) : 'INVALID',
    last_updated: s.last_updated,
  });
}

/**
 * A 2.2.1 session in the 2.1.1 shape, with `location` the 2.1.1 location we hold for it (only
 * its EVSE and connector), or, when we hold none, the ids the session names.
 */
export function sessionTo211(s: S221.Session, location: V211.Location | undefined): S211.StoredSession {
  return defined({
    id: s.id,
    start_datetime: s.start_date_time,
    end_datetime: s.end_date_time,
    kwh: s.kwh,
    auth_id: s.cdr_token.contract_id,
    auth_method: authMethod211(s.auth_method),
    location: location ?? referencedLocation(s),
    meter_id: s.meter_id,
    currency: s.currency,
    charging_periods: s.charging_periods && periodsTo211(s.charging_periods),
    total_cost: s.total_cost?.excl_vat,
    // RESERVATION is 2.2.1's; PENDING is the nearest 2.1.1 status
    status: s.status === 'RESERVATION' ? 'PENDING' : s.status,
    last_updated: s.last_updated,
    authorization_id: s.authorization_reference ?? s.cdr_token.contract_id,
  });
}

/**
 * A 2.1.1 session as we send it to a 2.1.1 eMSP (pushes, our sessions Sender): the Session of
 * 2.1.1 mod_sessions, without the `authorization_id` our eMSP Receiver answers with
 * (Decisions 42).
 */
export function sessionFor211Partner(s: S211.StoredSession): S211.SessionCreate {
  const { authorization_id: _ours, ...session } = s;
  return session;
}

/** The location as far as a 2.2.1 session names it (docs/OCPI.md, Decisions 23). */
function referencedLocation(s: S221.Session): V211.Location {
  // a partial 2.1.1 Location: the session names only these ids
  return {
    id: s.location_id,
    evses: [{ uid: s.evse_uid, connectors: [{ id: s.connector_id }] }],
  } as unknown as V211.Location;
}

/** A 2.1.1 location with only the EVSE and connector a session or CDR used. */
export function narrowedTo(location: V211.Location, evseUid: string, connectorId: string): V211.Location {
  const evses = location.evses
    ?.filter((e) => e.uid === evseUid)
    .map((e) => ({ ...e, connectors: e.connectors.filter((c) => c.id === connectorId) }));
  return { ...location, ...(evses ? { evses } : {}) };
}
