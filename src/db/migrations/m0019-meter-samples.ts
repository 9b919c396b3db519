import { Migration } from '@mikro-orm/migrations';

/**
 * `csms_meter_sample`: the energy register of every session over time, for the energy chart
 * (docs/CSMS.md "Energy over time"): the first and last readings of a transaction and one reading
 * per `CSMS_METER_SAMPLE_S` between them, whatever the charger's own interval. A reading repeated
 * at the same instant is one row. Deleted `CSMS_METER_SAMPLE_RETENTION_DAYS` after its session
 * ended.
 */
export class M0019MeterSamples extends Migration {
  override up(): void {
    this.addSql(
      `CREATE TABLE csms_meter_sample (
         session_id varchar(36) NOT NULL,
         at_ms bigint NOT NULL,
         wh double precision NOT NULL,
         PRIMARY KEY (session_id, at_ms)
       )`,
    );
  }

  override down(): void {
    this.addSql('DROP TABLE csms_meter_sample');
  }
}
