import type { SqlRunner } from '../../db/sql.js';
import type { PartnerProjection, PartnerRecord } from '../../../actors/partner/ports.js';
import { catchUpEmsp, catchUpOwnObjects, catchUpOwnTokens } from '../outbox/catch-up.js';

/**
 * The partner actor's projections (its deps.projection): `ocpi_partner` for the operator's lists
 * (partners.ts), `ocpi_partner_token` for the per-request token lookup (auth.ts) and
 * `ocpi_partner_party` for the other parties a platform's token speaks for, rewritten
 * from the actor's state in its turn's fenced transaction.
 */
export function partnerProjection(own: { country_code: string; party_id: string }): PartnerProjection {
  return {
    async write(tx: SqlRunner, s: PartnerRecord): Promise<void> {
      const [before] = await tx.query('SELECT status FROM ocpi_partner WHERE id = ?', [s.id]);
      await writeRows(tx, s);
      // a link that becomes registered is sent what its parties missed while none was: its eMSP
      // parties our sessions, CDRs, locations and tariffs, its CPO parties our tokens
      if (s.status === 'registered' && before?.status !== 'registered') {
        const parties = partiesOf(s, 'EMSP');
        const key = `${s.country_code}-${s.party_id}`;
        await catchUpEmsp(tx, own, key, parties);
        if (parties.length > 0) await catchUpOwnObjects(tx, own, key);
        if (partiesOf(s, 'CPO').length > 0) await catchUpOwnTokens(tx, own, key);
      }
    },
  };
}

/** The parties of `role` a link speaks for: its own when it is of that role, and the others it names. */
function partiesOf(s: PartnerRecord, role: 'EMSP' | 'CPO'): Array<{ country_code: string; party_id: string }> {
  const own = s.role === role ? [{ country_code: s.country_code, party_id: s.party_id }] : [];
  return [...own, ...(s.parties ?? []).filter((p) => p.role === role)];
}

async function writeRows(tx: SqlRunner, s: PartnerRecord): Promise<void> {
  await tx.run(
    `INSERT INTO ocpi_partner (id, country_code, party_id, role, status, versions_url, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET role = excluded.role, status = excluded.status, versions_url = excluded.versions_url,
       version = excluded.version, updated_at = excluded.updated_at`,
    [s.id, s.country_code, s.party_id, s.role, s.status, s.versions_url, s.version, s.created_at, s.updated_at],
  );
  await tx.run('DELETE FROM ocpi_partner_token WHERE partner_id = ?', [s.id]);
  for (const t of s.tokens) {
    await tx.run(
      'INSERT INTO ocpi_partner_token (token_hash, partner_id, country_code, party_id, role, kind, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [t.hash, s.id, s.country_code, s.party_id, s.role, t.kind, s.updated_at],
    );
  }
  await tx.run('DELETE FROM ocpi_partner_party WHERE partner_id = ?', [s.id]);
  for (const p of s.parties ?? []) {
    await tx.run('INSERT INTO ocpi_partner_party (country_code, party_id, role, partner_id) VALUES (?, ?, ?, ?)', [
      p.country_code,
      p.party_id,
      p.role,
      s.id,
    ]);
  }
}
