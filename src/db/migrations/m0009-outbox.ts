import { BetterSqliteDriver } from '@mikro-orm/better-sqlite';
import { Migration } from '@mikro-orm/migrations';

/**
 * `ocpi_outbox`: everything we send to roaming partners, written in the same transaction as the
 * change that causes it (docs/ROAMING.md "The outbox"). A row names what to send (an object of
 * ours, or a command result) and to which partner; the body is rendered when it is sent, so a
 * row for an object always carries the object's newest state. One pending row per partner and
 * object (the partial unique index): a newer change of an unsent object bumps `version` instead
 * of adding a row (coalescing), so the sends of one object can never overtake each other.
 * Also an index to find a token by its uid alone (a charger's id tag names no party).
 */
export class M0009Outbox extends Migration {
  override up(): void {
    const id =
      this.driver instanceof BetterSqliteDriver ? 'INTEGER PRIMARY KEY AUTOINCREMENT' : 'bigserial PRIMARY KEY';
    this.addSql(
      `CREATE TABLE ocpi_outbox (
         id ${id},
         partner_key varchar(8) NOT NULL,
         object_key varchar(200) NOT NULL,
         kind varchar(24) NOT NULL,
         payload text NOT NULL,
         version integer NOT NULL DEFAULT 1,
         status varchar(8) NOT NULL,
         attempts integer NOT NULL DEFAULT 0,
         next_attempt_at bigint NOT NULL,
         last_error text,
         created_at bigint NOT NULL,
         updated_at bigint NOT NULL
       )`,
    );
    this.addSql(
      "CREATE UNIQUE INDEX ocpi_outbox_pending_uq ON ocpi_outbox (partner_key, object_key) WHERE status = 'pending'",
    );
    this.addSql('CREATE INDEX ocpi_outbox_due_idx ON ocpi_outbox (status, next_attempt_at)');
    this.addSql('CREATE INDEX ocpi_outbox_partner_idx ON ocpi_outbox (partner_key, status, id)');
    // a token by its uid alone, whoever issued it: the charger's id tag (docs/ROAMING.md "Tokens")
    this.addSql('CREATE INDEX ocpi_object_uid_idx ON ocpi_object (module, object_id)');
  }

  override down(): void {
    this.addSql('DROP INDEX ocpi_object_uid_idx');
    this.addSql('DROP TABLE ocpi_outbox');
  }
}
