import { Migration } from '@mikro-orm/migrations';

/**
 * - `csms_session.meter_last_at`: when the session's last reading (`meter_last_wh`) was taken, in
 *   epoch milliseconds of the charger's clock. A reading replaces it only when it was taken at or
 *   after it, in the same UPDATE, so that readings arriving out of order (1.6 MeterValues queued
 *   offline, 2.0.1 updates with older timestamps) never lower the energy (docs/CSMS.md "Energy
 *   and out-of-order readings"). Null until a reading comes after the start.
 * - `csms_charge_point.last_seen_at`: when the CSMS last received any frame from the charger,
 *   written at most every few seconds per connection and at its close (docs/CSMS.md "Last seen").
 */
export class M0016MeterTimeLastSeen extends Migration {
  override up(): void {
    this.addSql('ALTER TABLE csms_session ADD COLUMN meter_last_at bigint');
    this.addSql('ALTER TABLE csms_charge_point ADD COLUMN last_seen_at bigint');
  }

  override down(): void {
    this.addSql('ALTER TABLE csms_charge_point DROP COLUMN last_seen_at');
    this.addSql('ALTER TABLE csms_session DROP COLUMN meter_last_at');
  }
}
