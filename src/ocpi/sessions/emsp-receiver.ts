import { canonicalJson } from '../core/canonical-json.js';
import { route } from '../../gateway/route-table.js';
import type { PartyIdentity } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import { invalidParameters, unknownObject } from '../core/errors.js';
import { olderThan, stampOfReceipt } from '../core/datetime.js';
import { assertOwnParty, assertSameId } from '../core/guards.js';
import { callerOwnPath, callersObject, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope } from '../core/schemas.js';
import { locationTo211 } from '../locations/mappers.js';
import { namingTariff, ourTariffChoice, tariffOfPeriods } from '../locations/tariff-choice.js';
import type { Tariff } from '../tariffs/schemas-2.2.1.js';
import { narrowedTo, sessionTo211, sessionTo221 } from './mappers.js';
import * as S211 from './schemas-2.1.1.js';
import * as S221 from './schemas-2.2.1.js';
import type { StoredLocation } from '../locations/schemas-2.2.1.js';
import type { ObjectStore } from '../store/object-store.js';
import { isSession221, type StoredSession } from './stored.js';

/**
 * A session does not end before it started: a PUT or PATCH that would store one is refused (2001,
 * as a CDR is: docs/OCPI.md, Decisions 14). The 2.1.1 fields are `start_datetime`/`end_datetime`.
 */
function assertEndsAfterStart(s: StoredSession): StoredSession {
  const [startField, endField, start, end] = isSession221(s)
    ? ['start_date_time', 'end_date_time', s.start_date_time, s.end_date_time]
    : ['start_datetime', 'end_datetime', s.start_datetime, s.end_datetime];
  if (end !== undefined && end !== null && Date.parse(end) < Date.parse(start))
    throw invalidParameters([
      {
        field: endField,
        message: `${endField} ${end} is before ${startField} ${start}`,
        type: 'value_error.end_before_start',
      },
    ]);
  return s;
}

/**
 * The Receiver interface of the sessions module (the eMSP side): a partner CPO pushes its
 * sessions. Each is stored in the shape of the version it came in and served in the version of
 * the mount that reads it (docs/OCPI.md, Decisions 23). A PUT or PATCH older than the session
 * held is not applied (Decisions 38): the answer is the session as held.
 */

const unknownSession = () => unknownObject('session');
const PATH = '/sessions/:country_code/:party_id/:session_id';

/** A PATCH in one version of a session stored in the other (docs/OCPI.md, Decisions 23). */
function otherVersion(stored: OcpiVersion): never {
  throw invalidParameters([
    {
      field: 'session_id',
      message: `this session was sent in OCPI ${stored}: PATCH it in that version, or PUT it again in this one`,
      type: 'value_error.version_mismatch',
    },
  ]);
}

/** The most charging periods a session keeps through PATCHes (a PUT replaces them all). */
const MAX_PERIODS = 10_000;

/**
 * 2.2.1 mod_sessions PATCH: "When a PATCH request contains the `charging_periods` field, this
 * SHALL be processed as a request to add all the ChargingPeriod Objects to the existing Session
 * Object"; a PUT replaces them. An empty list changes nothing, and a period the session already
 * has (the same object: a PATCH sent again after a lost answer) is not added twice. A PATCH older
 * than the session we hold (`late`: it arrived after a newer one) adds the periods that start
 * where none of the session's does, and changes nothing else (Decisions 38): its periods are
 * still news, while a period of the same start is the newer word on it. A PATCH that is not late
 * and carries another period of a start the session has replaces it: its newer word on that
 * period (a CPO sending the running period again with its volumes grown); two periods of one start
 * were kept before. The periods are kept in the order of their starts. 2.1.1 has no such rule:
 * its PATCH replaces the field like any other.
 */
function withPeriodsAdded(
  held: S221.Session['charging_periods'],
  added: S221.Session['charging_periods'],
  late = false,
): Pick<S221.Session, 'charging_periods'> {
  if (!added?.length) return held ? { charging_periods: held } : {};
  // the same period whatever the order of its members (a PATCH sent again by another serializer)
  const known = new Set((held ?? []).map((p) => canonicalJson(p)));
  const starts = new Set((held ?? []).map((p) => Date.parse(p.start_date_time)));
  const fresh = added.filter((p) => (late ? !starts.has(Date.parse(p.start_date_time)) : !known.has(canonicalJson(p))));
  if (fresh.length === 0) return held ? { charging_periods: held } : {};
  const replaced = new Set(fresh.map((p) => Date.parse(p.start_date_time)));
  const kept = late ? (held ?? []) : (held ?? []).filter((p) => !replaced.has(Date.parse(p.start_date_time)));
  // in time order: a period that came late goes where it belongs (the sort keeps equal starts as they came)
  const all = [...kept, ...fresh].sort((a, b) => Date.parse(a.start_date_time) - Date.parse(b.start_date_time));
  if (all.length > MAX_PERIODS)
    throw invalidParameters([
      {
        field: 'charging_periods',
        message: `a session keeps at most ${MAX_PERIODS} charging periods through PATCH: PUT the session to replace them`,
        type: 'value_error.too_many',
      },
    ]);
  return { charging_periods: all };
}

/**
 * A 2.2.1 session as 2.1.1 has it, with the location we hold for it (from `locations`). Its
 * connector's one `tariff_id` is the tariff its charging periods were priced with, else the one
 * of the connector's `tariff_ids` that prices a roamed session started when it started
 * (`ourTariffChoice`, read from `tariffs`).
 */
export async function session211Of(
  stores: { locations: Pick<ObjectStore<StoredLocation>, 'get'>; tariffs: Pick<ObjectStore<Tariff>, 'get'> },
  s: S221.Session,
): Promise<S211.StoredSession> {
  const owner = { country_code: s.country_code, party_id: s.party_id };
  const location = await stores.locations.get({ ...owner, id: s.location_id });
  if (!location) return sessionTo211(s, undefined);
  const priced = tariffOfPeriods(s.charging_periods);
  const choose =
    priced === undefined
      ? await ourTariffChoice(stores.tariffs, owner, [location], Date.parse(s.start_date_time))
      : undefined;
  const place = narrowedTo(locationTo211(location, choose), s.evse_uid, s.connector_id);
  return sessionTo211(s, namingTariff(place, priced, false));
}

/** 2.1.1: GET, PUT and PATCH of `/sessions/{country_code}/{party_id}/{session_id}`. */
export function sessionsReceiver211(ctx: OcpiContext): OcpiRoute[] {
  const common = { path: PATH, module: 'sessions', params: S211.SessionPath } as const;
  return [
    route({
      ...common,
      method: 'GET',
      summary: 'A session of the caller, as we hold it',
      response: Envelope(S211.SessionOut),
      responses: { 404: 'unknown session' },
      handler: async (req) => {
        const found = await callersObject(req, '2.1.1', ctx.stores.sessions, req.params.session_id, unknownSession);
        const s = found.object;
        return { data: isSession221(s) ? await session211Of(ctx.stores, s) : s };
      },
    }),
    route({
      ...common,
      method: 'PATCH',
      summary: 'Partial update of a session of the caller (kwh, status, ...; no last_updated: stamped on receipt)',
      body: S211.SessionPatch,
      response: Envelope(S211.SessionOut),
      responses: { 404: 'unknown session' },
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const id = req.params.session_id;
        assertSameId('id', id, req.body.id);
        const updated = await ctx.stores.sessions.update({ ...party, id }, (s): StoredSession => {
          if (isSession221(s)) return otherVersion('2.2.1');
          if (olderThan(req.body.last_updated, s.last_updated)) return s;
          const next = {
            ...s,
            ...req.body,
            id,
            last_updated: req.body.last_updated ?? stampOfReceipt(s.last_updated),
          };
          return assertEndsAfterStart({ ...next, authorization_id: next.auth_id });
        });
        if (!updated) throw unknownSession();
        return { data: updated };
      },
    }),
    route({
      ...common,
      method: 'PUT',
      summary: 'A new or updated session of the caller',
      body: S211.SessionCreate,
      response: Envelope(S211.SessionOut),
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const body = req.body;
        const id = req.params.session_id;
        assertSameId('id', id, body.id);
        // authorization_id: the auth_id the session was started with (docs/OCPI.md, Decisions 9)
        const session = { ...body, authorization_id: body.auth_id };
        assertEndsAfterStart(session);
        const held = (await ctx.stores.sessions.putUnlessOlder({ ...party, id }, session)).object;
        return { data: isSession221(held) ? await session211Of(ctx.stores, held) : held };
      },
    }),
  ];
}

/** 2.2.1: GET, PUT and PATCH of `/sessions/{country_code}/{party_id}/{session_id}`. */
export function sessionsReceiver221(ctx: OcpiContext): OcpiRoute[] {
  const common = { path: PATH, module: 'sessions', params: S221.SessionPath } as const;
  const ours = (): PartyIdentity => ctx.ownParty();
  return [
    route({
      ...common,
      method: 'GET',
      summary: 'A session of the caller, as we hold it',
      response: Envelope(S221.Session),
      responses: { 404: 'unknown session' },
      handler: async (req) => {
        const found = await callersObject(req, '2.2.1', ctx.stores.sessions, req.params.session_id, unknownSession);
        return { data: sessionTo221(found.object, found.key, ours()) };
      },
    }),
    route({
      ...common,
      method: 'PUT',
      summary: 'A new or updated session of the caller (country_code, party_id and id as the path says)',
      body: S221.Session,
      response: Envelope(S221.Session),
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.2.1');
        const id = req.params.session_id;
        assertOwnParty(party, req.body);
        assertSameId('id', id, req.body.id);
        assertEndsAfterStart(req.body);
        const held = (await ctx.stores.sessions.putUnlessOlder({ ...party, id }, req.body)).object;
        return { data: sessionTo221(held, party, ours()) };
      },
    }),
    route({
      ...common,
      method: 'PATCH',
      summary: 'Partial update of a session of the caller (kwh, status, charging_periods, ...; last_updated required)',
      body: S221.SessionPatch,
      response: Envelope(S221.Session),
      responses: { 404: 'unknown session' },
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.2.1');
        const id = req.params.session_id;
        assertOwnParty(party, req.body);
        assertSameId('id', id, req.body.id);
        const updated = await ctx.stores.sessions.update({ ...party, id }, (s): StoredSession => {
          if (!isSession221(s)) return otherVersion('2.1.1');
          const { charging_periods: added, ...fields } = req.body;
          if (olderThan(req.body.last_updated, s.last_updated)) {
            // only its periods are news (withPeriodsAdded); what it says else is older than what we hold
            const periods = withPeriodsAdded(s.charging_periods, added, true);
            return periods.charging_periods === s.charging_periods ? s : { ...s, ...periods };
          }
          return assertEndsAfterStart({ ...s, ...fields, id, ...withPeriodsAdded(s.charging_periods, added) });
        });
        if (!updated || !isSession221(updated)) throw unknownSession();
        return { data: updated };
      },
    }),
  ];
}
