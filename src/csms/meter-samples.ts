import { MergeableStatement, type WriteStep } from '../db/merged-write.js';
import type { Dialect, SqlRunner, SqlStatement } from '../db/sql.js';
import type { Database } from '../db/database.js';
import type { MeterSampleWrites } from '../../actors/charge-point/ports.js';
import type { Logger } from '../logger.js';
import { Periodic } from '../periodic.js';
import { toMilliWh } from '../ocpp/meter.js';

interface SampleRow {
  session_id: string;
  at: number;
  wh: number;
  /** the transaction's last reading, or a corrected first: it replaces one taken at the same instant */
  replace: boolean;
  /** a 2.0.1 update's seqNo: kept only while the session row has applied none at or above it */
  seq: number | null;
}

const INSERT = 'INSERT INTO csms_meter_sample (session_id, at_ms, wh) VALUES (?, ?, ?)';

/** A 2.0.1 update's reading: not when the session row has applied its seqNo or a later one (a repeat). */
const INSERT_UNLESS_REPEAT = `INSERT INTO csms_meter_sample (session_id, at_ms, wh) SELECT ?, ?, ?
       WHERE NOT EXISTS (SELECT 1 FROM csms_session WHERE id = ? AND seq_max >= ?) ON CONFLICT DO NOTHING`;

/** `MeterSampleInsert.manyStatement` on PostgreSQL: the rows as arrays, unnested. */
const INSERT_MANY = `INSERT INTO csms_meter_sample (session_id, at_ms, wh)
       SELECT v.id, v.at_ms, v.wh FROM unnest(?::varchar[], ?::bigint[], ?::float8[], ?::integer[]) AS v(id, at_ms, wh, seq)
       WHERE v.seq IS NULL OR NOT EXISTS (SELECT 1 FROM csms_session s WHERE s.id = v.id AND s.seq_max >= v.seq)
       ON CONFLICT DO NOTHING`;

/**
 * One reading of a session's energy register. A reading repeated at the same instant (a retried
 * message) is one row, the first kept, except the transaction's last reading, which replaces a
 * reading of the same instant (a stop stamped with the second of the last MeterValues). On
 * PostgreSQL a batch of turns inserts its rows in one statement; a batch holding a last reading or
 * two rows of one session at one instant (which one charger's turns, one at a time, do not make)
 * runs row by row.
 */
class MeterSampleInsert extends MergeableStatement<SampleRow> {
  async one(tx: SqlRunner, r: SampleRow): Promise<void> {
    if (r.seq !== null && !r.replace) {
      await tx.run(INSERT_UNLESS_REPEAT, [r.session_id, r.at, r.wh, r.session_id, r.seq]);
      return;
    }
    await tx.run(
      r.replace
        ? `${INSERT} ON CONFLICT (session_id, at_ms) DO UPDATE SET wh = excluded.wh`
        : `${INSERT} ON CONFLICT DO NOTHING`,
      [r.session_id, r.at, r.wh],
    );
  }

  override manyStatement(rows: readonly SampleRow[], dialect: Dialect): SqlStatement | undefined {
    if (
      dialect !== 'postgresql' ||
      rows.some((r) => r.replace) ||
      new Set(rows.map((r) => `${r.session_id}@${r.at}`)).size < rows.length
    )
      return undefined;
    return {
      sql: INSERT_MANY,
      params: [rows.map((r) => r.session_id), rows.map((r) => r.at), rows.map((r) => r.wh), rows.map((r) => r.seq)],
    };
  }
}

const insert = new MeterSampleInsert();

/** Sessions whose last kept reading this process remembers, at most (the oldest forgotten first). */
const REMEMBERED = 100_000;

/**
 * Which readings of a session are kept for its energy chart (docs/CSMS.md "Energy over time"):
 * its first and last, and one per `intervalMs` between them, so that a charger sending meter
 * values every second costs one row a minute (CSMS_METER_SAMPLE_S). The charger's actor decides in
 * its turn, from the time of the last reading this process kept for the session, remembered once
 * the turn committed: a charger that moves to another process, or turns that commit together, may
 * keep one reading more than the interval allows, never one fewer. A reading far from the last
 * kept one in either direction (a clock corrected, readings stored offline sent late) is kept and
 * becomes the one the next are measured from.
 */
export class MeterSampler implements MeterSampleWrites {
  private readonly last = new Map<string, number>();

  constructor(private readonly intervalMs: number) {}

  sample(
    sessionId: string,
    at: number,
    wh: number,
    /**
     * 'start': a first reading that corrects one kept before at its instant (it replaces it);
     * 'peak': a message's highest reading above the one it ended at, kept whatever the interval
     */
    which: 'first' | 'start' | 'between' | 'last' | 'peak',
    seq: number | null = null,
  ): { write: WriteStep; kept: () => void } | undefined {
    if (!Number.isFinite(at) || !Number.isFinite(wh)) {
      if (which === 'last') this.last.delete(sessionId);
      return undefined;
    }
    const prev = this.last.get(sessionId);
    if (which === 'between' && prev !== undefined && Math.abs(at - prev) < this.intervalMs) return undefined;
    return {
      write: insert.write({ session_id: sessionId, at, wh, replace: which === 'last' || which === 'start', seq }),
      // the transaction ended: nothing more to remember for it, also when an earlier reading of
      // the same turn (its first, carried by the end) was remembered after the commit
      kept: () =>
        which === 'last' ? this.last.delete(sessionId) : which === 'peak' ? undefined : this.remember(sessionId, at),
    };
  }

  forget(sessionId: string): void {
    this.last.delete(sessionId);
  }

  private remember(sessionId: string, at: number): void {
    // re-inserted so that the map's order is the order of use
    this.last.delete(sessionId);
    this.last.set(sessionId, at);
    if (this.last.size > REMEMBERED) {
      const oldest = this.last.keys().next();
      if (!oldest.done) this.last.delete(oldest.value);
    }
  }
}

export interface MeterSample {
  at: string;
  /** the register (Wh) */
  wh: number;
  /** energy since the session's first reading (Wh) */
  energy_wh: number;
  /** average power since the previous reading (W); null for the first */
  power_w: number | null;
}

/** At most about this many readings in one answer: beyond it, the last reading of each of as many spans of time. */
export const MAX_CHART_POINTS = 2000;

/**
 * A session's readings, oldest first, with the energy and average power between them. More than
 * MAX_CHART_POINTS are reduced by the database to the last reading of each of MAX_CHART_POINTS
 * equal spans of time (the register only rises), the first reading kept, so the answer stays
 * bounded whatever CSMS_METER_SAMPLE_S kept. `latest` (the session row's last reading) ends them
 * when it is newer than the last one kept (or replaces one of the same instant), and `start`
 * (the session's start and first reading) begins them unless the first kept is that reading;
 * a reading stamped before the start is drawn at the start.
 */
export async function readMeterSamples(
  db: Database,
  sessionId: string,
  ends: {
    start?: { at: number; wh: number };
    latest?: { at: number; wh: number };
    /** the session's energy: the chart ends at it (a peak the interval or an instant did not keep) */
    energy_wh?: number;
  } = {},
): Promise<MeterSample[]> {
  const asReadings = (rows: Array<Record<string, unknown>>) =>
    rows.map((r) => ({ at: Number(r.at_ms), wh: Number(r.wh) }));
  // the common case in one statement: no more than the chart holds
  let kept = asReadings(
    await db.sql.query('SELECT at_ms, wh FROM csms_meter_sample WHERE session_id = ? ORDER BY at_ms LIMIT ?', [
      sessionId,
      MAX_CHART_POINTS + 1,
    ]),
  );
  const first = kept[0];
  if (first && kept.length > MAX_CHART_POINTS) {
    const [span] = await db.sql.query('SELECT MAX(at_ms) AS t1 FROM csms_meter_sample WHERE session_id = ?', [
      sessionId,
    ]);
    const width = Math.max(1, Math.ceil((Number(span?.t1) - first.at + 1) / MAX_CHART_POINTS));
    kept = asReadings(
      await db.sql.query(
        `SELECT MAX(at_ms) AS at_ms, MAX(wh) AS wh FROM csms_meter_sample WHERE session_id = ?
         GROUP BY CAST((at_ms - ?) / ? AS INTEGER) ORDER BY 1`,
        [sessionId, first.at, width],
      ),
    );
    if (kept[0]?.at !== first.at) kept.unshift(first);
  }
  // a reading stamped before the session's start (a 2.0.1 Transaction.Begin read a moment before
  // the Started, or sent in a later update) counts at the start, as in the CDR's periods
  // (docs/TARIFFS.md): the chart starts where the session does
  const startAt = ends.start?.at;
  const fromStart = (p: { at: number; wh: number }) =>
    startAt !== undefined && p.at < startAt ? { ...p, at: startAt } : p;
  const latest = ends.latest && fromStart(ends.latest);
  // a reading kept after the session's latest is one the session did not take (a stop below what
  // was reported, docs/CSMS.md): the chart ends where the session's energy does
  if (latest) kept = kept.filter((p) => p.at <= latest.at);
  kept = oneAnInstant(kept.map(fromStart));
  // the chart begins with the session's first reading, so that its energy counts from there as the
  // session's does: where the first kept is another (a reading before the start drawn at the
  // start), the first reading goes before it at the start; where nothing was kept, it is all
  // there is (sessions from before the readings were kept)
  const start = ends.start;
  const head = kept[0];
  if (start && (!head || head.wh !== start.wh)) kept.unshift(start);
  const last = kept[kept.length - 1];
  if (latest && (!last || latest.at > last.at)) kept.push(latest);
  else if (latest && last && latest.at === last.at) {
    // the latest replaces a reading of its instant, but not the first reading the chart counts from
    if (kept.length > 1) kept[kept.length - 1] = latest;
    else if (latest.wh !== last.wh) kept.push(latest);
  }
  return chartOf(kept, ends.energy_wh);
}

/**
 * The chart's points of `points` (oldest first): the energy since the first and the power between;
 * the last point's energy at least `energy` (the session's), which a reading the chart did not
 * keep may have raised (a message's peak at an instant with another reading, or after the stop).
 */
function chartOf(points: Array<{ at: number; wh: number }>, energy_wh?: number): MeterSample[] {
  const base = points[0]?.wh ?? 0;
  // the energy is the highest reading so far less the first, as the session's (a reading below an
  // earlier one adds nothing, docs/CSMS.md); the power is the energy's rise over the time between
  let highest = base;
  let before = 0;
  return points.map((p, i) => {
    const prev = i > 0 ? points[i - 1] : undefined;
    const hours = prev ? (p.at - prev.at) / 3_600_000 : 0;
    highest = Math.max(highest, p.wh);
    // to the thousandth of a Wh, as the session's energy (a difference of two binary readings was
    // 183.39999999999418)
    const drawn = toMilliWh(highest - base);
    const energy = i === points.length - 1 && energy_wh !== undefined && energy_wh > drawn ? energy_wh : drawn;
    const rise = energy - before;
    before = energy;
    return {
      at: new Date(p.at).toISOString(),
      wh: p.wh,
      energy_wh: energy,
      power_w: prev && hours > 0 ? Math.round(rise / hours) : null,
    };
  });
}

/** Readings in time order with one an instant: of readings of one instant, the highest (the register only rises). */
function oneAnInstant(readings: Array<{ at: number; wh: number }>): Array<{ at: number; wh: number }> {
  const out: Array<{ at: number; wh: number }> = [];
  for (const r of readings) {
    const prev = out[out.length - 1];
    if (prev && prev.at === r.at) out[out.length - 1] = { at: r.at, wh: Math.max(prev.wh, r.wh) };
    else out.push(r);
  }
  return out;
}

/** Sessions whose readings one statement of the sweep considers. */
const SWEEP_BATCH = 500;

/**
 * Deletes the readings of sessions that ended more than `retentionMs` ago: every `intervalMs`,
 * first a minute after start. It walks the sessions that have readings (in id order, from the
 * readings' own key, SWEEP_BATCH at a time), looks each batch's sessions up by id and deletes the
 * readings of those ended before the cutoff, so no statement scans all sessions or all readings.
 * Every process may run it: the deletes are idempotent.
 */
export class MeterSampleSweep {
  private readonly periodic: Periodic<number>;

  constructor(private readonly opts: { db: Database; retentionMs: number; intervalMs: number; log: Logger }) {
    this.periodic = new Periodic(() => this.pass(Date.now()), {
      intervalMs: opts.intervalMs,
      firstAfterMs: Math.min(60_000, opts.intervalMs),
      log: opts.log,
      what: 'meter sample sweep',
      idle: 0,
    });
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One pass (as of `now`, for tests); answers how many sessions' readings it deleted. */
  sweep(now?: number): Promise<number> {
    return now === undefined ? this.periodic.run() : this.pass(now);
  }

  private async pass(now: number): Promise<number> {
    const { sql } = this.opts.db;
    const cutoff = now - this.opts.retentionMs;
    let purged = 0;
    let after = '';
    for (;;) {
      const batch = await sql.query(
        'SELECT DISTINCT session_id FROM csms_meter_sample WHERE session_id > ? ORDER BY session_id LIMIT ?',
        [after, SWEEP_BATCH],
      );
      const ids = batch.map((r) => String(r.session_id));
      const lastId = ids[ids.length - 1];
      if (lastId === undefined) break;
      after = lastId;
      const marks = ids.map(() => '?').join(', ');
      const ended = await sql.query(
        `SELECT id FROM csms_session WHERE id IN (${marks}) AND status = 'COMPLETED' AND stopped_at < ?`,
        [...ids, cutoff],
      );
      const gone = ended.map((r) => String(r.id));
      if (gone.length > 0) {
        await sql.run(`DELETE FROM csms_meter_sample WHERE session_id IN (${gone.map(() => '?').join(', ')})`, gone);
        purged += gone.length;
      }
      if (ids.length < SWEEP_BATCH) break;
    }
    if (purged > 0) this.opts.log.info({ sessions: purged }, 'meter samples of old sessions deleted');
    return purged;
  }
}
