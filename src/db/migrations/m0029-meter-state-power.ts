import { Migration } from '@mikro-orm/migrations';

/**
 * `roaming_meter_state.power_kw`: the power the charger of a roamed transaction reported
 * (Power.Active.Import at the outlet, over all phases, kW), beside its current. A CDR period's
 * `MAX_POWER` and a tariff's power restrictions take it where the charger gave it, instead of the
 * energy over time, which two readings close together can make many times the connector's power
 * (docs/TARIFFS.md "CDRs from transactions").
 */
export class M0029MeterStatePower extends Migration {
  override up(): void {
    this.addSql('ALTER TABLE roaming_meter_state ADD COLUMN power_kw double precision NULL');
  }

  override down(): void {
    this.addSql('ALTER TABLE roaming_meter_state DROP COLUMN power_kw');
  }
}
