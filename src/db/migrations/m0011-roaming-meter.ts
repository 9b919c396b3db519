import { Migration } from '@mikro-orm/migrations';

/**
 * `roaming_meter_sample`: the energy register readings of roamed transactions, one row per
 * reading (docs/TARIFFS.md "Charging periods from a transaction"). A CDR's charging periods are
 * built from them when the session ends. Only transactions on linked EVSEs with a partner's
 * token write here, so the hot path of other chargers is untouched. A reading repeated at the
 * same instant (a retried message) is one row.
 *
 * `roaming_cdr_delivery`: where each eMSP keeps a CDR of ours, as the `Location` header of its
 * answer to our POST said (mod_cdrs "POST Method").
 */
export class M0011RoamingMeter extends Migration {
  override up(): void {
    this.addSql(
      `CREATE TABLE roaming_meter_sample (
         session_id varchar(36) NOT NULL,
         at_ms bigint NOT NULL,
         wh double precision NOT NULL,
         PRIMARY KEY (session_id, at_ms)
       )`,
    );
    this.addSql(
      `CREATE TABLE roaming_cdr_delivery (
         cdr_id varchar(39) NOT NULL,
         partner_key varchar(8) NOT NULL,
         location varchar(2048),
         delivered_at bigint NOT NULL,
         PRIMARY KEY (cdr_id, partner_key)
       )`,
    );
  }

  override down(): void {
    this.addSql('DROP TABLE roaming_cdr_delivery');
    this.addSql('DROP TABLE roaming_meter_sample');
  }
}
