import { MergeableStatement, type WriteStep } from '../db/merged-write.js';
import type { Dialect, SqlRunner, SqlStatement } from '../db/sql.js';
import Type, { type Static } from '#typebox';
import type { Database, Row } from '../db/database.js';
import type {
  FinishedSession,
  FinishedSessionQuery,
  LastReading,
  LateStart,
  NewSessionRow,
  SessionProgress,
  SessionWrites,
} from '../../actors/charge-point/ports.js';
import { titled } from '../gateway/openapi.js';
import { readMeterSamples, type MeterSample } from './meter-samples.js';

/** A charging session as the /v1 API shows it, built from the transactions chargers report. */
export const ChargingSession = titled(
  'ChargingSession',
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    charge_point_id: Type.String(),
    protocol: Type.String(),
    transaction_id: Type.String(),
    evse_id: Type.Integer(),
    connector_id: Type.Integer(),
    id_tag: Type.Union([Type.String(), Type.Null()]),
    status: Type.Union([Type.Literal('ACTIVE'), Type.Literal('COMPLETED')]),
    started_at: Type.String({ format: 'date-time' }),
    stopped_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    meter_start_wh: Type.Union([Type.Number(), Type.Null()]),
    meter_last_wh: Type.Union([Type.Number(), Type.Null()]),
    energy_wh: Type.Number({ description: 'energy delivered so far (Wh)' }),
    stop_reason: Type.Union([Type.String(), Type.Null()]),
    stop_id_tag: Type.Union([Type.String(), Type.Null()], {
      description:
        'the token that stopped the transaction, when the charger named one (id_tag stays the one that authorized it)',
    }),
    updated_at: Type.String({ format: 'date-time' }),
    cost: Type.Union(
      [
        Type.Object({
          excl_vat: Type.Number(),
          incl_vat: Type.Union([Type.Number(), Type.Null()]),
          currency: Type.String(),
          final: Type.Boolean({ description: "true: the CDR's total; false: the running cost so far" }),
        }),
        Type.Null(),
      ],
      {
        description:
          'a roamed session (on a linked EVSE, with a partner token): its price; null otherwise or until priced',
      },
    ),
    remote_start_command_id: Type.Union([Type.String(), Type.Null()], {
      description: "the remote start this session followed: its command id (in the charge point's commands)",
    }),
    cdr_id: Type.Union([Type.String(), Type.Null()], {
      description: 'the id of its CDR once the session ended and was priced (GET /v1/sessions/{id}/cdr)',
    }),
  }),
);
export type ChargingSession = Static<typeof ChargingSession>;

/**
 * Writes run inside the charge-point actor's fenced turn (through ctx.write), so a stale owner
 * of a charger cannot write a session after a newer one took over; the actor gets them as its
 * session port (deps.sessions). Reads serve the /v1 API.
 */
export const sessionWrites: SessionWrites = {
  async insert(tx: SqlRunner, s: NewSessionRow): Promise<void> {
    await tx.run(
      `INSERT INTO csms_session (id, charge_point_id, protocol, transaction_id, evse_id, connector_id, id_tag, status, started_at,
         stopped_at, meter_start_wh, meter_last_wh, energy_wh, stop_reason, updated_at, seq_max, remote_start_command_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'ACTIVE', ?, NULL, ?, ?, 0, NULL, ?, ?, ?)`,
      [
        s.id,
        s.charge_point_id,
        s.protocol,
        s.transaction_id,
        s.evse_id,
        s.connector_id,
        s.id_tag,
        s.started_at,
        s.meter_start_wh,
        s.meter_start_wh,
        Date.now(),
        s.seq_no,
        s.remote_start_command_id,
      ],
    );
  },

  /**
   * One UPDATE of the session row, without reading it first: the meter moves only when the event
   * carried a reading, and a 2.0.1 update whose seqNo is not above the last one applied matches
   * no row (a charger repeating a message it had no answer to). The reading replaces the row's
   * only when it was taken at or after it (`meter_last_at`, `NEWER`), so readings that arrive out
   * of order never lower the last reading or the energy. A meter reading and nothing else
   * (the MeterValues of a running transaction) is a row of `meterProgress`, which a batch of
   * turns on PostgreSQL writes in one statement.
   */
  progress(sessionId: string, p: SessionProgress): WriteStep {
    if (p.meter && p.start === undefined && !p.id_tag && !p.stop_id_tag && !p.stopped && !p.evse)
      return meterProgress.write({
        id: sessionId,
        updated_at: Date.now(),
        start_wh: p.meter.start_wh,
        last_wh: p.meter.last_wh,
        energy_wh: p.meter.energy_wh,
        at: p.meter.at,
        seq: p.seq_no ?? null,
      });
    return (tx) => progressAny(tx, sessionId, p);
  },

  followed(sessionId: string, commandId: string): WriteStep {
    return async (tx) => {
      await tx.run(
        'UPDATE csms_session SET remote_start_command_id = ?, updated_at = ? WHERE id = ? AND remote_start_command_id IS NULL',
        [commandId, Date.now(), sessionId],
      );
    };
  },

  lateStart(sessionId: string, start: LateStart): WriteStep {
    const sets = ['updated_at = ?', 'started_at = ?'];
    const params: unknown[] = [Date.now(), start.started_at];
    if (start.meter_start_wh !== null) {
      // the energy runs from the start's reading; the readings that came before it stay
      const wh = start.meter_start_wh;
      sets.push('meter_start_wh = ?', `energy_wh = ${recount}`);
      params.push(wh, wh, wh);
    }
    if (start.id_tag !== null) {
      sets.push('id_tag = COALESCE(id_tag, ?)');
      params.push(start.id_tag);
    }
    if (start.evse) {
      // only a session that knows no EVSE yet takes the start's (the SET reads the row as it was)
      sets.push(
        'evse_id = CASE WHEN evse_id = 0 THEN ? ELSE evse_id END',
        'connector_id = CASE WHEN evse_id = 0 THEN ? ELSE connector_id END',
      );
      params.push(start.evse.evse_id, start.evse.connector_id);
    }
    params.push(sessionId);
    return async (tx) => {
      await tx.run(`UPDATE csms_session SET ${sets.join(', ')} WHERE id = ?`, params);
    };
  },
};

/**
 * Whether a reading taken at the bound time is at least as new as the row's (a tie goes to the
 * later arrival). In a SET list every expression reads the row as it was before the UPDATE, in
 * SQLite as in PostgreSQL, so the three columns are decided on the same old `meter_last_at`.
 */
const NEWER = '(meter_last_at IS NULL OR meter_last_at <= ?)';
/** the reading (the parameter) not below the row's last one */
const NOT_LOWER = '(meter_last_wh IS NULL OR meter_last_wh <= ?)';
/** the later of the row's last reading's time and the parameter (given twice) */
const LATER_OF = 'CASE WHEN meter_last_at IS NOT NULL AND meter_last_at > ? THEN meter_last_at ELSE ? END';

/**
 * The highest reading the row has taken: its energy counts from its first reading to there, so
 * the first reading plus the energy, or the last reading when that is higher (NULL without any).
 */
const HIGHEST =
  '(CASE WHEN meter_start_wh IS NULL OR meter_last_wh > meter_start_wh + energy_wh THEN meter_last_wh ELSE meter_start_wh + energy_wh END)';

/**
 * The energy from a first reading (the parameter, bound twice) to the highest reading: the
 * register only rises, and a reading below one taken before it adds nothing (docs/CSMS.md).
 */
const recount = `CASE WHEN ${HIGHEST} > ? THEN ROUND((${HIGHEST} - ?) * 1000) / 1000 ELSE 0 END`;

/** The energy of a reading (the parameter, bound twice) where it is above the row's: it never goes down. */
const RISEN = 'CASE WHEN energy_wh < ? THEN ? ELSE energy_wh END';

/**
 * The SET list of an update's or end's first reading, reading and energy. The energy is the
 * highest reading less the first: a reading that is not the highest moves the last reading (when
 * newer) but not the energy. A first reading written or corrected (charge-point actor,
 * `firstReadingOf`) counts the energy from it, to the highest of the row's and the event's.
 */
function meterSets(p: SessionProgress, sets: string[], params: unknown[]): void {
  const start = p.start;
  if (start !== undefined) {
    sets.push('meter_start_wh = ?');
    params.push(start);
    if (!p.meter) {
      sets.push(`energy_wh = ${recount}`);
      params.push(start, start);
    }
  }
  if (!p.meter) return;
  const { at, last_wh: wh } = p.meter;
  if (start === undefined) {
    sets.push('meter_start_wh = COALESCE(meter_start_wh, ?)');
    params.push(p.meter.start_wh);
  }
  const energy = p.meter.energy_wh;
  if (start === undefined) {
    sets.push(`energy_wh = ${RISEN}`);
    params.push(energy, energy);
  } else {
    sets.push(`energy_wh = CASE WHEN ${recount} > ? THEN ${recount} ELSE ? END`);
    params.push(start, start, energy, start, start, energy);
  }
  if (p.stopped) {
    // the end's reading is the transaction's last whatever the charger's clock stamped on it, at
    // the latest reading's time when that is later (a clock ahead, corrected before the end: a
    // reading stamped 9 s ahead kept the session's last, and its chart ended after its stop).
    // One below a reading the transaction already reported is no end of its register (a failed
    // read, meterStop 0): the last reading stays (docs/CSMS.md)
    sets.push(
      `meter_last_wh = CASE WHEN ${NOT_LOWER} THEN ? ELSE meter_last_wh END`,
      `meter_last_at = CASE WHEN ${NOT_LOWER} THEN ${LATER_OF} ELSE meter_last_at END`,
    );
    params.push(wh, wh, wh, at, at);
  } else {
    sets.push(
      `meter_last_wh = CASE WHEN ${NEWER} THEN ? ELSE meter_last_wh END`,
      `meter_last_at = CASE WHEN ${NEWER} THEN ? ELSE meter_last_at END`,
    );
    params.push(at, wh, at, at);
  }
}

/** Any update or end: the SET list holds what the event carried. */
async function progressAny(tx: SqlRunner, sessionId: string, p: SessionProgress): Promise<void> {
  const sets = ['updated_at = ?'];
  const params: unknown[] = [Date.now()];
  meterSets(p, sets, params);
  if (p.id_tag) {
    // the token that authorized the transaction is kept: a later one is the stop's, unless it
    // authorized the transaction after its own was refused
    sets.push(p.id_tag_replaces ? 'id_tag = ?' : 'id_tag = COALESCE(id_tag, ?)');
    params.push(p.id_tag);
  }
  if (p.stop_id_tag) {
    sets.push('stop_id_tag = ?');
    params.push(p.stop_id_tag);
  }
  if (p.evse) {
    sets.push('evse_id = ?', 'connector_id = ?');
    params.push(p.evse.evse_id, p.evse.connector_id);
  }
  if (p.stopped) {
    // never before the last reading the session took (the SET reads the row as it was)
    sets.push(`status = 'COMPLETED'`, `stopped_at = ${LATER_OF}`, 'stop_reason = ?');
    params.push(p.stopped.at, p.stopped.at, p.stopped.reason);
  }
  const seq = p.seq_no ?? null;
  if (seq !== null) {
    sets.push('seq_max = ?');
    params.push(seq);
  }
  params.push(sessionId);
  const onlyNewer = seq !== null && !p.stopped;
  if (onlyNewer) params.push(seq);
  await tx.run(
    `UPDATE csms_session SET ${sets.join(', ')} WHERE id = ?${onlyNewer ? ' AND (seq_max IS NULL OR seq_max < ?)' : ''}`,
    params,
  );
}

/**
 * `MeterProgress.one`, the statement of every meter value on SQLite. Its text is made once: the
 * executors find a prepared statement by its text, and a text built anew for each meter value
 * would be hashed anew for each (docs/PERFORMANCE.md, hot path, "Fifteenth sitting").
 */
const METER_ONE = `UPDATE csms_session SET updated_at = ?, meter_start_wh = COALESCE(meter_start_wh, ?),
         meter_last_wh = CASE WHEN ${NEWER} THEN ? ELSE meter_last_wh END,
         energy_wh = ${RISEN},
         meter_last_at = CASE WHEN ${NEWER} THEN ? ELSE meter_last_at END, seq_max = COALESCE(?, seq_max)
       WHERE id = ? AND (CAST(? AS integer) IS NULL OR seq_max IS NULL OR seq_max < ?)`;

/** `MeterProgress.manyStatement` on PostgreSQL: the rows as arrays, unnested and joined to their sessions. */
const METER_MANY = `UPDATE csms_session AS s SET updated_at = v.updated_at, meter_start_wh = COALESCE(s.meter_start_wh, v.start_wh),
         meter_last_wh = CASE WHEN s.meter_last_at IS NULL OR s.meter_last_at <= v.at THEN v.last_wh ELSE s.meter_last_wh END,
         energy_wh = GREATEST(s.energy_wh, v.energy_wh),
         meter_last_at = CASE WHEN s.meter_last_at IS NULL OR s.meter_last_at <= v.at THEN v.at ELSE s.meter_last_at END,
         seq_max = COALESCE(v.seq, s.seq_max)
       FROM unnest(?::varchar[], ?::bigint[], ?::float8[], ?::float8[], ?::float8[], ?::bigint[], ?::integer[])
         AS v(id, updated_at, start_wh, last_wh, energy_wh, at, seq)
       WHERE s.id = v.id AND (v.seq IS NULL OR s.seq_max IS NULL OR s.seq_max < v.seq)`;

interface MeterRow {
  id: string;
  updated_at: number;
  start_wh: number | null;
  last_wh: number;
  energy_wh: number;
  /** when the reading was taken (epoch ms): it replaces the row's only when not older */
  at: number;
  /** 2.0.1 seqNo: the row moves only when it is above the last one applied */
  seq: number | null;
}

/**
 * A meter reading of a running session. `manyStatement` on PostgreSQL: the rows as arrays, unnested and
 * joined to their sessions, one prepared statement whatever their number. Two rows of the same
 * session in one batch (which one charge point's turns, one at a time, do not make) would leave
 * the order to the server: they run one by one instead, as on SQLite.
 */
class MeterProgress extends MergeableStatement<MeterRow> {
  async one(tx: SqlRunner, r: MeterRow): Promise<void> {
    await tx.run(METER_ONE, [
      r.updated_at,
      r.start_wh,
      r.at,
      r.last_wh,
      r.energy_wh,
      r.energy_wh,
      r.at,
      r.at,
      r.seq,
      r.id,
      r.seq,
      r.seq,
    ]);
  }

  override manyStatement(rows: readonly MeterRow[], dialect: Dialect): SqlStatement | undefined {
    if (dialect !== 'postgresql' || new Set(rows.map((r) => r.id)).size < rows.length) return undefined;
    return {
      sql: METER_MANY,
      params: [
        rows.map((r) => r.id),
        rows.map((r) => r.updated_at),
        rows.map((r) => r.start_wh),
        rows.map((r) => r.last_wh),
        rows.map((r) => r.energy_wh),
        rows.map((r) => r.at),
        rows.map((r) => r.seq),
      ],
    };
  }
}

const meterProgress = new MeterProgress();

function iso(v: unknown): string {
  return new Date(Number(v)).toISOString();
}

function num(v: unknown): number | null {
  return v === null || v === undefined ? null : Number(v);
}

/** The OCPI session or CDR of a session (the same id), as stored: its price, if it has one. */
function costOf(data: unknown, final: boolean): ChargingSession['cost'] {
  if (data === null || data === undefined) return null;
  const o = JSON.parse(String(data)) as { total_cost?: { excl_vat: number; incl_vat?: number }; currency?: string };
  if (!o.total_cost || typeof o.total_cost !== 'object') return null;
  return {
    excl_vat: o.total_cost.excl_vat,
    incl_vat: o.total_cost.incl_vat ?? null,
    currency: String(o.currency ?? ''),
    final,
  };
}

function toSession(r: Row): ChargingSession {
  return {
    id: String(r.id),
    charge_point_id: String(r.charge_point_id),
    protocol: String(r.protocol),
    transaction_id: String(r.transaction_id),
    evse_id: Number(r.evse_id),
    connector_id: Number(r.connector_id),
    id_tag: r.id_tag === null || r.id_tag === undefined ? null : String(r.id_tag),
    status: r.status === 'COMPLETED' ? 'COMPLETED' : 'ACTIVE',
    started_at: iso(r.started_at),
    stopped_at: r.stopped_at === null || r.stopped_at === undefined ? null : iso(r.stopped_at),
    meter_start_wh: num(r.meter_start_wh),
    meter_last_wh: num(r.meter_last_wh),
    energy_wh: Number(r.energy_wh),
    stop_reason: r.stop_reason === null || r.stop_reason === undefined ? null : String(r.stop_reason),
    stop_id_tag: r.stop_id_tag === null || r.stop_id_tag === undefined ? null : String(r.stop_id_tag),
    updated_at: iso(r.updated_at),
    cost: costOf(r.cdr_data, true) ?? costOf(r.ocpi_data, false),
    cdr_id: r.cdr_data === null || r.cdr_data === undefined ? null : String(r.id),
    remote_start_command_id:
      r.remote_start_command_id === null || r.remote_start_command_id === undefined
        ? null
        : String(r.remote_start_command_id),
  };
}

/**
 * The columns of a session with its OCPI session's and CDR's data (roamed sessions: same id,
 * our party), for the price. Two parameters: our country_code and party_id.
 */
const WITH_PRICE = `s.*,
  (SELECT data FROM ocpi_object o WHERE o.module = 'cdrs' AND o.country_code = ? AND o.party_id = ? AND o.object_id = s.id) AS cdr_data,
  (SELECT data FROM ocpi_object o WHERE o.module = 'sessions' AND o.country_code = ? AND o.party_id = ? AND o.object_id = s.id) AS ocpi_data`;

export interface SessionQuery {
  charge_point_id?: string;
  status?: 'ACTIVE' | 'COMPLETED';
  /** sessions started at or after this instant (RFC 3339) */
  started_from?: string;
  /** sessions started before this instant (RFC 3339) */
  started_before?: string;
  offset: number;
  limit: number;
}

/**
 * The finished session of a charger's transaction that `query` names (the charge-point actor's
 * `finishedSession`): by transaction id, the latest that started at or before `at` (a 2.0.1 id
 * reused later names several), or by a 1.6 start's connector, token, first reading and time.
 */
export async function finishedSession(
  db: Database,
  chargePointId: string,
  query: FinishedSessionQuery,
): Promise<FinishedSession | undefined> {
  const rows =
    'transaction_id' in query
      ? await db.sql.query(
          `SELECT transaction_id, started_at, stopped_at FROM csms_session
           WHERE charge_point_id = ? AND transaction_id = ? AND stopped_at IS NOT NULL
           ${query.started_at === undefined ? 'AND started_at <= ?' : 'AND started_at = ?'}
           ORDER BY started_at DESC LIMIT 1`,
          [chargePointId, query.transaction_id, query.started_at ?? query.at ?? Number.MAX_SAFE_INTEGER],
        )
      : await db.sql.query(
          `SELECT transaction_id, started_at, stopped_at FROM csms_session
           WHERE charge_point_id = ? AND started_at = ? AND connector_id = ? AND id_tag = ? AND meter_start_wh = ?
             AND stopped_at IS NOT NULL
           LIMIT 1`,
          [chargePointId, query.started_at, query.connector_id, query.id_tag, query.meter_start_wh],
        );
  const [row] = rows;
  const startedAt = num(row?.started_at);
  const stoppedAt = num(row?.stopped_at);
  if (!row || startedAt === null || stoppedAt === null) return undefined;
  return { transaction_id: String(row.transaction_id), started_at: startedAt, stopped_at: stoppedAt };
}

/** The last reading of each of `sessionIds` that has one (the charge-point actor's `lastReadings`). */
export async function lastReadings(db: Database, sessionIds: readonly string[]): Promise<Map<string, LastReading>> {
  const out = new Map<string, LastReading>();
  for (const id of sessionIds) {
    const [row] = await db.sql.query('SELECT meter_last_wh, meter_last_at FROM csms_session WHERE id = ?', [id]);
    const at = num(row?.meter_last_at);
    const wh = num(row?.meter_last_wh);
    if (at !== null && wh !== null) out.set(id, { at, wh });
  }
  return out;
}

export class SessionReader {
  private readonly ownParams: string[];

  /** `own`: our OCPI party, whose sessions and CDRs price the roamed ones */
  constructor(
    private readonly db: Database,
    own: { country_code: string; party_id: string } = { country_code: '', party_id: '' },
  ) {
    this.ownParams = [own.country_code, own.party_id, own.country_code, own.party_id];
  }

  async get(id: string): Promise<ChargingSession | undefined> {
    const [row] = await this.db.sql.query(`SELECT ${WITH_PRICE} FROM csms_session s WHERE s.id = ?`, [
      ...this.ownParams,
      id,
    ]);
    return row ? toSession(row) : undefined;
  }

  /**
   * The readings of its energy chart, oldest first, ending with the session's latest reading even
   * when the sampling interval has not kept it yet; undefined when the session is unknown.
   */
  async samples(id: string): Promise<MeterSample[] | undefined> {
    const [row] = await this.db.sql.query(
      'SELECT started_at, meter_start_wh, meter_last_wh, meter_last_at, energy_wh FROM csms_session WHERE id = ?',
      [id],
    );
    if (!row) return undefined;
    const reading = (at: unknown, wh: unknown) => {
      const a = num(at);
      const w = num(wh);
      return a === null || w === null ? undefined : { at: a, wh: w };
    };
    const energy = num(row.energy_wh);
    return readMeterSamples(this.db, id, {
      start: reading(row.started_at, row.meter_start_wh),
      latest: reading(row.meter_last_at, row.meter_last_wh),
      ...(energy === null ? {} : { energy_wh: energy }),
    });
  }

  async list(q: SessionQuery): Promise<{ total: number; items: ChargingSession[] }> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.charge_point_id !== undefined) {
      where.push('charge_point_id = ?');
      params.push(q.charge_point_id);
    }
    if (q.status !== undefined) {
      where.push('status = ?');
      params.push(q.status);
    }
    if (q.started_from !== undefined) {
      where.push('started_at >= ?');
      params.push(Date.parse(q.started_from));
    }
    if (q.started_before !== undefined) {
      where.push('started_at < ?');
      params.push(Date.parse(q.started_before));
    }
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const [count] = await this.db.execute(`SELECT COUNT(*) AS n FROM csms_session ${clause}`, params);
    const rows = await this.db.execute(
      `SELECT ${WITH_PRICE} FROM csms_session s ${clause} ORDER BY s.started_at DESC, s.id ASC LIMIT ? OFFSET ?`,
      [...this.ownParams, ...params, q.limit, q.offset],
    );
    return { total: Number(count?.n ?? 0), items: rows.map(toSession) };
  }
}
