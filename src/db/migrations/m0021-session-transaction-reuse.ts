import { BetterSqliteDriver } from '@mikro-orm/better-sqlite';
import { Migration } from '@mikro-orm/migrations';

/**
 * `csms_session`: a charge point may hold several sessions with the same transaction id. A 2.0.1
 * charger chooses its transaction ids and they are unique only among its open transactions: one
 * whose counter restarted, or a charger removed and registered again under the same id, uses an
 * id that a kept session already has. The unique constraint on (charge_point_id, transaction_id)
 * made the insert of such a start fail, and the charger got InternalError on every retry. The
 * actor finds an open transaction's session by its id (its state), so nothing needs the
 * constraint; the index stays, without uniqueness, with the start time for the newest first.
 *
 * knex made the constraint a unique index on SQLite and a table constraint on PostgreSQL.
 * `down` fails while two sessions of one charge point share a transaction id.
 */
export class M0021SessionTransactionReuse extends Migration {
  private get sqlite(): boolean {
    return this.driver instanceof BetterSqliteDriver;
  }

  override up(): void {
    if (this.sqlite) this.addSql('DROP INDEX csms_session_transaction_uq');
    else this.addSql('ALTER TABLE csms_session DROP CONSTRAINT csms_session_transaction_uq');
    this.addSql(
      'CREATE INDEX csms_session_transaction_idx ON csms_session (charge_point_id, transaction_id, started_at)',
    );
  }

  override down(): void {
    this.addSql('DROP INDEX csms_session_transaction_idx');
    if (this.sqlite)
      this.addSql('CREATE UNIQUE INDEX csms_session_transaction_uq ON csms_session (charge_point_id, transaction_id)');
    else
      this.addSql(
        'ALTER TABLE csms_session ADD CONSTRAINT csms_session_transaction_uq UNIQUE (charge_point_id, transaction_id)',
      );
  }
}
