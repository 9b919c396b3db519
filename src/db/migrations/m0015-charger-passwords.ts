import { Migration } from '@mikro-orm/migrations';

/**
 * Charger passwords that can be set and rotated (docs/CSMS.md "Passwords"), on
 * `csms_charge_point`:
 * - `pending_key_hash`, `pending_since`: a new password sent to the charger whose outcome is not
 *   known yet; the charger may log in with it as well as with `key_hash` meanwhile;
 * - `key_changed_at`: when `key_hash` last changed (null: the password given at registration).
 * Hashes only, as `key_hash` (src/secret-hash.ts).
 */
export class M0015ChargerPasswords extends Migration {
  override up(): void {
    this.addSql('ALTER TABLE csms_charge_point ADD COLUMN pending_key_hash varchar(64)');
    this.addSql('ALTER TABLE csms_charge_point ADD COLUMN pending_since bigint');
    this.addSql('ALTER TABLE csms_charge_point ADD COLUMN key_changed_at bigint');
  }

  override down(): void {
    this.addSql('ALTER TABLE csms_charge_point DROP COLUMN key_changed_at');
    this.addSql('ALTER TABLE csms_charge_point DROP COLUMN pending_since');
    this.addSql('ALTER TABLE csms_charge_point DROP COLUMN pending_key_hash');
  }
}
