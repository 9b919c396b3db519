import { createHash } from 'node:crypto';
import type { Database, Row } from '../../db/database.js';
import type { SqlRunner, SqlTx } from '../../db/sql.js';
import { SPEAKS_FOR, speaksForParams } from '../core/partners.js';
import type { OutboxDepth } from '../../metrics.js';

/**
 * The rows of `ocpi_outbox` (m0009; docs/ROAMING.md "The outbox"). Writes that enqueue run on the
 * connection of the transaction that makes the change (an actor turn's `ctx.write`, or the
 * operator's request), so a change and what it sends commit together or not at all.
 */

/**
 * The object whose pending row a row of `kind` follows, for one partner: a CDR follows its
 * session (the same id), so the eMSP learns that the session ended before it gets the bill (2.2.1
 * mod_cdrs: "CDRs are sent from the CPO to the eMSP after the charging session has ended").
 */
export function precedingObject(kind: string, objectKey: string): string | undefined {
  return kind === 'cdr' && objectKey.startsWith('cdrs/') ? `sessions/${objectKey.slice('cdrs/'.length)}` : undefined;
}

/**
 * A condition on the outbox rows aliased `o`, with the time now as its one parameter: the row is
 * not a CDR whose session's row is pending and not due yet (`precedingObject`, in SQL).
 */
const NOT_HELD = `NOT (o.kind = 'cdr' AND EXISTS (SELECT 1 FROM ocpi_outbox s WHERE s.partner_key = o.partner_key
  AND s.object_key = 'sessions/' || substr(o.object_key, 6) AND s.status = 'pending' AND s.next_attempt_at > ?))`;

/** What a row asks to send; the courier (courier.ts) renders it when it is sent. */
export type OutboxIntent =
  /** PATCH of one EVSE's status to an eMSP's locations Receiver */
  | { kind: 'evse'; location_id: string; evse_uid: string }
  /** PUT of a whole location of ours to an eMSP's locations Receiver */
  | { kind: 'location'; location_id: string }
  /** PUT of one of our sessions to the sessions Receiver of the eMSP of its token (`to`) */
  | { kind: 'session'; session_id: string; to: { country_code: string; party_id: string } }
  /** POST of one of our CDRs to the cdrs Receiver of the eMSP of its token (`to`) */
  | { kind: 'cdr'; cdr_id: string; to: { country_code: string; party_id: string } }
  /** PUT of one of our tariffs to an eMSP's tariffs Receiver */
  | { kind: 'tariff'; tariff_id: string }
  /** PUT of one of our (eMSP) tokens to a CPO's tokens Receiver */
  | { kind: 'token'; uid: string; type: string }
  /**
   * POST of a command's result to the `response_url` the partner gave; `command` names the
   * command (absent in rows queued before it was kept)
   */
  | {
      kind: 'command-result';
      url: string;
      version: '2.1.1' | '2.2.1';
      body: Record<string, unknown>;
      command?: string;
    };

export type OutboxStatus = 'pending' | 'dead';

export interface OutboxRow {
  id: number;
  partner_key: string;
  /** one pending row per partner and object: a newer change coalesces into it */
  object_key: string;
  intent: OutboxIntent;
  /** bumped by every coalesced change: a send settles the row only if it sent this version */
  version: number;
  status: OutboxStatus;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/**
 * Who gets a change of ours: every registered partner of a role, one partner, or the partner
 * whose link speaks for a party (onboarded as it, or a platform listing it).
 */
export type OutboxAudience =
  | { role: 'CPO' | 'EMSP' }
  | { partner_key: string }
  | { party: { country_code: string; party_id: string; role: 'CPO' | 'EMSP' } };

const COLUMNS =
  'id, partner_key, object_key, payload, version, status, attempts, next_attempt_at, last_error, created_at, updated_at';

/** The payload column as it was written (by `enqueue` only, from an OutboxIntent). */
function intentOf(payload: unknown): OutboxIntent {
  return JSON.parse(String(payload)) as OutboxIntent;
}

function toRow(r: Row): OutboxRow {
  return {
    id: Number(r.id),
    partner_key: String(r.partner_key),
    object_key: String(r.object_key),
    intent: intentOf(r.payload),
    version: Number(r.version),
    status: r.status === 'dead' ? 'dead' : 'pending',
    attempts: Number(r.attempts),
    next_attempt_at: Number(r.next_attempt_at),
    last_error: r.last_error === null || r.last_error === undefined ? null : String(r.last_error),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

/** The key of the object an intent is about: its sends to one partner are one queue. */
export function objectKeyOf(intent: OutboxIntent): string {
  switch (intent.kind) {
    case 'evse':
      return `locations/${intent.location_id}/${intent.evse_uid}`;
    case 'location':
      return `locations/${intent.location_id}`;
    case 'session':
      return `sessions/${intent.session_id}`;
    case 'token':
      return `tokens/${intent.uid}/${intent.type}`;
    case 'tariff':
      return `tariffs/${intent.tariff_id}`;
    case 'cdr':
      return `cdrs/${intent.cdr_id}`;
    case 'command-result': {
      // a response_url may be 255 characters: its digest, and the command's key, keep two
      // commands' results apart, also when a partner gives every command one response_url
      // (mod_commands: it "might contain" a unique id); they were one row, the last result kept
      const url = createHash('sha256').update(intent.url).digest('hex');
      return intent.command === undefined ? `command-result/${url}` : `command-result/${url}/${intent.command}`;
    }
  }
}

/**
 * A newer change of an object whose row is pending: the row takes it, with a fresh count of
 * attempts, due now (the old row's back-off was for older content; the partner's breaker still
 * holds back a partner that is down).
 */
const CONFLICT = `ON CONFLICT (partner_key, object_key) WHERE status = 'pending'
  DO UPDATE SET payload = excluded.payload, kind = excluded.kind, version = ocpi_outbox.version + 1,
  attempts = 0, next_attempt_at = excluded.next_attempt_at, last_error = NULL, updated_at = excluded.updated_at`;

/**
 * Adds `intent` for every partner of `audience`, in the transaction of `tx`; for a partner that
 * has one pending for the same object, the pending row takes the new intent (coalescing).
 * Answers how many partners it was queued for.
 */
export async function enqueue(tx: SqlRunner, audience: OutboxAudience, intent: OutboxIntent): Promise<number> {
  const now = Date.now();
  const objectKey = objectKeyOf(intent);
  const values = [objectKey, intent.kind, JSON.stringify(intent), now, now, now];
  // a dead letter of the object is superseded by the newer change (they never pile up per object)
  if ('partner_key' in audience)
    await tx.run(`DELETE FROM ocpi_outbox WHERE status = 'dead' AND object_key = ? AND partner_key = ?`, [
      objectKey,
      audience.partner_key,
    ]);
  else await tx.run(`DELETE FROM ocpi_outbox WHERE status = 'dead' AND object_key = ?`, [objectKey]);
  if ('partner_key' in audience) {
    return tx.run(
      `INSERT INTO ocpi_outbox (partner_key, object_key, kind, payload, version, status, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, 1, 'pending', 0, ?, ?, ?) ${CONFLICT}`,
      [audience.partner_key, ...values],
    );
  }
  if ('party' in audience) {
    return tx.run(
      `INSERT INTO ocpi_outbox (partner_key, object_key, kind, payload, version, status, attempts, next_attempt_at, created_at, updated_at)
       SELECT p.country_code || '-' || p.party_id, ?, ?, ?, 1, 'pending', 0, ?, ?, ?
       FROM ocpi_partner p WHERE ${SPEAKS_FOR}
       ${CONFLICT}`,
      [...values, ...speaksForParams(audience.party)],
    );
  }
  // every registered partner of the role, or one whose link speaks for a party of that role
  return tx.run(
    `INSERT INTO ocpi_outbox (partner_key, object_key, kind, payload, version, status, attempts, next_attempt_at, created_at, updated_at)
     SELECT p.country_code || '-' || p.party_id, ?, ?, ?, 1, 'pending', 0, ?, ?, ?
     FROM ocpi_partner p
     WHERE p.status = 'registered'
       AND (p.role = ? OR EXISTS (SELECT 1 FROM ocpi_partner_party pp WHERE pp.partner_id = p.id AND pp.role = ?))
     ${CONFLICT}`,
    [...values, audience.role, audience.role],
  );
}

/**
 * The row of `id` at `version`, as a condition: on PostgreSQL, when `skipLocked`, a row another
 * transaction holds is passed over instead of waited for. Only a change coalescing into the row
 * holds it (a charger's turn queueing its EVSE's next status): that change gives it a new version,
 * which the settle would not match anyway, and the row is sent again with it. Waiting, the settle
 * (holding the rows it settled before) and the charger's batch (holding its location) each waited
 * for the other until PostgreSQL broke the deadlock (docs/OCPI.md).
 */
function sentRow(tx: SqlRunner, skipLocked: boolean, pendingOnly: boolean): string {
  const pending = pendingOnly ? " AND status = 'pending'" : '';
  return skipLocked && (tx as Partial<SqlTx>).dialect === 'postgresql'
    ? `id = (SELECT id FROM ocpi_outbox WHERE id = ? AND version = ?${pending} FOR UPDATE SKIP LOCKED)`
    : `id = ? AND version = ?${pending}`;
}

/** Settling a sent row, in the turn of the partner's outbox actor. */
export const settle = {
  /**
   * Sent: the row goes, unless a newer change coalesced into it meanwhile (then that is sent next).
   * `skipLocked`: see `sentRow` (not for a CDR, which a row sent again would POST twice).
   */
  async delivered(tx: SqlRunner, id: number, version: number, skipLocked = false): Promise<void> {
    await tx.run(`DELETE FROM ocpi_outbox WHERE ${sentRow(tx, skipLocked, false)}`, [id, version]);
  },
  /** Not sent: try again at `nextAttemptAt`, or keep it as a dead letter for the operator. */
  async failed(
    tx: SqlRunner,
    id: number,
    version: number,
    failure: { attempts: number; next_attempt_at: number; error: string; dead: boolean },
    skipLocked = false,
  ): Promise<void> {
    // only the version that was sent: a newer change that came meanwhile is tried afresh
    await tx.run(
      `UPDATE ocpi_outbox SET attempts = ?, next_attempt_at = ?, last_error = ?, status = ?, updated_at = ? WHERE ${sentRow(tx, skipLocked, true)}`,
      [
        failure.attempts,
        failure.next_attempt_at,
        failure.error.slice(0, 2000),
        failure.dead ? 'dead' : 'pending',
        Date.now(),
        id,
        version,
      ],
    );
  },
};

export interface OutboxFilter {
  status?: OutboxStatus;
  partner_key?: string;
  limit: number;
  offset: number;
}

/** Reads of the outbox, and the operator's actions on dead letters. */
export class OutboxStore {
  constructor(private readonly db: Database) {}

  /**
   * The rows of one partner due now, oldest first. A CDR whose session still has a pending row
   * that is not due (it waits out a back-off) is held back with it: the eMSP gets the session's
   * end before its CDR (`precedingObject`).
   */
  async due(partnerKey: string, now: number, limit: number): Promise<OutboxRow[]> {
    const rows = await this.db.sql.query(
      `SELECT ${COLUMNS} FROM ocpi_outbox o WHERE partner_key = ? AND status = 'pending' AND next_attempt_at <= ? AND ${NOT_HELD} ORDER BY id LIMIT ?`,
      [partnerKey, now, now, limit],
    );
    return rows.map(toRow);
  }

  /** The partners that have rows due now (the sweep wakes their outbox actors). */
  async duePartners(now: number, limit = 1000): Promise<string[]> {
    const rows = await this.db.sql.query(
      `SELECT DISTINCT partner_key FROM ocpi_outbox o WHERE status = 'pending' AND next_attempt_at <= ? AND ${NOT_HELD} LIMIT ?`,
      [now, now, limit],
    );
    return rows.map((r) => String(r.partner_key));
  }

  async list(filter: OutboxFilter): Promise<{ items: OutboxRow[]; total: number }> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.status) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.partner_key) {
      where.push('partner_key = ?');
      params.push(filter.partner_key);
    }
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const [count, rows] = await Promise.all([
      this.db.sql.query(`SELECT COUNT(*) AS n FROM ocpi_outbox ${clause}`, params),
      this.db.sql.query(`SELECT ${COLUMNS} FROM ocpi_outbox ${clause} ORDER BY id LIMIT ? OFFSET ?`, [
        ...params,
        filter.limit,
        filter.offset,
      ]),
    ]);
    return { items: rows.map(toRow), total: Number(count[0]?.n ?? 0) };
  }

  /** Counts per partner and status (the operator's overview). */
  async counts(): Promise<Array<{ partner_key: string; status: OutboxStatus; n: number }>> {
    const rows = await this.db.sql.query(
      'SELECT partner_key, status, COUNT(*) AS n FROM ocpi_outbox GROUP BY partner_key, status ORDER BY partner_key',
    );
    return rows.map((r) => ({
      partner_key: String(r.partner_key),
      status: r.status === 'dead' ? 'dead' : 'pending',
      n: Number(r.n),
    }));
  }

  /**
   * Pending rows, the oldest pending row's creation and dead letters per partner, for the
   * gauges (docs/OPERATIONS.md "Signals"): one grouped read of the table, at most `limit` partners.
   * Every registered partner is there, at 0 when it has no rows: a series that was absent while
   * all was sent could not tell "nothing waits" from "not scraped" (an alert on absent() paged).
   */
  async depths(limit = 500): Promise<OutboxDepth[]> {
    const rows = await this.db.sql.query(
      `SELECT k.partner_key,
         SUM(CASE WHEN o.status = 'pending' THEN 1 ELSE 0 END) AS pending,
         MIN(CASE WHEN o.status = 'pending' THEN o.created_at END) AS oldest,
         SUM(CASE WHEN o.status = 'dead' THEN 1 ELSE 0 END) AS dead
       FROM (SELECT country_code || '-' || party_id AS partner_key FROM ocpi_partner WHERE status = 'registered'
             UNION SELECT partner_key FROM ocpi_outbox) k
       LEFT JOIN ocpi_outbox o ON o.partner_key = k.partner_key
       GROUP BY k.partner_key ORDER BY k.partner_key LIMIT ?`,
      [limit],
    );
    return rows.map((r) => ({
      partner: String(r.partner_key),
      pending: Number(r.pending ?? 0),
      oldest_pending_at: r.oldest === null || r.oldest === undefined ? null : Number(r.oldest),
      dead: Number(r.dead ?? 0),
    }));
  }

  async get(id: number): Promise<OutboxRow | undefined> {
    const [r] = await this.db.sql.query(`SELECT ${COLUMNS} FROM ocpi_outbox WHERE id = ?`, [id]);
    return r ? toRow(r) : undefined;
  }

  /**
   * A dead letter goes back into the queue, due now and with its attempts reset. When a newer
   * change of the same object is pending already, that one is sent and the dead letter goes.
   * Answers the row as it is now, or undefined when there was no dead letter `id`.
   */
  async retry(id: number): Promise<{ row: OutboxRow; superseded: boolean } | undefined> {
    return this.db.sql.transaction(async (tx) => {
      const [r] = await tx.query(`SELECT ${COLUMNS} FROM ocpi_outbox WHERE id = ? AND status = 'dead'`, [id]);
      if (!r) return undefined;
      const dead = toRow(r);
      const [pending] = await tx.query(
        `SELECT ${COLUMNS} FROM ocpi_outbox WHERE partner_key = ? AND object_key = ? AND status = 'pending'`,
        [dead.partner_key, dead.object_key],
      );
      if (pending) {
        await tx.run('DELETE FROM ocpi_outbox WHERE id = ?', [id]);
        return { row: toRow(pending), superseded: true };
      }
      const now = Date.now();
      await tx.run(
        `UPDATE ocpi_outbox SET status = 'pending', attempts = 0, next_attempt_at = ?, updated_at = ? WHERE id = ?`,
        [now, now, id],
      );
      return {
        row: { ...dead, status: 'pending', attempts: 0, next_attempt_at: now, updated_at: now },
        superseded: false,
      };
    });
  }

  /** Drops a dead letter; the row it was, or undefined. */
  async discard(id: number): Promise<OutboxRow | undefined> {
    const [r] = await this.db.sql.query(`SELECT ${COLUMNS} FROM ocpi_outbox WHERE id = ? AND status = 'dead'`, [id]);
    if (!r) return undefined;
    await this.db.sql.run(`DELETE FROM ocpi_outbox WHERE id = ? AND status = 'dead'`, [id]);
    return toRow(r);
  }
}
