import { BetterSqliteDriver } from '@mikro-orm/better-sqlite';
import { Migration } from '@mikro-orm/migrations';

/**
 * SQLite only: `actor_fence_clock`, one row whose counter moves with every change to
 * `actor_fence`, from any connection or statement (triggers). A batch of turns reads that one
 * row instead of the fences of all its turns; while it has not moved, the fences read before
 * still hold (`RuntimeStore.readFences`). PostgreSQL keeps reading and share-locking the fence
 * rows themselves: there a raise must wait for the turns that read the old epoch, and one row
 * share-locked by every batch of every process would serialise them all.
 */
export class M0005FenceClock extends Migration {
  private get sqlite(): boolean {
    return this.driver instanceof BetterSqliteDriver;
  }

  override up(): void {
    if (!this.sqlite) return;
    this.addSql('CREATE TABLE actor_fence_clock (id integer PRIMARY KEY CHECK (id = 1), n integer NOT NULL)');
    this.addSql('INSERT INTO actor_fence_clock (id, n) VALUES (1, 0)');
    for (const event of ['INSERT', 'UPDATE', 'DELETE'])
      this.addSql(
        `CREATE TRIGGER actor_fence_clock_${event.toLowerCase()} AFTER ${event} ON actor_fence
         BEGIN UPDATE actor_fence_clock SET n = n + 1 WHERE id = 1; END`,
      );
  }

  override down(): void {
    if (!this.sqlite) return;
    for (const event of ['insert', 'update', 'delete']) this.addSql(`DROP TRIGGER actor_fence_clock_${event}`);
    this.addSql('DROP TABLE actor_fence_clock');
  }
}
