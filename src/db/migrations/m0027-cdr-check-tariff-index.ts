import { Migration } from '@mikro-orm/migrations';

/**
 * The unpriced checks of a party that name a tariff, by an index: a tariff pushed to us or pulled
 * from a partner's Sender looks them up (`CdrCheckStore.unpricedNaming`), once per tariff stored,
 * and a pull stores a page of tariffs at a time. Without it each lookup read every unpriced check.
 */
export class M0027CdrCheckTariffIndex extends Migration {
  override up(): void {
    this.addSql(
      'CREATE INDEX ocpi_cdr_check_tariff_idx ON ocpi_cdr_check (country_code, party_id, status, tariff_id, checked_at)',
    );
  }

  override down(): void {
    this.addSql('DROP INDEX ocpi_cdr_check_tariff_idx');
  }
}
