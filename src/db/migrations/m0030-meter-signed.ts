import { Migration } from '@mikro-orm/migrations';

/**
 * `roaming_meter_signed`: the signed meter values of a roamed transaction (OCPP 2.0.1
 * `signedMeterValue`, 1.6 `SignedData` in OCMF), for its CDR's `signed_data` (mod_cdrs
 * SignedData): one row a nature, the first `Start`, the last `End` and the last `Intermediate`,
 * so that a charger signing every reading keeps three rows a session. Kept and dropped with
 * `roaming_meter_sample` (docs/TARIFFS.md "Signed meter values").
 */
export class M0030MeterSigned extends Migration {
  override up(): void {
    this.addSql(
      `CREATE TABLE roaming_meter_signed (
         session_id varchar(36) NOT NULL,
         nature varchar(32) NOT NULL,
         at_ms bigint NOT NULL,
         encoding_method varchar(36) NOT NULL,
         public_key varchar(512) NULL,
         plain_data varchar(512) NOT NULL,
         signed_data text NOT NULL,
         PRIMARY KEY (session_id, nature)
       )`,
    );
  }

  override down(): void {
    this.addSql('DROP TABLE roaming_meter_signed');
  }
}
