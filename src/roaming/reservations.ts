import { randomUUID } from 'node:crypto';
import type { Database, Row } from '../db/database.js';

/** The partner key of the operator's own reservations: no OCPI party key (`CC-PID`) has 8 characters. */
export const OPERATOR_RESERVATIONS = 'operator';

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

  /**
   * A reservation the operator makes through /v1 (docs/CSMS.md "Reservations"): a row of its own
   * (partner key OPERATOR_RESERVATIONS), so that its OCPP id is never one a partner's has.
   */
  async operatorReservation(chargePointId: string, evse: number, expiryAt: number): Promise<number> {
    const r = await this.put({
      partner_key: OPERATOR_RESERVATIONS,
      reservation_id: randomUUID(),
      charge_point_id: chargePointId,
      evse_number: evse,
      expiry_at: expiryAt,
    });
    return r.ocpp_id;
  }

  async find(partnerKey: string, reservationId: string): Promise<RoamingReservation | undefined> {
    const [row] = await this.db.sql.query(
      `SELECT ${COLUMNS} FROM roaming_reservation WHERE partner_key = ? AND reservation_id = ?`,
      [partnerKey, reservationId],
    );
    return row ? toReservation(row) : undefined;
  }
}
