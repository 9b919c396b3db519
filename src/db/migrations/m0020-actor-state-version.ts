import { Migration } from '@mikro-orm/migrations';

/**
 * `actor_state.version`: how many times the row was written, raised by every write of the state
 * (the runtime's fenced upsert, a removed charger's reset). A reader that keeps what it derived
 * from a state (the fleet index, docs/CSMS.md "Fleet index") reads the versions alone and parses
 * only the states whose version moved; `updated_at` cannot serve, two writes of one row may fall
 * in the same millisecond. Existing rows start at 0.
 */
export class M0020ActorStateVersion extends Migration {
  override up(): void {
    this.addSql('ALTER TABLE actor_state ADD COLUMN version bigint NOT NULL DEFAULT 0');
  }

  override down(): void {
    this.addSql('ALTER TABLE actor_state DROP COLUMN version');
  }
}
