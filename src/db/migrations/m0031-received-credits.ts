import { BetterSqliteDriver } from '@mikro-orm/better-sqlite';
import { Migration } from '@mikro-orm/migrations';

/**
 * Credit CDRs (`credit: true`) are stored with `published` 2 (object-store.ts `visibilityOf`):
 * our eMSP's check of a partner's credit finds the party's other credits of the same CDR by it
 * (src/ocpi/cdrs/check.ts `creditsNaming`). Credits received before were stored with 1.
 */
export class M0031ReceivedCredits extends Migration {
  override up(): void {
    const credit =
      this.driver instanceof BetterSqliteDriver
        ? "json_extract(data, '$.credit') = 1"
        : "jsonb_typeof(data::jsonb -> 'credit') = 'boolean' AND (data::jsonb ->> 'credit') = 'true'";
    this.addSql(`UPDATE ocpi_object SET published = 2 WHERE module = 'cdrs' AND published = 1 AND ${credit}`);
  }

  override down(): void {
    // `published` 2 is what a credit is stored with from now on; nothing to undo
  }
}
