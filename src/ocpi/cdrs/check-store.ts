import type { Database } from '../../db/database.js';
import type { Row } from '../../db/sql.js';
import type { PartyIdentity } from '../core/auth.js';
import type { ObjectKey } from '../store/object-store.js';
import { CHECK_STATUSES, type Amounts, type CdrCheck, type CheckDetail, type CheckStatus } from './check.js';

/** The rows of `ocpi_cdr_check` (m0012): one re-pricing per received CDR. */

/** A check as the operator's list shows it: without how it was priced (`detail`). */
export type CheckSummary = Omit<CdrCheck, 'detail'> & { tariff_id: string | undefined };

export interface CheckFilter {
  status?: CheckStatus;
  offset: number;
  limit: number;
}

const SUMMARY_COLUMNS = `country_code, party_id, cdr_id, version, status, currency, tariff_id, theirs_excl_vat,
  theirs_incl_vat, ours_excl_vat, ours_incl_vat, diff_excl_vat, diff_incl_vat, reason, checked_at`;

const KEY = 'country_code = ? AND party_id = ? AND cdr_id = ?';

const keyParams = (key: ObjectKey): string[] => [key.country_code, key.party_id, key.id];

const optional = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));

function amounts(excl: unknown, incl: unknown): Amounts | undefined {
  const excl_vat = optional(excl);
  if (excl_vat === undefined) return undefined;
  const incl_vat = optional(incl);
  return incl_vat === undefined ? { excl_vat } : { excl_vat, incl_vat };
}

function toSummary(r: Row): CheckSummary {
  const ours = amounts(r.ours_excl_vat, r.ours_incl_vat);
  const difference = amounts(r.diff_excl_vat, r.diff_incl_vat);
  return {
    key: { country_code: String(r.country_code), party_id: String(r.party_id), id: String(r.cdr_id) },
    version: r.version === '2.1.1' ? '2.1.1' : '2.2.1',
    status: CHECK_STATUSES.find((s) => s === r.status) ?? 'unpriced',
    currency: String(r.currency),
    tariff_id: r.tariff_id === null || r.tariff_id === undefined ? undefined : String(r.tariff_id),
    theirs: amounts(r.theirs_excl_vat, r.theirs_incl_vat) ?? { excl_vat: 0 },
    // both amounts (the engine's total_cost), or as the CDR a credit CDR credits has them
    ...(ours ? { ours } : {}),
    ...(difference ? { difference } : {}),
    ...(r.reason === null || r.reason === undefined ? {} : { reason: String(r.reason) }),
    checked_at: Number(r.checked_at),
  };
}

/**
 * A row's `detail` as it was written. No check: only `save` below writes it, as JSON.stringify
 * of a CheckDetail we built (as object-store.ts reads its own rows).
 */
function detailOf(json: unknown): CheckDetail {
  return JSON.parse(String(json)) as CheckDetail;
}

export class CdrCheckStore {
  constructor(private readonly db: Database) {}

  /** The status of the CDR's check; undefined when it has none. */
  async statusOf(key: ObjectKey): Promise<CheckStatus | undefined> {
    const rows = await this.db.sql.query(`SELECT status FROM ocpi_cdr_check WHERE ${KEY}`, keyParams(key));
    const status = rows[0]?.status;
    return status === undefined ? undefined : (CHECK_STATUSES.find((s) => s === status) ?? 'unpriced');
  }

  /**
   * The CDRs of a party left unpriced that name `tariffId` (the tariff_id column: on an unpriced
   * check, the tariff used or the one it waits for), at most `limit`, oldest check first.
   */
  async unpricedNaming(party: PartyIdentity, tariffId: string, limit: number): Promise<ObjectKey[]> {
    const rows = await this.db.sql.query(
      `SELECT country_code, party_id, cdr_id FROM ocpi_cdr_check
       WHERE country_code = ? AND party_id = ? AND status = ? AND tariff_id = ?
       ORDER BY checked_at, cdr_id LIMIT ?`,
      [party.country_code, party.party_id, 'unpriced', tariffId, limit],
    );
    return rows.map((r) => ({
      country_code: String(r.country_code),
      party_id: String(r.party_id),
      id: String(r.cdr_id),
    }));
  }

  /** Inserts the check of a CDR, or replaces an earlier one. */
  async save(c: CdrCheck): Promise<void> {
    const values = [
      ...keyParams(c.key),
      c.version,
      c.status,
      c.currency,
      c.detail.tariff?.id ?? null,
      c.theirs.excl_vat,
      c.theirs.incl_vat ?? null,
      c.ours?.excl_vat ?? null,
      c.ours?.incl_vat ?? null,
      c.difference?.excl_vat ?? null,
      c.difference?.incl_vat ?? null,
      c.reason ?? null,
      JSON.stringify(c.detail),
      c.checked_at,
    ];
    await this.db.group.run((tx) =>
      tx.run(
        `INSERT INTO ocpi_cdr_check (${SUMMARY_COLUMNS.replace('checked_at', 'detail, checked_at')})
         VALUES (${values.map(() => '?').join(', ')})
         ON CONFLICT (country_code, party_id, cdr_id) DO UPDATE SET version = excluded.version,
         status = excluded.status, currency = excluded.currency, tariff_id = excluded.tariff_id,
         theirs_excl_vat = excluded.theirs_excl_vat, theirs_incl_vat = excluded.theirs_incl_vat,
         ours_excl_vat = excluded.ours_excl_vat, ours_incl_vat = excluded.ours_incl_vat,
         diff_excl_vat = excluded.diff_excl_vat, diff_incl_vat = excluded.diff_incl_vat,
         reason = excluded.reason, detail = excluded.detail, checked_at = excluded.checked_at`,
        values,
      ),
    );
  }

  async get(key: ObjectKey): Promise<CdrCheck | undefined> {
    const rows = await this.db.sql.query(
      `SELECT ${SUMMARY_COLUMNS}, detail FROM ocpi_cdr_check WHERE ${KEY}`,
      keyParams(key),
    );
    const row = rows[0];
    if (!row) return undefined;
    const { tariff_id: _tariffId, ...summary } = toSummary(row);
    return { ...summary, detail: detailOf(row.detail) };
  }

  /** One page, newest first. */
  async list(filter: CheckFilter): Promise<{ items: CheckSummary[]; total: number }> {
    const where = filter.status ? 'WHERE status = ?' : '';
    const params = filter.status ? [filter.status] : [];
    const [count, rows] = await Promise.all([
      this.db.sql.query(`SELECT COUNT(*) AS n FROM ocpi_cdr_check ${where}`, params),
      this.db.sql.query(
        `SELECT ${SUMMARY_COLUMNS} FROM ocpi_cdr_check ${where}
         ORDER BY checked_at DESC, country_code, party_id, cdr_id LIMIT ? OFFSET ?`,
        [...params, filter.limit, filter.offset],
      ),
    ]);
    return { items: rows.map(toSummary), total: Number(count[0]?.n ?? 0) };
  }
}
