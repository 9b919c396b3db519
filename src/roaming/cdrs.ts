import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import type { SqlRunner } from '../db/sql.js';
import { compileLazily } from '../lazy-compile.js';
import type { PartyIdentity } from '../ocpi/core/auth.js';
import * as C221 from '../ocpi/cdrs/schemas-2.2.1.js';
import type { StoredLocation } from '../ocpi/locations/schemas-2.2.1.js';
import { enqueue } from '../ocpi/outbox/outbox-store.js';
import type { Session } from '../ocpi/sessions/schemas-2.2.1.js';
import type { SignedReading } from '../ocpp/meter.js';
import type { SampleKind } from '../../actors/charge-point/ports.js';
import { isSession221, type StoredCdr, type StoredSession } from '../ocpi/sessions/stored.js';
import type { Tariff } from '../ocpi/tariffs/schemas-2.2.1.js';
import { ObjectStore } from '../ocpi/store/object-store.js';
import { TariffVersions } from '../ocpi/tariffs/versions.js';
import { selectTariff } from '../tariffs/engine.js';
import type { PricingHandle } from '../tariffs/module.js';
import type { ActorHost } from '../platform/services.js';
import { chargingPeriodsOf, type ChargerState, type MeterSample } from '../tariffs/periods.js';
import type { PricedCdr, PricingPeriod, PricingTariff } from '../tariffs/types.js';

/**
 * Our CDRs, from our chargers' transactions (docs/TARIFFS.md "CDRs from transactions"). When a
 * roamed session ends, its charging periods are built from the meter readings the charger sent
 * (`roaming_meter_sample`), priced with the tariff its connector named when it started, in the
 * location's time zone, in a pricing thread, and stored once: a CDR never changes. The tariff and
 * the place are those of the session's start (`roaming_session_snapshot`, taken when the session
 * is first written). The session gets the same cost, and both go to the token's eMSP through the
 * outbox. While a session runs, the same pricing gives its running cost. Once the CDR is stored,
 * the session's samples and snapshot go: the CDR holds its periods.
 */

const checkCdr = compileLazily(C221.Cdr);

/** A "free of charge" tariff (mod_tariffs): totals of a session whose connector names no tariff. */
const freeOf = (currency: string): PricingTariff => ({
  id: 'FREE',
  currency,
  elements: [{ price_components: [{ type: 'FLAT', price: 0, step_size: 0 }] }],
});

type CdrLocation = C221.Cdr['cdr_location'];

/** What a session is priced with and where its CDR says it happened. */
export interface SessionTerms {
  /** the tariffs the connector named */
  tariff_ids: string[];
  /** of those, the one valid at the session start (mod_tariffs), as it was stored then */
  tariff: Tariff | undefined;
  time_zone: string;
  cdr_location: CdrLocation;
}

/** The `cdr_location` of a session at `evse_uid`/`connector_id` of `location`, if they are there. */
function placeOf(location: StoredLocation, evseUid: string, connectorId: string) {
  const evse = location.evses?.find((e) => e.uid === evseUid);
  const connector = evse?.connectors.find((c) => c.id === connectorId);
  if (!evse || !connector) return undefined;
  const cdrLocation: CdrLocation = {
    id: location.id,
    ...(location.name === undefined ? {} : { name: location.name }),
    address: location.address,
    city: location.city,
    ...(location.postal_code === undefined ? {} : { postal_code: location.postal_code }),
    ...(location.state === undefined ? {} : { state: location.state }),
    country: location.country,
    coordinates: location.coordinates,
    evse_uid: evse.uid,
    evse_id: evse.evse_id ?? evse.uid,
    connector_id: connector.id,
    connector_standard: connector.standard,
    connector_format: connector.format,
    connector_power_type: connector.power_type,
  };
  return { cdrLocation, tariffIds: connector.tariff_ids ?? [] };
}

/**
 * The session's terms as stored now: the location, EVSE and connector of `session`, and the
 * tariff of `ids` valid at `startMs` (with `versions`, each tariff as it was at `startMs`: see
 * `tariffAt`). Undefined when the place is gone.
 */
async function termsNow(
  sql: SqlRunner,
  own: PartyIdentity,
  where: { location_id: string; evse_uid: string; connector_id: string },
  startMs: number,
  versions?: TariffVersions,
): Promise<SessionTerms | undefined> {
  const location = await new ObjectStore<StoredLocation>(sql, 'locations').get({ ...own, id: where.location_id });
  const place = location && placeOf(location, where.evse_uid, where.connector_id);
  if (!location || !place) return undefined;
  return {
    tariff_ids: place.tariffIds,
    tariff: await tariffAt(sql, own, place.tariffIds, startMs, versions),
    time_zone: location.time_zone,
    cdr_location: place.cdrLocation,
  };
}

/**
 * Of the tariffs `ids`, the one valid at `startMs` (mod_tariffs). With `versions` each is read as
 * it was then: a tariff updated after the start (a session whose start reaches us late, queued
 * offline) in the version last updated at or before it, when one is kept; else as stored now.
 */
async function tariffAt(
  sql: SqlRunner,
  own: PartyIdentity,
  ids: string[],
  startMs: number,
  versions?: TariffVersions,
): Promise<Tariff | undefined> {
  const tariffs = new ObjectStore<Tariff>(sql, 'tariffs');
  const asAtStart = async (id: string): Promise<Tariff | undefined> => {
    const now = await tariffs.get({ ...own, id });
    if (!now || !versions || !(Date.parse(now.last_updated) > startMs)) return now;
    return (await versions.inForceAt(own, id, startMs)) ?? now;
  };
  const named = await Promise.all(ids.map(asAtStart));
  return selectTariff(
    named.filter((t): t is Tariff => t !== undefined),
    startMs,
  );
}

/**
 * Keeps the terms of a roamed session as they are at its start (docs/ROAMING.md "Tariff and
 * place at the start"), in the transaction that writes the session first. A session whose
 * place is gone gets none (its CDR waits for it as before). Answers the terms kept.
 */
export async function snapshotTerms(
  tx: SqlRunner,
  own: PartyIdentity,
  session: { id: string; location_id: string; evse_uid: string; connector_id: string; started_at: number },
): Promise<SessionTerms | undefined> {
  const terms = await termsNow(tx, own, session, session.started_at, new TariffVersions(tx));
  if (!terms) return undefined;
  await tx.run(
    `INSERT INTO roaming_session_snapshot (session_id, tariff_ids, tariff, time_zone, cdr_location)
     VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id) DO NOTHING`,
    [
      session.id,
      JSON.stringify(terms.tariff_ids),
      terms.tariff ? JSON.stringify(terms.tariff) : null,
      terms.time_zone,
      JSON.stringify(terms.cdr_location),
    ],
  );
  return terms;
}

/** The terms kept at the session's start, if it has them (sessions from before m0018 do not). */
async function snapshotOf(sql: SqlRunner, sessionId: string): Promise<SessionTerms | undefined> {
  const [row] = await sql.query(
    'SELECT tariff_ids, tariff, time_zone, cdr_location FROM roaming_session_snapshot WHERE session_id = ?',
    [sessionId],
  );
  if (!row) return undefined;
  // written by snapshotTerms from a stored (checked) location and tariff
  return {
    tariff_ids: JSON.parse(String(row.tariff_ids)) as string[],
    tariff: row.tariff === null || row.tariff === undefined ? undefined : (JSON.parse(String(row.tariff)) as Tariff),
    time_zone: String(row.time_zone),
    cdr_location: JSON.parse(String(row.cdr_location)) as CdrLocation,
  };
}

/** Deletes the meter samples and the snapshot of `sessionIds` (their CDR no longer needs them). */
export async function purgeSessionData(tx: SqlRunner, sessionIds: readonly string[]): Promise<number> {
  if (sessionIds.length === 0) return 0;
  const marks = sessionIds.map(() => '?').join(', ');
  const samples = await tx.run(`DELETE FROM roaming_meter_sample WHERE session_id IN (${marks})`, sessionIds);
  await tx.run(`DELETE FROM roaming_meter_state WHERE session_id IN (${marks})`, sessionIds);
  await tx.run(`DELETE FROM roaming_meter_signed WHERE session_id IN (${marks})`, sessionIds);
  await tx.run(`DELETE FROM roaming_session_snapshot WHERE session_id IN (${marks})`, sessionIds);
  return samples;
}

/** The meter readings of a session, in time. */
export async function samplesOf(sql: Pick<SqlRunner, 'query'>, sessionId: string): Promise<MeterSample[]> {
  const rows = await sql.query('SELECT at_ms, wh FROM roaming_meter_sample WHERE session_id = ? ORDER BY at_ms', [
    sessionId,
  ]);
  return rows.map((r) => ({ at: Number(r.at_ms), wh: Number(r.wh) }));
}

/**
 * The readings the CSMS kept of a session (`csms_meter_sample`: its first, its last so far, one a
 * minute between) as its CDR's readings too: a transaction roamed only from a later event (a 2.0.1
 * Started after an Updated, a token named after the start) keeps what came before it. A reading
 * already kept at an instant stays.
 */
export async function backfillSamples(tx: SqlRunner, sessionId: string): Promise<void> {
  await tx.run(
    `INSERT INTO roaming_meter_sample (session_id, at_ms, wh)
     SELECT session_id, at_ms, wh FROM csms_meter_sample WHERE session_id = ?
     ON CONFLICT (session_id, at_ms) DO NOTHING`,
    [sessionId],
  );
}

/** The first reading of a CSMS session (the OCPI session's id is its), when it has one. */
async function firstReadingOf(sql: Pick<SqlRunner, 'query'>, sessionId: string): Promise<number | undefined> {
  const [row] = await sql.query('SELECT meter_start_wh FROM csms_session WHERE id = ?', [sessionId]);
  const wh = row?.meter_start_wh;
  return wh === null || wh === undefined ? undefined : Number(wh);
}

/** What the charger of a session said of its charging (`roaming_meter_state`), in time. */
export async function statesOf(sql: Pick<SqlRunner, 'query'>, sessionId: string): Promise<ChargerState[]> {
  const rows = await sql.query(
    'SELECT at_ms, charging, current_a, power_kw FROM roaming_meter_state WHERE session_id = ? ORDER BY at_ms',
    [sessionId],
  );
  return rows.map((r) => ({
    at: Number(r.at_ms),
    ...(r.charging === null || r.charging === undefined ? {} : { charging: Number(r.charging) === 1 }),
    ...(r.current_a === null || r.current_a === undefined ? {} : { current_a: Number(r.current_a) }),
    ...(r.power_kw === null || r.power_kw === undefined ? {} : { power_kw: Number(r.power_kw) }),
  }));
}

/**
 * Keeps what the charger of a roamed transaction said of its charging at an instant; a second
 * word at the same instant fills what the first left out, or replaces it (the later message).
 */
export async function writeState(
  tx: SqlRunner,
  sessionId: string,
  at: number,
  state: Omit<ChargerState, 'at'>,
): Promise<void> {
  const charging = state.charging === undefined ? null : state.charging ? 1 : 0;
  await tx.run(
    `INSERT INTO roaming_meter_state (session_id, at_ms, charging, current_a, power_kw) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (session_id, at_ms) DO UPDATE SET
       charging = COALESCE(excluded.charging, roaming_meter_state.charging),
       current_a = COALESCE(excluded.current_a, roaming_meter_state.current_a),
       power_kw = COALESCE(excluded.power_kw, roaming_meter_state.power_kw)`,
    [sessionId, at, charging, state.current_a ?? null, state.power_kw ?? null],
  );
}

/**
 * Keeps a signed register reading of a roamed transaction (docs/TARIFFS.md "Signed meter
 * values"): one row a nature, the earliest Start, the latest End and the latest Intermediate.
 */
export async function writeSigned(tx: SqlRunner, sessionId: string, r: SignedReading & { at: number }): Promise<void> {
  const keeps =
    r.nature === 'Start'
      ? 'excluded.at_ms < roaming_meter_signed.at_ms'
      : 'excluded.at_ms >= roaming_meter_signed.at_ms';
  await tx.run(
    `INSERT INTO roaming_meter_signed (session_id, nature, at_ms, encoding_method, public_key, plain_data, signed_data)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (session_id, nature) DO UPDATE SET at_ms = excluded.at_ms,
       encoding_method = excluded.encoding_method, public_key = excluded.public_key,
       plain_data = excluded.plain_data, signed_data = excluded.signed_data
     WHERE ${keeps}`,
    [sessionId, r.nature, r.at, r.encoding_method, r.public_key ?? null, r.plain_data, r.signed_data],
  );
}

/**
 * The CDR's `signed_data` (mod_cdrs SignedData) from a session's signed readings: its Start and
 * End values, and the last Intermediate one when no End came; those of the encoding of the first,
 * with the first public key given. Undefined when the charger signed none.
 */
export async function signedDataOf(sql: Pick<SqlRunner, 'query'>, sessionId: string): Promise<SignedData | undefined> {
  const rows = await sql.query(
    'SELECT nature, encoding_method, public_key, plain_data, signed_data FROM roaming_meter_signed WHERE session_id = ? ORDER BY at_ms',
    [sessionId],
  );
  const hasEnd = rows.some((r) => r.nature === 'End');
  const kept = rows.filter((r) => r.nature === 'Start' || r.nature === 'End' || !hasEnd);
  const first = kept[0];
  if (!first) return undefined;
  const encoding = String(first.encoding_method);
  const same = kept.filter((r) => String(r.encoding_method) === encoding);
  const key = same.find((r) => r.public_key !== null && r.public_key !== undefined)?.public_key;
  const order = { Start: 0, Intermediate: 1, End: 2 } as Record<string, number>;
  return {
    encoding_method: encoding,
    ...(key === undefined || key === null ? {} : { public_key: String(key) }),
    signed_values: same
      .sort((a, b) => (order[String(a.nature)] ?? 1) - (order[String(b.nature)] ?? 1))
      .map((r) => ({ nature: String(r.nature), plain_data: String(r.plain_data), signed_data: String(r.signed_data) })),
  };
}

/** mod_cdrs SignedData, as our CDRs carry it. */
export interface SignedData {
  encoding_method: string;
  public_key?: string;
  signed_values: { nature: string; plain_data: string; signed_data: string }[];
}

/**
 * Keeps a reading of a roamed transaction. Two at the same instant (a retry, or a stop stamped
 * like the last meter value) are one row, with the higher register: a register only grows.
 */
export async function writeSample(
  tx: SqlRunner,
  sessionId: string,
  at: number,
  wh: number,
  /**
   * 'replace': a corrected first reading, it replaces one of the same instant, lower or not;
   * 'last': the end's, at the latest reading's time when that is later (a clock ahead, corrected
   * before the end: the session ends there too, `writeSession`)
   */
  kind: SampleKind = 'between',
): Promise<void> {
  if (kind === 'replace') {
    await tx.run(
      `INSERT INTO roaming_meter_sample (session_id, at_ms, wh) VALUES (?, ?, ?)
     ON CONFLICT (session_id, at_ms) DO UPDATE SET wh = excluded.wh`,
      [sessionId, at, wh],
    );
    return;
  }
  const [latest] = kind === 'last' ? await tx.query(LATEST_SAMPLE, [sessionId]) : [];
  const when = Math.max(at, Number(latest?.at_ms ?? 0));
  await tx.run(
    `INSERT INTO roaming_meter_sample (session_id, at_ms, wh) VALUES (?, ?, ?)
     ON CONFLICT (session_id, at_ms) DO UPDATE SET
       wh = CASE WHEN excluded.wh > roaming_meter_sample.wh THEN excluded.wh ELSE roaming_meter_sample.wh END`,
    [sessionId, when, wh],
  );
}

const LATEST_SAMPLE = 'SELECT MAX(at_ms) AS at_ms FROM roaming_meter_sample WHERE session_id = ?';

const builders = new WeakMap<Database, CdrBuilder>();

/** The process's CDR builder (one per database handle: the charge-point actors' and the outbox's). */
export function cdrBuilderOf(host: ActorHost, pricing: PricingHandle): CdrBuilder {
  let builder = builders.get(host.db);
  if (!builder) {
    const { config } = host;
    const own = { country_code: config.OCPI_COUNTRY_CODE, party_id: config.OCPI_PARTY_ID };
    builder = new CdrBuilder(host.db, pricing, own, config.OCPI_CURRENCY, host.log.child({ module: 'cdrs' }));
    builders.set(host.db, builder);
  }
  return builder;
}

/** Sessions whose reason for having no price is kept at most (`CdrBuilder.unpriced`). */
const MAX_UNPRICED_KEPT = 10_000;

export class CdrBuilder {
  private readonly sessions: ObjectStore<StoredSession>;
  private readonly cdrs: ObjectStore<StoredCdr>;
  private readonly flights = new Map<string, { again: boolean; done: Promise<C221.Cdr | undefined> }>();
  /**
   * Why a session could not be priced, by session, as last logged: the same reason is logged once
   * (a running session is priced at every reading), and the CDR's outbox row says it
   * (`whyNotBuilt`). Bounded: the oldest go first.
   */
  private readonly unpriced = new Map<string, string>();

  constructor(
    private readonly db: Database,
    private readonly pricing: PricingHandle,
    private readonly own: PartyIdentity,
    private readonly currency: string,
    private readonly log: Logger,
  ) {
    this.sessions = new ObjectStore(db.sql, 'sessions');
    this.cdrs = new ObjectStore(db.sql, 'cdrs');
  }

  /**
   * After a roamed session was written: a running one gets its cost so far, an ended one its
   * CDR. Answers the CDR when there is one. Never throws: what fails is logged and done again
   * by the outbox's send of the CDR.
   */
  async refresh(sessionId: string): Promise<C221.Cdr | undefined> {
    // one pricing per session at a time; pushes meanwhile ask for one more run, not one each
    const flight = this.flights.get(sessionId);
    if (flight) {
      flight.again = true;
      return flight.done;
    }
    const entry: { again: boolean; done: Promise<C221.Cdr | undefined> } = {
      again: false,
      done: Promise.resolve(undefined),
    };
    entry.done = (async () => {
      let cdr: C221.Cdr | undefined;
      do {
        entry.again = false;
        cdr = await this.refreshOnce(sessionId);
      } while (entry.again);
      this.flights.delete(sessionId);
      return cdr;
    })();
    this.flights.set(sessionId, entry);
    return entry.done;
  }

  private async refreshOnce(sessionId: string): Promise<C221.Cdr | undefined> {
    try {
      const session = await this.sessions.get({ ...this.own, id: sessionId });
      if (!session || !isSession221(session)) return undefined;
      if (session.status === 'COMPLETED' && session.end_date_time !== undefined) return await this.ensure(session);
      await this.runningCost(session);
      return undefined;
    } catch (err) {
      this.log.error({ err, session_id: sessionId }, 'pricing the roamed session failed');
      return undefined;
    }
  }

  /** The CDR of an ended session: the stored one, or one built, priced and stored now. */
  async ensure(session: Session): Promise<C221.Cdr | undefined> {
    const key = { ...this.own, id: session.id };
    const stored = await this.cdrs.get(key);
    if (stored) return stored as C221.Cdr;
    const cdr = await this.build(session);
    if (!cdr) return undefined;
    const emsp = { country_code: session.cdr_token.country_code, party_id: session.cdr_token.party_id };
    await this.db.group.run(async (tx) => {
      // whoever builds it first stores it: a CDR never changes
      if (!(await new ObjectStore<StoredCdr>(tx, 'cdrs').putNew(key, cdr, { audience: emsp }))) return;
      // the CDR holds the periods; a retry of its send reads the stored CDR, never the samples
      await purgeSessionData(tx, [session.id]);
      await new ObjectStore<StoredSession>(tx, 'sessions').update(key, (s) =>
        isSession221(s)
          ? {
              ...s,
              // the energy its CDR bills: a stop reading below one reported earlier ends no register
              // (docs/CSMS.md), and the session said the stop's energy while its CDR said more
              kwh: cdr.total_energy,
              // its costs are in the currency of the tariff that priced them
              currency: cdr.currency,
              total_cost: cdr.total_cost,
              charging_periods: cdr.charging_periods,
              last_updated: cdr.last_updated,
            }
          : s,
      );
      // the session goes again with its final cost; the CDR's own row was queued when the session
      // ended (bridge.ts): queueing it again here would send a CDR twice (a POST is no PUT)
      await enqueue(tx, { party: { ...emsp, role: 'EMSP' } }, { kind: 'session', session_id: session.id, to: emsp });
    });
    const final = await this.cdrs.get(key);
    if (final) this.log.info({ cdr_id: session.id, total_cost: final.total_cost }, 'CDR stored');
    return final as C221.Cdr | undefined;
  }

  /**
   * The session's terms: those kept at its start, else (a session from before m0018) as stored
   * now. A snapshot without a tariff of a connector that named some (none was stored and valid at
   * the start) takes the named ones as stored now: the operator who PUTs the missing tariff and
   * retries the CDR's dead letter gets the CDR priced with it.
   */
  private async termsOf(session: Session): Promise<SessionTerms | undefined> {
    const startMs = Date.parse(session.start_date_time);
    const kept = await snapshotOf(this.db.sql, session.id);
    if (!kept) return termsNow(this.db.sql, this.own, session, startMs);
    if (kept.tariff || kept.tariff_ids.length === 0) return kept;
    return { ...kept, tariff: await tariffAt(this.db.sql, this.own, kept.tariff_ids, startMs) };
  }

  /** Why the CDR of `sessionId` is not built, when it could not be priced (for its outbox row). */
  whyNotBuilt(sessionId: string): string | undefined {
    return this.unpriced.get(sessionId);
  }

  /** Logs why a session cannot be priced, once per reason. */
  private cannotPrice(sessionId: string, reason: string, fields: Record<string, unknown> = {}): void {
    if (this.unpriced.get(sessionId) === reason) return;
    this.unpriced.delete(sessionId);
    this.unpriced.set(sessionId, reason);
    if (this.unpriced.size > MAX_UNPRICED_KEPT) this.unpriced.delete(this.unpriced.keys().next().value as string);
    this.log.error({ session_id: sessionId, reason, ...fields }, 'the session could not be priced');
  }

  /** The session's periods until `end` and their price. */
  private async price(
    session: Session,
    terms: SessionTerms,
    endMs: number,
    known?: MeterSample[],
  ): Promise<{ periods: PricingPeriod[]; priced: PricedCdr } | undefined> {
    const startMs = Date.parse(session.start_date_time);
    const { tariff } = terms;
    if (!tariff && terms.tariff_ids.length > 0) {
      // a connector that names tariffs is not free because none of them is there or valid: no
      // CDR until the operator puts one (the CDR's outbox row retries, then waits as a dead letter)
      this.cannotPrice(
        session.id,
        `no tariff its connector names (${terms.tariff_ids.join(', ')}) is stored, valid at the session start and untyped or REGULAR (a roamed session is not priced by an AD_HOC_PAYMENT or PROFILE_* tariff)`,
        { tariff_ids: terms.tariff_ids },
      );
      return undefined;
    }
    const timeZone = terms.time_zone;
    const samples = known ?? (await samplesOf(this.db.sql, session.id));
    const states = await statesOf(this.db.sql, session.id);
    // the energy counts from the session row's first reading, as /v1's does: the readings are kept
    // one row an instant, the highest, and a first reading at an instant with a later one was lost
    // (a 2.0.1 Started whose Begin, stamped before it, is drawn at its start beside a later reading)
    const first_wh = await firstReadingOf(this.db.sql, session.id);
    const built = chargingPeriodsOf({ start: startMs, end: endMs, samples, states, tariff, timeZone, first_wh });
    const periods = tariff ? built.map((p) => ({ ...p, tariff_id: tariff.id })) : built;
    const cdr = {
      start_date_time: session.start_date_time,
      end_date_time: new Date(endMs).toISOString(),
      charging_periods: periods,
    };
    const outcome = await this.pricing.priceOne({
      tariff: tariff ?? freeOf(this.currency),
      cdr,
      time_zone: timeZone,
    });
    if (!outcome.ok) {
      this.cannotPrice(session.id, outcome.message);
      return undefined;
    }
    this.unpriced.delete(session.id);
    return { periods, priced: outcome.priced };
  }

  private async build(session: Session): Promise<C221.Cdr | undefined> {
    const terms = await this.termsOf(session);
    if (!terms || session.end_date_time === undefined) {
      this.log.warn({ session_id: session.id }, 'no CDR: the location, EVSE or connector of the session is gone');
      return undefined;
    }
    // a charger whose clock went back can end a session before it started: it lasted nothing
    const endMs = Math.max(Date.parse(session.end_date_time), Date.parse(session.start_date_time));
    const priced = await this.price(session, terms, endMs);
    if (!priced) return undefined;
    const signed = await signedDataOf(this.db.sql, session.id);
    const cdr = cdrOf(session, terms, priced.periods, priced.priced, new Date(endMs).toISOString(), signed);
    if (!checkCdr.Check(cdr)) {
      const errors = [...checkCdr.Errors(cdr)].slice(0, 5).map((e) => `${e.instancePath}: ${e.message}`);
      this.log.error({ session_id: session.id, errors }, 'the CDR built does not pass the 2.2.1 schema');
      return undefined;
    }
    return cdr;
  }

  /**
   * A running session's cost until its last meter reading, onto the stored session, and sent to
   * its eMSP when it changed (a PUT of the session, coalescing with any push still pending).
   */
  private async runningCost(session: Session): Promise<void> {
    const terms = await this.termsOf(session);
    if (!terms) return;
    const samples = await samplesOf(this.db.sql, session.id);
    const until = Math.max(Date.parse(session.start_date_time), samples.at(-1)?.at ?? 0);
    const priced = await this.price(session, terms, until, samples);
    if (!priced) return;
    const total = priced.priced.total_cost;
    if (
      session.total_cost?.excl_vat === total.excl_vat &&
      session.total_cost.incl_vat === total.incl_vat &&
      session.currency === priced.priced.currency
    )
      return;
    const key = { ...this.own, id: session.id };
    const emsp = { country_code: session.cdr_token.country_code, party_id: session.cdr_token.party_id };
    await this.db.group.run(async (tx) => {
      const updated = await new ObjectStore<StoredSession>(tx, 'sessions').update(key, (s) =>
        isSession221(s) && s.status === 'ACTIVE'
          ? {
              ...s,
              // the energy its periods count: a reading still waiting out ROAMING_SESSION_PUSH_MS
              // was priced while kwh said the last push's (4 kWh in the periods, 0 in kwh)
              kwh: Math.max(s.kwh, priced.priced.total_energy),
              // its cost is in the currency of the tariff that priced it
              currency: priced.priced.currency,
              total_cost: total,
              charging_periods: priced.periods,
              last_updated: new Date().toISOString(),
            }
          : s,
      );
      if (updated && isSession221(updated) && updated.status === 'ACTIVE')
        await enqueue(tx, { party: { ...emsp, role: 'EMSP' } }, { kind: 'session', session_id: session.id, to: emsp });
    });
  }
}

/** The 2.2.1 CDR of an ended session on its terms, priced. */
function cdrOf(
  session: Session,
  terms: SessionTerms,
  periods: PricingPeriod[],
  priced: PricedCdr,
  end: string,
  signed: SignedData | undefined,
): C221.Cdr {
  return {
    country_code: session.country_code,
    party_id: session.party_id,
    id: session.id,
    start_date_time: session.start_date_time,
    end_date_time: end,
    session_id: session.id,
    cdr_token: session.cdr_token,
    auth_method: session.auth_method,
    ...(session.authorization_reference ? { authorization_reference: session.authorization_reference } : {}),
    cdr_location: terms.cdr_location,
    currency: priced.currency,
    ...(terms.tariff ? { tariffs: [terms.tariff] } : {}),
    charging_periods: periods,
    ...(signed ? { signed_data: signed } : {}),
    total_cost: priced.total_cost,
    total_fixed_cost: priced.total_fixed_cost,
    total_energy: priced.total_energy,
    total_energy_cost: priced.total_energy_cost,
    total_time: priced.total_time,
    total_time_cost: priced.total_time_cost,
    total_parking_time: priced.total_parking_time,
    total_parking_cost: priced.total_parking_cost,
    total_reservation_cost: priced.total_reservation_cost,
    last_updated: new Date().toISOString(),
  };
}
