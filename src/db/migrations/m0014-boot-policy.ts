import { Migration } from '@mikro-orm/migrations';

/**
 * `csms_charge_point.boot_policy`: the BootNotification status an operator set for one charger
 * (Accepted, Pending, Rejected); NULL follows the OCPP_BOOT_POLICY setting (docs/CSMS.md "Boot
 * and registration policy").
 *
 * `csms_unknown_charge_point`: chargers refused at the upgrade (an id that is not registered, a
 * wrong password), one row per id, upserted in batches and kept to the most recently seen ids
 * (src/csms/unknown-charge-points.ts). The password tried is never stored.
 */
export class M0014BootPolicy extends Migration {
  override up(): void {
    this.addSql('ALTER TABLE csms_charge_point ADD COLUMN boot_policy varchar(8)');
    this.addSql(
      `CREATE TABLE csms_unknown_charge_point (
         id varchar(48) PRIMARY KEY,
         reason varchar(16) NOT NULL,
         address varchar(64) NOT NULL,
         attempts bigint NOT NULL,
         first_seen bigint NOT NULL,
         last_seen bigint NOT NULL
       )`,
    );
    this.addSql('CREATE INDEX csms_unknown_charge_point_seen_idx ON csms_unknown_charge_point (last_seen)');
  }

  override down(): void {
    this.addSql('DROP TABLE csms_unknown_charge_point');
    this.addSql('ALTER TABLE csms_charge_point DROP COLUMN boot_policy');
  }
}
