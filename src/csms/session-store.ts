import type { SqlRunner } from '../db/sql.js';
import Type, { type Static } from 'typebox';
import type { Database, Row } from '../db/database.js';
import type { NewSessionRow, SessionProgress, SessionWrites } from '../../actors/charge-point/ports.js';

/** A charging session as the /v1 API shows it, built from the transactions chargers report. */
export const ChargingSession = Type.Object({
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
  updated_at: Type.String({ format: 'date-time' }),
});
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
         stopped_at, meter_start_wh, meter_last_wh, energy_wh, stop_reason, updated_at, seq_max)
       VALUES (?, ?, ?, ?, ?, ?, ?, 'ACTIVE', ?, NULL, ?, ?, 0, NULL, ?, ?)`,
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
      ],
    );
  },

  /**
   * One UPDATE of the session row, without reading it first: the meter moves only when the event
   * carried a reading, and a 2.0.1 update whose seqNo is not above the last one applied matches
   * no row (a charger repeating a message it had no answer to).
   */
  async progress(tx: SqlRunner, sessionId: string, p: SessionProgress): Promise<void> {
    const sets = ['updated_at = ?'];
    const params: unknown[] = [Date.now()];
    if (p.meter) {
      sets.push('meter_start_wh = COALESCE(meter_start_wh, ?)', 'meter_last_wh = ?', 'energy_wh = ?');
      params.push(p.meter.start_wh, p.meter.last_wh, p.meter.energy_wh);
    }
    if (p.id_tag) {
      sets.push('id_tag = ?');
      params.push(p.id_tag);
    }
    if (p.stopped) {
      sets.push(`status = 'COMPLETED'`, 'stopped_at = ?', 'stop_reason = ?');
      params.push(p.stopped.at, p.stopped.reason);
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
  },
};

function iso(v: unknown): string {
  return new Date(Number(v)).toISOString();
}

function num(v: unknown): number | null {
  return v === null || v === undefined ? null : Number(v);
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
    updated_at: iso(r.updated_at),
  };
}

export interface SessionQuery {
  charge_point_id?: string;
  status?: 'ACTIVE' | 'COMPLETED';
  offset: number;
  limit: number;
}

export class SessionReader {
  constructor(private readonly db: Database) {}

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
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const [count] = await this.db.execute(`SELECT COUNT(*) AS n FROM csms_session ${clause}`, params);
    const rows = await this.db.execute(
      `SELECT * FROM csms_session ${clause} ORDER BY started_at DESC, id ASC LIMIT ? OFFSET ?`,
      [...params, q.limit, q.offset],
    );
    return { total: Number(count?.n ?? 0), items: rows.map(toSession) };
  }
}
