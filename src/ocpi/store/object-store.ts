import type { QueryResult } from '@mikro-orm/core';
import type { Database } from '../../db/database.js';
import type { PartyIdentity } from '../core/auth.js';
import type { ListWindow, Page } from '../core/pagination.js';

/** The OCPI modules whose objects live in `ocpi_object`. */
export type ObjectModule = 'locations' | 'sessions' | 'tariffs' | 'tokens' | 'cdrs';

export interface ObjectKey extends PartyIdentity {
  id: string;
}

const MAX_UPDATE_ATTEMPTS = 10;

/** An object changed under every attempt of an update (a write storm on one object). */
export class ConcurrentUpdateError extends Error {
  override readonly name = 'ConcurrentUpdateError';
  readonly code = 'CONCURRENT_UPDATE';
}

export interface ListOptions {
  /** leave out objects whose `publish` is false (our locations as partners see them) */
  publishedOnly?: boolean;
}

/** `publish: false` marks an unpublished location; every other object is published. */
function isPublished(object: object): boolean {
  return !('publish' in object) || object.publish !== false;
}

/** A list page already serialized for one rendering (the objects as a JSON array, UTF-8). */
export interface RenderedPage {
  json: Buffer;
  total: number;
}

interface CachedPage extends RenderedPage {
  expiresAt: number;
}

export interface ObjectStoreOptions {
  /**
   * How long a rendered list page is reused (ms). Writes through this process clear the cache
   * at once; a write on another process shows in lists after at most this long.
   */
  pageCacheMs?: number;
  /** called after every write (cluster mode: tells the other processes) */
  onWrite?: (module: ObjectModule) => void;
}

/**
 * Rows of `ocpi_object` <-> OCPI objects, for one module. The stored JSON is the object as it
 * was validated at the edge (the 2.2.1 shape for locations, the 2.1.1 shapes for the other
 * modules), so reading it back (`storedObject`) is the one place a row becomes a typed object.
 */
export class ObjectStore<T extends { last_updated: string }> {
  private readonly pages = new Map<string, CachedPage>();
  private readonly pageCacheMs: number;
  private readonly onWrite: ((module: ObjectModule) => void) | undefined;

  constructor(
    private readonly db: Database,
    readonly module: ObjectModule,
    opts: ObjectStoreOptions = {},
  ) {
    this.pageCacheMs = opts.pageCacheMs ?? 1000;
    this.onWrite = opts.onWrite;
  }

  /** Forgets every rendered page (a write here or, in cluster mode, on another process). */
  clearPages(): void {
    this.pages.clear();
  }

  async get(key: ObjectKey): Promise<T | undefined> {
    const rows = await this.db.execute(
      'SELECT data FROM ocpi_object WHERE module = ? AND country_code = ? AND party_id = ? AND object_id = ?',
      [this.module, key.country_code, key.party_id, key.id],
    );
    const row = rows[0];
    return row ? this.fromRow(row.data) : undefined;
  }

  /** Inserts or replaces the object. */
  async put(key: ObjectKey, object: T): Promise<T> {
    this.pages.clear();
    const now = Date.now();
    await this.db.execute(
      `INSERT INTO ocpi_object (module, country_code, party_id, object_id, last_updated_ms, published, data, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (module, country_code, party_id, object_id)
       DO UPDATE SET last_updated_ms = excluded.last_updated_ms, published = excluded.published, data = excluded.data,
       updated_at = excluded.updated_at, revision = ocpi_object.revision + 1`,
      [
        this.module,
        key.country_code,
        key.party_id,
        key.id,
        Date.parse(object.last_updated),
        isPublished(object) ? 1 : 0,
        JSON.stringify(object),
        now,
      ],
    );
    this.pages.clear();
    this.onWrite?.(this.module);
    return object;
  }

  /**
   * Read, change, write back — only onto the row that was read: a write in between (another
   * request, another process) makes it read again (optimistic concurrency on `revision`).
   * Undefined when the object does not exist; `change` may throw to refuse.
   */
  async update(key: ObjectKey, change: (current: T) => T): Promise<T | undefined> {
    const where = 'module = ? AND country_code = ? AND party_id = ? AND object_id = ?';
    const keyParams = [this.module, key.country_code, key.party_id, key.id];
    for (let attempt = 0; attempt < MAX_UPDATE_ATTEMPTS; attempt++) {
      const rows = await this.db.execute(`SELECT data, revision FROM ocpi_object WHERE ${where}`, keyParams);
      const row = rows[0];
      if (!row) return undefined;
      const next = change(this.fromRow(row.data));
      const result = await this.db
        .fork()
        .execute<QueryResult>(
          `UPDATE ocpi_object SET last_updated_ms = ?, published = ?, data = ?, updated_at = ?, revision = revision + 1 WHERE ${where} AND revision = ?`,
          [
            Date.parse(next.last_updated),
            isPublished(next) ? 1 : 0,
            JSON.stringify(next),
            Date.now(),
            ...keyParams,
            Number(row.revision),
          ],
          'run',
        );
      if (result.affectedRows === 1) {
        this.pages.clear();
        this.onWrite?.(this.module);
        return next;
      }
    }
    throw new ConcurrentUpdateError(
      `${this.module} ${key.country_code}-${key.party_id}-${key.id} kept changing under ${MAX_UPDATE_ATTEMPTS} attempts`,
    );
  }

  async remove(key: ObjectKey): Promise<void> {
    this.pages.clear();
    await this.db.execute(
      'DELETE FROM ocpi_object WHERE module = ? AND country_code = ? AND party_id = ? AND object_id = ?',
      [this.module, key.country_code, key.party_id, key.id],
    );
    this.pages.clear();
    this.onWrite?.(this.module);
  }

  /**
   * One page of the objects of `parties` (all parties when omitted), oldest `last_updated`
   * first so that paging is stable while objects are added.
   */
  async list(window: ListWindow, parties?: readonly PartyIdentity[], opts: ListOptions = {}): Promise<Page<T>> {
    const where: string[] = ['module = ?'];
    const params: unknown[] = [this.module];
    if (opts.publishedOnly) {
      // an integer column (m0002-ocpi): 1 published, 0 not
      where.push('published = ?');
      params.push(1);
    }
    if (parties) {
      if (parties.length === 0) return { items: [], total: 0 };
      where.push(`(${parties.map(() => '(country_code = ? AND party_id = ?)').join(' OR ')})`);
      for (const p of parties) params.push(p.country_code, p.party_id);
    }
    if (window.from !== undefined) {
      where.push('last_updated_ms >= ?');
      params.push(window.from);
    }
    if (window.to !== undefined) {
      where.push('last_updated_ms < ?');
      params.push(window.to);
    }
    const clause = where.join(' AND ');
    const [countRows, rows] = await Promise.all([
      this.db.execute(`SELECT COUNT(*) AS n FROM ocpi_object WHERE ${clause}`, params),
      this.db.execute(
        `SELECT data FROM ocpi_object WHERE ${clause} ORDER BY last_updated_ms, object_id, country_code, party_id LIMIT ? OFFSET ?`,
        [...params, window.limit, window.offset],
      ),
    ]);
    return { items: rows.map((r) => this.fromRow(r.data)), total: Number(countRows[0]?.n ?? 0) };
  }

  /**
   * One page rendered with `render` (named by `renderName`) and serialized: the hot path of the
   * list endpoints (docs/PERFORMANCE.md). Pages are reused for `pageCacheMs`.
   */
  async renderedList<O>(
    window: ListWindow,
    parties: readonly PartyIdentity[] | undefined,
    renderName: string,
    render: (t: T) => O,
    opts: ListOptions = {},
  ): Promise<RenderedPage> {
    const partiesKey = parties ? parties.map((p) => `${p.country_code}-${p.party_id}`).join(',') : '*';
    const key = `${renderName}|${opts.publishedOnly ? 'published' : 'all'}|${partiesKey}|${window.from ?? ''}|${window.to ?? ''}|${window.offset}|${window.limit}`;
    const now = Date.now();
    const cached = this.pages.get(key);
    if (cached && cached.expiresAt > now) return cached;
    const page = await this.list(window, parties, opts);
    const rendered: CachedPage = {
      json: Buffer.from(JSON.stringify(page.items.map(render))),
      total: page.total,
      expiresAt: now + this.pageCacheMs,
    };
    // bounded: many distinct filters must not grow the cache without end
    if (this.pages.size >= 1000) this.pages.clear();
    this.pages.set(key, rendered);
    return rendered;
  }

  private fromRow(data: unknown): T {
    return storedObject<T>(String(data));
  }
}

/**
 * A row's `data` as the object it was written from. No check: `data` is only ever written by
 * `put` and `update` above, as JSON.stringify of a T, and every T was validated where it came
 * in (the route's schema, or the check of a pulled object) or built from validated parts by
 * our own mappers. Checking again would walk every object of every list page, the hot path of
 * docs/PERFORMANCE.md, to find what the write already guaranteed.
 */
function storedObject<T>(json: string): T {
  // our own serialisation of a T (see above)
  return JSON.parse(json) as T;
}
