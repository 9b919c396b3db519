import { MergeableStatement, type WriteStep } from '../db/merged-write.js';
import type { Dialect, SqlRunner } from '../db/sql.js';
import type { Database } from '../db/database.js';
import type { MeterSampleWrites } from '../../actors/charge-point/ports.js';
import type { Logger } from '../logger.js';
import { Periodic } from '../periodic.js';

interface SampleRow {
  session_id: string;
  at: number;
  wh: number;
}

/**
 * One reading of a session's energy register. A reading repeated at the same instant (a retried
 * message) is one row, the first kept. On PostgreSQL a batch of turns inserts its rows in one
 * statement; two rows of one session at one instant in a batch (which one charger's turns, one at
 * a time, do not make) run one by one.
 */
class MeterSampleInsert extends MergeableStatement<SampleRow> {
  async one(tx: SqlRunner, r: SampleRow): Promise<void> {
    await tx.run('INSERT INTO csms_meter_sample (session_id, at_ms, wh) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [
      r.session_id,
      r.at,
      r.wh,
    ]);
  }

  async many(tx: SqlRunner, rows: readonly SampleRow[], dialect: Dialect): Promise<void> {
    if (dialect !== 'postgresql' || new Set(rows.map((r) => `${r.session_id}@${r.at}`)).size < rows.length) {
      for (const r of rows) await this.one(tx, r);
      return;
    }
    await tx.run(
      `INSERT INTO csms_meter_sample (session_id, at_ms, wh)
       SELECT * FROM unnest(?::varchar[], ?::bigint[], ?::float8[]) ON CONFLICT DO NOTHING`,
      [rows.map((r) => r.session_id), rows.map((r) => r.at), rows.map((r) => r.wh)],
    );
  }
}

const insert = new MeterSampleInsert();

/** Sessions whose last kept reading this process remembers, at most (the oldest forgotten first). */
const REMEMBERED = 100_000;

/**
 * Which readings of a session are kept for its energy chart (docs/CSMS.md "Energy over time"):
 * its first and last, and one per `intervalMs` between them, so that a charger sending meter
 * values every second costs one row a minute (CSMS_METER_SAMPLE_S). The charger's actor decides in
 * its turn, from the time of the last reading this process kept for the session: a charger that
 * moves to another process may get one reading more than the interval allows, never one fewer.
 */
export class MeterSampler implements MeterSampleWrites {
  private readonly last = new Map<string, number>();

  constructor(private readonly intervalMs: number) {}

  sample(sessionId: string, at: number, wh: number, which: 'first' | 'between' | 'last'): WriteStep | undefined {
    const prev = this.last.get(sessionId);
    // the transaction ended: nothing more to remember for it
    if (which === 'last') this.last.delete(sessionId);
    if (!Number.isFinite(at) || !Number.isFinite(wh)) return undefined;
    if (which === 'between' && prev !== undefined && Math.abs(at - prev) < this.intervalMs) return undefined;
    if (which !== 'last') {
      // re-inserted so that the map's order is the order of use
      this.last.delete(sessionId);
      this.last.set(sessionId, prev === undefined ? at : Math.max(prev, at));
      if (this.last.size > REMEMBERED) {
        const oldest = this.last.keys().next();
        if (!oldest.done) this.last.delete(oldest.value);
      }
    }
    return insert.write({ session_id: sessionId, at, wh });
  }

  forget(sessionId: string): void {
    this.last.delete(sessionId);
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

/** At most this many readings in one answer: evenly thinned beyond it, the first and last kept. */
export const MAX_CHART_POINTS = 2000;

/**
 * A session's readings, oldest first, with the energy and average power between them; `latest`
 * (the session row's last reading) ends them when it is newer than the last one kept.
 */
export async function readMeterSamples(
  db: Database,
  sessionId: string,
  latest?: { at: number; wh: number },
): Promise<MeterSample[]> {
  const rows = await db.sql.query('SELECT at_ms, wh FROM csms_meter_sample WHERE session_id = ? ORDER BY at_ms', [
    sessionId,
  ]);
  const kept = rows.map((r) => ({ at: Number(r.at_ms), wh: Number(r.wh) }));
  const last = kept[kept.length - 1];
  if (latest && last && latest.at > last.at) kept.push(latest);
  const points = thin(kept, MAX_CHART_POINTS);
  const first = points[0]?.wh ?? 0;
  return points.map((p, i) => {
    const prev = i > 0 ? points[i - 1] : undefined;
    const hours = prev ? (p.at - prev.at) / 3_600_000 : 0;
    return {
      at: new Date(p.at).toISOString(),
      wh: p.wh,
      energy_wh: Math.max(0, p.wh - first),
      power_w: prev && hours > 0 ? Math.max(0, Math.round((p.wh - prev.wh) / hours)) : null,
    };
  });
}

/** Every k-th point so that at most `max` remain, the last always among them. */
export function thin<T>(points: T[], max: number): T[] {
  if (points.length <= max) return points;
  const step = Math.ceil(points.length / max);
  const kept = points.filter((_, i) => i % step === 0);
  const last = points[points.length - 1];
  if (last !== undefined && kept[kept.length - 1] !== last) {
    if (kept.length >= max) kept.pop();
    kept.push(last);
  }
  return kept;
}

/**
 * Deletes the readings of sessions that ended more than `retentionMs` ago, every `intervalMs`,
 * at most 500 sessions per statement. Every process may run it: the deletes are idempotent.
 */
export class MeterSampleSweep {
  private readonly periodic: Periodic<number>;

  constructor(private readonly opts: { db: Database; retentionMs: number; intervalMs: number; log: Logger }) {
    this.periodic = new Periodic(() => this.pass(Date.now()), {
      intervalMs: opts.intervalMs,
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

  /** One pass (as of `now`, for tests); answers how many readings it deleted. */
  sweep(now?: number): Promise<number> {
    return now === undefined ? this.periodic.run() : this.pass(now);
  }

  private async pass(now: number): Promise<number> {
    const cutoff = now - this.opts.retentionMs;
    let deleted = 0;
    for (;;) {
      const n = await this.opts.db.sql.run(
        `DELETE FROM csms_meter_sample WHERE session_id IN (
           SELECT id FROM csms_session WHERE status = 'COMPLETED' AND stopped_at < ?
             AND EXISTS (SELECT 1 FROM csms_meter_sample m WHERE m.session_id = csms_session.id)
           LIMIT 500)`,
        [cutoff],
      );
      deleted += n;
      if (n === 0) break;
    }
    if (deleted > 0) this.opts.log.info({ deleted }, 'meter samples of old sessions deleted');
    return deleted;
  }
}
