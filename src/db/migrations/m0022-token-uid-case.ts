import { Migration } from '@mikro-orm/migrations';

/**
 * `ocpi_object`: an index on the lower-case object id of each module. A charger's id tag (OCPP
 * 1.6 IdToken, 2.0.1 IdTokenType.idToken) and an OCPI token's uid are case-insensitive strings
 * (CiString), so the roaming bridge finds a token by `lower(object_id)` (src/roaming/bridge.ts).
 * Without this index that lookup would read every token of the module for each unknown tag.
 * SQLite's and PostgreSQL's `lower()` agree on ASCII, the only letters a CiString holds.
 */
export class M0022TokenUidCase extends Migration {
  override up(): void {
    this.addSql('CREATE INDEX ocpi_object_uid_ci_idx ON ocpi_object (module, lower(object_id))');
  }

  override down(): void {
    this.addSql('DROP INDEX ocpi_object_uid_ci_idx');
  }
}
