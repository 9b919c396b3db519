import type { Database, Row } from '../db/database.js';
import type { WriteStep } from '../db/merged-write.js';
import type { SqlRunner } from '../db/sql.js';
import type { ProtocolName, RegistrationStatus } from '../ocpp/domain.js';
import { storedStates } from '../runtime/stored-states.js';
import { summarizeState, type RegistryFacts, type VersionedSummary } from './fleet.js';

export interface ChargePointRow {
  id: string;
  protocol: ProtocolName;
  key_hash: string;
  created_at: number;
  /** the operator's boot policy for this charger; null: OCPP_BOOT_POLICY */
  boot_policy: RegistrationStatus | null;
  /** a new password sent to the charger, its outcome not known yet: valid for login too (docs/CSMS.md "Passwords") */
  pending_key_hash: string | null;
  pending_since: number | null;
  /** when key_hash last changed; null: the password of the registration */
  key_changed_at: number | null;
  /** when the charger's last OCPP frame was stored (epoch ms; docs/CSMS.md "Last seen"); null: never */
  last_seen_at: number | null;
}

const COLUMNS =
  'id, protocol, key_hash, created_at, boot_policy, pending_key_hash, pending_since, key_changed_at, last_seen_at';
/** a charger's row by id: every connect reads it (made once, as the executors key statements by text) */
const FIND_ONE = `SELECT ${COLUMNS} FROM csms_charge_point WHERE id = ?`;

export class DuplicateChargePointError extends Error {
  override readonly name = 'DuplicateChargePointError';
  readonly code = 'DUPLICATE_CHARGE_POINT';
}

const numberOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function toRow(r: Row): ChargePointRow {
  return {
    id: String(r.id),
    protocol: r.protocol === 'ocpp2.0.1' ? 'ocpp2.0.1' : 'ocpp1.6',
    key_hash: String(r.key_hash),
    created_at: Number(r.created_at),
    boot_policy:
      r.boot_policy === 'Accepted' || r.boot_policy === 'Pending' || r.boot_policy === 'Rejected'
        ? r.boot_policy
        : null,
    pending_key_hash:
      r.pending_key_hash === null || r.pending_key_hash === undefined ? null : String(r.pending_key_hash),
    pending_since: numberOrNull(r.pending_since),
    key_changed_at: numberOrNull(r.key_changed_at),
    last_seen_at: numberOrNull(r.last_seen_at),
  };
}

/**
 * What becomes of a new password once the charger answered (written in the charge-point actor's
 * turn, with the command's outcome): taken, it replaces the old one; refused, it is dropped. Both
 * only while it is still the pending one (a later change replaced it otherwise).
 */
export const chargePointPasswordWrites = {
  accepted(chargePointId: string, passwordHash: string): WriteStep {
    return async (tx: SqlRunner) => {
      await tx.run(
        `UPDATE csms_charge_point SET key_hash = pending_key_hash, pending_key_hash = NULL, pending_since = NULL,
           key_changed_at = ? WHERE id = ? AND pending_key_hash = ?`,
        [Date.now(), chargePointId, passwordHash],
      );
    };
  },
  refused(chargePointId: string, passwordHash: string): WriteStep {
    return async (tx: SqlRunner) => {
      await tx.run(
        'UPDATE csms_charge_point SET pending_key_hash = NULL, pending_since = NULL WHERE id = ? AND pending_key_hash = ?',
        [chargePointId, passwordHash],
      );
    };
  },
};

const LAST_SEEN_CHUNK = 1000;

/** Thrown inside `remove`'s transaction to roll it back: an EVSE is still linked. */
class StillLinked extends Error {}

/** The registry of charger identities (csms_charge_point). */
export class ChargePointStore {
  constructor(private readonly db: Database) {}

  async create(
    row: Pick<ChargePointRow, 'id' | 'protocol' | 'key_hash' | 'created_at' | 'boot_policy'>,
  ): Promise<void> {
    const existing = await this.find(row.id);
    if (existing) throw new DuplicateChargePointError(`charge point ${row.id} exists`);
    try {
      await this.db.execute(
        'INSERT INTO csms_charge_point (id, protocol, key_hash, created_at, boot_policy) VALUES (?, ?, ?, ?, ?)',
        [row.id, row.protocol, row.key_hash, row.created_at, row.boot_policy],
      );
    } catch (err) {
      // a concurrent create of the same id lost the race on the primary key
      if (await this.find(row.id)) throw new DuplicateChargePointError(`charge point ${row.id} exists`);
      throw err;
    }
  }

  /**
   * The EVSE links of charge points (a page of the list, or one), by charge point id: the roaming
   * bridge's table (src/roaming/evse-links.ts, docs/ROAMING.md).
   */
  /** The chargers with an EVSE linked to OCPI location `locationId`. */
  async linkedTo(locationId: string): Promise<Set<string>> {
    const rows = await this.db.execute('SELECT DISTINCT charge_point_id FROM roaming_evse_link WHERE location_id = ?', [
      locationId,
    ]);
    return new Set(rows.map((r) => String(r.charge_point_id)));
  }

  async evseLinksOf(
    ids: readonly string[],
  ): Promise<Map<string, Array<{ evse_number: number; location_id: string; evse_uid: string }>>> {
    const links = new Map<string, Array<{ evse_number: number; location_id: string; evse_uid: string }>>();
    if (ids.length === 0) return links;
    const rows = await this.db.execute(
      `SELECT charge_point_id, evse_number, location_id, evse_uid FROM roaming_evse_link
       WHERE charge_point_id IN (${ids.map(() => '?').join(', ')}) ORDER BY charge_point_id, evse_number`,
      [...ids],
    );
    for (const r of rows) {
      const id = String(r.charge_point_id);
      const list = links.get(id) ?? [];
      list.push({
        evse_number: Number(r.evse_number),
        location_id: String(r.location_id),
        evse_uid: String(r.evse_uid),
      });
      links.set(id, list);
    }
    return links;
  }

  /**
   * When chargers were last seen: only ever moves forward (two processes may flush the same
   * charger around a reconnect). PostgreSQL: one statement per 1,000 chargers; SQLite, whose
   * statements have no round trip: one prepared UPDATE per charger, in one transaction.
   */
  async recordLastSeen(seen: ReadonlyArray<{ id: string; at: number }>): Promise<void> {
    const { sql } = this.db;
    for (let i = 0; i < seen.length; i += LAST_SEEN_CHUNK) {
      const chunk = seen.slice(i, i + LAST_SEEN_CHUNK);
      if (sql.dialect === 'postgresql') {
        await sql.run(
          `UPDATE csms_charge_point AS c SET last_seen_at = v.at
           FROM unnest(?::varchar[], ?::bigint[]) AS v(id, at)
           WHERE c.id = v.id AND (c.last_seen_at IS NULL OR c.last_seen_at < v.at)`,
          [chunk.map((s) => s.id), chunk.map((s) => s.at)],
        );
        continue;
      }
      await sql.transaction(async (tx) => {
        for (const s of chunk)
          await tx.run(
            'UPDATE csms_charge_point SET last_seen_at = ? WHERE id = ? AND (last_seen_at IS NULL OR last_seen_at < ?)',
            [s.at, s.id, s.at],
          );
      });
    }
  }

  /**
   * Removes the charge point (DELETE /v1/charge-points/{id}), in one transaction: its identity
   * first (its password no longer logs in), its event log, device model, stored replies and
   * local-list record; its sessions still open are closed (reason `ChargePointRemoved`: a forced
   * removal); with `state` (an offline charger, whose actor is not running) its stored state is
   * replaced by that state. Sessions stay: they are history, and CDRs name them. False, with
   * nothing removed, while an EVSE of it is linked to an OCPI location.
   */
  async remove(id: string, actorAddress: string, opts: { state: string | undefined }): Promise<boolean> {
    return this.db.sql
      .transaction(async (tx) => {
        await tx.run('DELETE FROM csms_charge_point WHERE id = ?', [id]);
        const [linked] = await tx.query('SELECT evse_number FROM roaming_evse_link WHERE charge_point_id = ? LIMIT 1', [
          id,
        ]);
        if (linked) throw new StillLinked();
        const now = Date.now();
        await tx.run(
          // ended at their last reading, as a transaction whose end never arrives (docs/CSMS.md): nothing shows it ran on after that
          `UPDATE csms_session SET status = 'COMPLETED', stop_reason = 'ChargePointRemoved',
             stopped_at = CASE WHEN meter_last_at IS NOT NULL AND meter_last_at < ? THEN meter_last_at ELSE ? END
           WHERE charge_point_id = ? AND status = 'ACTIVE'`,
          [now, now, id],
        );
        for (const table of [
          'csms_charger_event',
          'csms_device_variable',
          'csms_command_reply',
          'csms_local_list_entry',
          'csms_local_list',
        ])
          await tx.run(`DELETE FROM ${table} WHERE charge_point_id = ?`, [id]);
        if (opts.state !== undefined)
          await tx.run('UPDATE actor_state SET state = ?, updated_at = ?, version = version + 1 WHERE address = ?', [
            opts.state,
            now,
            actorAddress,
          ]);
        return true;
      })
      .catch((err: unknown) => {
        if (err instanceof StillLinked) return false;
        throw err;
      });
  }

  async find(id: string): Promise<ChargePointRow | undefined> {
    const [r] = await this.db.execute(FIND_ONE, [id]);
    return r ? toRow(r) : undefined;
  }

  /** The rows of these charge points (a page of the list), by id, in one query. */
  async findMany(ids: readonly string[]): Promise<Map<string, ChargePointRow>> {
    const found = new Map<string, ChargePointRow>();
    if (ids.length === 0) return found;
    const rows = await this.db.execute(
      `SELECT ${COLUMNS} FROM csms_charge_point WHERE id IN (${ids.map(() => '?').join(', ')})`,
      [...ids],
    );
    for (const r of rows) found.set(String(r.id), toRow(r));
    return found;
  }

  /** Sets the charger's boot policy (null: OCPP_BOOT_POLICY); false when there is no such charger. */
  async setBootPolicy(id: string, policy: RegistrationStatus | null): Promise<boolean> {
    return (await this.db.sql.run('UPDATE csms_charge_point SET boot_policy = ? WHERE id = ?', [policy, id])) > 0;
  }

  /** The operator set the password at once (`force`): it replaces the old one and any pending one. */
  async setPassword(id: string, passwordHash: string): Promise<void> {
    await this.db.execute(
      `UPDATE csms_charge_point SET key_hash = ?, pending_key_hash = NULL, pending_since = NULL, key_changed_at = ?
       WHERE id = ?`,
      [passwordHash, Date.now(), id],
    );
  }

  /** A new password about to be sent to the charger: valid for login beside the old one until its outcome. */
  async setPending(id: string, passwordHash: string): Promise<void> {
    await this.db.execute('UPDATE csms_charge_point SET pending_key_hash = ?, pending_since = ? WHERE id = ?', [
      passwordHash,
      Date.now(),
      id,
    ]);
  }

  /** The pending password could not be sent after all. */
  async dropPending(id: string, passwordHash: string): Promise<void> {
    await this.db.execute(
      'UPDATE csms_charge_point SET pending_key_hash = NULL, pending_since = NULL WHERE id = ? AND pending_key_hash = ?',
      [id, passwordHash],
    );
  }

  /** The charger logged in with its pending password: it has it, so it becomes its password. */
  async promotePending(id: string, passwordHash: string): Promise<void> {
    await this.db.execute(
      `UPDATE csms_charge_point SET key_hash = pending_key_hash, pending_key_hash = NULL, pending_since = NULL,
         key_changed_at = ? WHERE id = ? AND pending_key_hash = ?`,
      [Date.now(), id, passwordHash],
    );
  }

  /**
   * What the charge-point actor last committed (boot, connectors, reservations, commands).
   * Read from the runtime's state table so that it is there while the charger is offline too.
   */
  async actorState(address: string): Promise<unknown> {
    return (await this.actorStates([address])).get(address);
  }

  /** What the fleet index takes of every registered charger (fleet.ts RegistryFacts), in one narrow query. */
  async registryFacts(): Promise<RegistryFacts[]> {
    const rows = await this.db.sql.query('SELECT id, protocol, last_seen_at FROM csms_charge_point', []);
    return rows.map((r) => ({
      id: String(r.id),
      protocol: r.protocol === 'ocpp2.0.1' ? 'ocpp2.0.1' : 'ocpp1.6',
      last_seen_at: numberOrNull(r.last_seen_at),
    }));
  }

  /**
   * The version (m0020) of every charge-point actor's stored state, by address: what the fleet
   * index compares with the versions it summarized, without reading a state.
   */
  async stateVersions(): Promise<Map<string, number>> {
    const rows = await this.db.sql.query("SELECT address, version FROM actor_state WHERE kind = 'charge-point'", []);
    return new Map(rows.map((r) => [String(r.address), Number(r.version)]));
  }

  /**
   * These actors' stored states, each parsed and reduced to its summary for the fleet index
   * (fleet.ts), with the version read: 500 addresses a query.
   */
  async stateSummaries(addresses: readonly string[]): Promise<Map<string, VersionedSummary>> {
    const summaries = new Map<string, VersionedSummary>();
    for (let i = 0; i < addresses.length; i += 500) {
      const batch = addresses.slice(i, i + 500);
      const rows = await this.db.sql.query(
        `SELECT address, version, state FROM actor_state WHERE address IN (${batch.map(() => '?').join(', ')})`,
        batch,
      );
      for (const r of rows)
        summaries.set(String(r.address), {
          version: Number(r.version),
          summary: summarizeState(JSON.parse(String(r.state)) as unknown),
        });
    }
    return summaries;
  }

  /** The same for a page of charge points, in one query (checked where read: views.ts chargePointView). */
  async actorStates(addresses: string[]): Promise<Map<string, unknown>> {
    return storedStates(this.db.sql, addresses);
  }
}
