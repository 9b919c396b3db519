import { BetterSqliteDriver } from '@mikro-orm/better-sqlite';
import { Migration } from '@mikro-orm/migrations';

/**
 * `ocpi_object.created_ms`: when we first stored the object (our clock; an update keeps it). Lists
 * page in this order (docs/OCPI.md "Lists"), so that an object changed while a partner pages
 * through a list keeps its place: ordered by `last_updated`, it jumped to the end, and the next
 * page skipped the object that moved up into its place. Objects stored before keep the order they
 * had (their `last_updated`, or when we stored them if that is earlier: a partner's stamp from a
 * clock far ahead must not put an object after every later one). The indexes walk a list in that
 * order, as the `last_updated` ones still do for `date_from`/`date_to` and the operator's
 * newest-first lists. On PostgreSQL the column's default is the time of the insert, for the
 * processes of the release before, which go on inserting without it while a cluster is deployed.
 */
export class M0028OcpiCreatedOrder extends Migration {
  private get sqlite(): boolean {
    return this.driver instanceof BetterSqliteDriver;
  }

  override up(): void {
    this.addSql('ALTER TABLE ocpi_object ADD COLUMN created_ms bigint NOT NULL DEFAULT 0');
    this.addSql(
      `UPDATE ocpi_object SET created_ms = CASE WHEN updated_at < last_updated_ms THEN updated_at ELSE last_updated_ms END`,
    );
    if (!this.sqlite)
      this.addSql(
        'ALTER TABLE ocpi_object ALTER COLUMN created_ms SET DEFAULT (extract(epoch from clock_timestamp()) * 1000)::bigint',
      );
    this.addSql(
      'CREATE INDEX ocpi_object_party_created_idx ON ocpi_object (module, country_code, party_id, created_ms, object_id)',
    );
    this.addSql('CREATE INDEX ocpi_object_created_idx ON ocpi_object (module, created_ms, object_id)');
    this.addSql(
      'CREATE INDEX ocpi_object_audience_created_idx ON ocpi_object (module, audience, created_ms, object_id)',
    );
  }

  override down(): void {
    this.addSql('DROP INDEX ocpi_object_audience_created_idx');
    this.addSql('DROP INDEX ocpi_object_created_idx');
    this.addSql('DROP INDEX ocpi_object_party_created_idx');
    this.addSql('ALTER TABLE ocpi_object DROP COLUMN created_ms');
  }
}
