import { Migration } from '@mikro-orm/migrations';

/**
 * The local authorization list each charger holds (docs/CSMS.md "Local authorization list"), as
 * its last accepted SendLocalList left it: `csms_local_list` its version (no row: unknown, the
 * next update is a full one), `csms_local_list_entry` its id tags. Written only once the charger
 * accepted an update, so a list that failed is never taken for the charger's.
 */
export class M0017LocalLists extends Migration {
  override up(): void {
    this.addSql(
      `CREATE TABLE csms_local_list (
         charge_point_id varchar(48) PRIMARY KEY,
         version integer NOT NULL,
         updated_at bigint NOT NULL
       )`,
    );
    this.addSql(
      `CREATE TABLE csms_local_list_entry (
         charge_point_id varchar(48) NOT NULL,
         id_tag varchar(36) NOT NULL,
         id_type varchar(16) NOT NULL,
         status varchar(16) NOT NULL,
         expiry varchar(40),
         PRIMARY KEY (charge_point_id, id_tag)
       )`,
    );
  }

  override down(): void {
    this.addSql('DROP TABLE csms_local_list_entry');
    this.addSql('DROP TABLE csms_local_list');
  }
}
