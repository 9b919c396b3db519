import { Migration } from '@mikro-orm/migrations';

/**
 * `csms_session.stop_id_tag`: the token that stopped a transaction (1.6 StopTransaction's idTag,
 * 2.0.1 the idToken of the Ended event or of a StopAuthorized update), when the charger named
 * one. `id_tag` keeps the token that authorized the transaction, the one the driver is billed by
 * (docs/CSMS.md "The /v1 API").
 */
export class M0023SessionStopToken extends Migration {
  override up(): void {
    this.addSql('ALTER TABLE csms_session ADD COLUMN stop_id_tag varchar(64) NULL');
  }

  override down(): void {
    this.addSql('ALTER TABLE csms_session DROP COLUMN stop_id_tag');
  }
}
