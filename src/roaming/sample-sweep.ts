import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import type { PartyIdentity } from '../ocpi/core/auth.js';
import { Periodic } from '../periodic.js';
import { purgeSessionData } from './cdrs.js';

const DAY_MS = 86_400_000;
/** sessions looked at per statement: a sweep reads and deletes in batches of this many */
const BATCH = 200;
const FIRST_LOOK_MS = 60_000;
const EVERY_MS = 3_600_000;

/**
 * The meter samples and snapshots of roamed sessions that will never become a CDR
 * (docs/ROAMING.md "Meter samples"): a stored CDR deletes its own at once (cdrs.ts `ensure`);
 * this sweep, hourly on every web process, deletes those left: of sessions whose CDR is stored
 * (left by a version before the purge), of sessions that are gone, and of sessions that ended
 * more than ROAMING_SAMPLE_RETENTION_DAYS ago without a CDR and with no CDR row in the outbox
 * (pending or dead: a send or the operator's retry may still build it from the samples). A
 * running session keeps its samples whatever its age. Two processes sweeping at once delete
 * the same rows: a DELETE of rows gone is no error.
 */
export class SampleSweep {
  private readonly periodic: Periodic<number>;

  constructor(private readonly opts: { db: Database; own: PartyIdentity; retentionDays: number; log: Logger }) {
    this.periodic = new Periodic(() => this.pass(Date.now()), {
      intervalMs: EVERY_MS,
      firstAfterMs: FIRST_LOOK_MS,
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

  /** One sweep of every session with samples or a snapshot as of `now`; answers the sessions purged (exposed for tests). */
  sweep(now = Date.now()): Promise<number> {
    return this.pass(now);
  }

  private async pass(now: number): Promise<number> {
    let purged = 0;
    const cutoff = now - this.opts.retentionDays * DAY_MS;
    let after = '';
    for (;;) {
      const batch = await this.candidates(after);
      const last = batch.at(-1);
      if (!last) break;
      after = last.session_id;
      const gone = batch.filter((c) => purgeable(c, cutoff)).map((c) => c.session_id);
      if (gone.length > 0) {
        await this.opts.db.group.run((tx) => purgeSessionData(tx, gone));
        purged += gone.length;
      }
      if (batch.length < BATCH) break;
    }
    if (purged > 0) this.opts.log.info({ sessions: purged }, 'meter samples of sessions without a CDR to come purged');
    return purged;
  }

  /** The next sessions after `after` (in id order) holding samples or a snapshot, with what decides their fate. */
  private async candidates(after: string): Promise<Candidate[]> {
    const { country_code, party_id } = this.opts.own;
    const rows = await this.opts.db.sql.query(
      `SELECT k.session_id, s.data AS session, s.updated_at, c.object_id AS cdr,
         (SELECT COUNT(*) FROM ocpi_outbox o WHERE o.object_key = 'cdrs/' || k.session_id) AS cdr_rows
       FROM (SELECT session_id FROM roaming_meter_sample WHERE session_id > ?
             UNION SELECT session_id FROM roaming_meter_state WHERE session_id > ?
             UNION SELECT session_id FROM roaming_meter_signed WHERE session_id > ?
             UNION SELECT session_id FROM roaming_session_snapshot WHERE session_id > ?
             ORDER BY session_id LIMIT ?) k
       LEFT JOIN ocpi_object s ON s.module = 'sessions' AND s.country_code = ? AND s.party_id = ?
         AND s.object_id = k.session_id
       LEFT JOIN ocpi_object c ON c.module = 'cdrs' AND c.country_code = ? AND c.party_id = ?
         AND c.object_id = k.session_id
       ORDER BY k.session_id`,
      [after, after, after, after, BATCH, country_code, party_id, country_code, party_id],
    );
    return rows.map((r) => ({
      session_id: String(r.session_id),
      // a stored session (2.1.1 or 2.2.1 shape): both have `status`
      status:
        r.session === null || r.session === undefined
          ? undefined
          : (JSON.parse(String(r.session)) as { status?: string }).status,
      updated_at: Number(r.updated_at ?? 0),
      cdr: r.cdr !== null && r.cdr !== undefined,
      cdr_rows: Number(r.cdr_rows),
    }));
  }
}

interface Candidate {
  session_id: string;
  /** undefined: no session */
  status: string | undefined;
  updated_at: number;
  cdr: boolean;
  cdr_rows: number;
}

function purgeable(c: Candidate, cutoff: number): boolean {
  if (c.cdr) return true;
  if (c.cdr_rows > 0) return false;
  if (c.status === undefined) return true;
  return c.status !== 'ACTIVE' && c.updated_at < cutoff;
}
