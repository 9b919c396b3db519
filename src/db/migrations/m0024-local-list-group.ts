import { Migration } from '@mikro-orm/migrations';

/**
 * `csms_local_list_entry.group_id`: the group of an id tag in a charger's local list (its OCPI
 * token's `group_id`), sent as 1.6 `parentIdTag` and 2.0.1 `groupIdToken`, so that offline too a
 * charger lets another card of the group stop a transaction (docs/CSMS.md "Local authorization
 * list").
 */
export class M0024LocalListGroup extends Migration {
  override up(): void {
    this.addSql('ALTER TABLE csms_local_list_entry ADD COLUMN group_id varchar(36) NULL');
  }

  override down(): void {
    this.addSql('ALTER TABLE csms_local_list_entry DROP COLUMN group_id');
  }
}
