import type { PartyIdentity } from '../core/auth.js';
import type { ObjectStore } from '../store/object-store.js';
import type { Tariff } from '../tariffs/schemas-2.2.1.js';
import { selectTariff } from '../../tariffs/engine.js';
import type { StoredLocation } from './schemas-2.2.1.js';
import type * as V211 from './schemas-2.1.1.js';

/** Which one of a connector's `tariff_ids` a 2.1.1 connector names as its `tariff_id`. */
export type TariffChoice = (ids: readonly string[]) => string | undefined;

/** The first: what a connector of someone else's location names (we do not price its sessions). */
export const firstTariff: TariffChoice = (ids) => ids[0];

/**
 * For our locations served in 2.1.1, which have one `tariff_id` per connector: of the
 * connector's `tariff_ids`, the one that would price a roamed session starting now (the first of
 * a roamed session's type whose validity holds now: engine.ts `selectTariff`), else the first.
 * Before, the first was named: a tariff valid only from next year, or AD_HOC_PAYMENT, read as
 * the connector's price while its sessions were billed with another. A connector with one
 * tariff needs no read, so a page of such locations is rendered as before.
 */
export async function ourTariffChoice(
  tariffs: Pick<ObjectStore<Tariff>, 'get'>,
  own: PartyIdentity,
  locations: readonly StoredLocation[],
  now = Date.now(),
): Promise<TariffChoice> {
  const ids = new Set<string>();
  for (const l of locations)
    for (const e of l.evses ?? [])
      for (const c of e.connectors)
        if ((c.tariff_ids?.length ?? 0) > 1) for (const id of c.tariff_ids ?? []) ids.add(id);
  if (ids.size === 0) return firstTariff;
  const held = new Map<string, Tariff>();
  await Promise.all(
    [...ids].map(async (id) => {
      const t = await tariffs.get({ ...own, id });
      if (t) held.set(id, t);
    }),
  );
  // the rule a roamed session's start is priced by, over the connector's tariffs in their order
  return (list) =>
    selectTariff(
      list.flatMap((id) => held.get(id) ?? []),
      now,
    )?.id ?? list[0];
}

/**
 * The 2.1.1 location of a session or CDR with its connectors naming `used`, the tariff its
 * charging periods were priced with; none when `used` is undefined and `dropWhenNone` (a CDR
 * that no tariff priced). 2.1.1 has one `tariff_id` per connector, and the first of the
 * connector's `tariff_ids` may be one that did not apply: the object said one tariff in its
 * location and was priced with another.
 */
export function namingTariff(place: V211.Location, used: string | undefined, dropWhenNone: boolean): V211.Location {
  if (!place.evses || (used === undefined && !dropWhenNone)) return place;
  return {
    ...place,
    evses: place.evses.map((e) => ({
      ...e,
      connectors: e.connectors.map(({ tariff_id: _named, ...k }) =>
        used === undefined ? k : { ...k, tariff_id: used },
      ),
    })),
  };
}

/** The tariff the charging periods name first (ours are priced with one tariff each). */
export function tariffOfPeriods(
  periods: ReadonlyArray<{ tariff_id?: string | undefined }> | undefined,
): string | undefined {
  return periods?.find((p) => p.tariff_id !== undefined)?.tariff_id;
}
