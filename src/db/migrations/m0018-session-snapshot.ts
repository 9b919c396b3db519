import { Migration } from '@mikro-orm/migrations';

/**
 * `roaming_session_snapshot`: what a roamed session's CDR is built from, as it was when the
 * session started (docs/ROAMING.md "Tariff and place at the start"): the tariff ids its connector
 * named, the one of them valid at the start as it was stored then (NULL when none was), the
 * location's time zone and the `cdr_location` (address, EVSE and connector). Written once, in the
 * charger's turn that writes the session first; deleted with the session's meter samples once
 * its CDR is stored. A session started before this table has no row and is priced as before.
 */
export class M0018SessionSnapshot extends Migration {
  override up(): void {
    this.addSql(
      `CREATE TABLE roaming_session_snapshot (
         session_id varchar(36) PRIMARY KEY,
         tariff_ids text NOT NULL,
         tariff text,
         time_zone varchar(255) NOT NULL,
         cdr_location text NOT NULL
       )`,
    );
  }

  override down(): void {
    this.addSql('DROP TABLE roaming_session_snapshot');
  }
}
