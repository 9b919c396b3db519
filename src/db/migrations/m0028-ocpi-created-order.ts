import { Migration } from '@mikro-orm/migrations';

/**
 * `ocpi_object.created_ms`: when we first stored the object (our clock; an update keeps it). Lists
 * page in this order (docs/OCPI.md "Lists"), so that an object changed while a partner pages
 * through a list keeps its place: ordered by `last_updated`, it jumped to the end, and the next
 * page skipped the object that moved up into its place. Objects stored before keep the order they
 * had (their `last_updated`). The indexes walk a list in that order, as the `last_updated` ones
 * still do for `date_from`/`date_to` and the operator's newest-first lists.
 */
export class M0028OcpiCreatedOrder extends Migration {
  override up(): void {
    this.addSql('ALTER TABLE ocpi_object ADD COLUMN created_ms bigint NOT NULL DEFAULT 0');
    this.addSql('UPDATE ocpi_object SET created_ms = last_updated_ms');
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
