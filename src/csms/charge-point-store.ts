import type { Database, Row } from '../db/database.js';
import type { ProtocolName } from '../ocpp/domain.js';
import { storedStates } from '../runtime/stored-states.js';

export interface ChargePointRow {
  id: string;
  protocol: ProtocolName;
  key_hash: string;
  created_at: number;
}

export class DuplicateChargePointError extends Error {
  override readonly name = 'DuplicateChargePointError';
  readonly code = 'DUPLICATE_CHARGE_POINT';
}

function toRow(r: Row): ChargePointRow {
  return {
    id: String(r.id),
    protocol: r.protocol === 'ocpp2.0.1' ? 'ocpp2.0.1' : 'ocpp1.6',
    key_hash: String(r.key_hash),
    created_at: Number(r.created_at),
  };
}

/** The registry of charger identities (csms_charge_point). */
export class ChargePointStore {
  constructor(private readonly db: Database) {}

  async create(row: ChargePointRow): Promise<void> {
    const existing = await this.find(row.id);
    if (existing) throw new DuplicateChargePointError(`charge point ${row.id} exists`);
    try {
      await this.db.execute('INSERT INTO csms_charge_point (id, protocol, key_hash, created_at) VALUES (?, ?, ?, ?)', [
        row.id,
        row.protocol,
        row.key_hash,
        row.created_at,
      ]);
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

  async find(id: string): Promise<ChargePointRow | undefined> {
    const [r] = await this.db.execute('SELECT id, protocol, key_hash, created_at FROM csms_charge_point WHERE id = ?', [
      id,
    ]);
    return r ? toRow(r) : undefined;
  }

  async list(protocol: ProtocolName | undefined): Promise<ChargePointRow[]> {
    const rows = protocol
      ? await this.db.execute(
          'SELECT id, protocol, key_hash, created_at FROM csms_charge_point WHERE protocol = ? ORDER BY id',
          [protocol],
        )
      : await this.db.execute('SELECT id, protocol, key_hash, created_at FROM csms_charge_point ORDER BY id');
    return rows.map(toRow);
  }

  /**
   * What the charge-point actor last committed (boot, connectors, reservations, commands).
   * Read from the runtime's state table so that it is there while the charger is offline too.
   */
  async actorState(address: string): Promise<unknown> {
    return (await this.actorStates([address])).get(address);
  }

  /** The same for a page of charge points, in one query (checked where read: views.ts chargePointView). */
  async actorStates(addresses: string[]): Promise<Map<string, unknown>> {
    return storedStates(this.db.sql, addresses);
  }
}
