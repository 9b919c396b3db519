import type { MigrationObject } from '@mikro-orm/core';
import { M0001ActorRuntime } from './m0001-actor-runtime.js';
import { M0002Ocpi } from './m0002-ocpi.js';
import { M0003Csms } from './m0003-csms.js';
import { M0004HotPath } from './m0004-hot-path.js';
import { M0005FenceClock } from './m0005-fence-clock.js';
import { M0006Ocpi221 } from './m0006-ocpi-221.js';
import { M0007OcpiParties } from './m0007-ocpi-parties.js';
import { M0008Roaming } from './m0008-roaming.js';
import { M0009Outbox } from './m0009-outbox.js';
import { M0010RoamingReservations } from './m0010-roaming-reservations.js';
import { M0011RoamingMeter } from './m0011-roaming-meter.js';
import { M0012CdrChecks } from './m0012-cdr-checks.js';
import { M0013ChargerReports } from './m0013-charger-reports.js';
import { M0014BootPolicy } from './m0014-boot-policy.js';
import { M0015ChargerPasswords } from './m0015-charger-passwords.js';
import { M0016MeterTimeLastSeen } from './m0016-meter-time-last-seen.js';
import { M0017LocalLists } from './m0017-local-lists.js';
import { M0018SessionSnapshot } from './m0018-session-snapshot.js';
import { M0019MeterSamples } from './m0019-meter-samples.js';
import { M0020ActorStateVersion } from './m0020-actor-state-version.js';
import { M0021SessionTransactionReuse } from './m0021-session-transaction-reuse.js';
import { M0022TokenUidCase } from './m0022-token-uid-case.js';
import { M0023SessionStopToken } from './m0023-session-stop-token.js';
import { M0024LocalListGroup } from './m0024-local-list-group.js';
import { M0025MeterState } from './m0025-meter-state.js';
import { M0026TariffVersions } from './m0026-tariff-versions.js';
import { M0027CdrCheckTariffIndex } from './m0027-cdr-check-tariff-index.js';
import { M0028OcpiCreatedOrder } from './m0028-ocpi-created-order.js';
import { M0029MeterStatePower } from './m0029-meter-state-power.js';
import { M0030MeterSigned } from './m0030-meter-signed.js';
import { M0031ReceivedCredits } from './m0031-received-credits.js';
import { migrationNames, type MigrationName } from './names.js';

const classes: Record<MigrationName, MigrationObject['class']> = {
  'm0001-actor-runtime': M0001ActorRuntime,
  'm0002-ocpi': M0002Ocpi,
  'm0003-csms': M0003Csms,
  'm0004-hot-path': M0004HotPath,
  'm0005-fence-clock': M0005FenceClock,
  'm0006-ocpi-221': M0006Ocpi221,
  'm0007-ocpi-parties': M0007OcpiParties,
  'm0008-roaming': M0008Roaming,
  'm0009-outbox': M0009Outbox,
  'm0010-roaming-reservations': M0010RoamingReservations,
  'm0011-roaming-meter': M0011RoamingMeter,
  'm0012-cdr-checks': M0012CdrChecks,
  'm0013-charger-reports': M0013ChargerReports,
  'm0014-boot-policy': M0014BootPolicy,
  'm0015-charger-passwords': M0015ChargerPasswords,
  'm0016-meter-time-last-seen': M0016MeterTimeLastSeen,
  'm0017-local-lists': M0017LocalLists,
  'm0018-session-snapshot': M0018SessionSnapshot,
  'm0019-meter-samples': M0019MeterSamples,
  'm0020-actor-state-version': M0020ActorStateVersion,
  'm0021-session-transaction-reuse': M0021SessionTransactionReuse,
  'm0022-token-uid-case': M0022TokenUidCase,
  'm0023-session-stop-token': M0023SessionStopToken,
  'm0024-local-list-group': M0024LocalListGroup,
  'm0025-meter-state': M0025MeterState,
  'm0026-tariff-versions': M0026TariffVersions,
  'm0027-cdr-check-tariff-index': M0027CdrCheckTariffIndex,
  'm0028-ocpi-created-order': M0028OcpiCreatedOrder,
  'm0029-meter-state-power': M0029MeterStatePower,
  'm0030-meter-signed': M0030MeterSigned,
  'm0031-received-credits': M0031ReceivedCredits,
};

/** Every migration in order. Names are stable: they are recorded in mikro_orm_migrations. */
export const migrationsList: MigrationObject[] = migrationNames.map((name) => ({ name, class: classes[name] }));
