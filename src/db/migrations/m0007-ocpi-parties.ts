import { Migration } from '@mikro-orm/migrations';

/**
 * `ocpi_partner_party`: the parties a partner's link speaks for besides the one it was onboarded
 * as (a 2.2.1 platform or hub lists several roles in its credentials; docs/OCPI.md "Platforms and
 * hubs"). A projection of the partner actor's state, like `ocpi_partner_token`. One party and role
 * belongs to one partner at most: the key says so.
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
  }

  override down(): void {
    this.addSql('DROP TABLE ocpi_partner_party');
  }
}
