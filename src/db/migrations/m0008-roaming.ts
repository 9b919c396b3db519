import { Migration } from '@mikro-orm/migrations';

/**
 * `roaming_evse_link`: which EVSE of one of our OCPI locations each OCPP EVSE of a charge point
 * is (docs/ROAMING.md "EVSE links"). `evse_number` is the 2.0.1 evseId or the 1.6 connectorId;
 * one OCPI EVSE is linked to one charger EVSE at most.
 */
export class M0008Roaming extends Migration {
  override up(): void {
    this.addSql(
      `CREATE TABLE roaming_evse_link (
         charge_point_id varchar(48) NOT NULL,
         evse_number integer NOT NULL,
         location_id varchar(39) NOT NULL,
         evse_uid varchar(39) NOT NULL,
         created_at bigint NOT NULL,
         PRIMARY KEY (charge_point_id, evse_number)
       )`,
    );
    this.addSql('CREATE UNIQUE INDEX roaming_evse_link_ocpi_uq ON roaming_evse_link (location_id, evse_uid)');
  }

  override down(): void {
    this.addSql('DROP TABLE roaming_evse_link');
  }
}
