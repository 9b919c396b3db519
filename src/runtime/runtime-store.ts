import { randomUUID } from 'node:crypto';
import type { SqlEntityManager } from '@mikro-orm/knex';
import type { Database, Row } from '../db/database.js';
import type { Address } from './address.js';

/** A durable message as stored in actor_mailbox. */
export interface MailboxRow {
  id: string;
  address: Address;
  kind: string;
  dedupeKey: string;
  payload: MailboxPayload;
  /** failed deliveries so far */
  attempts: number;
}

/** `m` is the message; a reminder also carries its name and period. */
export interface MailboxPayload {
  m: unknown;
  reminder?: string;
  periodMs?: number;
}

export const REMINDER_PREFIX = 'reminder:';

/** PostgreSQL hands int8 back as a string. */
function num(v: unknown): number {
  return typeof v === 'number' ? v : Number(v);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : String(v);
}

/**
 * Reads the payload column, which only `enqueue` and `upsertReminder` write (JSON of a
 * `MailboxPayload`). The fields are taken one by one, so a row edited by hand cannot smuggle in a
 * period that is not a number; the message `m` is checked against its kind's schema in the turn.
 */
function decodePayload(text: string): MailboxPayload {
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null) return { m: undefined };
  const m: unknown = 'm' in value ? value.m : undefined;
  const reminder = 'reminder' in value && typeof value.reminder === 'string' ? value.reminder : undefined;
  const periodMs = 'periodMs' in value && typeof value.periodMs === 'number' ? value.periodMs : undefined;
  return {
    m,
    ...(reminder !== undefined ? { reminder } : {}),
    ...(periodMs !== undefined ? { periodMs } : {}),
  };
}

function toMailboxRow(r: Row): MailboxRow {
  return {
    id: str(r.id),
    address: str(r.address),
    kind: str(r.kind),
    dedupeKey: str(r.dedupe_key),
    payload: decodePayload(str(r.payload)),
    attempts: num(r.attempts),
  };
}

const MAILBOX_COLUMNS = 'id, address, kind, dedupe_key, payload, attempts';

/**
 * The SQL of the actor runtime: fences, actor state and the durable mailbox. Only the portable
 * subset that PostgreSQL and SQLite share, with `?` placeholders.
 */
export class RuntimeStore {
  constructor(private readonly db: Database) {}

  /**
   * Raises the fence of a key to `epoch` unless a higher one is stored. Returns the epoch now
   * stored: equal to `epoch` when the raise took, higher when a newer owner exists.
   */
  async raiseFence(fenceKey: string, epoch: number, em?: SqlEntityManager): Promise<number> {
    const rows = await this.db.execute(
      `INSERT INTO actor_fence (fence_key, epoch, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (fence_key) DO UPDATE SET epoch = excluded.epoch, updated_at = excluded.updated_at
       WHERE actor_fence.epoch < excluded.epoch
       RETURNING epoch`,
      [fenceKey, epoch, Date.now()],
      em,
    );
    if (rows[0]) return num(rows[0].epoch);
    const current = await this.db.execute('SELECT epoch FROM actor_fence WHERE fence_key = ?', [fenceKey], em);
    return current[0] ? num(current[0].epoch) : 0;
  }

  async raiseFences(fenceKeys: readonly string[], epoch: number): Promise<void> {
    const em = this.db.fork();
    await em.transactional(async (tx) => {
      for (const key of fenceKeys) await this.raiseFence(key, epoch, tx);
    });
  }

  /**
   * Inside a turn's transaction: true when `epoch` is still the newest for the key. On
   * PostgreSQL the row is share-locked, so a new owner raising the fence waits for this
   * transaction, and every later turn of the old owner sees the raised epoch.
   */
  async checkFence(em: SqlEntityManager, fenceKey: string, epoch: number): Promise<boolean> {
    const lock = this.db.dialect === 'postgresql' ? ' FOR SHARE' : '';
    const rows = await this.db.execute(`SELECT epoch FROM actor_fence WHERE fence_key = ?${lock}`, [fenceKey], em);
    return rows[0] !== undefined && num(rows[0].epoch) === epoch;
  }

  async loadState(address: Address): Promise<string | undefined> {
    const rows = await this.db.execute('SELECT state FROM actor_state WHERE address = ?', [address]);
    return rows[0] ? str(rows[0].state) : undefined;
  }

  async saveState(em: SqlEntityManager, address: Address, kind: string, state: string, epoch: number): Promise<void> {
    await this.db.execute(
      `INSERT INTO actor_state (address, kind, state, epoch, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (address) DO UPDATE SET state = excluded.state, epoch = excluded.epoch, updated_at = excluded.updated_at
       RETURNING address`,
      [address, kind, state, epoch, Date.now()],
      em,
    );
  }

  /** Commits a durable message; a repeated dedupe key for the address returns the first id. */
  async enqueue(
    address: Address,
    kind: string,
    shard: number,
    dedupeKey: string,
    payload: MailboxPayload,
    notBefore: number,
  ): Promise<{ id: string; duplicate: boolean }> {
    const now = Date.now();
    const rows = await this.db.execute(
      `INSERT INTO actor_mailbox (id, address, kind, shard, dedupe_key, payload, status, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)
       ON CONFLICT (address, dedupe_key) DO NOTHING
       RETURNING id`,
      [randomUUID(), address, kind, shard, dedupeKey, JSON.stringify(payload), notBefore, now, now],
    );
    if (rows[0]) return { id: str(rows[0].id), duplicate: false };
    const existing = await this.db.execute('SELECT id FROM actor_mailbox WHERE address = ? AND dedupe_key = ?', [
      address,
      dedupeKey,
    ]);
    return { id: existing[0] ? str(existing[0].id) : '', duplicate: true };
  }

  /** In a turn: sets (or resets) a reminder row. */
  async upsertReminder(
    em: SqlEntityManager,
    address: Address,
    kind: string,
    shard: number,
    name: string,
    payload: MailboxPayload,
    dueAt: number,
  ): Promise<void> {
    const now = Date.now();
    await this.db.execute(
      `INSERT INTO actor_mailbox (id, address, kind, shard, dedupe_key, payload, status, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)
       ON CONFLICT (address, dedupe_key) DO UPDATE SET payload = excluded.payload, status = 'pending', attempts = 0,
         next_attempt_at = excluded.next_attempt_at, updated_at = excluded.updated_at, last_error = NULL
       RETURNING id`,
      [randomUUID(), address, kind, shard, REMINDER_PREFIX + name, JSON.stringify(payload), dueAt, now, now],
      em,
    );
  }

  async deleteReminder(em: SqlEntityManager, address: Address, name: string): Promise<void> {
    await this.db.execute(
      'DELETE FROM actor_mailbox WHERE address = ? AND dedupe_key = ? RETURNING id',
      [address, REMINDER_PREFIX + name],
      em,
    );
  }

  /**
   * In a turn: marks a delivered message done (or moves a periodic reminder on). False when it
   * was already done: a redelivery whose effect must not commit twice.
   */
  async complete(em: SqlEntityManager, row: MailboxRow): Promise<boolean> {
    const now = Date.now();
    const rows =
      row.payload.periodMs !== undefined
        ? await this.db.execute(
            `UPDATE actor_mailbox SET next_attempt_at = ?, attempts = 0, updated_at = ? WHERE id = ? AND status = 'pending' RETURNING id`,
            [now + row.payload.periodMs, now, row.id],
            em,
          )
        : await this.db.execute(
            `UPDATE actor_mailbox SET status = 'done', updated_at = ? WHERE id = ? AND status = 'pending' RETURNING id`,
            [now, row.id],
            em,
          );
    return rows.length > 0;
  }

  async isPending(id: string): Promise<boolean> {
    const rows = await this.db.execute(`SELECT status FROM actor_mailbox WHERE id = ?`, [id]);
    return rows[0]?.status === 'pending';
  }

  /**
   * A failed delivery: retry later with backoff, or dead-letter after maxAttempts, or at once
   * when the failure is one no retry can cure (`unrecoverable`).
   */
  async fail(row: MailboxRow, error: string, maxAttempts: number, unrecoverable = false): Promise<'retry' | 'dead'> {
    const attempts = row.attempts + 1;
    const dead = unrecoverable || attempts >= maxAttempts;
    const backoff = Math.min(60_000, 500 * 2 ** (attempts - 1));
    await this.db.execute(
      `UPDATE actor_mailbox SET attempts = ?, status = ?, next_attempt_at = ?, last_error = ?, updated_at = ? WHERE id = ? AND status = 'pending' RETURNING id`,
      [attempts, dead ? 'dead' : 'pending', Date.now() + backoff, error.slice(0, 2000), Date.now(), row.id],
    );
    return dead ? 'dead' : 'retry';
  }

  /** Due messages of the given shards (all shards when `shards` is null), oldest first. */
  async due(shards: readonly number[] | null, limit: number): Promise<MailboxRow[]> {
    const now = Date.now();
    if (shards !== null && shards.length === 0) return [];
    const filter = shards === null ? '' : ` AND shard IN (${shards.map(() => '?').join(', ')})`;
    const rows = await this.db.execute(
      `SELECT ${MAILBOX_COLUMNS} FROM actor_mailbox WHERE status = 'pending' AND next_attempt_at <= ?${filter} ORDER BY next_attempt_at LIMIT ?`,
      [now, ...(shards ?? []), limit],
    );
    return rows.map(toMailboxRow);
  }

  async dueFor(address: Address, limit: number): Promise<MailboxRow[]> {
    const rows = await this.db.execute(
      `SELECT ${MAILBOX_COLUMNS} FROM actor_mailbox WHERE address = ? AND status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?`,
      [address, Date.now(), limit],
    );
    return rows.map(toMailboxRow);
  }
}
