import { randomUUID } from 'node:crypto';
import { chargePointProtocol } from '../../actors/charge-point/protocol.js';
import type { Database, Row } from '../db/database.js';
import type { ActorMessenger } from '../runtime/types.js';

/** One OCPP EVSE of a charge point as one EVSE of one of our OCPI locations (docs/ROAMING.md). */
export interface EvseLink {
  charge_point_id: string;
  /** the 2.0.1 evseId, or the 1.6 connectorId (a 1.6 connector is one EVSE) */
  evse_number: number;
  location_id: string;
  evse_uid: string;
}

export class EvseLinkTakenError extends Error {
  override readonly name = 'EvseLinkTakenError';
  constructor(readonly holder: EvseLink) {
    super(
      `EVSE ${holder.evse_uid} of location ${holder.location_id} is linked to ${holder.charge_point_id}/${holder.evse_number}`,
    );
  }
}

function toLink(r: Row): EvseLink {
  return {
    charge_point_id: String(r.charge_point_id),
    evse_number: Number(r.evse_number),
    location_id: String(r.location_id),
    evse_uid: String(r.evse_uid),
  };
}

/** The links table (`roaming_evse_link`, m0008). */
export class EvseLinkStore {
  constructor(private readonly db: Database) {}

  /** Links (or re-links) a charger EVSE; an OCPI EVSE linked to another charger EVSE is refused. */
  async put(link: EvseLink): Promise<EvseLink> {
    const holder = await this.byOcpiEvse(link.location_id, link.evse_uid);
    if (holder && (holder.charge_point_id !== link.charge_point_id || holder.evse_number !== link.evse_number))
      throw new EvseLinkTakenError(holder);
    await this.db.execute(
      `INSERT INTO roaming_evse_link (charge_point_id, evse_number, location_id, evse_uid, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (charge_point_id, evse_number) DO UPDATE SET location_id = excluded.location_id, evse_uid = excluded.evse_uid`,
      [link.charge_point_id, link.evse_number, link.location_id, link.evse_uid, Date.now()],
    );
    return link;
  }

  /** Removes a link: the link it was, or undefined when there was none. */
  async delete(chargePointId: string, evseNumber: number): Promise<EvseLink | undefined> {
    const [r] = await this.db.execute(
      'SELECT charge_point_id, evse_number, location_id, evse_uid FROM roaming_evse_link WHERE charge_point_id = ? AND evse_number = ?',
      [chargePointId, evseNumber],
    );
    if (!r) return undefined;
    await this.db.execute('DELETE FROM roaming_evse_link WHERE charge_point_id = ? AND evse_number = ?', [
      chargePointId,
      evseNumber,
    ]);
    return toLink(r);
  }

  /** Every link, by charge point. */
  async all(): Promise<Map<string, EvseLink[]>> {
    const rows = await this.db.sql.query(
      'SELECT charge_point_id, evse_number, location_id, evse_uid FROM roaming_evse_link ORDER BY charge_point_id, evse_number',
    );
    const byCharger = new Map<string, EvseLink[]>();
    for (const link of rows.map(toLink)) {
      const list = byCharger.get(link.charge_point_id) ?? [];
      list.push(link);
      byCharger.set(link.charge_point_id, list);
    }
    return byCharger;
  }

  /** The links of one charge point, by EVSE number. */
  async forChargePoint(chargePointId: string): Promise<EvseLink[]> {
    const rows = await this.db.sql.query(
      'SELECT charge_point_id, evse_number, location_id, evse_uid FROM roaming_evse_link WHERE charge_point_id = ? ORDER BY evse_number',
      [chargePointId],
    );
    return rows.map(toLink);
  }

  /** The links of one of our locations' EVSEs. */
  async ofLocation(locationId: string): Promise<EvseLink[]> {
    const rows = await this.db.sql.query(
      'SELECT charge_point_id, evse_number, location_id, evse_uid FROM roaming_evse_link WHERE location_id = ? ORDER BY evse_uid',
      [locationId],
    );
    return rows.map(toLink);
  }

  async byOcpiEvse(locationId: string, evseUid: string): Promise<EvseLink | undefined> {
    const [r] = await this.db.execute(
      'SELECT charge_point_id, evse_number, location_id, evse_uid FROM roaming_evse_link WHERE location_id = ? AND evse_uid = ?',
      [locationId, evseUid],
    );
    return r ? toLink(r) : undefined;
  }
}

/**
 * Tells a charge point its links changed (or must be read again), durably: a charger offline now
 * reads them when it connects (its actor runs only while it is connected).
 */
export async function linksChanged(actors: Pick<ActorMessenger, 'ref'>, chargePointId: string): Promise<void> {
  await actors
    .ref(chargePointProtocol, chargePointId)
    .sendDurable({ type: 'links-changed' }, { dedupeKey: `links-changed:${randomUUID()}` });
}
