import { Migration } from '@mikro-orm/migrations';

/**
 * `ocpi_tariff_version`: the versions of the tariffs partner CPOs pushed to our tariffs Receiver,
 * one row per `last_updated`, the newest 20 of each tariff. A CDR of a session that started before
 * the tariff's last update is checked with the version in force at its start (mod_tariffs: "a
 * driver accepts the tariff which is valid when they start their charging session";
 * docs/TARIFFS.md "Re-pricing received CDRs").
 */
export class M0026TariffVersions extends Migration {
  override up(): void {
    this.addSql(
      `CREATE TABLE ocpi_tariff_version (
         country_code varchar(2) NOT NULL,
         party_id varchar(3) NOT NULL,
         tariff_id varchar(36) NOT NULL,
         last_updated_ms bigint NOT NULL,
         data text NOT NULL,
         PRIMARY KEY (country_code, party_id, tariff_id, last_updated_ms)
       )`,
    );
  }

  override down(): void {
    this.addSql('DROP TABLE ocpi_tariff_version');
  }
}
