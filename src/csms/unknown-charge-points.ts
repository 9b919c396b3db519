import type { Logger } from 'pino';
import Type, { type Static } from '#typebox';
import type { Database, Row } from '../db/database.js';
import type { RefusedLogin } from '../ocpp/endpoint.js';
import { titled } from '../gateway/openapi.js';

/** Ids kept in `csms_unknown_charge_point`: the most recently seen; older ones go at each write. */
export const UNKNOWN_KEEP = 1000;
/** Ids one process gathers between two writes; attempts of further ids are dropped until the write. */
const GATHER_MAX = 1000;
const ADDRESS_CHARS = 64;

export const UnknownChargePoint = titled(
  'UnknownChargePoint',
  Type.Object({
    id: Type.String({ description: 'the charge point id it tried' }),
    reason: Type.Union([Type.Literal('unknown'), Type.Literal('bad_password')], {
      description:
        'unknown: no charge point has this id; bad_password: the id exists, the password (or user name) is wrong',
    }),
    address: Type.String({ description: 'the remote address of the last attempt (X-Forwarded-For with TRUST_PROXY)' }),
    attempts: Type.Integer({ description: 'refused logins of this id counted so far' }),
    first_seen: Type.String({ format: 'date-time' }),
    last_seen: Type.String({ format: 'date-time' }),
  }),
);
export type UnknownChargePoint = Static<typeof UnknownChargePoint>;

interface Gathered {
  reason: RefusedLogin['reason'];
  address: string;
  attempts: number;
  first: number;
  last: number;
}

function toView(r: Row): UnknownChargePoint {
  return {
    id: String(r.id),
    reason: r.reason === 'bad_password' ? 'bad_password' : 'unknown',
    address: String(r.address),
    attempts: Number(r.attempts),
    first_seen: new Date(Number(r.first_seen)).toISOString(),
    last_seen: new Date(Number(r.last_seen)).toISOString(),
  };
}

/**
 * Chargers refused at the upgrade (docs/CSMS.md "Unknown chargers"). A refused login costs no
 * write of its own: attempts are gathered in memory per id (at most GATHER_MAX ids) and written
 * every `flushMs` as one transaction of upserts, which then trims the table to the UNKNOWN_KEEP
 * most recently seen ids. A flood of random ids thus costs at most GATHER_MAX upserts per write
 * and cannot grow the table; the login throttle (429) stops the attempts it refuses from
 * reaching here at all.
 */
export class UnknownChargePoints {
  private gathered = new Map<string, Gathered>();
  private dropped = 0;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
    private readonly flushMs: number,
  ) {}

  /** An attempt, gathered for the next write. */
  record(attempt: RefusedLogin): void {
    const known = this.gathered.get(attempt.id);
    const address = attempt.address.slice(0, ADDRESS_CHARS);
    if (known) {
      known.attempts += 1;
      known.last = attempt.at;
      known.address = address;
      known.reason = attempt.reason;
      return;
    }
    if (this.gathered.size >= GATHER_MAX) {
      this.dropped += 1;
      return;
    }
    this.gathered.set(attempt.id, {
      reason: attempt.reason,
      address,
      attempts: 1,
      first: attempt.at,
      last: attempt.at,
    });
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  /** Writes what was gathered (one write at a time; a failed one is logged and its attempts lost). */
  async flush(): Promise<void> {
    if (this.writing) return this.writing;
    if (this.gathered.size === 0) return;
    const batch = this.gathered;
    const dropped = this.dropped;
    this.gathered = new Map();
    this.dropped = 0;
    if (dropped > 0)
      this.log.warn({ ids: batch.size, dropped }, 'refused charger logins: too many ids, some not recorded');
    this.writing = this.write(batch)
      .catch((err: unknown) => this.log.warn({ err, ids: batch.size }, 'refused charger logins not recorded'))
      .finally(() => {
        this.writing = undefined;
      });
    return this.writing;
  }

  private async write(batch: Map<string, Gathered>): Promise<void> {
    await this.db.sql.transaction(async (tx) => {
      // in id order, so that two processes' batches lock rows in the same order (no deadlock)
      for (const [id, g] of [...batch].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        await tx.run(
          `INSERT INTO csms_unknown_charge_point (id, reason, address, attempts, first_seen, last_seen)
           VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET reason = excluded.reason, address = excluded.address,
             attempts = csms_unknown_charge_point.attempts + excluded.attempts, last_seen = excluded.last_seen`,
          [id, g.reason, g.address, g.attempts, g.first, g.last],
        );
      }
      await tx.run(
        `DELETE FROM csms_unknown_charge_point WHERE last_seen < (
           SELECT last_seen FROM csms_unknown_charge_point ORDER BY last_seen DESC LIMIT 1 OFFSET ?)`,
        [UNKNOWN_KEEP - 1],
      );
    });
  }

  async list(page: { offset: number; limit: number }): Promise<{ total: number; items: UnknownChargePoint[] }> {
    const [count] = await this.db.execute('SELECT COUNT(*) AS n FROM csms_unknown_charge_point');
    const rows = await this.db.execute(
      `SELECT id, reason, address, attempts, first_seen, last_seen FROM csms_unknown_charge_point
       ORDER BY last_seen DESC, id LIMIT ? OFFSET ?`,
      [page.limit, page.offset],
    );
    return { total: Number(count?.n ?? 0), items: rows.map(toView) };
  }

  async find(id: string): Promise<UnknownChargePoint | undefined> {
    const [r] = await this.db.execute(
      'SELECT id, reason, address, attempts, first_seen, last_seen FROM csms_unknown_charge_point WHERE id = ?',
      [id],
    );
    return r ? toView(r) : undefined;
  }

  /** Forgets an id (it has been registered). */
  async remove(id: string): Promise<void> {
    this.gathered.delete(id);
    await this.db.execute('DELETE FROM csms_unknown_charge_point WHERE id = ?', [id]);
  }
}
