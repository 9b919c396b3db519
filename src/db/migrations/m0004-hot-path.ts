import { Migration } from '@mikro-orm/migrations';

/**
 * For the per-message path:
 * - `csms_session.seq_max`: the highest 2.0.1 TransactionEvent `seqNo` applied to a session. A
 *   charger sends a transaction's events one at a time and in order, so an update whose seqNo is
 *   not above it is a repeat: the session's UPDATE skips it by itself (`... WHERE seq_max IS NULL
 *   OR seq_max < ?`), and the charge-point actor need not keep every seqNo in its state.
 * - the mailbox index by address also orders by due time, so the drain of an actor that comes
 *   up (every charger's connect) reads it in order without sorting.
 */
export class M0004HotPath extends Migration {
  override up(): void {
    this.addSql('ALTER TABLE csms_session ADD COLUMN seq_max integer');
    this.addSql('DROP INDEX actor_mailbox_address_idx');
    this.addSql('CREATE INDEX actor_mailbox_address_idx ON actor_mailbox (address, status, next_attempt_at)');
  }

  override down(): void {
    this.addSql('DROP INDEX actor_mailbox_address_idx');
    this.addSql('CREATE INDEX actor_mailbox_address_idx ON actor_mailbox (address, status)');
    this.addSql('ALTER TABLE csms_session DROP COLUMN seq_max');
  }
}
