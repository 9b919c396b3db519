import { Migration } from '@mikro-orm/migrations';
import type { Knex } from '@mikro-orm/knex';

/**
 * Tables of the OCPI module (docs/OCPI.md). OCPI objects are nested documents: each is stored
 * as JSON text with indexed key columns, so one schema-builder migration serves PostgreSQL and
 * SQLite. Times are epoch milliseconds (bigint) for the same reason.
 */
export class M0002Ocpi extends Migration {
  override up(): void {
    const knex = this.getKnex();
    // A read projection of the partner actor's state (the actor writes it in its fenced turn).
    this.addAll(
      knex.schema.createTable('ocpi_partner', (t) => {
        t.string('id', 36).primary();
        t.string('country_code', 2).notNullable();
        t.string('party_id', 3).notNullable();
        t.string('role', 8).notNullable();
        t.string('status', 16).notNullable();
        t.text('versions_url');
        t.string('version', 8);
        t.bigInteger('created_at').notNullable();
        t.bigInteger('updated_at').notNullable();
        t.unique(['country_code', 'party_id'], { indexName: 'ocpi_partner_identity_uq' });
      }),
    );
    // Tokens partners present to us, stored as sha256 hex: a stolen table does not let anyone in.
    this.addAll(
      knex.schema.createTable('ocpi_partner_token', (t) => {
        t.string('token_hash', 64).primary();
        t.string('partner_id', 36).notNullable();
        t.string('country_code', 2).notNullable();
        t.string('party_id', 3).notNullable();
        t.string('role', 8).notNullable();
        t.string('kind', 8).notNullable();
        t.bigInteger('created_at').notNullable();
        t.index(['partner_id'], 'ocpi_partner_token_partner_idx');
      }),
    );
    // Locations, sessions, tariffs, tokens and CDRs, ours and our partners'.
    this.addAll(
      knex.schema.createTable('ocpi_object', (t) => {
        t.string('module', 16).notNullable();
        t.string('country_code', 2).notNullable();
        t.string('party_id', 3).notNullable();
        t.string('object_id', 36).notNullable();
        t.bigInteger('last_updated_ms').notNullable();
        // Location.publish (2.2.1): 0 keeps our location out of what partners list and read.
        // An integer, not a boolean: the same 1/0 then compares on PostgreSQL and SQLite alike.
        t.smallint('published').notNullable().defaultTo(1);
        t.text('data').notNullable();
        // bumped by every write: a PATCH (read, merge, write) only lands on the row it read
        t.integer('revision').notNullable().defaultTo(0);
        t.bigInteger('updated_at').notNullable();
        t.primary(['module', 'country_code', 'party_id', 'object_id']);
        // the paging order of one party's objects, so a page is an index walk, not a sort
        t.index(
          ['module', 'country_code', 'party_id', 'last_updated_ms', 'object_id'],
          'ocpi_object_party_updated_idx',
        );
        t.index(['module', 'last_updated_ms'], 'ocpi_object_updated_idx');
      }),
    );
  }

  override down(): void {
    const knex = this.getKnex();
    this.addAll(knex.schema.dropTableIfExists('ocpi_object'));
    this.addAll(knex.schema.dropTableIfExists('ocpi_partner_token'));
    this.addAll(knex.schema.dropTableIfExists('ocpi_partner'));
  }

  /** A schema builder may produce several statements; SQLite runs them one at a time. */
  protected addAll(builder: Knex.SchemaBuilder): void {
    for (const q of builder.toSQL()) this.addSql(q.sql);
  }
}
