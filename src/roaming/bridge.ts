import type { EvseLink, OcpiEvseStatus, RoamingPort } from '../../actors/charge-point/ports.js';
import type { SqlRunner } from '../db/sql.js';
import type { StoredLocation } from '../ocpi/locations/schemas-2.2.1.js';
import { enqueue } from '../ocpi/outbox/outbox-store.js';
import { ObjectStore } from '../ocpi/store/object-store.js';
import type { OutboxHandle } from '../ocpi/module.js';
import type { ActorHost } from '../platform/services.js';
import { EvseLinkStore } from './evse-links.js';

/**
 * The roaming bridge as the charge-point actor's port (docs/ROAMING.md): its EVSE links, and the
 * status of a linked EVSE written into our OCPI location and queued for every registered eMSP,
 * both on the connection of the charger's turn, so they commit with it.
 */
export function roamingPort(host: ActorHost, outbox: OutboxHandle): RoamingPort {
  const links = new EvseLinkStore(host.db);
  const own = { country_code: host.config.OCPI_COUNTRY_CODE, party_id: host.config.OCPI_PARTY_ID };
  return {
    links: async (chargePointId): Promise<EvseLink[]> =>
      (await links.forChargePoint(chargePointId)).map(({ evse_number, location_id, evse_uid }) => ({
        evse_number,
        location_id,
        evse_uid,
      })),
    evseStatus: (link: EvseLink, status: OcpiEvseStatus) => async (tx: SqlRunner) => {
      await writeEvseStatus(tx, own, link, status);
    },
    queued: () => outbox.kick(),
  };
}

/**
 * Sets the status of a linked EVSE in our location, and queues its push when it changed (true
 * then). The EVSE's and the location's `last_updated` move to now (a location's is the latest of
 * its parts).
 */
export async function writeEvseStatus(
  tx: SqlRunner,
  own: { country_code: string; party_id: string },
  link: Pick<EvseLink, 'location_id' | 'evse_uid'>,
  status: OcpiEvseStatus,
): Promise<boolean> {
  const store = new ObjectStore<StoredLocation>(
    { query: (text, params) => tx.query(text, params), run: (text, params) => tx.run(text, params) },
    'locations',
  );
  const key = { ...own, id: link.location_id };
  const current = await store.get(key);
  const evse = current?.evses?.find((e) => e.uid === link.evse_uid);
  // the link outlived its location or EVSE (the operator replaced the location without it)
  if (!current || !evse || evse.status === status) return false;
  const now = new Date().toISOString();
  await store.update(key, (l) => ({
    ...l,
    last_updated: now,
    evses: (l.evses ?? []).map((e) => (e.uid === link.evse_uid ? { ...e, status, last_updated: now } : e)),
  }));
  await enqueue(tx, { role: 'EMSP' }, { kind: 'evse', location_id: link.location_id, evse_uid: link.evse_uid });
  return true;
}
