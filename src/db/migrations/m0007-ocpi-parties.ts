import { BetterSqliteDriver } from '@mikro-orm/better-sqlite';
import { Migration } from '@mikro-orm/migrations';

/**
 * `ocpi_partner_party`: the parties a partner's link speaks for besides the one it was onboarded
 * as (a 2.2.1 platform or hub lists several roles in its credentials; docs/OCPI.md "Platforms and
 * hubs"). A projection of the partner actor's state, like `ocpi_partner_token`. One party and role
 * belongs to one partner at most: the key says so. Also: locations with `publish: false` that name
 * `publish_allowed_to` get `published` 2 (docs/OCPI.md, Decisions 32).
 */
export class M0007OcpiParties extends Migration {
  override up(): void {
    this.addSql(
      `CREATE TABLE ocpi_partner_party (
         country_code varchar(2) NOT NULL,
         party_id varchar(3) NOT NULL,
         role varchar(8) NOT NULL,
         partner_id varchar(36) NOT NULL,
         PRIMARY KEY (country_code, party_id, role)
       )`,
    );
    this.addSql('CREATE INDEX ocpi_partner_party_partner_idx ON ocpi_partner_party (partner_id)');
    // `published` 2: a location with publish false that names publish_allowed_to (object-store.ts);
    // rows written before were 0
    const allowedTo =
      this.driver instanceof BetterSqliteDriver
        ? "json_array_length(json_extract(data, '$.publish_allowed_to')) > 0"
        : "(CASE WHEN jsonb_typeof(data::jsonb -> 'publish_allowed_to') = 'array' THEN jsonb_array_length(data::jsonb -> 'publish_allowed_to') ELSE 0 END) > 0";
    this.addSql(`UPDATE ocpi_object SET published = 2 WHERE module = 'locations' AND published = 0 AND ${allowedTo}`);
  }

  override down(): void {
    this.addSql('DROP TABLE ocpi_partner_party');
  }
}
