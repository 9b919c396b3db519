import { Migration } from '@mikro-orm/migrations';
import type { Knex } from '@mikro-orm/knex';

/**
 * Tables of the actor runtime. Written with the schema builder so that the one migration
 * serves PostgreSQL and SQLite alike. Times are epoch milliseconds (bigint) for the same reason.
 */
export class M0001ActorRuntime extends Migration {
  override up(): void {
    const knex = this.getKnex();
    this.addAll(
      knex.schema.createTable('actor_fence', (t) => {
        t.string('fence_key', 255).primary();
        t.bigInteger('epoch').notNullable();
        t.bigInteger('updated_at').notNullable();
      }),
    );
    this.addAll(
      knex.schema.createTable('actor_state', (t) => {
        t.string('address', 255).primary();
        t.string('kind', 64).notNullable();
        t.text('state').notNullable();
        t.bigInteger('epoch').notNullable();
        t.bigInteger('updated_at').notNullable();
        t.index(['kind'], 'actor_state_kind_idx');
      }),
    );
    this.addAll(
      knex.schema.createTable('actor_mailbox', (t) => {
        t.string('id', 36).primary();
        t.string('address', 255).notNullable();
        t.string('kind', 64).notNullable();
        t.integer('shard').notNullable();
        t.string('dedupe_key', 255).notNullable();
        t.text('payload').notNullable();
        t.string('status', 16).notNullable();
        t.integer('attempts').notNullable().defaultTo(0);
        t.bigInteger('next_attempt_at').notNullable();
        t.bigInteger('created_at').notNullable();
        t.bigInteger('updated_at').notNullable();
        t.text('last_error');
        t.unique(['address', 'dedupe_key'], { indexName: 'actor_mailbox_dedupe_uq' });
        t.index(['status', 'shard', 'next_attempt_at'], 'actor_mailbox_due_idx');
        t.index(['address', 'status'], 'actor_mailbox_address_idx');
      }),
    );
  }

  override down(): void {
    const knex = this.getKnex();
    this.addAll(knex.schema.dropTableIfExists('actor_mailbox'));
    this.addAll(knex.schema.dropTableIfExists('actor_state'));
    this.addAll(knex.schema.dropTableIfExists('actor_fence'));
  }

  /** A schema builder may produce several statements; SQLite runs them one at a time. */
  protected addAll(builder: Knex.SchemaBuilder): void {
    for (const q of builder.toSQL()) this.addSql(q.sql);
  }
}
