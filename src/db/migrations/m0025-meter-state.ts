import { Migration } from '@mikro-orm/migrations';

/**
 * `roaming_meter_state`: what the chargers of roamed transactions said of the charging besides
 * their registers, one row per instant: their charging state (2.0.1 `chargingState`, 1.6
 * StatusNotification; 1 charging, 0 not, NULL not said then) and the current drawn (Current.Import
 * over all phases, A). A CDR's charging periods are cut and classed by them (docs/TARIFFS.md
 * "CDRs from transactions"). Kept and dropped with `roaming_meter_sample`.
 */
export class M0025MeterState extends Migration {
  override up(): void {
    this.addSql(
      `CREATE TABLE roaming_meter_state (
         session_id varchar(36) NOT NULL,
         at_ms bigint NOT NULL,
         charging smallint NULL,
         current_a double precision NULL,
         PRIMARY KEY (session_id, at_ms)
       )`,
    );
  }

  override down(): void {
    this.addSql('DROP TABLE roaming_meter_state');
  }
}
