import { BetterSqliteDriver } from '@mikro-orm/better-sqlite';
import { Migration } from '@mikro-orm/migrations';

/**
 * `csms_charger_event`: each charger's event log (docs/CSMS.md "Event log"): security events,
 * 2.0.1 NotifyEvent, firmware, diagnostics and log status, DataTransfer, certificate requests and
 * charging limits, with a severity. Kept to the newest rows of each charger (src/csms/report-store.ts).
 *
 * `csms_device_variable`: a 2.0.1 charger's device model as its NotifyReport parts gave it, one
 * row per attribute of a variable.
 *
 * `csms_command_reply`: the replies of the operations that return data (GetConfiguration,
 * GetVariables, ...), by command id, the newest of each charger kept; outside the actor's state,
 * which is written whole on each change.
 *
 * `csms_session.remote_start_command_id`: the remote start (its command id) a session followed.
 */
export class M0013ChargerReports extends Migration {
  override up(): void {
    const id =
      this.driver instanceof BetterSqliteDriver ? 'INTEGER PRIMARY KEY AUTOINCREMENT' : 'bigserial PRIMARY KEY';
    this.addSql(
      `CREATE TABLE csms_charger_event (
         id ${id},
         charge_point_id varchar(48) NOT NULL,
         action varchar(64) NOT NULL,
         severity varchar(8) NOT NULL,
         summary text NOT NULL,
         detail text NOT NULL,
         at_ms bigint NOT NULL,
         received_at bigint NOT NULL
       )`,
    );
    this.addSql('CREATE INDEX csms_charger_event_cp_idx ON csms_charger_event (charge_point_id, id)');
    this.addSql(
      `CREATE TABLE csms_device_variable (
         charge_point_id varchar(48) NOT NULL,
         component varchar(50) NOT NULL,
         component_instance varchar(50) NOT NULL,
         evse_id integer NOT NULL,
         connector_id integer NOT NULL,
         variable varchar(50) NOT NULL,
         variable_instance varchar(50) NOT NULL,
         attribute varchar(8) NOT NULL,
         value text,
         mutability varchar(16),
         data_type varchar(16),
         unit varchar(16),
         request_id integer NOT NULL,
         updated_at bigint NOT NULL,
         PRIMARY KEY (charge_point_id, component, component_instance, evse_id, connector_id, variable, variable_instance, attribute)
       )`,
    );
    this.addSql(
      `CREATE TABLE csms_command_reply (
         command_id varchar(36) PRIMARY KEY,
         charge_point_id varchar(48) NOT NULL,
         reply text NOT NULL,
         received_at bigint NOT NULL
       )`,
    );
    this.addSql('CREATE INDEX csms_command_reply_cp_idx ON csms_command_reply (charge_point_id, received_at)');
    this.addSql('ALTER TABLE csms_session ADD COLUMN remote_start_command_id varchar(36)');
  }

  override down(): void {
    this.addSql('ALTER TABLE csms_session DROP COLUMN remote_start_command_id');
    this.addSql('DROP TABLE csms_command_reply');
    this.addSql('DROP TABLE csms_device_variable');
    this.addSql('DROP TABLE csms_charger_event');
  }
}
