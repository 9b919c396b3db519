import type { Database } from '../db/database.js';
import type { WriteStep } from '../db/merged-write.js';
import type { SqlRunner } from '../db/sql.js';
import { TOKEN_COUNTS } from '../ocpi/tokens/counting.js';
import {
  ID_TAG_PATTERN,
  LOCAL_LIST_MESSAGE_MAX,
  type ChargerCommand,
  type LocalListEntry,
  type ProtocolName,
} from '../ocpp/domain.js';

/**
 * Chargers' local authorization lists (docs/CSMS.md "Local authorization list"): what each charger
 * holds (m0017, written when it accepts an update), the list it should hold (the RFID tokens the
 * platform knows that may be used offline), and the SendLocalList updates between the two.
 */

type SendLocalList = Extract<ChargerCommand, { kind: 'send-local-list' }>;
type Update = Omit<SendLocalList, 'kind'>;

/** The longest OCPP 1.6 idTag (CiString20): a longer uid cannot be in a 1.6 charger's list. */
export const ID_TAG_16_MAX = 20;

/** The list a charger of `protocol` can hold of the `tokens` wanted. */
export function wantedFor(protocol: ProtocolName, tokens: LocalListEntry[]): LocalListEntry[] {
  return protocol === 'ocpp1.6' ? tokens.filter((e) => e.id_tag.length <= ID_TAG_16_MAX) : tokens;
}

/** What a charger holds, as its last accepted update left it; `version` null: not known. */
export interface HeldList {
  version: number | null;
  entries: Map<string, LocalListEntry>;
}

/** An entry's content as compared between the held and the wanted list. */
const sameEntry = (a: LocalListEntry, b: LocalListEntry): boolean =>
  a.status === b.status &&
  (a.type ?? 'ISO14443') === (b.type ?? 'ISO14443') &&
  (a.expiry ?? null) === (b.expiry ?? null) &&
  (a.group_id ?? null) === (b.group_id ?? null);

/** `entries` in messages of at most LOCAL_LIST_MESSAGE_MAX, numbered on from `after`. */
function chunked(entries: LocalListEntry[], after: number, first: Update['update']): Update[] {
  const updates: Update[] = [];
  for (let i = 0; i === 0 || i < entries.length; i += LOCAL_LIST_MESSAGE_MAX) {
    updates.push({
      version: after + updates.length + 1,
      update: i === 0 ? first : 'differential',
      entries: entries.slice(i, i + LOCAL_LIST_MESSAGE_MAX),
    });
  }
  return updates;
}

/**
 * The updates that turn `held` into `wanted`: nothing when they agree; a differential update
 * (changed and new id tags, removed ones with a null status) from a known version; a full one when
 * the version is not known or `full` is asked. Each message carries at most LOCAL_LIST_MESSAGE_MAX
 * id tags: a longer full list is a full update followed by differential ones.
 */
export function localListUpdates(held: HeldList, wanted: LocalListEntry[], full = false): Update[] {
  if (full || held.version === null) return chunked(wanted, held.version ?? 0, 'full');
  const changes: LocalListEntry[] = [];
  const names = new Set<string>();
  for (const entry of wanted) {
    names.add(entry.id_tag);
    const had = held.entries.get(entry.id_tag);
    if (!had || !sameEntry(had, entry)) changes.push(entry);
  }
  for (const [idTag, had] of held.entries) {
    if (!names.has(idTag)) changes.push({ id_tag: idTag, ...(had.type ? { type: had.type } : {}), status: null });
  }
  return changes.length === 0 ? [] : chunked(changes, held.version, 'differential');
}

const ENTRY_TYPES = ['Central', 'eMAID', 'ISO14443', 'ISO15693', 'KeyCode', 'Local', 'MacAddress'] as const;
const STATUSES = ['Accepted', 'Blocked', 'Expired', 'Invalid'] as const;
const oneOrUndefined = <T extends string>(values: readonly T[], v: unknown): T | undefined =>
  values.find((x) => x === v);

/** The held lists, for /v1 and the updates. */
export class LocalListStore {
  constructor(private readonly db: Database) {}

  async held(chargePointId: string): Promise<HeldList> {
    const [head] = await this.db.execute('SELECT version FROM csms_local_list WHERE charge_point_id = ?', [
      chargePointId,
    ]);
    const rows = await this.db.execute(
      'SELECT id_tag, id_type, status, expiry, group_id FROM csms_local_list_entry WHERE charge_point_id = ? ORDER BY id_tag',
      [chargePointId],
    );
    const entries = new Map<string, LocalListEntry>();
    for (const r of rows) {
      const idTag = String(r.id_tag);
      const type = oneOrUndefined(ENTRY_TYPES, r.id_type);
      const expiry = r.expiry === null || r.expiry === undefined ? undefined : String(r.expiry);
      const group = r.group_id === null || r.group_id === undefined ? undefined : String(r.group_id);
      entries.set(idTag, {
        id_tag: idTag,
        ...(type ? { type } : {}),
        status: oneOrUndefined(STATUSES, r.status) ?? 'Invalid',
        ...(expiry ? { expiry } : {}),
        ...(group ? { group_id: group } : {}),
      });
    }
    return { version: head ? Number(head.version) : null, entries };
  }
}

/** The writes of the charger's answer to a SendLocalList, in the actor's turn. */
export const localListWrites = {
  /**
   * Accepted: the update is the charger's list now. VersionMismatch or Failed: what it holds is
   * not known any more, so the next update is a full one. NotSupported, a timeout, no answer:
   * nothing is known to have changed.
   */
  answered(chargePointId: string, update: Update, status: string): WriteStep | undefined {
    if (status === 'VersionMismatch' || status === 'Failed')
      return async (tx: SqlRunner) => {
        await tx.run('DELETE FROM csms_local_list WHERE charge_point_id = ?', [chargePointId]);
      };
    if (status !== 'Accepted') return undefined;
    return async (tx: SqlRunner) => {
      if (update.update === 'full')
        await tx.run('DELETE FROM csms_local_list_entry WHERE charge_point_id = ?', [chargePointId]);
      for (const e of update.entries) {
        if (e.status === null) {
          await tx.run('DELETE FROM csms_local_list_entry WHERE charge_point_id = ? AND id_tag = ?', [
            chargePointId,
            e.id_tag,
          ]);
          continue;
        }
        await tx.run(
          `INSERT INTO csms_local_list_entry (charge_point_id, id_tag, id_type, status, expiry, group_id) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (charge_point_id, id_tag) DO UPDATE SET id_type = excluded.id_type, status = excluded.status,
             expiry = excluded.expiry, group_id = excluded.group_id`,
          [chargePointId, e.id_tag, e.type ?? 'ISO14443', e.status, e.expiry ?? null, e.group_id ?? null],
        );
      }
      await tx.run(
        `INSERT INTO csms_local_list (charge_point_id, version, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (charge_point_id) DO UPDATE SET version = excluded.version, updated_at = excluded.updated_at`,
        [chargePointId, update.version, Date.now()],
      );
    };
  },
};

const GROUP_TEXT = new RegExp(ID_TAG_PATTERN);
const TOKEN_PAGE = 1000;
/** how many tokens one build of the wanted list reads at most */
const TOKEN_SCAN_MAX = 200_000;

/** A token row as the local list reads it. */
type TokenRow = Record<string, unknown>;

/**
 * The entries of a local list as token rows are considered, at most `max`: when parties hold the
 * same uid (in any letter case) the token an Authorize takes is kept, a valid one before one that
 * is not, then the one stored first (src/roaming/bridge.ts).
 */
class WantedEntries {
  readonly entries: LocalListEntry[] = [];
  /** the entry of each uid read (lower case), and what it is weighed by */
  private readonly seen = new Map<string, { at: number; valid: boolean; created: number }>();

  constructor(
    private readonly own: { country_code: string; party_id: string },
    private readonly max: number,
  ) {}

  get full(): boolean {
    return this.entries.length >= this.max;
  }

  /** Takes the row's token into the list when it belongs there; answers whether it added an entry. */
  consider(row: TokenRow): boolean {
    const uid = String(row.object_id);
    // written by the tokens store from a checked 2.2.1 Token
    const t = JSON.parse(String(row.data)) as {
      type?: unknown;
      valid?: unknown;
      whitelist?: unknown;
      group_id?: unknown;
    };
    const ours = row.country_code === this.own.country_code && row.party_id === this.own.party_id;
    if (t.type !== 'RFID' || (!ours && t.whitelist === 'NEVER') || uid.length > 36) return false;
    // a group an id tag field cannot carry (OCPI allows other characters) is not sent
    const group =
      typeof t.group_id === 'string' && t.group_id.length <= 36 && GROUP_TEXT.test(t.group_id) ? t.group_id : undefined;
    const entry: LocalListEntry = {
      id_tag: uid,
      type: 'ISO14443',
      status: t.valid === true ? 'Accepted' : 'Blocked',
      ...(group === undefined ? {} : { group_id: group }),
    };
    const weight = { valid: t.valid === true, created: Number(row.created_ms) };
    const held = this.seen.get(uid.toLowerCase());
    if (held !== undefined) {
      // another token of a uid listed takes its place when an Authorize would take it
      const first = weight.valid !== held.valid ? weight.valid : weight.created < held.created;
      if (first) {
        this.entries[held.at] = entry;
        this.seen.set(uid.toLowerCase(), { ...weight, at: held.at });
      }
      return false;
    }
    if (this.full) return false;
    this.seen.set(uid.toLowerCase(), { ...weight, at: this.entries.length });
    this.entries.push(entry);
    return true;
  }
}

/** The counting tokens of one party, newest first, a page at a time; undefined once read out. */
function partyTokens(
  db: Database,
  own: { country_code: string; party_id: string },
  party: { country_code: string; party_id: string },
): () => Promise<TokenRow | undefined> {
  let page: TokenRow[] = [];
  let offset = 0;
  let done = false;
  return async () => {
    if (page.length === 0 && !done) {
      page = await db.execute(
        `SELECT o.country_code, o.party_id, o.object_id, o.data, o.created_ms FROM ocpi_object o WHERE o.module = 'tokens'
           AND o.country_code = ? AND o.party_id = ? AND ${TOKEN_COUNTS}
         ORDER BY o.last_updated_ms DESC, o.object_id LIMIT ? OFFSET ?`,
        [party.country_code, party.party_id, own.country_code, own.party_id, TOKEN_PAGE, offset],
      );
      offset += TOKEN_PAGE;
      done = page.length < TOKEN_PAGE;
    }
    return page.shift();
  };
}

/**
 * The list chargers should hold: RFID tokens, all of ours and those eMSPs pushed with a whitelist
 * other than NEVER (OCPI lets a CPO accept those without asking), at most `max`. A valid token is
 * Accepted, any other Blocked, so that a card withdrawn since is refused offline too. Ours come
 * first, newest first; then the eMSPs' in turns, one entry of each party at a time, each party's
 * newest first: one eMSP's tokens cannot push ours or another eMSP's out of the list (before, the
 * list was the newest `max` of all, and an eMSP that pushed `max` tokens stamped 2099 filled it).
 * The token an Authorize takes is listed for a uid several parties hold (WantedEntries); the
 * tokens of an eMSP whose link ended are left out (src/ocpi/tokens/counting.ts).
 */
export async function wantedLocalList(
  db: Database,
  own: { country_code: string; party_id: string },
  max: number,
): Promise<LocalListEntry[]> {
  const wanted = new WantedEntries(own, max);
  const parties = (await db.execute(
    `SELECT DISTINCT o.country_code, o.party_id FROM ocpi_object o WHERE o.module = 'tokens' AND ${TOKEN_COUNTS}
     ORDER BY o.country_code, o.party_id`,
    [own.country_code, own.party_id],
  )) as Array<{ country_code: string; party_id: string }>;
  const isOurs = (p: { country_code: string; party_id: string }) =>
    p.country_code === own.country_code && p.party_id === own.party_id;
  let scanned = 0;
  const ours = partyTokens(db, own, own);
  for (let row = await ours(); row && !wanted.full && scanned < TOKEN_SCAN_MAX; row = await ours(), scanned++)
    wanted.consider(row);
  let turns = parties.filter((p) => !isOurs(p)).map((p) => partyTokens(db, own, p));
  while (turns.length > 0 && !wanted.full && scanned < TOKEN_SCAN_MAX) {
    const next: typeof turns = [];
    // a turn is one entry added: tokens the list leaves out (NEVER, a uid another party's token
    // holds) do not use up a party's turn
    for (const read of turns) {
      let row = await read();
      for (; row && scanned < TOKEN_SCAN_MAX; row = await read()) {
        scanned++;
        if (wanted.consider(row) || wanted.full) break;
      }
      if (row) next.push(read);
    }
    turns = next;
  }
  return wanted.entries;
}
