import type { Database, Row } from '../db/database.js';

/** A partner's reservation on one of our chargers (m0010 `roaming_reservation`). */
export interface RoamingReservation {
  /** the OCPP reservation id the charger knows it by */
  ocpp_id: number;
  partner_key: string;
  /** the partner's OCPI id */
  reservation_id: string;
  charge_point_id: string;
  evse_number: number;
  expiry_at: number;
}

function toReservation(r: Row): RoamingReservation {
  return {
    ocpp_id: Number(r.id),
    partner_key: String(r.partner_key),
    reservation_id: String(r.reservation_id),
    charge_point_id: String(r.charge_point_id),
    evse_number: Number(r.evse_number),
    expiry_at: Number(r.expiry_at),
  };
}

const COLUMNS = 'id, partner_key, reservation_id, charge_point_id, evse_number, expiry_at';

/** OCPI reservation ids <-> OCPP reservation ids (docs/ROAMING.md "Reservations"). */
export class ReservationStore {
  constructor(private readonly db: Database) {}

  /**
   * The reservation `reservationId` of the partner, made or moved to `chargePointId`/`evse`: its
   * OCPP id stays what it was (the charger replaces a reservation of the same id).
   */
  async put(r: Omit<RoamingReservation, 'ocpp_id'>): Promise<RoamingReservation> {
    const [row] = await this.db.sql.query(
      `INSERT INTO roaming_reservation (partner_key, reservation_id, charge_point_id, evse_number, expiry_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (partner_key, reservation_id) DO UPDATE SET charge_point_id = excluded.charge_point_id,
         evse_number = excluded.evse_number, expiry_at = excluded.expiry_at
       RETURNING ${COLUMNS}`,
      [r.partner_key, r.reservation_id, r.charge_point_id, r.evse_number, r.expiry_at, Date.now()],
    );
    if (!row) throw new Error('the reservation was not written');
    return toReservation(row);
  }

  async find(partnerKey: string, reservationId: string): Promise<RoamingReservation | undefined> {
    const [row] = await this.db.sql.query(
      `SELECT ${COLUMNS} FROM roaming_reservation WHERE partner_key = ? AND reservation_id = ?`,
      [partnerKey, reservationId],
    );
    return row ? toReservation(row) : undefined;
  }
}
