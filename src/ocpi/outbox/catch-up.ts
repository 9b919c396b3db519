import type { SqlRunner } from '../../db/sql.js';
import { enqueue } from './outbox-store.js';

type Party = { country_code: string; party_id: string };

/** How far back a link that becomes registered is sent what it missed, and at most how many sessions. */
export const CATCH_UP_DAYS = 30;
export const CATCH_UP_MAX = 10_000;

/**
 * What an eMSP link that becomes registered (a first registration, or again after its credentials
 * DELETE or our unregister) missed of its parties' sessions on our chargers: nothing is queued for
 * a party no registered link speaks for, so a session that ended while the link was down had its
 * COMPLETED push and its CDR lost, and a push-only eMSP never billed it (docs/ROAMING.md "The
 * outbox"). Queued now, in the turn that registers it: the PUT of each running session, and of
 * each ended one whose CDR this link was never sent, with that CDR after it (built when sent, if
 * it is not yet), and the credit CDRs it was never sent. Sessions changed in the last
 * CATCH_UP_DAYS, at most CATCH_UP_MAX, newest first; older ones the eMSP pulls. Answers how many
 * sessions were queued.
 */
export async function catchUpEmsp(
  tx: SqlRunner,
  own: Party,
  partnerKey: string,
  parties: readonly Party[],
): Promise<number> {
  if (parties.length === 0) return 0;
  const scopes = parties.map((p) => `${p.country_code}-${p.party_id}`);
  const rows = await tx.query(
    `SELECT o.object_id AS id, o.audience, s.status FROM ocpi_object o JOIN csms_session s ON s.id = o.object_id
     WHERE o.module = 'sessions' AND o.country_code = ? AND o.party_id = ?
       AND o.audience IN (${scopes.map(() => '?').join(', ')}) AND o.last_updated_ms >= ?
       AND (s.status = 'ACTIVE' OR NOT EXISTS (SELECT 1 FROM roaming_cdr_delivery d
         WHERE d.cdr_id = o.object_id AND d.partner_key = ?))
     ORDER BY o.last_updated_ms DESC LIMIT ?`,
    [own.country_code, own.party_id, ...scopes, Date.now() - CATCH_UP_DAYS * 86_400_000, partnerKey, CATCH_UP_MAX],
  );
  // queued oldest first; each CDR waits for its session's push (OutboxStore.due)
  for (const r of rows.reverse()) {
    const [country_code = '', party_id = ''] = String(r.audience).split('-');
    const to = { country_code, party_id };
    const id = String(r.id);
    await enqueue(tx, { partner_key: partnerKey }, { kind: 'session', session_id: id, to });
    if (r.status !== 'ACTIVE') await enqueue(tx, { partner_key: partnerKey }, { kind: 'cdr', cdr_id: id, to });
  }
  await catchUpCredits(tx, own, partnerKey, scopes);
  return rows.length;
}

/**
 * The credit CDRs of those parties (roaming/credit.ts: `published` 2, no session of their own)
 * this link was never sent, of the last CATCH_UP_DAYS, queued after the sessions' rows: each is
 * sent once the CDR it credits has reached the partner (courier.ts `creditWaits`).
 */
async function catchUpCredits(tx: SqlRunner, own: Party, partnerKey: string, scopes: string[]): Promise<void> {
  const credits = await tx.query(
    `SELECT o.object_id AS id, o.audience FROM ocpi_object o
     WHERE o.module = 'cdrs' AND o.country_code = ? AND o.party_id = ? AND o.published = 2
       AND o.audience IN (${scopes.map(() => '?').join(', ')}) AND o.last_updated_ms >= ?
       AND NOT EXISTS (SELECT 1 FROM roaming_cdr_delivery d WHERE d.cdr_id = o.object_id AND d.partner_key = ?)
     ORDER BY o.last_updated_ms LIMIT ?`,
    [own.country_code, own.party_id, ...scopes, Date.now() - CATCH_UP_DAYS * 86_400_000, partnerKey, CATCH_UP_MAX],
  );
  for (const r of credits) {
    const [country_code = '', party_id = ''] = String(r.audience).split('-');
    await enqueue(
      tx,
      { partner_key: partnerKey },
      { kind: 'cdr', cdr_id: String(r.id), to: { country_code, party_id } },
    );
  }
}

/**
 * What an eMSP link that becomes registered missed of our own locations and tariffs: an EVSE's
 * status PATCH, a location's or tariff's PUT, was queued for no link while none was registered,
 * so an eMSP registered again showed a charger busy that had long been free until it pulled
 * (docs/ROAMING.md "The outbox"). Queued now, in the turn that registers it: the PUT of each of our
 * locations and tariffs changed in the last CATCH_UP_DAYS (an EVSE's status moves its location's
 * `last_updated`), at most CATCH_UP_MAX, oldest first; a location the partner's version does not
 * serve (unpublished) is skipped when sent. Answers how many were queued.
 */
export async function catchUpOwnObjects(tx: SqlRunner, own: Party, partnerKey: string): Promise<number> {
  const rows = await tx.query(
    `SELECT module, object_id AS id FROM ocpi_object
     WHERE module IN ('locations', 'tariffs') AND country_code = ? AND party_id = ? AND last_updated_ms >= ?
     ORDER BY last_updated_ms DESC LIMIT ?`,
    [own.country_code, own.party_id, Date.now() - CATCH_UP_DAYS * 86_400_000, CATCH_UP_MAX],
  );
  for (const r of rows.reverse()) {
    const id = String(r.id);
    await enqueue(
      tx,
      { partner_key: partnerKey },
      r.module === 'locations' ? { kind: 'location', location_id: id } : { kind: 'tariff', tariff_id: id },
    );
  }
  return rows.length;
}

/**
 * What a CPO link that becomes registered missed of our own tokens: a token's PUT (a card the
 * eMSP blocked) was queued for no link while none was registered, so a CPO registered again kept
 * authorizing a card we had blocked (mod_tokens: every change of a token is sent to the CPO).
 * Queued now, in the turn that registers it: the PUT of each of our tokens written in the last
 * CATCH_UP_DAYS (by when we stored it: the operator's PUT may carry an older `last_updated`), at
 * most CATCH_UP_MAX, oldest first; older ones the CPO pulls from our tokens Sender. Answers how
 * many were queued.
 */
export async function catchUpOwnTokens(tx: SqlRunner, own: Party, partnerKey: string): Promise<number> {
  const rows = await tx.query(
    `SELECT object_id AS id, data FROM ocpi_object
     WHERE module = 'tokens' AND country_code = ? AND party_id = ? AND updated_at >= ?
     ORDER BY updated_at DESC LIMIT ?`,
    [own.country_code, own.party_id, Date.now() - CATCH_UP_DAYS * 86_400_000, CATCH_UP_MAX],
  );
  let queued = 0;
  for (const r of rows.reverse()) {
    const type = tokenType(r.data);
    if (type === undefined) continue;
    await enqueue(tx, { partner_key: partnerKey }, { kind: 'token', uid: String(r.id), type });
    queued++;
  }
  return queued;
}

/** A stored token's `type` (its data is JSON text, or parsed already by the driver). */
function tokenType(data: unknown): string | undefined {
  try {
    const o: unknown = typeof data === 'string' ? JSON.parse(data) : data;
    const type = o !== null && typeof o === 'object' && 'type' in o ? o.type : undefined;
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}
