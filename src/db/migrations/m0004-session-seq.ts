import { Migration } from '@mikro-orm/migrations';

/**
 * The highest 2.0.1 TransactionEvent `seqNo` applied to a session. A charger sends a
 * transaction's events one at a time and in order, so an update whose seqNo is not above it is a
 * repeat: the session's UPDATE skips it by itself (`... WHERE seq_max IS NULL OR seq_max < ?`),
 * and the charge-point actor need not keep every seqNo of an open transaction in its state.
 */
export class M0004SessionSeq extends Migration {
  override up(): void {
    this.addSql('ALTER TABLE csms_session ADD COLUMN seq_max integer');
  }

  override down(): void {
    this.addSql('ALTER TABLE csms_session DROP COLUMN seq_max');
  }
}
