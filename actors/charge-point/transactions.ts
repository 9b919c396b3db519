import { randomUUID } from 'node:crypto';
import { parseInstant } from '../../src/rfc3339.js';
import type { ChargerEvent, ChargerEventOutcome, ProtocolName } from '../../src/ocpp/domain.js';
import type { ChargePointActorDeps, FinishedSessionQuery, LastReading, SessionProgress } from './ports.js';
import type { WriteStep } from '../../src/runtime/types.js';
import type { ChargePointState } from './protocol.js';
import { keepCharging, pushSession, pushTimer, sampleMeter, type Roamed } from './roaming.js';
import { startFor, usedUp } from './authorization.js';
import { MAX_FINISHED, publishChange, type ChargePointCtx } from './state.js';

/**
 * Transactions: a start opens one (and its charging session row), meter values and updates move
 * its meter, a stop closes it. Each is kept in the state while open, so that retries and meter
 * values need no reads; retries of a start or of an update are recognised and change nothing.
 */

type EventOf<T extends ChargerEvent['type']> = Extract<ChargerEvent, { type: T }>;
type OpenTransaction = ChargePointState['transactions'][number];

/** The dedupe key of a transaction opened from an update or end (its start not seen): this, then its id. */
const ADOPTED = 'adopted|';

/** Parses a charger's timestamp; a charger with no clock sends nonsense, then now counts. */
export function epochMs(timestamp: string): number {
  const t = parseInstant(timestamp);
  return Number.isFinite(t) ? t : Date.now();
}

/** How far ahead of the CSMS's clock a charger's reading may be stamped and still keep its time. */
const FUTURE_TOLERANCE_MS = 10_000;

/**
 * No charger stamped anything before this (2015-01-01: OCPP 1.6 came out that year): an earlier
 * time is a clock never set since power came back (1970-01-01 and on, a real-time clock without
 * its battery), not a transaction that old.
 */
const CLOCK_FLOOR_MS = Date.UTC(2015, 0, 1);

/**
 * When something the charger stamps happened (a meter reading, a start, an end): the charger's
 * timestamp, but never later than now (the event is handled as it arrives). A time beyond the
 * tolerance (a clock that is wrong, 2099) counts as when it arrived: a reading would otherwise
 * win over every later one and the session's energy stay at it for good, and a start stamped
 * 2099 gave a session that stopped before it started (a negative duration to price). So does a
 * time before CLOCK_FLOOR_MS: a start stamped 1970 and an end stamped now made a session of 56
 * years, priced by the hour.
 */
export function chargerTime(timestamp: string): number {
  const t = epochMs(timestamp);
  const now = Date.now();
  return t > now + FUTURE_TOLERANCE_MS || t < CLOCK_FLOOR_MS ? now : t;
}

/** What a transaction event said of the charging (domain.ts ChargingFacts), at the charger's times. */
function saidOf(event: Pick<EventOf<'transaction-updated'>, 'timestamp' | 'charging' | 'currents' | 'signed'>) {
  return {
    at: chargerTime(event.timestamp),
    charging: event.charging,
    currents: (event.currents ?? []).map((c) => ({ at: chargerTime(c.timestamp), a: c.a, kw: c.kw })),
    signed: (event.signed ?? []).map((s) => ({ ...s, at: chargerTime(s.timestamp) })),
  };
}

/** What a roamed transaction's start gives its CDR: the first reading and what the charger said. */
function keepStart(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  sessionId: string,
  at: number,
  event: EventOf<'transaction-started'>,
): void {
  sampleMeter(deps, ctx, sessionId, at, event.meter_start_wh);
  keepCharging(deps, ctx, sessionId, saidOf(event));
}

/**
 * The earlier delivery of this start (its transaction id, and how its token was answered), if it
 * is a retry: an open transaction with its id (2.0.1) or its dedupe key, or a finished 1.6 start
 * with its dedupe key (1.6 ids are ours, so a late retry must get its id again). A 2.0.1 start whose id is that of a finished
 * transaction is a delivery of that transaction's Started again when it has that transaction's
 * start time (a charger that sends its stored events again after a reboot, answered or not);
 * with another, it is a new transaction reusing the id, since a charger's ids are unique among
 * its open transactions only (a counter that restarted, a charger registered again under the same
 * id). Finished transactions kept without their start time (before it was kept) count as such a
 * new one.
 */
function retriedStart(
  s: ChargePointState,
  event: EventOf<'transaction-started'>,
):
  | { transaction_id: string; id_tag_status?: string | undefined; id_tag_answer?: OpenTransaction['id_tag_answer'] }
  | undefined {
  const open = s.transactions.find(
    (t) =>
      t.dedupe_key === event.dedupe_key || (event.transaction_id !== null && t.transaction_id === event.transaction_id),
  );
  if (open) return open;
  if (event.transaction_id === null) return s.finished.find((f) => f.dedupe_key === event.dedupe_key);
  const at = chargerTime(event.timestamp);
  return s.finished.find((f) => f.transaction_id === event.transaction_id && f.started_at === at);
}

/**
 * A start delivered again whose transaction is here as it was opened (not adopted from later
 * events, whose late Started still has a start to apply): what its first delivery was answered,
 * and what that answer said beyond its status (`id_tag_answer`), open or finished.
 */
export function plainRetryOf(
  s: ChargePointState,
  event: EventOf<'transaction-started'>,
): { id_tag_answer?: OpenTransaction['id_tag_answer'] } | undefined {
  if (adoptedOpen(s, event) || endedAdopted(s, event)) return undefined;
  const retried = retriedStart(s, event);
  if (!retried) return undefined;
  const answer = 'id_tag_answer' in retried ? retried.id_tag_answer : undefined;
  return answer === undefined ? {} : { id_tag_answer: answer };
}

type TransactionEvent = EventOf<'transaction-started' | 'transaction-updated' | 'transaction-ended'>;

/**
 * A transaction message about a transaction the state no longer remembers (it keeps the last
 * MAX_FINISHED finished ones) is looked up among the charger's sessions, and a finished one is
 * remembered again before the message is applied, which then finds it finished. Before, a
 * charger that sent its stored log of more than MAX_FINISHED transactions again had each one
 * opened again (each replayed one pushed the next out of the window): a 2.0.1 charger's billed
 * twice, a 1.6 charger's given new ids. A late end or meter value of an older one opened a second
 * session. Undefined, and nothing read, when the state knows the transaction (every message of
 * an open one).
 */
export function recallFinished(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  event: TransactionEvent,
  protocol: ProtocolName,
): Promise<void> | undefined {
  const query = forgottenQuery(ctx.state, event, protocol);
  if (!query) return undefined;
  return deps.finishedSession(ctx.key, query).then((found) => {
    if (!found) return;
    const s = ctx.state;
    const { transaction_id, started_at } = found;
    // a 1.6 start's retry is found by its dedupe key (`retriedStart`), the rest by the id
    const dedupe_key = event.type === 'transaction-started' ? event.dedupe_key : `recalled|${transaction_id}`;
    ctx.log.info(
      { transaction_id, event: event.type },
      'a message of a finished transaction no longer in memory: read from its session',
    );
    ctx.setState({ ...s, finished: [...s.finished, { dedupe_key, transaction_id, started_at }].slice(-MAX_FINISHED) });
  });
}

/**
 * What to look the event's transaction up by, when the state knows nothing of it: a 2.0.1
 * Started by its id and start time (with another time it is a new transaction reusing the id);
 * a 1.6 start by what its retry repeats; an update or end by its id, on 2.0.1 the latest session
 * of the id that started before the event (1.6 ids are ours). As for the last 20 the state
 * keeps: a late end of a transaction that a new start on its EVSE ended (stopped before the
 * end's time) changes nothing; a reused id whose Started never arrived is taken for it too.
 */
function forgottenQuery(
  s: ChargePointState,
  event: TransactionEvent,
  protocol: ProtocolName,
): FinishedSessionQuery | undefined {
  if (event.type === 'transaction-started') {
    if (retriedStart(s, event) || adoptedOpen(s, event) || endedAdopted(s, event)) return undefined;
    const started_at = chargerTime(event.timestamp);
    if (event.transaction_id !== null) return { transaction_id: event.transaction_id, started_at };
    const { connector_id, id_tag, meter_start_wh } = event;
    return id_tag === null || meter_start_wh === null
      ? undefined
      : { connector_id, id_tag, meter_start_wh, started_at };
  }
  const id = event.transaction_id;
  if (s.transactions.some((t) => t.transaction_id === id) || s.finished.some((f) => f.transaction_id === id))
    return undefined;
  return protocol === 'ocpp1.6' ? { transaction_id: id } : { transaction_id: id, at: chargerTime(event.timestamp) };
}

/** The open transaction of a 2.0.1 start, when it was opened from a later event (adopted). */
function adoptedOpen(s: ChargePointState, event: EventOf<'transaction-started'>): OpenTransaction | undefined {
  if (event.transaction_id === null) return undefined;
  return s.transactions.find((t) => t.transaction_id === event.transaction_id && t.dedupe_key.startsWith(ADOPTED));
}

/**
 * The Started of a transaction opened from a later event (an Updated that arrived first: queued
 * offline events are not always delivered in order). What only the start knows is applied: its
 * time, its first reading (the energy is counted from it), its token when none was named yet, its
 * EVSE when none was known; from then on it is a start like any other (a retry of it changes
 * nothing). docs/CSMS.md "Sessions whose start never arrived".
 */
function lateStart(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  tx: OpenTransaction,
  event: EventOf<'transaction-started'>,
  idTagStatus: string,
  roamed: Roamed | null | undefined,
): ChargerEventOutcome {
  const at = Math.min(chargerTime(event.timestamp), tx.started_at ?? Infinity);
  const idTag = tx.id_tag === undefined ? event.id_tag : null;
  // the token it brings makes the transaction roamed, as at a start that came first
  const ocpi =
    tx.ocpi === undefined && idTag !== null && roamed !== undefined
      ? roamed && pushSession(deps, ctx, tx.session_id, { ...roamed, started_at: at }, 0, null)
      : tx.ocpi;
  if (ocpi && tx.ocpi === undefined) {
    // what came before the start (an Updated delivered first) is the CDR's too
    if (deps.roaming) ctx.write(deps.roaming.backfill(tx.session_id));
    keepStart(deps, ctx, tx.session_id, at, event);
  } else if (ocpi) keepCharging(deps, ctx, tx.session_id, saidOf(event));
  const evse =
    tx.evse_id === 0 && event.evse_id > 0 ? { evse_id: event.evse_id, connector_id: event.connector_id } : null;
  ctx.log.info({ transaction_id: tx.transaction_id }, 'start of a transaction opened from a later event: applied');
  ctx.write(
    deps.sessions.lateStart(tx.session_id, {
      started_at: at,
      meter_start_wh: event.meter_start_wh,
      id_tag: idTag,
      evse,
    }),
  );
  if (event.meter_start_wh !== null)
    keepSample(ctx, deps.meterSamples.sample(tx.session_id, at, event.meter_start_wh, 'first'));
  const next: OpenTransaction = {
    ...tx,
    dedupe_key: event.dedupe_key,
    started_at: at,
    meter_start_wh: event.meter_start_wh ?? tx.meter_start_wh,
    ...(evse ? { evse_id: evse.evse_id } : {}),
    ...(idTag === null ? {} : { id_tag: idTag, id_tag_status: idTagStatus }),
    ...(ocpi === undefined ? {} : { ocpi }),
  };
  ctx.setState({ ...s, transactions: s.transactions.map((t) => (t === tx ? next : t)) });
  publishChange(deps, ctx, { type: 'session', session_id: tx.session_id });
  return { transaction_id: tx.transaction_id, id_tag_status: idTagStatus };
}

/**
 * A finished transaction as the state remembers it, with its start time (its Started delivered
 * again is no new transaction: `retriedStart`); an adopted one with its session and end instead.
 */
function finishedOf(tx: OpenTransaction, endedAt: number): ChargePointState['finished'][number] {
  const { dedupe_key, transaction_id } = tx;
  if (!dedupe_key.startsWith(ADOPTED)) {
    const started =
      tx.started_at === undefined
        ? { dedupe_key, transaction_id }
        : { dedupe_key, transaction_id, started_at: tx.started_at };
    const answered = tx.id_tag_status === undefined ? started : { ...started, id_tag_status: tx.id_tag_status };
    // a retry of the start after the end is answered whole: a NEVER card's answer the charger may
    // not cache (before, the retry told it to cache the card for OCPP_AUTH_CACHE_S)
    return tx.id_tag_answer === undefined ? answered : { ...answered, id_tag_answer: tx.id_tag_answer };
  }
  const adopted = { dedupe_key, transaction_id, session_id: tx.session_id, ended_at: endedAt };
  return tx.ocpi ? { ...adopted, roamed: true } : adopted;
}

/** A finished transaction that was opened from a later event: its session and end are kept. */
type EndedAdopted = ChargePointState['finished'][number] & { session_id: string; ended_at: number };

/**
 * A finished transaction opened from a later event whose Started this is: the same 2.0.1 id, and
 * a start no later than its end (queued offline events delivered as Updated, Ended, Started). A
 * Started after that end is a new transaction reusing the id.
 */
function endedAdopted(s: ChargePointState, event: EventOf<'transaction-started'>): EndedAdopted | undefined {
  if (event.transaction_id === null) return undefined;
  const at = chargerTime(event.timestamp);
  return s.finished.find(
    (f): f is EndedAdopted =>
      f.transaction_id === event.transaction_id &&
      f.session_id !== undefined &&
      f.ended_at !== undefined &&
      at <= f.ended_at,
  );
}

/**
 * The Started of a transaction opened from a later event and ended before the Started arrived:
 * what only the start knows (its time, first reading, token) goes to its session, as for one still
 * open (`lateStart`); no second session is opened. A partner's token it brings (on a linked EVSE)
 * makes the session roamed, ended as it is: its eMSP gets the session, COMPLETED, and the CDR of
 * the readings it kept (docs/CSMS.md). A retry of it applies the start again and roams nothing.
 */
function lateStartOfEnded(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  ended: EndedAdopted,
  event: EventOf<'transaction-started'>,
  idTagStatus: string,
  roamed: Roamed | null | undefined,
): ChargerEventOutcome {
  ctx.log.info(
    { transaction_id: ended.transaction_id },
    'start of a transaction that ended before it arrived: applied',
  );
  const at = chargerTime(event.timestamp);
  ctx.write(
    deps.sessions.lateStart(ended.session_id, {
      started_at: at,
      meter_start_wh: event.meter_start_wh,
      id_tag: event.id_tag,
      // a session whose later events named no EVSE takes the start's
      evse: event.evse_id > 0 ? { evse_id: event.evse_id, connector_id: event.connector_id } : null,
    }),
  );
  if (roamed && event.id_tag !== null && ended.roamed !== true && deps.roaming) {
    // the readings the session kept are the CDR's; its energy is the row's, as the start set it
    ctx.write(deps.roaming.backfill(ended.session_id));
    keepStart(deps, ctx, ended.session_id, at, event);
    pushSession(deps, ctx, ended.session_id, { ...roamed, started_at: at }, null, ended.ended_at);
    ctx.setState({ ...s, finished: s.finished.map((f) => (f === ended ? { ...ended, roamed: true as const } : f)) });
  }
  publishChange(deps, ctx, { type: 'session', session_id: ended.session_id });
  return { transaction_id: ended.transaction_id, id_tag_status: idTagStatus };
}

/**
 * A start of a transaction already here: the late Started of an adopted one (applied), or a
 * retry, answered as the first delivery was (a refused token stays refused). Undefined for a new one.
 */
function startOfKnown(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  event: EventOf<'transaction-started'>,
  idTagStatus: string,
  roamed: Roamed | null | undefined,
): ChargerEventOutcome | undefined {
  const adopted = adoptedOpen(s, event);
  if (adopted) return lateStart(deps, ctx, s, adopted, event, idTagStatus, roamed);
  const ended = endedAdopted(s, event);
  if (ended) return lateStartOfEnded(deps, ctx, s, ended, event, idTagStatus, roamed);
  const retried = retriedStart(s, event);
  // a retry is answered as its first delivery was, not as the token is now
  return retried && { transaction_id: retried.transaction_id, id_tag_status: retried.id_tag_status ?? idTagStatus };
}

/** OCPP 1.6's transactionId is a 32-bit integer: the ids we issue stay at or below it. */
const MAX_TRANSACTION_ID = 2 ** 31 - 1;

/**
 * The 1.6 id the next start gets: the counter, back at 1 once past the 32-bit top (a charger's
 * own id we adopted may have moved it there, docs/CSMS.md "Sessions whose start never arrived"),
 * skipping an id that an open or recently finished transaction holds.
 */
function issuedId(s: ChargePointState): number {
  let n = s.next_transaction_id >= 1 && s.next_transaction_id <= MAX_TRANSACTION_ID ? s.next_transaction_id : 1;
  const taken = new Set([...s.transactions, ...s.finished].map((t) => t.transaction_id));
  while (taken.has(String(n))) n = n >= MAX_TRANSACTION_ID ? 1 : n + 1;
  return n;
}

/**
 * Refused with status Invalid, not a CALLERROR: a CALLERROR to a transaction message makes the
 * charger send it again (1.6 TransactionMessageAttempts, 2.0.1 E13), Invalid is a final answer,
 * and a charger with StopTransactionOnInvalidId / StopTxOnInvalidId ends the transaction at once.
 * 1.6 still needs an id, so one is spent; nothing is kept.
 */
function refuseStart(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  event: EventOf<'transaction-started'>,
): ChargerEventOutcome {
  ctx.log.warn(
    { open: s.transactions.length, limit: deps.maxOpenTransactions() },
    'open transaction limit reached: start refused',
  );
  const issued = issuedId(s);
  const refusedId = event.transaction_id ?? String(issued);
  if (event.transaction_id === null) ctx.setState({ ...s, next_transaction_id: issued + 1 });
  return { transaction_id: refusedId, id_tag_status: 'Invalid' };
}

/**
 * The open transactions a new start ends (`endSuperseded`): those on its EVSE that started no
 * later than it. None for a retry of a start, or for a start that names no EVSE (2.0.1 may name
 * it later). An event older than a transaction open on its EVSE (an end delivered long after it
 * was due, of a transaction no longer remembered) ends nothing.
 */
export function supersededBy(s: ChargePointState, start: EventOf<'transaction-started'>): OpenTransaction[] {
  if (start.evse_id <= 0 || retriedStart(s, start) !== undefined) return [];
  const at = chargerTime(start.timestamp);
  return s.transactions.filter((t) => t.evse_id === start.evse_id && (t.started_at ?? 0) <= at);
}

/**
 * An EVSE (a 1.6 connector) runs one transaction at a time, and a charger sends a transaction's
 * messages in order: a new start on an EVSE where one is still open here means that the earlier
 * one ended and its end never arrived (lost, or a charger that forgot it across a power cut). The
 * earlier transaction is ended, reason Other, at its last reading (`readings`, from its session
 * row: nothing shows it ran on after that), or at the new start when it has none; so that its
 * session completes (and, roamed, goes to the eMSP with its CDR) instead of staying open for ever;
 * docs/CSMS.md "Sessions whose end never arrived". An end that still arrives later finds it
 * finished and changes nothing.
 */
export function endSuperseded(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  start: EventOf<'transaction-started'>,
  readings: ReadonlyMap<string, LastReading> = new Map(),
): void {
  const startAt = chargerTime(start.timestamp);
  for (const earlier of supersededBy(ctx.state, start)) {
    const last = readings.get(earlier.session_id);
    const endAt = last && last.at < startAt ? last.at : startAt;
    ctx.log.warn(
      { transaction_id: earlier.transaction_id, next: start.transaction_id, evse_id: start.evse_id },
      'open transaction ended by a new start on its EVSE',
    );
    const at = new Date(endAt).toISOString();
    onTransactionProgress(
      deps,
      ctx,
      ctx.state,
      {
        type: 'transaction-ended',
        transaction_id: earlier.transaction_id,
        meter_wh: last ? last.wh : null,
        ...(last ? { meter_at: new Date(last.at).toISOString() } : {}),
        timestamp: at,
        reason: 'Other',
        seq_no: null,
        id_tag: null,
      },
      earlier.id_tag_status ?? 'Accepted',
    );
  }
}

/** The remote start a transaction start follows (authorization.ts `startFor`), if any. */
function remoteStartOf(
  s: ChargePointState,
  event: EventOf<'transaction-started'>,
): NonNullable<ChargePointState['recent_starts']>[number] | undefined {
  if (event.id_tag === null && event.remote_start_id === null) return undefined;
  return startFor(
    s,
    event.id_tag ?? '',
    event.evse_id || null,
    event.remote_start_id,
    event.dedupe_key,
    event.id_tag_type,
  );
}

/**
 * The reservations once a transaction started: the one it names is used, or (a charger that
 * names none) one of its token at its EVSE or at any (OCPP 1.6 5.13: the reservation ends when a
 * transaction starts for its idTag on its connector).
 */
function reservationsAfterStart(
  s: ChargePointState,
  event: EventOf<'transaction-started'>,
): ChargePointState['reservations'] {
  const named = event.reservation_id ?? null;
  const used = (r: ChargePointState['reservations'][number]): boolean =>
    named !== null
      ? r.reservation_id === named
      : r.id_tag === event.id_tag && (r.evse_id === null || r.evse_id === 0 || r.evse_id === event.evse_id);
  return s.reservations.filter((r) => !used(r));
}

export function onTransactionStarted(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  event: EventOf<'transaction-started'>,
  protocol: ProtocolName,
  /** its OCPI session's parts when roamed (roaming.ts roamingOf) */
  roamed?: Roamed | null,
  /** the token's authorization (authorization.ts); Accepted when not checked */
  idTagStatus = 'Accepted',
): ChargerEventOutcome {
  const known = startOfKnown(deps, ctx, s, event, idTagStatus, roamed);
  if (known) return known;
  if (s.transactions.length >= deps.maxOpenTransactions()) return refuseStart(deps, ctx, s, event);
  const transactionId = event.transaction_id ?? String(issuedId(s));
  if (event.transaction_id !== null && s.finished.some((f) => f.transaction_id === transactionId))
    ctx.log.info({ transaction_id: transactionId }, 'transaction id of a finished transaction reused: new session');
  const sessionId = randomUUID();
  const remoteStart = remoteStartOf(s, event);
  // once: a time held at its arrival (a clock ahead) is a new one at each reading of the clock
  const startedAt = chargerTime(event.timestamp);
  ctx.write((tx) =>
    deps.sessions.insert(tx, {
      id: sessionId,
      charge_point_id: ctx.key,
      protocol,
      transaction_id: transactionId,
      evse_id: event.evse_id,
      connector_id: event.connector_id,
      id_tag: event.id_tag,
      started_at: startedAt,
      meter_start_wh: event.meter_start_wh,
      seq_no: event.seq_no,
      remote_start_command_id: remoteStart?.command_id ?? null,
    }),
  );
  const opened: OpenTransaction = {
    transaction_id: transactionId,
    session_id: sessionId,
    dedupe_key: event.dedupe_key,
    evse_id: event.evse_id,
    meter_start_wh: event.meter_start_wh,
    started_at: startedAt,
    // the roamed session starts when ours does: a partner was told a start stamped ahead, raw,
    // and an end before it
    ...(roamed === undefined
      ? {}
      : { ocpi: roamed && pushSession(deps, ctx, sessionId, { ...roamed, started_at: startedAt }, 0, null) }),
    ...(event.id_tag === null ? {} : { id_tag: event.id_tag, id_tag_status: idTagStatus }),
  };
  if (opened.ocpi) keepStart(deps, ctx, sessionId, opened.started_at ?? Date.now(), event);
  if (event.meter_start_wh !== null)
    keepSample(ctx, deps.meterSamples.sample(sessionId, startedAt, event.meter_start_wh, 'first'));
  ctx.setState({
    ...s,
    next_transaction_id: event.transaction_id === null ? Number(transactionId) + 1 : s.next_transaction_id,
    transactions: [...s.transactions, opened],
    reservations: reservationsAfterStart(s, event),
    recent_starts: usedUp(s, remoteStart, event.dedupe_key),
  });
  // a later reading the start carries besides its first: the transaction's first progress
  if (event.meter_last) return laterReadingOfStart(deps, ctx, transactionId, event, event.meter_last, idTagStatus);
  publishChange(deps, ctx, { type: 'session', session_id: sessionId });
  return { transaction_id: transactionId, id_tag_status: idTagStatus };
}

/** A Started's later reading (`meter_last`), applied to its just opened transaction as an update. */
function laterReadingOfStart(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  transactionId: string,
  event: EventOf<'transaction-started'>,
  last: { wh: number; timestamp: string },
  idTagStatus: string,
): ChargerEventOutcome {
  const update: EventOf<'transaction-updated'> = {
    type: 'transaction-updated',
    transaction_id: transactionId,
    meter_wh: last.wh,
    meter_at: last.timestamp,
    ...(event.meter_peak ? { meter_peak: event.meter_peak } : {}),
    timestamp: event.timestamp,
    seq_no: null,
    id_tag: null,
  };
  return { ...onTransactionProgress(deps, ctx, ctx.state, update, idTagStatus), transaction_id: transactionId };
}

/**
 * An update (meter values, a late idToken) or the end of an open transaction. An update is one
 * UPDATE of the session row and, unless it brings the first meter reading or a token, no state
 * write; the row itself refuses a 2.0.1 update that repeats an applied seqNo. `idTagStatus`: the
 * authorization of the token the event names (actor.ts decides it), which is the answer.
 */
export function onTransactionProgress(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  event: EventOf<'transaction-updated' | 'transaction-ended'>,
  idTagStatus = 'Accepted',
  /** when the event opens a transaction whose start never arrived: its roamed session (roaming.ts roamingOf) */
  adoptedRoamed?: Roamed,
): ChargerEventOutcome {
  const tx = s.transactions.find((t) => t.transaction_id === event.transaction_id);
  if (!tx) {
    // already finished: a retry after the end changes nothing
    if (s.finished.some((f) => f.transaction_id === event.transaction_id)) return { id_tag_status: idTagStatus };
    // an end read from a message that failed its schema closes what is open, it opens nothing
    if (event.type === 'transaction-ended' && event.salvaged) {
      ctx.log.warn({ transaction_id: event.transaction_id }, 'invalid end of a transaction not open here: ignored');
      return { id_tag_status: 'Accepted' };
    }
    return adoptTransaction(deps, ctx, s, event, idTagStatus, adoptedRoamed);
  }
  const first = firstReadingOf(tx, event);
  const ended = event.type === 'transaction-ended';
  const progress = progressOf(tx, event, first.meterStart, authorizesLate(tx, event, idTagStatus));
  if (first.writeStart && first.meterStart !== null) progress.start = first.meterStart;
  const peak = keepChartReadings(deps, ctx, tx, event, progress);
  ctx.write(deps.sessions.progress(tx.session_id, progress));
  if (first.begin) {
    const latestAt = progress.meter?.at ?? progress.stopped?.at ?? chargerTime(event.timestamp);
    keepBegin(deps, ctx, tx, first.begin, latestAt, first.corrected);
  }
  if (peak && tx.ocpi) sampleMeter(deps, ctx, tx.session_id, peak.at, peak.wh);
  if (tx.ocpi) {
    sampleMeter(
      deps,
      ctx,
      tx.session_id,
      progress.meter?.at ?? progress.stopped?.at ?? chargerTime(event.timestamp),
      event.meter_wh,
      ended ? 'last' : 'between',
    );
    keepCharging(deps, ctx, tx.session_id, saidOf(event));
  }
  const ocpi = tx.ocpi ? roamedProgress(deps, ctx, tx.session_id, tx.ocpi, progress) : tx.ocpi;
  keepProgress(ctx, s, tx, event, { first, progress, ocpi }, idTagStatus);
  publishChange(deps, ctx, {
    type: 'session',
    session_id: tx.session_id,
    ...(event.type === 'transaction-ended' ? {} : { progress: true as const }),
  });
  return { id_tag_status: idTagStatus };
}

/** The open transaction after an update (its first reading, a Begin kept, the lowest reading), or the finished one after its end. */
function keepProgress(
  ctx: ChargePointCtx,
  s: ChargePointState,
  tx: OpenTransaction,
  event: EventOf<'transaction-updated' | 'transaction-ended'>,
  done: { first: FirstReading; progress: SessionProgress; ocpi: OpenTransaction['ocpi'] },
  idTagStatus: string,
): void {
  const { first, progress, ocpi } = done;
  if (event.type === 'transaction-ended') {
    ctx.setState({
      ...s,
      transactions: s.transactions.filter((t) => t !== tx),
      finished: [...s.finished, finishedOf(tx, progress.stopped?.at ?? chargerTime(event.timestamp))].slice(
        -MAX_FINISHED,
      ),
    });
    return;
  }
  // one object literal, no spread: this runs for every meter value of a transaction
  const next = {
    meter_start_wh: first.meterStart,
    meter_start_guessed: first.guessed,
    named_begin: first.pending,
    low_wh: lowOf(tx, event),
    ocpi,
    evse_id: progress.evse?.evse_id ?? tx.evse_id,
  };
  keepOpen(ctx, s, tx, next, event.id_tag, idTagStatus, progress.id_tag_replaces === true);
}

/**
 * An update's or end's readings for the session's chart (its last, and its peak above it), written
 * before the session row moves: a 2.0.1 update's insert reads the seqNo the row has applied, and a
 * repeat's readings are left out as the row leaves them. Answers the peak (epoch ms), if any.
 */
function keepChartReadings(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  tx: OpenTransaction,
  event: EventOf<'transaction-updated' | 'transaction-ended'>,
  progress: SessionProgress,
): { at: number; wh: number } | undefined {
  const ended = event.type === 'transaction-ended';
  const seq = ended ? null : event.seq_no;
  if (progress.meter) {
    const which = ended ? 'last' : 'between';
    keepSample(ctx, deps.meterSamples.sample(tx.session_id, progress.meter.at, progress.meter.last_wh, which, seq));
  } else if (ended) deps.meterSamples.forget(tx.session_id);
  // the message's peak above its last reading is a reading of the chart and the CDR too
  const peak = progress.meter && event.meter_peak;
  if (!peak) return undefined;
  const at = chargerTime(peak.timestamp);
  keepSample(ctx, deps.meterSamples.sample(tx.session_id, at, peak.wh, 'peak', seq));
  return { at, wh: peak.wh };
}

/**
 * The first reading of a transaction that had none, carried by a later message (`beginOf`): its
 * energy chart starts there, and so do a roamed session's readings, which its CDR is priced from.
 * One stamped at or after the message's latest (a Transaction.Begin that the charger stamped like
 * its Transaction.End, or after it: meter.ts ranks them by context) is put at the transaction's
 * start, where a Begin reading is taken: kept at the latest's instant, the two would be one
 * reading, and the CDR would bill none of the energy between them.
 */
function keepBegin(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  tx: OpenTransaction,
  begin: { wh: number; timestamp: string },
  latestAt: number,
  corrected: boolean,
): void {
  const stamped = chargerTime(begin.timestamp);
  // a reading that corrects the first one takes its place, at the start
  const at = stamped < latestAt && !corrected ? stamped : (tx.started_at ?? Math.min(stamped, latestAt));
  if (at >= latestAt) return;
  keepSample(ctx, deps.meterSamples.sample(tx.session_id, at, begin.wh, corrected ? 'start' : 'first'));
  if (tx.ocpi) sampleMeter(deps, ctx, tx.session_id, at, begin.wh, corrected ? 'replace' : 'between');
}

/** The lowest reading an update reported (`low_wh`): a state write at a transaction's first reading only. */
function lowOf(tx: OpenTransaction, event: EventOf<'transaction-updated' | 'transaction-ended'>): number | undefined {
  return event.meter_wh === null || event.meter_wh >= (tx.low_wh ?? Infinity) ? tx.low_wh : event.meter_wh;
}

/** The earliest reading an update or end carries (domain.ts `begin`). */
type BeginReading = NonNullable<EventOf<'transaction-updated' | 'transaction-ended'>['begin']>;

/** What an update or end makes of its transaction's first reading (`firstReadingOf`). */
interface FirstReading {
  /** the reading to keep as the first (the chart, a roamed session's readings: `keepBegin`) */
  begin?: BeginReading | undefined;
  /** `begin` replaces a first reading kept before */
  corrected: boolean;
  meterStart: number | null;
  /** `meterStart` is a later reading taken as the first (`meter_start_guessed`) */
  guessed: true | undefined;
  /** a Begin reading kept for the end, which decides whether it corrects (`named_begin`) */
  pending: BeginReading | undefined;
  /** the session row's first reading is written as `meterStart` (`SessionProgress.start`) */
  writeStart: boolean;
}

/** Of two readings named Transaction.Begin, the one stamped first (the one kept before on a tie). */
function earlierBegin(a: BeginReading | undefined, kept: BeginReading | undefined): BeginReading | undefined {
  if (!a || !kept) return a ?? kept;
  return chargerTime(a.timestamp) < chargerTime(kept.timestamp) ? a : kept;
}

/**
 * The first reading of a transaction after an update or end (docs/CSMS.md "Energy and
 * out-of-order readings"). A transaction without one counts from the reading the charger named
 * Transaction.Begin, in this message or one before, else from the earliest this event carries (a
 * guess: `beginOf`), else from the event's reading (a guess). One that has a first reading keeps
 * a Begin reading that comes while it runs for its end, where the end's reading and every reading
 * reported decide whether it corrects the first (`correctsStart`): only then is the energy known.
 */
function firstReadingOf(
  tx: OpenTransaction,
  event: EventOf<'transaction-updated' | 'transaction-ended'>,
): FirstReading {
  // object literals, no spreads: this runs for every meter value of a transaction
  const named = earlierBegin(event.begin?.named ? event.begin : undefined, tx.named_begin);
  const start = tx.meter_start_wh;
  if (start === null) {
    if (named) {
      const writeStart = event.meter_wh === null;
      return {
        begin: named,
        corrected: false,
        meterStart: named.wh,
        guessed: undefined,
        pending: undefined,
        writeStart,
      };
    }
    const begin = event.meter_wh === null ? undefined : beginOf(event);
    const meterStart = begin?.wh ?? event.meter_wh;
    const guessed = meterStart === null ? undefined : true;
    return { begin, corrected: false, meterStart, guessed, pending: undefined, writeStart: false };
  }
  const ended = event.type === 'transaction-ended';
  if (ended && named && correctsStart(tx, named.wh, event.meter_wh))
    return {
      begin: named,
      corrected: true,
      meterStart: named.wh,
      guessed: undefined,
      pending: undefined,
      writeStart: true,
    };
  const pending = ended ? undefined : named;
  return {
    begin: undefined,
    corrected: false,
    meterStart: start,
    guessed: tx.meter_start_guessed,
    pending,
    writeStart: false,
  };
}

/**
 * The earliest reading an update or end carries, unless stamped after the event itself: no
 * reading of the transaction is taken after the message that reports it.
 */
function beginOf(event: EventOf<'transaction-updated' | 'transaction-ended'>): BeginReading | undefined {
  const begin = event.begin;
  return begin && chargerTime(begin.timestamp) <= chargerTime(event.timestamp) ? begin : undefined;
}

/**
 * Whether a reading of `beginWh` the charger named Transaction.Begin corrects the first reading
 * at the transaction's end: below a first reading that was a later one taken as the first (an
 * update's, `meter_start_guessed`); above a start's own reading that a failed read made lower (a
 * 1.6 `meterStart` of 0), when not above the lowest reading an update reported (`low_wh`), or,
 * with none reported, the end's. The register only grows: the start is at most every later reading.
 */
function correctsStart(tx: OpenTransaction, beginWh: number, endWh: number | null): boolean {
  const start = tx.meter_start_wh;
  if (start === null || beginWh === start) return false;
  if (tx.meter_start_guessed) return beginWh < start;
  return beginWh > start && beginWh <= (tx.low_wh ?? endWh ?? Infinity);
}

/**
 * The energy from `startWh` to `lastWh` (never below 0), to the thousandth of a Wh, the precision
 * readings are kept in (src/ocpp/meter.ts `toMilliWh`): 12999.9 - 12345.6 is 654.3, not the
 * binary 654.3000000000011.
 */
export function energyBetween(startWh: number, lastWh: number): number {
  return Math.max(0, Math.round((lastWh - startWh) * 1000) / 1000);
}

/**
 * Whether the token an update names authorizes its transaction after the transaction's own was
 * refused: 2.0.1 lets a charger keep a transaction whose token was answered Invalid or Blocked
 * (StopTxOnInvalidId false) and authorize it later with another token (triggerReason Authorized).
 * That token, accepted, is the transaction's from then on; one named to stop it
 * (StopAuthorized) is the stop's, as is every other token named after the transaction's own.
 */
export function authorizesLate(
  tx: OpenTransaction,
  event: EventOf<'transaction-updated' | 'transaction-ended'>,
  idTagStatus: string,
): boolean {
  return (
    event.type === 'transaction-updated' &&
    event.stop_authorized !== true &&
    event.id_tag !== null &&
    tx.id_tag !== undefined &&
    event.id_tag !== tx.id_tag &&
    tx.id_tag_status !== undefined &&
    tx.id_tag_status !== 'Accepted' &&
    idTagStatus === 'Accepted'
  );
}

/** What an update or end changes in its session row. */
function progressOf(
  tx: OpenTransaction,
  event: EventOf<'transaction-updated' | 'transaction-ended'>,
  meterStart: number | null,
  /** the event's token authorizes the transaction, its own refused (`authorizesLate`) */
  late: boolean,
): SessionProgress {
  // built field by field: spreading conditional objects cost ~2.5 us per meter value (every
  // MeterValues of a running transaction comes through here)
  const progress: SessionProgress = { seq_no: event.seq_no };
  // the first token named is the transaction's; one named after it (an end's, a 2.0.1
  // StopAuthorized update's) is the token that stopped it, and bills no one
  if (event.id_tag !== null) {
    if (late) {
      progress.id_tag = event.id_tag;
      progress.id_tag_replaces = true;
    } else if (tx.id_tag === undefined) progress.id_tag = event.id_tag;
    else if (event.type === 'transaction-ended' || event.id_tag !== tx.id_tag) progress.stop_id_tag = event.id_tag;
  }
  if (event.meter_wh !== null) {
    // a reading of the message above the one it ends at (a register that went back within it)
    // is the highest it reached: the energy counts to it
    const peak = event.meter_peak;
    const top = peak !== undefined && peak.wh > event.meter_wh ? peak.wh : event.meter_wh;
    progress.meter = {
      start_wh: meterStart,
      last_wh: event.meter_wh,
      energy_wh: meterStart === null ? 0 : energyBetween(meterStart, top),
      at: chargerTime(event.meter_at ?? event.timestamp),
    };
  }
  // an end is never before its start (a start stamped by a clock that was ahead)
  if (event.type === 'transaction-ended')
    progress.stopped = { at: Math.max(chargerTime(event.timestamp), tx.started_at ?? 0), reason: event.reason };
  // the EVSE of a transaction whose start named none: from the first event that names it
  if (tx.evse_id === 0 && event.evse_id !== undefined && event.evse_id > 0)
    progress.evse = { evse_id: event.evse_id, connector_id: event.connector_id ?? 0 };
  return progress;
}

/**
 * An open transaction after an update: written to the state only when something kept there
 * changed (its first reading, its roamed session, the token named and its answer); a plain meter
 * value writes no state.
 */
function keepOpen(
  ctx: ChargePointCtx,
  s: ChargePointState,
  tx: OpenTransaction,
  next: Pick<OpenTransaction, 'meter_start_wh' | 'meter_start_guessed' | 'named_begin' | 'low_wh' | 'ocpi' | 'evse_id'>,
  idTag: string | null,
  idTagStatus: string,
  /** `idTag` authorized the transaction, its own refused (`authorizesLate`) */
  replaces: boolean,
): void {
  // the transaction's own token, named now for the first time, answered anew, or authorizing it
  // after its own was refused; a stop token is not kept here
  const token =
    idTag !== null && (replaces || tx.id_tag === undefined || (tx.id_tag === idTag && tx.id_tag_status !== idTagStatus))
      ? { id_tag: idTag, id_tag_status: idTagStatus }
      : undefined;
  const changed =
    next.meter_start_wh !== tx.meter_start_wh ||
    next.meter_start_guessed !== tx.meter_start_guessed ||
    next.low_wh !== tx.low_wh ||
    next.named_begin !== tx.named_begin ||
    next.ocpi !== tx.ocpi ||
    next.evse_id !== tx.evse_id;
  if (!changed && !token) return;
  const {
    meter_start_guessed: guessed,
    low_wh: low,
    named_begin: begin,
    id_tag_answer: answer,
    ...rest
  } = { ...tx, ...next, ...token };
  const kept: OpenTransaction = {
    ...rest,
    ...(guessed ? { meter_start_guessed: guessed } : {}),
    ...(low === undefined ? {} : { low_wh: low }),
    ...(begin ? { named_begin: begin } : {}),
    // what the answer of a token said is its own: another token's answer replaces it (actor.ts keepAnswer)
    ...(answer && !replaces ? { id_tag_answer: answer } : {}),
  };
  ctx.setState({ ...s, transactions: s.transactions.map((t) => (t === tx ? kept : t)) });
}

/**
 * An update or end of a transaction whose start never arrived (lost, or sent to a CSMS before
 * this one): the session is opened from what the event carries, so that its energy and end are
 * kept (docs/CSMS.md "Sessions"), and the event applied to it. Its start is the earliest reading
 * the event brings, at that reading's time (a 1.6 stop's transactionData, a 2.0.1 event's
 * meterValue), else the event's time without a reading; its EVSE the one the event names, else
 * unknown (0). A 1.6 id is ours: the counter moves past it so that no later start gets it again.
 */
function adoptTransaction(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  event: EventOf<'transaction-updated' | 'transaction-ended'>,
  idTagStatus: string,
  roamed: Roamed | undefined,
): ChargerEventOutcome {
  if (s.transactions.length >= deps.maxOpenTransactions()) {
    ctx.log.warn({ transaction_id: event.transaction_id }, 'transaction without a start not kept: open limit reached');
    return { id_tag_status: idTagStatus };
  }
  ctx.log.warn(
    { transaction_id: event.transaction_id, event: event.type },
    'transaction without a start: session opened',
  );
  const numeric = /^\d{1,15}$/.test(event.transaction_id) ? Number(event.transaction_id) : undefined;
  const protocol = s.protocol ?? (numeric === undefined ? 'ocpp2.0.1' : 'ocpp1.6');
  // the event's earliest reading (a 1.6 stop's transactionData, a 2.0.1 event's meterValue) may
  // be the one the lost start had: a guess unless the charger named it Transaction.Begin
  const begin = event.begin?.named ? event.begin : beginOf(event);
  const start: EventOf<'transaction-started'> = {
    type: 'transaction-started',
    transaction_id: event.transaction_id,
    dedupe_key: `${ADOPTED}${event.transaction_id}`,
    evse_id: event.evse_id ?? 0,
    connector_id: event.connector_id ?? 0,
    id_tag: event.id_tag,
    meter_start_wh: begin?.wh ?? null,
    timestamp: begin?.timestamp ?? event.timestamp,
    seq_no: null,
    remote_start_id: null,
  };
  // 2.0.1 (ids the charger names): its EVSE's open transaction, when older, ended without it, at
  // the event (no reading was read). A 1.6 id is one we issue: an unknown one is a stray or a
  // previous CSMS's, and ends nothing (it ended a running transaction, whose stop was then lost)
  if (protocol === 'ocpp2.0.1') endSuperseded(deps, ctx, start);
  // a partner's accepted token on a linked EVSE roams it from its start, as a start that arrived would
  const roamedFromStart = roamed && { ...roamed, started_at: chargerTime(start.timestamp) };
  onTransactionStarted(deps, ctx, ctx.state, start, protocol, roamedFromStart, idTagStatus);
  const opened = ctx.state;
  const guess = begin !== undefined && !begin.named;
  ctx.setState({
    ...opened,
    next_transaction_id:
      protocol === 'ocpp1.6' && numeric !== undefined && opened.next_transaction_id <= numeric
        ? numeric + 1
        : opened.next_transaction_id,
    transactions: guess
      ? opened.transactions.map((t) =>
          t.transaction_id === event.transaction_id ? { ...t, meter_start_guessed: true as const } : t,
        )
      : opened.transactions,
  });
  return onTransactionProgress(deps, ctx, ctx.state, event, idTagStatus);
}

/**
 * A roamed transaction's progress: its session goes to the eMSP at the end, and while it runs
 * with new energy at most every ROAMING_SESSION_PUSH_MS (the same object as before otherwise).
 */
function roamedProgress(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  sessionId: string,
  r: Roamed,
  p: SessionProgress,
): Roamed {
  // the register only grows: a reading that arrives late (queued offline) must not lower the energy
  // (a first reading corrected by a Begin reading counts anew: from the event's reading, else the row's)
  const kwh =
    p.start !== undefined
      ? p.meter
        ? p.meter.energy_wh / 1000
        : null
      : p.meter
        ? Math.max(r.kwh, p.meter.energy_wh / 1000)
        : r.kwh;
  if (p.stopped) return pushSession(deps, ctx, sessionId, r, kwh, p.stopped.at);
  if (!p.meter) return r;
  const wait = (deps.roaming?.sessionPushMs ?? 0) - (Date.now() - r.pushed_at);
  if (wait > 0) {
    // the reading waits out the interval; when no later one carries it, the timer sends it
    waitToPush(ctx, sessionId, wait);
    return r;
  }
  return pushSession(deps, ctx, sessionId, r, kwh, null);
}

/** Arms the timer that sends a roamed session's waiting energy in `wait` ms (`onSessionPushDue`). */
function waitToPush(ctx: ChargePointCtx, sessionId: string, wait: number): void {
  ctx.setTimer(pushTimer(sessionId), wait, { type: 'session-push-due', session_id: sessionId });
}

/**
 * A roamed session's readings waited out ROAMING_SESSION_PUSH_MS and no later reading sent them
 * (a charger that reports in bursts, or goes quiet while parked): the session is sent now, with
 * the energy its row holds. Before, the eMSP saw the energy and cost of the last push until the
 * next reading or the end.
 */
export function onSessionPushDue(deps: ChargePointActorDeps, ctx: ChargePointCtx, sessionId: string): null {
  const s = ctx.state;
  const tx = s.transactions.find((t) => t.session_id === sessionId);
  if (!tx?.ocpi) return null;
  const wait = (deps.roaming?.sessionPushMs ?? 0) - (Date.now() - tx.ocpi.pushed_at);
  if (wait > 0) {
    waitToPush(ctx, sessionId, wait);
    return null;
  }
  const ocpi = pushSession(deps, ctx, sessionId, tx.ocpi, null, null);
  ctx.setState({ ...s, transactions: s.transactions.map((t) => (t === tx ? { ...t, ocpi } : t)) });
  return null;
}

/** A sample within an open transaction updates it; outside one it changes nothing the CSMS keeps. */
export function onMeterSampled(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  event: EventOf<'meter-sampled'>,
): ChargerEventOutcome {
  const tx =
    event.transaction_id === null ? undefined : s.transactions.find((t) => t.transaction_id === event.transaction_id);
  if (!tx) return {};
  return onTransactionProgress(deps, ctx, s, {
    type: 'transaction-updated',
    transaction_id: tx.transaction_id,
    meter_wh: event.meter_wh,
    timestamp: event.timestamp,
    seq_no: null,
    id_tag: null,
  });
}

function keepSample(ctx: ChargePointCtx, sample: { write: WriteStep; kept: () => void } | undefined): void {
  if (!sample) return;
  ctx.write(sample.write);
  ctx.afterCommit(sample.kept);
}
