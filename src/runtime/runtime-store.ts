import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database.js';
import type { Row, SqlExecutor, SqlRunner, SqlStatement } from '../db/sql.js';
import type { Address } from './address.js';
import { retryTransient, type GroupCommit } from '../db/group-commit.js';

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
 * `RuntimeStore.fenceGuard`'s statement (PostgreSQL): the fences that hold their expected epoch,
 * share-locked; unless all of them do, the cast of a text to an integer fails the statement (and
 * its transaction). The ELSE is not a constant, so it is only evaluated when reached.
 */
const FENCE_GUARD = `SELECT CASE WHEN count(*) = ? THEN 1
         ELSE ('fenced: ' || count(*) || ' fences of the batch hold their epoch')::integer END AS held
       FROM (SELECT 1 FROM actor_fence f JOIN unnest(?::varchar[], ?::bigint[]) AS e(fence_key, epoch)
         ON f.fence_key = e.fence_key AND f.epoch = e.epoch FOR SHARE OF f) AS holding`;

/**
 * The SQL of the actor runtime: fences, actor state and the durable mailbox. Only the portable
 * subset that PostgreSQL and SQLite share, with `?` placeholders, on the drivers directly
 * (`src/db/sql.ts`: statements prepared once, values bound). The methods that take a `tx` run
 * inside a turn's transaction.
 */
export class RuntimeStore {
  private readonly sql: SqlExecutor;
  /** ` FOR SHARE` on PostgreSQL: see `saveStateFenced` */
  private readonly shareLock: string;

  /** the process's group commit (`Database.group`): a charger's connect raises its fence through it */
  private readonly group: GroupCommit;

  /** SQLite: fences read by earlier batches, valid while `actor_fence_clock` has not moved */
  private readonly fenceCache: FenceCache | undefined;

  /**
   * The texts of the per-turn statements that depend on the dialect, made once: the executors
   * find a prepared statement by its text, so a text is better not built anew for every turn.
   */
  private readonly checkFenceSql: string;
  private readonly saveStateFencedSql: string;

  constructor(db: Database) {
    this.sql = db.sql;
    this.shareLock = db.dialect === 'postgresql' ? ' FOR SHARE' : '';
    this.group = db.group;
    this.fenceCache = db.dialect === 'sqlite' ? new FenceCache() : undefined;
    this.checkFenceSql = `SELECT epoch FROM actor_fence WHERE fence_key = ?${this.shareLock}`;
    this.fenceGuard =
      db.dialect === 'postgresql'
        ? (expected) => ({ sql: FENCE_GUARD, params: [expected.size, [...expected.keys()], [...expected.values()]] })
        : undefined;
    // INSERT ... SELECT with a WHERE: SQLite needs the WHERE to read ON CONFLICT as the upsert
    this.saveStateFencedSql = `INSERT INTO actor_state (address, kind, state, epoch, updated_at)
       SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM actor_fence WHERE fence_key = ? AND epoch = ?${this.shareLock})
       ON CONFLICT (address) DO UPDATE SET state = excluded.state, epoch = excluded.epoch, updated_at = excluded.updated_at,
         version = actor_state.version + 1`;
  }

  /**
   * Raises the fence of a key to `epoch` unless a higher one is stored. Returns the epoch now
   * stored: equal to `epoch` when the raise took, higher when a newer owner exists.
   *
   * Without `tx`: on SQLite in the group commit (one connection, so no lock waits; a storm's
   * connects share their COMMITs). On PostgreSQL in a statement of its own, holding no other
   * lock while it waits for the turns that share-lock the fence. In a shared batch it held the
   * fences its batch's turns had share-locked while it waited, and two batches each raising a
   * fence the other's turns held deadlocked: chargers reconnecting in a loop (two devices of one
   * identity) kept PostgreSQL breaking cycles a second apart, the pool ran dry and every charger
   * of the process got InternalError for minutes.
   */
  async raiseFence(fenceKey: string, epoch: number, tx?: SqlRunner): Promise<number> {
    if (!tx) {
      if (this.sql.dialect === 'postgresql') return retryTransient(() => this.raiseFence(fenceKey, epoch, this.sql));
      return this.group.run((shared) => this.raiseFence(fenceKey, epoch, shared));
    }
    const rows = await tx.query(
      `INSERT INTO actor_fence (fence_key, epoch, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (fence_key) DO UPDATE SET epoch = excluded.epoch, updated_at = excluded.updated_at
       WHERE actor_fence.epoch < excluded.epoch
       RETURNING epoch`,
      [fenceKey, epoch, Date.now()],
    );
    if (rows[0]) return num(rows[0].epoch);
    const current = await tx.query('SELECT epoch FROM actor_fence WHERE fence_key = ?', [fenceKey]);
    return current[0] ? num(current[0].epoch) : 0;
  }

  async raiseFences(fenceKeys: readonly string[], epoch: number): Promise<void> {
    await this.sql.transaction(async (tx) => {
      for (const key of fenceKeys) await this.raiseFence(key, epoch, tx);
    });
  }

  /**
   * Inside a turn's transaction: true when `epoch` is still the newest for the key. On
   * PostgreSQL the row is share-locked, so a new owner raising the fence waits for this
   * transaction, and every later turn of the old owner sees the raised epoch.
   */
  async checkFence(tx: SqlRunner, fenceKey: string, epoch: number): Promise<boolean> {
    const rows = await tx.query(this.checkFenceSql, [fenceKey]);
    return rows[0] !== undefined && num(rows[0].epoch) === epoch;
  }

  /**
   * The fences of a batch's turns (`BatchRead`), once per batch. On PostgreSQL one statement that
   * share-locks them, as `checkFence`. On SQLite the batch reads the fence clock first: while it
   * stands where it stood when the cached fences were read, no fence has changed since (from any
   * connection: the clock moves by trigger, and the read is in the batch's transaction, so it is
   * the same snapshot its writes commit on), and only keys not cached yet are read. It must run
   * before any write of its transaction (the group commit reads first): a clock read after a
   * fence write of the same transaction would be a value a rollback can take back.
   */
  readonly readFences = async (tx: SqlRunner, keys: readonly string[]): Promise<ReadonlyMap<string, number>> => {
    const cache = this.fenceCache;
    if (!cache) return this.selectFences(tx, keys);
    const clock = await tx.query('SELECT n FROM actor_fence_clock WHERE id = 1');
    const known = cache.at(clock[0] ? num(clock[0].n) : -1);
    const missing = keys.filter((k) => !known.has(k));
    if (missing.length > 0) for (const [k, epoch] of await this.selectFences(tx, missing)) known.set(k, epoch);
    return known;
  };

  private async selectFences(tx: SqlRunner, keys: readonly string[]): Promise<Map<string, number>> {
    const rows = await tx.query(
      `SELECT fence_key, epoch FROM actor_fence WHERE fence_key IN (${keys.map(() => '?').join(', ')})${this.shareLock}`,
      keys,
    );
    return new Map(rows.map((r) => [str(r.fence_key), num(r.epoch)]));
  }

  /**
   * On PostgreSQL, the `guard` of `readFences` (`BatchRead.guard`): one statement that share-locks
   * the fences of a batch's turns, as `readFences` does, and fails unless each holds the epoch its
   * turn expects. The failure is a cast error whose text says how many held; the group commit
   * then runs the batch turn by turn, where the fenced turn fails alone. Undefined on SQLite,
   * whose statements have no round trip to save.
   */
  readonly fenceGuard: ((expected: ReadonlyMap<string, number>) => SqlStatement) | undefined;

  async loadState(address: Address): Promise<string | undefined> {
    const rows = await this.sql.query('SELECT state FROM actor_state WHERE address = ?', [address]);
    return rows[0] ? str(rows[0].state) : undefined;
  }

  /**
   * A new pin's state, and whether its mailbox holds a row that `dueFor` would hand over now: one
   * statement instead of the load and a drain. The drain that follows (when `due`) reads the rows
   * themselves; a row committed after this read reaches the owner as any later one does (the
   * sender's wake-up, the periodic sweep), as one committed after a drain that found none would.
   */
  async loadStateAndDue(address: Address): Promise<{ state: string | undefined; due: boolean }> {
    const rows = await this.sql.query(
      `SELECT (SELECT state FROM actor_state WHERE address = ?) AS state,
         EXISTS (SELECT 1 FROM actor_mailbox WHERE address = ? AND status = 'pending' AND next_attempt_at <= ?) AS due`,
      [address, address, Date.now()],
    );
    const row = rows[0];
    const state = row?.state;
    // SQLite answers EXISTS with 0 or 1, PostgreSQL with a boolean
    const due = row?.due;
    return {
      state: state === null || state === undefined ? undefined : str(state),
      due: due === true || due === 1 || due === '1',
    };
  }

  /**
   * In a turn: writes the state only while the fence still stands at `epoch` (the fence check
   * folded into the write, one statement). False when it did not: a newer owner exists. On
   * PostgreSQL the fence row is share-locked as `checkFence` does. Each write raises the row's
   * `version` (m0020): what readers that cache a summary of the state compare.
   */
  async saveStateFenced(
    tx: SqlRunner,
    address: Address,
    kind: string,
    state: string,
    fence: { key: string; epoch: number },
  ): Promise<boolean> {
    const changed = await tx.run(this.saveStateFencedSql, [
      address,
      kind,
      state,
      fence.epoch,
      Date.now(),
      fence.key,
      fence.epoch,
    ]);
    return changed > 0;
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
    const rows = await this.sql.query(
      `INSERT INTO actor_mailbox (id, address, kind, shard, dedupe_key, payload, status, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)
       ON CONFLICT (address, dedupe_key) DO NOTHING
       RETURNING id`,
      [randomUUID(), address, kind, shard, dedupeKey, JSON.stringify(payload), notBefore, now, now],
    );
    if (rows[0]) return { id: str(rows[0].id), duplicate: false };
    const existing = await this.sql.query('SELECT id FROM actor_mailbox WHERE address = ? AND dedupe_key = ?', [
      address,
      dedupeKey,
    ]);
    return { id: existing[0] ? str(existing[0].id) : '', duplicate: true };
  }

  /** In a turn: sets (or resets) a reminder row. */
  async upsertReminder(
    tx: SqlRunner,
    address: Address,
    kind: string,
    shard: number,
    name: string,
    payload: MailboxPayload,
    dueAt: number,
  ): Promise<void> {
    const now = Date.now();
    await tx.run(
      `INSERT INTO actor_mailbox (id, address, kind, shard, dedupe_key, payload, status, attempts, next_attempt_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)
       ON CONFLICT (address, dedupe_key) DO UPDATE SET payload = excluded.payload, status = 'pending', attempts = 0,
         next_attempt_at = excluded.next_attempt_at, updated_at = excluded.updated_at, last_error = NULL`,
      [randomUUID(), address, kind, shard, REMINDER_PREFIX + name, JSON.stringify(payload), dueAt, now, now],
    );
  }

  async deleteReminder(tx: SqlRunner, address: Address, name: string): Promise<void> {
    await tx.run('DELETE FROM actor_mailbox WHERE address = ? AND dedupe_key = ?', [address, REMINDER_PREFIX + name]);
  }

  /**
   * In a turn: marks a delivered message done (or moves a periodic reminder on). False when it
   * was already done: a redelivery whose effect must not commit twice.
   */
  async complete(tx: SqlRunner, row: MailboxRow): Promise<boolean> {
    const now = Date.now();
    const changed =
      row.payload.periodMs !== undefined
        ? await tx.run(
            `UPDATE actor_mailbox SET next_attempt_at = ?, attempts = 0, updated_at = ? WHERE id = ? AND status = 'pending'`,
            [now + row.payload.periodMs, now, row.id],
          )
        : await tx.run(`UPDATE actor_mailbox SET status = 'done', updated_at = ? WHERE id = ? AND status = 'pending'`, [
            now,
            row.id,
          ]);
    return changed > 0;
  }

  async isPending(id: string): Promise<boolean> {
    const rows = await this.sql.query(`SELECT status FROM actor_mailbox WHERE id = ?`, [id]);
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
    await this.sql.run(
      `UPDATE actor_mailbox SET attempts = ?, status = ?, next_attempt_at = ?, last_error = ?, updated_at = ? WHERE id = ? AND status = 'pending'`,
      [attempts, dead ? 'dead' : 'pending', Date.now() + backoff, error.slice(0, 2000), Date.now(), row.id],
    );
    return dead ? 'dead' : 'retry';
  }

  /** Due messages of the given shards (all shards when `shards` is null), oldest first. */
  async due(shards: readonly number[] | null, limit: number): Promise<MailboxRow[]> {
    const now = Date.now();
    if (shards !== null && shards.length === 0) return [];
    const filter = shards === null ? '' : ` AND shard IN (${shards.map(() => '?').join(', ')})`;
    const rows = await this.sql.query(
      `SELECT ${MAILBOX_COLUMNS} FROM actor_mailbox WHERE status = 'pending' AND next_attempt_at <= ?${filter} ORDER BY next_attempt_at LIMIT ?`,
      [now, ...(shards ?? []), limit],
    );
    return rows.map(toMailboxRow);
  }

  async dueFor(address: Address, limit: number): Promise<MailboxRow[]> {
    const rows = await this.sql.query(
      `SELECT ${MAILBOX_COLUMNS} FROM actor_mailbox WHERE address = ? AND status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?`,
      [address, Date.now(), limit],
    );
    return rows.map(toMailboxRow);
  }
}

/** Fences cached at most, over every actor ever active here: past it the cache starts again. */
const FENCE_CACHE_MAX = 100_000;

/**
 * Fences as read at one value of SQLite's fence clock. A batch that finds the clock elsewhere gets
 * a new, empty map (a batch still holding the old one keeps its own view); a key never seen is not
 * cached as absent, so a fence inserted later is read.
 */
class FenceCache {
  private clock = -1;
  private fences = new Map<string, number>();

  at(clock: number): Map<string, number> {
    if (clock !== this.clock || clock < 0 || this.fences.size >= FENCE_CACHE_MAX) {
      this.clock = clock;
      this.fences = new Map();
    }
    return this.fences;
  }
}
