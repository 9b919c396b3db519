import { BetterSqliteDriver } from '@mikro-orm/better-sqlite';
import { Migration } from '@mikro-orm/migrations';

/**
 * `roaming_reservation`: the reservations partners made on our chargers (docs/ROAMING.md
 * "Reservations"). OCPI names a reservation by the partner's id (a string in 2.2.1, an integer in
 * 2.1.1); OCPP by an integer the charge point keeps: the row's `id` is that integer. One row per
 * partner and OCPI id: a RESERVE_NOW with an id the partner used before updates its reservation.
 */
export class M0010RoamingReservations extends Migration {
  override up(): void {
    const id = this.driver instanceof BetterSqliteDriver ? 'INTEGER PRIMARY KEY AUTOINCREMENT' : 'serial PRIMARY KEY';
    this.addSql(
      `CREATE TABLE roaming_reservation (
         id ${id},
         partner_key varchar(8) NOT NULL,
         reservation_id varchar(36) NOT NULL,
         charge_point_id varchar(48) NOT NULL,
         evse_number integer NOT NULL,
         expiry_at bigint NOT NULL,
         created_at bigint NOT NULL
       )`,
    );
    this.addSql('CREATE UNIQUE INDEX roaming_reservation_ocpi_uq ON roaming_reservation (partner_key, reservation_id)');
  }

  override down(): void {
    this.addSql('DROP TABLE roaming_reservation');
  }
}
