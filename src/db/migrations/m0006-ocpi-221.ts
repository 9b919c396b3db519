import { BetterSqliteDriver } from '@mikro-orm/better-sqlite';
import { Migration } from '@mikro-orm/migrations';

/**
 * `ocpi_object.audience`: the one party besides the owner that may read an object (the eMSP of
 * the token of one of our sessions or CDRs; docs/OCPI.md "Who sees what"), with the paging
 * order of one audience's objects.
 *
 * Tokens and tariffs are stored in their OCPI 2.2.1 shape (docs/OCPI.md "Storage"); rows written
 * before in the 2.1.1 shape get the row's country_code and party_id, and a token's auth_id
 * becomes its contract_id. Rows already in the 2.2.1 shape are left alone.
 */
export class M0006Ocpi221 extends Migration {
  override up(): void {
    this.addSql('ALTER TABLE ocpi_object ADD COLUMN audience varchar(7) NULL');
    this.addSql('CREATE INDEX ocpi_object_audience_idx ON ocpi_object (module, audience, last_updated_ms, object_id)');
    if (this.driver instanceof BetterSqliteDriver) {
      this.addSql(
        `UPDATE ocpi_object SET data = json_remove(json_set(data, '$.country_code', country_code, '$.party_id', party_id,
           '$.contract_id', json_extract(data, '$.auth_id')), '$.auth_id')
         WHERE module = 'tokens' AND json_extract(data, '$.auth_id') IS NOT NULL`,
      );
      this.addSql(
        `UPDATE ocpi_object SET data = json_set(data, '$.country_code', country_code, '$.party_id', party_id)
         WHERE module = 'tariffs' AND json_extract(data, '$.country_code') IS NULL`,
      );
      return;
    }
    // a 2.2.1 CDR id is CiString(39); SQLite does not enforce the declared length
    this.addSql('ALTER TABLE ocpi_object ALTER COLUMN object_id TYPE varchar(39)');
    this.addSql(
      `UPDATE ocpi_object SET data = ((data::jsonb - 'auth_id') || jsonb_build_object('country_code', country_code,
         'party_id', party_id, 'contract_id', data::jsonb -> 'auth_id'))::text
       WHERE module = 'tokens' AND data::jsonb ? 'auth_id'`,
    );
    this.addSql(
      `UPDATE ocpi_object SET data = (data::jsonb || jsonb_build_object('country_code', country_code, 'party_id', party_id))::text
       WHERE module = 'tariffs' AND NOT data::jsonb ? 'country_code'`,
    );
  }

  override down(): void {
    this.addSql('DROP INDEX ocpi_object_audience_idx');
    this.addSql('ALTER TABLE ocpi_object DROP COLUMN audience');
    // the 2.2.1-only fields have no 2.1.1 home; the 2.1.1 interfaces read either shape's rows
    // through the mappers, so going back leaves the rows as they are
  }
}
