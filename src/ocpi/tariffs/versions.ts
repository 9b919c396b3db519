import type { PartyIdentity } from '../core/auth.js';
import type { ObjectSql } from '../store/object-store.js';
import type { Tariff } from './schemas-2.2.1.js';

/** Versions of a tariff kept, the newest first: older ones go. */
const KEPT = 20;

const KEY = 'country_code = ? AND party_id = ? AND tariff_id = ?';

/**
 * The versions of tariffs by their `last_updated` (`ocpi_tariff_version`, m0026): of those partner
 * CPOs pushed us, so that a CDR of a session that started before a tariff's last update is checked
 * with the version in force at its start (docs/TARIFFS.md "Re-pricing received CDRs"); and of our
 * own, so that a roamed session whose start reaches us after an update is priced with the version
 * of its start (docs/ROAMING.md "Tariff and place at the start").
 */
export class TariffVersions {
  constructor(private readonly sql: ObjectSql) {}

  /** Keeps `tariff` as the version of its `last_updated` (the newest KEPT of the tariff stay). */
  async keep(party: PartyIdentity, tariff: Tariff): Promise<void> {
    const at = Date.parse(tariff.last_updated);
    if (!Number.isFinite(at)) return;
    const key = [party.country_code, party.party_id, tariff.id];
    await this.sql.run(
      `INSERT INTO ocpi_tariff_version (country_code, party_id, tariff_id, last_updated_ms, data) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (country_code, party_id, tariff_id, last_updated_ms) DO UPDATE SET data = excluded.data`,
      [...key, at, JSON.stringify(tariff)],
    );
    await this.sql.run(
      `DELETE FROM ocpi_tariff_version WHERE ${KEY} AND last_updated_ms < (SELECT MIN(last_updated_ms) FROM
         (SELECT last_updated_ms FROM ocpi_tariff_version WHERE ${KEY} ORDER BY last_updated_ms DESC LIMIT ?) newest)`,
      [...key, ...key, KEPT],
    );
  }

  /** The newest version kept of tariff `id` (of a tariff deleted since too), if one is. */
  async newest(party: PartyIdentity, id: string): Promise<Tariff | undefined> {
    return this.inForceAt(party, id, Number.MAX_SAFE_INTEGER);
  }

  /** The version of tariff `id` last updated at or before `at` (epoch ms), if one is kept. */
  async inForceAt(party: PartyIdentity, id: string, at: number): Promise<Tariff | undefined> {
    const rows = await this.sql.query(
      `SELECT data FROM ocpi_tariff_version WHERE ${KEY} AND last_updated_ms <= ?
       ORDER BY last_updated_ms DESC LIMIT 1`,
      [party.country_code, party.party_id, id, at],
    );
    const data = rows[0]?.data;
    // written by `keep` only, as JSON.stringify of a Tariff that passed its schema
    return data === undefined || data === null ? undefined : (JSON.parse(String(data)) as Tariff);
  }
}
