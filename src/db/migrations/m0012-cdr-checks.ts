import { Migration } from '@mikro-orm/migrations';

/**
 * `ocpi_cdr_check`: our eMSP's re-pricing of each CDR a partner CPO posted us (docs/TARIFFS.md
 * "Re-pricing received CDRs"). One row per CDR, keyed as the CDR is stored (the CPO's
 * country_code and party_id, the CDR id): `agrees`, `disagrees` or `unpriced` with the reason,
 * the partner's total_cost and ours, the difference (theirs minus ours), and in `detail` (JSON
 * text) the tariff and time zone used and our full breakdown. Amounts are reported to OCPI's 4
 * decimals, which a double holds as the same number; times are epoch milliseconds.
 */
export class M0012CdrChecks extends Migration {
  override up(): void {
    this.addSql(
      `CREATE TABLE ocpi_cdr_check (
         country_code varchar(2) NOT NULL,
         party_id varchar(3) NOT NULL,
         cdr_id varchar(39) NOT NULL,
         version varchar(8) NOT NULL,
         status varchar(10) NOT NULL,
         currency varchar(3) NOT NULL,
         tariff_id varchar(36),
         theirs_excl_vat double precision NOT NULL,
         theirs_incl_vat double precision,
         ours_excl_vat double precision,
         ours_incl_vat double precision,
         diff_excl_vat double precision,
         diff_incl_vat double precision,
         reason text,
         detail text NOT NULL,
         checked_at bigint NOT NULL,
         PRIMARY KEY (country_code, party_id, cdr_id)
       )`,
    );
    // the operator's list: one status, newest first
    this.addSql('CREATE INDEX ocpi_cdr_check_status_idx ON ocpi_cdr_check (status, checked_at)');
  }

  override down(): void {
    this.addSql('DROP TABLE ocpi_cdr_check');
  }
}
