import { Migration } from '@mikro-orm/migrations';
import type { Knex } from '@mikro-orm/knex';

/**
 * Tables of charge-point management: the identities issued by POST /v1/charge-points (the key
 * is stored as a SHA-256 hash only) and the charging sessions built from the transactions that
 * chargers report. Connector status, boot information and reservations live in the
 * charge-point actor's state. Times are epoch milliseconds, as in the runtime's tables.
 */
export class M0003Csms extends Migration {
  override up(): void {
    const knex = this.getKnex();
    this.addAll(
      knex.schema.createTable('csms_charge_point', (t) => {
        t.string('id', 48).primary();
        t.string('protocol', 16).notNullable();
        t.string('key_hash', 64).notNullable();
        t.bigInteger('created_at').notNullable();
        t.index(['protocol'], 'csms_charge_point_protocol_idx');
      }),
    );
    this.addAll(
      knex.schema.createTable('csms_session', (t) => {
        t.string('id', 36).primary();
        t.string('charge_point_id', 48).notNullable();
        t.string('protocol', 16).notNullable();
        t.string('transaction_id', 64).notNullable();
        t.integer('evse_id').notNullable();
        t.integer('connector_id').notNullable();
        t.string('id_tag', 64);
        t.string('status', 16).notNullable();
        t.bigInteger('started_at').notNullable();
        t.bigInteger('stopped_at');
        t.double('meter_start_wh');
        t.double('meter_last_wh');
        t.double('energy_wh').notNullable();
        t.string('stop_reason', 64);
        t.bigInteger('updated_at').notNullable();
        t.unique(['charge_point_id', 'transaction_id'], { indexName: 'csms_session_transaction_uq' });
        t.index(['charge_point_id', 'started_at'], 'csms_session_charge_point_idx');
      }),
    );
  }

  override down(): void {
    const knex = this.getKnex();
    this.addAll(knex.schema.dropTableIfExists('csms_session'));
    this.addAll(knex.schema.dropTableIfExists('csms_charge_point'));
  }

  protected addAll(builder: Knex.SchemaBuilder): void {
    for (const q of builder.toSQL()) this.addSql(q.sql);
  }
}
