/**
 * The migrations' names, in order, as recorded in mikro_orm_migrations. Kept apart from their
 * classes so that a process can tell whether any is pending without loading MikroORM's migrator
 * (`Database.pendingMigrations`); index.ts pairs each name with its class.
 */
export const migrationNames = [
  'm0001-actor-runtime',
  'm0002-ocpi',
  'm0003-csms',
  'm0004-hot-path',
  'm0005-fence-clock',
  'm0006-ocpi-221',
  'm0007-ocpi-parties',
  'm0008-roaming',
  'm0009-outbox',
  'm0010-roaming-reservations',
  'm0011-roaming-meter',
  'm0012-cdr-checks',
  'm0013-charger-reports',
  'm0014-boot-policy',
  'm0015-charger-passwords',
  'm0016-meter-time-last-seen',
  'm0017-local-lists',
  'm0018-session-snapshot',
  'm0019-meter-samples',
  'm0020-actor-state-version',
  'm0021-session-transaction-reuse',
  'm0022-token-uid-case',
  'm0023-session-stop-token',
  'm0024-local-list-group',
  'm0025-meter-state',
  'm0026-tariff-versions',
  'm0027-cdr-check-tariff-index',
  'm0028-ocpi-created-order',
  'm0029-meter-state-power',
  'm0030-meter-signed',
  'm0031-received-credits',
] as const;

export type MigrationName = (typeof migrationNames)[number];
