import type { SqlRunner, SqlTx } from '../../db/sql.js';
import { AHEAD_TOLERANCE_MS } from '../core/datetime.js';
import type { PartyIdentity } from '../core/auth.js';
import type { ListWindow, Page } from '../core/pagination.js';

/**
 * The statements an object store runs: portable SQL with `?` placeholders, one statement per
 * call, each committed on its own. `OcpiContext` fills it with the drivers' executor for reads
 * and the process's group commit for writes (src/ocpi/core/context.ts). Or a transaction's
 * connection (`SqlTx`: it has `savepoint`), whose statements commit together.
 */
export type ObjectSql = Pick<SqlRunner, 'query' | 'run'> & Partial<Pick<SqlTx, 'savepoint' | 'dialect'>>;

/** The OCPI modules whose objects live in `ocpi_object`. */
export type ObjectModule = 'locations' | 'sessions' | 'tariffs' | 'tokens' | 'cdrs' | 'commands';

export interface ObjectKey extends PartyIdentity {
  id: string;
}

/**
 * How long an update keeps trying against the writes of other processes. Each process's writes
 * of one object take turns (below), so at most one writer per process contends; a writer whose
 * process has several queued keeps winning the race against the other's one, until its queue is
 * empty. Ten rounds were not always enough for two web processes given 15 PATCHes of one
 * location each (one answered 503 in CI); a time budget with a short random pause after each lost
 * round lets the queue drain. An object that still changes under every attempt past it is a 503.
 */
const UPDATE_BUDGET_MS = 2_000;

/** The longest random pause after a lost round, in ms (grows with the rounds lost, to this). */
const MAX_RETRY_PAUSE_MS = 8;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The tail of each object's chain of writes in this process (`serialized`), by store key. A
 * PATCH reads, changes and writes back only onto the revision it read: concurrent writes of one
 * object in this process would make all but one read again, round after round (20 PATCHes of one
 * location's EVSEs at once ran out of attempts). Chained, they take turns; the attempts are left
 * for writes of other processes.
 */
const chains = new Map<string, Promise<void>>();

const settled = (): void => undefined;

/** `work` after the writes of `key` this process started before it; its result. */
function serialized<R>(key: string, work: () => Promise<R>): Promise<R> {
  const before = chains.get(key);
  const run = before ? before.then(work) : work();
  const tail = run.then(settled, settled);
  chains.set(key, tail);
  void tail.then(() => {
    if (chains.get(key) === tail) chains.delete(key);
  });
  return run;
}

/** An object changed under every attempt of an update (a write storm on one object). */
export class ConcurrentUpdateError extends Error {
  override readonly name = 'ConcurrentUpdateError';
  readonly code = 'CONCURRENT_UPDATE';
}

export interface ListOptions {
  /**
   * Our locations as partners see them (docs/OCPI.md, Decisions 32): `public` leaves out every
   * location with `publish: false`; `allowed-to` keeps those that name who may be shown them
   * (`publish_allowed_to`) for the eMSP to apply.
   */
  publishedOnly?: 'public' | 'allowed-to';
  /** only objects written for this party (`PutOptions.audience`): our sessions and CDRs for one eMSP */
  audience?: PartyIdentity;
  /** newest `last_updated` first (the operator's lists of recent things); in the order first stored otherwise */
  newestFirst?: boolean;
}

export interface PutOptions {
  /**
   * The one party besides the owner that may read the object: the eMSP of the token of one of
   * our sessions or CDRs (docs/OCPI.md "Who sees what"). A put sets it (none when not
   * given); an update keeps it.
   */
  audience?: PartyIdentity;
}

/** Renders the objects of one page, in order, as they are served. */
export type PageRenderer<T> = (items: T[]) => unknown[] | Promise<unknown[]>;

/**
 * The `published` column (an integer, m0002-ocpi): 1 published, 2 shown on 2.2.1 only (a
 * location with `publish: false` that names the tokens whose owners may be shown it,
 * `publish_allowed_to`, or a credit CDR: 2.1.1 has neither), 0 shown to no one. Every other
 * object without `publish` is published.
 */
export function visibilityOf(object: object): 0 | 1 | 2 {
  if ('credit' in object && object.credit === true) return 2;
  if (!('publish' in object) || object.publish !== false) return 1;
  const allowed = 'publish_allowed_to' in object ? object.publish_allowed_to : undefined;
  return Array.isArray(allowed) && allowed.length > 0 ? 2 : 0;
}

/** A list page already serialized for one rendering (the objects as a JSON array, UTF-8). */
export interface RenderedPage {
  json: Buffer;
  total: number;
}

interface CachedPage extends RenderedPage {
  expiresAt: number;
}

/** The party of a store key, as the page cache names it. */
function scopeOf(party: PartyIdentity): string {
  return `${party.country_code}-${party.party_id}`;
}

/**
 * The rendered pages of one set of parties (`parties` undefined: a list of every party). A write
 * of an object of party P drops the groups whose lists can show it: those naming P, and those
 * of every party; the pages of other parties stay.
 */
interface PageGroup {
  parties: ReadonlySet<string> | undefined;
  pages: Map<string, CachedPage>;
}

/** At most this many rendered pages per store: many distinct filters must not grow it without end. */
const MAX_PAGES = 1000;

export interface ObjectStoreOptions {
  /**
   * How long a rendered list page is reused (ms). Writes through this process clear the cache
   * at once; a write on another process shows in lists after at most this long.
   */
  pageCacheMs?: number;
  /** called after every write, with the written object's party (cluster mode: tells the other processes) */
  onWrite?: (module: ObjectModule, party: PartyIdentity) => void;
  /**
   * The store's statements run in a transaction (`on`): its writes do not wait for the process's
   * other writes of an object, which may be waiting for that transaction to end.
   */
  inTransaction?: boolean;
}

/**
 * Rows of `ocpi_object` <-> OCPI objects, for one module. The stored JSON is the object as it
 * was validated at the edge (the 2.2.1 shape for locations, the 2.1.1 shapes for the other
 * modules), so reading it back (`storedObject`) is the one place a row becomes a typed object.
 */
export class ObjectStore<T extends { last_updated: string }> {
  /** rendered pages by the parties they list (the key `partiesKey` makes) */
  private readonly groups = new Map<string, PageGroup>();
  private pageCount = 0;
  private readonly pageCacheMs: number;
  private readonly onWrite: ((module: ObjectModule, party: PartyIdentity) => void) | undefined;
  /**
   * writes take turns per object with the process's other writes of it (`serialized`); never in
   * a transaction: one that holds the row's lock while it waits for a turn held by a write on
   * another connection, blocked on that lock, waits for ever (docs/OCPI.md, after the 503 of a PATCH)
   */
  private readonly takesTurns: boolean;
  /**
   * an update in a PostgreSQL transaction reads its row `FOR UPDATE`: it waits for the
   * transaction changing the row and then reads what it committed, instead of failing its
   * `revision` check after every other process's batch that took the row first
   */
  private readonly lockingReads: boolean;

  constructor(
    private readonly sql: ObjectSql,
    readonly module: ObjectModule,
    opts: ObjectStoreOptions = {},
  ) {
    this.pageCacheMs = opts.pageCacheMs ?? 1000;
    this.onWrite = opts.onWrite;
    // a store on a transaction's connection is in it, whoever made the store
    this.takesTurns = opts.inTransaction !== true && sql.savepoint === undefined;
    this.lockingReads = !this.takesTurns && sql.dialect === 'postgresql';
  }

  /**
   * The same store on another connection (a transaction that writes more than this object): its
   * writes clear this store's pages and tell the other processes as this store's do.
   */
  on(sql: ObjectSql): ObjectStore<T> {
    return new ObjectStore<T>(sql, this.module, {
      pageCacheMs: this.pageCacheMs,
      inTransaction: true,
      onWrite: (module, party) => {
        this.clearPages(party);
        this.onWrite?.(module, party);
      },
    });
  }

  /**
   * Forgets the rendered pages that can show objects of `party` (a write here or, in cluster
   * mode, on another process), or every page when no party is named.
   */
  clearPages(party?: PartyIdentity): void {
    if (!party) {
      this.groups.clear();
      this.pageCount = 0;
      return;
    }
    const scope = scopeOf(party);
    for (const [key, group] of this.groups) {
      if (group.parties && !group.parties.has(scope)) continue;
      this.groups.delete(key);
      this.pageCount -= group.pages.size;
    }
  }

  /** After a write of `key`'s object: its pages go here, and (cluster mode) on the other processes. */
  private written(key: ObjectKey): void {
    this.clearPages(key);
    this.onWrite?.(this.module, { country_code: key.country_code, party_id: key.party_id });
  }

  get(key: ObjectKey): Promise<T | undefined> {
    return this.read(key, false);
  }

  private async read(key: ObjectKey, forUpdate: boolean): Promise<T | undefined> {
    const rows = await this.sql.query(
      `SELECT data FROM ocpi_object WHERE module = ? AND country_code = ? AND party_id = ? AND object_id = ?${forUpdate ? ' FOR UPDATE' : ''}`,
      [this.module, key.country_code, key.party_id, key.id],
    );
    const row = rows[0];
    return row ? this.fromRow(row.data) : undefined;
  }

  /**
   * `get`, and in a PostgreSQL transaction the row locked until it commits: a transaction that
   * reads an object to write it back whole waits for one changing it, then reads what that one
   * committed. With a plain `get`, an operator's PUT of a location read the EVSE statuses before a
   * charger's batch changed one and wrote the old status back over it.
   */
  getForUpdate(key: ObjectKey): Promise<T | undefined> {
    return this.read(key, this.lockingReads);
  }

  /**
   * The object whose id is `key.id` in any case of its letters (ids that are CiStrings: a token's
   * uid): the one of the same case first, else the one updated last. The index is m0022's.
   */
  async getAnyCase(key: ObjectKey): Promise<T | undefined> {
    const exact = await this.get(key);
    if (exact) return exact;
    const rows = await this.sql.query(
      `SELECT data FROM ocpi_object WHERE module = ? AND lower(object_id) = lower(?) AND country_code = ?
         AND party_id = ? ORDER BY last_updated_ms DESC LIMIT 1`,
      [this.module, key.id, key.country_code, key.party_id],
    );
    const row = rows[0];
    return row ? this.fromRow(row.data) : undefined;
  }

  /** The object, when it was written for `audience` (`PutOptions.audience`). */
  async getFor(key: ObjectKey, audience: PartyIdentity): Promise<T | undefined> {
    const rows = await this.sql.query(
      'SELECT data FROM ocpi_object WHERE module = ? AND country_code = ? AND party_id = ? AND object_id = ? AND audience = ?',
      [this.module, key.country_code, key.party_id, key.id, scopeOf(audience)],
    );
    const row = rows[0];
    return row ? this.fromRow(row.data) : undefined;
  }

  /** Inserts or replaces the object. */
  async put(key: ObjectKey, object: T, opts: PutOptions = {}): Promise<T> {
    await this.write(
      key,
      object,
      opts,
      `DO UPDATE SET last_updated_ms = excluded.last_updated_ms, published = excluded.published, data = excluded.data,
       updated_at = excluded.updated_at, revision = ocpi_object.revision + 1, audience = excluded.audience`,
    );
    return object;
  }

  /**
   * A partner's PUT: inserts or replaces the object unless the one stored under its key was
   * updated later (docs/OCPI.md Decisions 38: a stale update is not applied; a stored stamp ahead
   * of our clock orders nothing, as `olderThan` says). Answers the object held afterwards and
   * whether it is the one given.
   */
  async putUnlessOlder(key: ObjectKey, object: T, opts: PutOptions = {}): Promise<{ object: T; applied: boolean }> {
    const changed = await this.write(
      key,
      object,
      opts,
      `DO UPDATE SET last_updated_ms = excluded.last_updated_ms, published = excluded.published, data = excluded.data,
       updated_at = excluded.updated_at, revision = ocpi_object.revision + 1, audience = excluded.audience
       WHERE ocpi_object.last_updated_ms <= excluded.last_updated_ms
         OR ocpi_object.last_updated_ms > excluded.updated_at + ${AHEAD_TOLERANCE_MS}`,
    );
    if (changed === 1) return { object, applied: true };
    return { object: (await this.get(key)) ?? object, applied: false };
  }

  /**
   * Inserts the object unless one is stored under its key (an object that never changes, such as
   * our CDRs: whoever writes first wins). Answers whether it was inserted.
   */
  async putNew(key: ObjectKey, object: T, opts: PutOptions = {}): Promise<boolean> {
    return (await this.write(key, object, opts, 'DO NOTHING')) === 1;
  }

  private write(key: ObjectKey, object: T, opts: PutOptions, onConflict: string): Promise<number> {
    return this.inTurn(key, () => this.writeNow(key, object, opts, onConflict));
  }

  /** `work` in its turn among the process's writes of `key`'s object (`serialized`), unless in a transaction. */
  private inTurn<R>(key: ObjectKey, work: () => Promise<R>): Promise<R> {
    if (!this.takesTurns) return work();
    return serialized(`${this.module}\n${key.country_code}\n${key.party_id}\n${key.id}`, work);
  }

  private async writeNow(key: ObjectKey, object: T, opts: PutOptions, onConflict: string): Promise<number> {
    this.clearPages(key);
    const now = Date.now();
    const changed = await this.sql.run(
      `INSERT INTO ocpi_object (module, country_code, party_id, object_id, last_updated_ms, published, data, updated_at, audience, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (module, country_code, party_id, object_id) ${onConflict}`,
      [
        this.module,
        key.country_code,
        key.party_id,
        key.id,
        Date.parse(object.last_updated),
        visibilityOf(object),
        JSON.stringify(object),
        now,
        opts.audience ? scopeOf(opts.audience) : null,
        // kept by every update (no ON CONFLICT clause sets it): the object's place in a list
        now,
      ],
    );
    this.written(key);
    return changed;
  }

  /**
   * Read, change, write back — only onto the row that was read: a write in between (another
   * process, a transaction's store) makes it read again (optimistic concurrency on `revision`);
   * this process's writes of the object take turns (`serialized`). Undefined when the object
   * does not exist; `change` (synchronous: nothing else runs in the object's turn) may throw to
   * refuse, or give back the object it got to leave the row as it is (nothing is written).
   */
  update(key: ObjectKey, change: (current: T) => T): Promise<T | undefined> {
    return this.inTurn(key, () => this.updateNow(key, change));
  }

  private async updateNow(key: ObjectKey, change: (current: T) => T): Promise<T | undefined> {
    const where = 'module = ? AND country_code = ? AND party_id = ? AND object_id = ?';
    const keyParams = [this.module, key.country_code, key.party_id, key.id];
    const deadline = Date.now() + UPDATE_BUDGET_MS;
    for (let attempt = 0; attempt === 0 || Date.now() < deadline; attempt++) {
      if (attempt > 0) await pause(Math.random() * Math.min(attempt, MAX_RETRY_PAUSE_MS));
      const rows = await this.sql.query(
        `SELECT data, revision FROM ocpi_object WHERE ${where}${this.lockingReads ? ' FOR UPDATE' : ''}`,
        keyParams,
      );
      const row = rows[0];
      if (!row) return undefined;
      const current = this.fromRow(row.data);
      const next = change(current);
      if (next === current) return current;
      const changed = await this.sql.run(
        `UPDATE ocpi_object SET last_updated_ms = ?, published = ?, data = ?, updated_at = ?, revision = revision + 1 WHERE ${where} AND revision = ?`,
        [
          Date.parse(next.last_updated),
          visibilityOf(next),
          JSON.stringify(next),
          Date.now(),
          ...keyParams,
          Number(row.revision),
        ],
      );
      if (changed === 1) {
        this.written(key);
        return next;
      }
    }
    throw new ConcurrentUpdateError(
      `${this.module} ${key.country_code}-${key.party_id}-${key.id} kept changing for ${UPDATE_BUDGET_MS} ms of attempts`,
    );
  }

  remove(key: ObjectKey): Promise<void> {
    return this.inTurn(key, async () => {
      this.clearPages(key);
      await this.sql.run(
        'DELETE FROM ocpi_object WHERE module = ? AND country_code = ? AND party_id = ? AND object_id = ?',
        [this.module, key.country_code, key.party_id, key.id],
      );
      this.written(key);
    });
  }

  /**
   * One page of the objects of `parties` (all parties when omitted), in the order we first stored
   * them (OCPI transport_and_format, Paginated Response: oldest by creation date, not by
   * `last_updated`, first), so that paging is stable while objects are added or change (m0028);
   * newest `last_updated` first if `opts` asks.
   */
  async list(window: ListWindow, parties?: readonly PartyIdentity[], opts: ListOptions = {}): Promise<Page<T>> {
    const filter = this.filter(window, parties, opts);
    if (!filter) return { items: [], total: 0 };
    const { clause, params } = filter;
    const order = opts.newestFirst
      ? 'last_updated_ms DESC, object_id DESC, country_code DESC, party_id DESC'
      : 'created_ms, object_id, country_code, party_id';
    const [countRows, rows] = await Promise.all([
      this.sql.query(`SELECT COUNT(*) AS n FROM ocpi_object WHERE ${clause}`, params),
      this.sql.query(`SELECT data FROM ocpi_object WHERE ${clause} ORDER BY ${order} LIMIT ? OFFSET ?`, [
        ...params,
        window.limit,
        window.offset,
      ]),
    ]);
    return { items: rows.map((r) => this.fromRow(r.data)), total: Number(countRows[0]?.n ?? 0) };
  }

  /**
   * The keys of every object `list` would page through (oldest `last_updated` first; the order is
   * not relied on): a snapshot to walk one object at a time while the objects change.
   */
  async keys(parties?: readonly PartyIdentity[], opts: ListOptions = {}): Promise<ObjectKey[]> {
    const filter = this.filter({}, parties, opts);
    if (!filter) return [];
    const rows = await this.sql.query(
      `SELECT country_code, party_id, object_id FROM ocpi_object WHERE ${filter.clause} ORDER BY last_updated_ms, object_id, country_code, party_id`,
      filter.params,
    );
    return rows.map((r) => ({
      country_code: String(r.country_code),
      party_id: String(r.party_id),
      id: String(r.object_id),
    }));
  }

  /** The WHERE clause of a list; undefined when it cannot match (no parties). */
  private filter(
    window: Pick<ListWindow, 'from' | 'to'>,
    parties: readonly PartyIdentity[] | undefined,
    opts: ListOptions,
  ): { clause: string; params: unknown[] } | undefined {
    const where: string[] = ['module = ?'];
    const params: unknown[] = [this.module];
    if (opts.publishedOnly === 'public') where.push('published = 1');
    else if (opts.publishedOnly === 'allowed-to') where.push('published IN (1, 2)');
    if (opts.audience) {
      where.push('audience = ?');
      params.push(scopeOf(opts.audience));
    }
    if (parties) {
      if (parties.length === 0) return undefined;
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
    return { clause: where.join(' AND '), params };
  }

  /**
   * One page rendered with `render` (named by `renderName`) and serialized: the hot path of the
   * list endpoints (docs/PERFORMANCE.md). Pages are reused for `pageCacheMs`.
   */
  async renderedList(
    window: ListWindow,
    parties: readonly PartyIdentity[] | undefined,
    renderName: string,
    render: PageRenderer<T>,
    opts: ListOptions = {},
  ): Promise<RenderedPage> {
    const scopes = parties?.map(scopeOf);
    const partiesKey = scopes ? scopes.join(',') : '*';
    const audience = opts.audience ? scopeOf(opts.audience) : '';
    const key = `${renderName}|${opts.publishedOnly ?? 'all'}|${audience}|${window.from ?? ''}|${window.to ?? ''}|${window.offset}|${window.limit}|${opts.newestFirst ? 'desc' : 'asc'}`;
    const now = Date.now();
    const cached = this.groups.get(partiesKey)?.pages.get(key);
    if (cached && cached.expiresAt > now) return cached;
    const page = await this.list(window, parties, opts);
    const rendered: CachedPage = {
      json: Buffer.from(JSON.stringify(await render(page.items))),
      total: page.total,
      expiresAt: now + this.pageCacheMs,
    };
    this.keepPage(partiesKey, scopes, key, rendered);
    return rendered;
  }

  private keepPage(partiesKey: string, scopes: string[] | undefined, key: string, page: CachedPage): void {
    // bounded: many distinct filters must not grow the cache without end
    if (this.pageCount >= MAX_PAGES) this.clearPages();
    let group = this.groups.get(partiesKey);
    if (!group) {
      group = { parties: scopes ? new Set(scopes) : undefined, pages: new Map() };
      this.groups.set(partiesKey, group);
    }
    if (!group.pages.has(key)) this.pageCount++;
    group.pages.set(key, page);
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
