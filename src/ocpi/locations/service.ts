import Type from '#typebox';
import { ObjectId39 } from '../core/schemas.js';
import { RequestValidationError } from '../../gateway/errors.js';
import { compileLazily } from '../../lazy-compile.js';
import type { OcpiFieldError } from '../../gateway/errors.js';
import type { PartyIdentity } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import { invalidParameters, unknownLocation, unknownLocationPart } from '../core/errors.js';
import { later, olderThan, stampOfReceipt } from '../core/datetime.js';
import { assertSameId } from '../core/guards.js';
import { mergeConnector, mergeEvse, mergeLocation } from './mappers.js';
import type { ObjectStore } from '../store/object-store.js';
import * as V221 from './schemas-2.2.1.js';

/**
 * Writes to locations, EVSEs and connectors, shared by the eMSP mounts (partners' locations),
 * the overview mount and the operator's own-location routes. PUT replaces, PATCH merges; a
 * merge must still give a complete object, otherwise the answer is 2001. Changes inside a
 * location go through `ObjectStore.update`, so concurrent ones do not overwrite each other.
 */

// what we store: a 2.2.1 Location whose ids may have the 39 characters 2.1.1 gives them (Decisions 34)
const StoredEvse = Type.Object({ ...V221.Evse.properties, uid: ObjectId39 });
const StoredLocation = Type.Object({
  ...V221.Location.properties,
  id: Type.Optional(ObjectId39),
  evses: Type.Optional(Type.Array(StoredEvse)),
});
const checkLocation = compileLazily(StoredLocation);
const checkEvse = compileLazily(StoredEvse);

function assertComplete(
  check: { Check(v: unknown): boolean; Errors(v: unknown): Array<{ instancePath: string; message: string }> },
  value: unknown,
  what: string,
): void {
  if (check.Check(value)) return;
  const errors: OcpiFieldError[] = check.Errors(value).map((e) => ({
    field: e.instancePath.replace(/^\//, '').replace(/\//g, '.') || what,
    message: `${what} after the patch: ${e.message}`,
    type: 'value_error.incomplete',
  }));
  throw invalidParameters(errors);
}

export async function findLocation(
  ctx: OcpiContext,
  party: PartyIdentity,
  locationId: string,
): Promise<V221.StoredLocation> {
  const found = await ctx.stores.locations.get({ ...party, id: locationId });
  if (!found) throw unknownLocation();
  return found;
}

/** An EVSE of a location we hold, for a GET of it (404 2003 "Unknown EVSE" when absent). */
export function evseOf(location: V221.StoredLocation, uid: string): V221.Evse {
  const evse = location.evses?.find((e) => e.uid === uid);
  if (!evse) throw unknownLocationPart('EVSE');
  return evse;
}

/** A connector of an EVSE, for a GET of it (404 2003 "Unknown connector" when absent). */
export function connectorOf(evse: V221.Evse, id: string): V221.Connector {
  const connector = evse.connectors.find((c) => c.id === id);
  if (!connector) throw unknownLocationPart('connector');
  return connector;
}

/**
 * OCPI 2.2.1 Location and PublishTokenType rules (docs/OCPI.md, Decisions 32): a published
 * location names no `publish_allowed_to`; each entry sets `uid`, `visual_number` or `group_id`,
 * `uid` with its `type`, `visual_number` with its `issuer`. 422 naming the entry otherwise.
 */
function assertPublishRule(location: { publish?: boolean; publish_allowed_to?: V221.PublishToken[] }): void {
  const allowed = location.publish_allowed_to ?? [];
  const fail = (loc: Array<string | number>, msg: string, input: unknown): never => {
    throw new RequestValidationError([{ loc: ['body', ...loc], msg, type: 'publish_rule', input, ctx: {} }]);
  };
  if (location.publish !== false && allowed.length > 0)
    fail(['publish_allowed_to'], 'publish_allowed_to may only be used when publish is false', allowed);
  allowed.forEach((t, i) => {
    if (t.uid === undefined && t.visual_number === undefined && t.group_id === undefined)
      fail(['publish_allowed_to', i], 'a PublishToken sets uid, visual_number or group_id', t);
    if (t.uid !== undefined && t.type === undefined)
      fail(['publish_allowed_to', i, 'type'], 'a PublishToken with a uid has its type', t);
    if (t.visual_number !== undefined && t.issuer === undefined)
      fail(['publish_allowed_to', i, 'issuer'], 'a PublishToken with a visual_number has its issuer', t);
  });
}

/**
 * An EVSE's uid is unique within its location, a connector's id within its EVSE (mod_locations:
 * the ids that address them in every later PATCH, GET and session): a body naming one twice is
 * 422 at the second. Kept, the second was unreachable, and a PATCH of the uid changed the first.
 */
function assertUniqueEvses(evses: readonly V221.Evse[]): void {
  const uids = new Set<string>();
  evses.forEach((evse, i) => {
    if (uids.has(evse.uid))
      duplicate(['evses', i, 'uid'], `EVSE uid ${evse.uid} is given twice in this location`, evse.uid);
    uids.add(evse.uid);
    assertUniqueConnectors(evse, ['evses', i]);
  });
}

/** A connector's id is unique within its EVSE (`at`: where the EVSE is in the body). */
function assertUniqueConnectors(evse: V221.Evse, at: Array<string | number>): void {
  const ids = new Set<string>();
  (evse.connectors ?? []).forEach((c, j) => {
    if (ids.has(c.id))
      duplicate([...at, 'connectors', j, 'id'], `connector id ${c.id} is given twice in EVSE ${evse.uid}`, c.id);
    ids.add(c.id);
  });
}

function duplicate(loc: Array<string | number>, msg: string, input: string): never {
  throw new RequestValidationError([{ loc: ['body', ...loc], msg, type: 'value_error.duplicate', input, ctx: {} }]);
}

export async function putLocation(
  ctx: OcpiContext,
  party: PartyIdentity,
  locationId: string,
  body: V221.Location,
  /** the store to write to (a transaction's: ObjectStore.on); default the context's */
  locations: ObjectStore<V221.StoredLocation> = ctx.stores.locations,
  /** a partner's PUT: not applied over a location updated later */
  keepNewer = false,
): Promise<V221.StoredLocation> {
  assertSameId('id', locationId, body.id);
  assertPublishRule(body);
  assertUniqueEvses(body.evses ?? []);
  const location: V221.StoredLocation = { ...body, ...party, id: locationId };
  const key = { ...party, id: locationId };
  return keepNewer ? (await locations.putUnlessOlder(key, location)).object : locations.put(key, location);
}

export async function patchLocation(
  ctx: OcpiContext,
  party: PartyIdentity,
  locationId: string,
  patch: V221.LocationPatch,
  locations: ObjectStore<V221.StoredLocation> = ctx.stores.locations,
  /** a partner's PATCH: not applied when older than the location held */
  keepNewer = false,
): Promise<V221.StoredLocation> {
  assertSameId('id', locationId, patch.id);
  const updated = await locations.update({ ...party, id: locationId }, (existing) => {
    if (keepNewer && olderThan(patch.last_updated, existing.last_updated)) return existing;
    const stamp = patch.last_updated ?? stampOfReceipt(existing.last_updated);
    // a Location's last_updated is when it "or one of its EVSEs or Connectors" last changed: a
    // PATCH stamped before one of its EVSEs' leaves that later stamp on the location
    const merged = mergeLocation(existing, { ...patch, last_updated: stamp });
    assertComplete(checkLocation, merged, 'location');
    assertPublishRule(merged);
    return withChildrenStamp(merged);
  });
  if (!updated) throw unknownLocation();
  return updated;
}

/** The location, its `last_updated` raised to the latest of its EVSEs' and connectors', when later. */
function withChildrenStamp(location: V221.StoredLocation): V221.StoredLocation {
  let latest = location.last_updated;
  for (const evse of location.evses ?? []) {
    latest = later(evse.last_updated, latest);
    for (const c of evse.connectors ?? []) latest = later(c.last_updated, latest);
  }
  return latest === location.last_updated ? location : { ...location, last_updated: latest };
}

export async function patchEvse(
  ctx: OcpiContext,
  party: PartyIdentity,
  locationId: string,
  evseUid: string,
  /** without `last_updated`: a 2.1.1 PATCH, stamped on receipt (stampOfReceipt) */
  patch: V221.EvsePatch,
): Promise<V221.Evse> {
  assertSameId('uid', evseUid, patch.uid);
  let result: V221.Evse | undefined;
  const updated = await ctx.stores.locations.update({ ...party, id: locationId }, (location) => {
    const evse = location.evses?.find((e) => e.uid === evseUid);
    if (!evse) throw unknownLocationPart('EVSE');
    if (olderThan(patch.last_updated, evse.last_updated)) {
      result = evse;
      return location;
    }
    const stamp = patch.last_updated ?? stampOfReceipt(evse.last_updated);
    const merged = mergeEvse(evse, { ...patch, last_updated: stamp });
    assertComplete(checkEvse, merged, 'evse');
    result = merged;
    const evses = (location.evses ?? []).map((e) => (e.uid === evseUid ? merged : e));
    return { ...location, evses, last_updated: later(location.last_updated, stamp) };
  });
  if (!updated || !result) throw unknownLocation();
  return result;
}

/** PUT of an EVSE: replaces (or adds) it in a location we already have (404 2003 otherwise). */
export async function putEvse(
  ctx: OcpiContext,
  party: PartyIdentity,
  locationId: string,
  evseUid: string,
  evse: V221.Evse,
): Promise<V221.Evse> {
  assertSameId('uid', evseUid, evse.uid);
  assertUniqueConnectors(evse, []);
  let result = evse;
  const updated = await ctx.stores.locations.update({ ...party, id: locationId }, (location) => {
    const held = location.evses?.find((e) => e.uid === evseUid);
    if (held && olderThan(evse.last_updated, held.last_updated)) {
      result = held;
      return location;
    }
    result = evse;
    const known = held !== undefined;
    const evses = known
      ? (location.evses ?? []).map((e) => (e.uid === evseUid ? evse : e))
      : [...(location.evses ?? []), evse];
    return { ...location, evses, last_updated: later(location.last_updated, evse.last_updated) };
  });
  if (!updated) throw unknownLocation();
  return result;
}

export interface ConnectorAddress {
  location_id: string;
  evse_uid: string;
  connector_id: string;
}

/**
 * Changes one connector of an EVSE we hold: `change` gets the stored connector (undefined when
 * there is none) and the change's stamp, and returns the new one; the EVSE and location move their
 * last_updated forward. `lastUpdated` undefined: a 2.1.1 PATCH without one, stamped on receipt
 * (stampOfReceipt). An unknown location or EVSE is 404 2003.
 */
async function changeConnector(
  ctx: OcpiContext,
  party: PartyIdentity,
  path: ConnectorAddress,
  lastUpdated: string | undefined,
  change: (existing: V221.Connector | undefined, stamp: string) => V221.Connector,
): Promise<V221.Connector> {
  let result: V221.Connector | undefined;
  const updated = await ctx.stores.locations.update({ ...party, id: path.location_id }, (location) => {
    const evse = location.evses?.find((e) => e.uid === path.evse_uid);
    if (!evse) throw unknownLocationPart('EVSE');
    const held = evse.connectors.find((c) => c.id === path.connector_id);
    if (held && olderThan(lastUpdated, held.last_updated)) {
      result = held;
      return location;
    }
    const stamp = lastUpdated ?? stampOfReceipt(held?.last_updated ?? evse.last_updated);
    const next = change(held, stamp);
    const known = evse.connectors.some((c) => c.id === path.connector_id);
    const updatedEvse = {
      ...evse,
      connectors: known
        ? evse.connectors.map((c) => (c.id === path.connector_id ? next : c))
        : [...evse.connectors, next],
      last_updated: later(evse.last_updated, stamp),
    };
    assertComplete(checkEvse, updatedEvse, 'evse');
    result = next;
    const evses = (location.evses ?? []).map((e) => (e.uid === path.evse_uid ? updatedEvse : e));
    return { ...location, evses, last_updated: later(location.last_updated, stamp) };
  });
  if (!updated || !result) throw unknownLocation();
  return result;
}

/** PUT of a connector: replaces (or adds) it in an EVSE we already have. */
export function putConnector(
  ctx: OcpiContext,
  party: PartyIdentity,
  path: ConnectorAddress,
  connector: V221.Connector,
): Promise<V221.Connector> {
  assertSameId('id', path.connector_id, connector.id);
  return changeConnector(ctx, party, path, connector.last_updated, () => connector);
}

/** PATCH of a connector we hold (an unknown one is 404 2003). */
export function patchConnector(
  ctx: OcpiContext,
  party: PartyIdentity,
  path: ConnectorAddress,
  patch: Partial<V221.Connector>,
): Promise<V221.Connector> {
  assertSameId('id', path.connector_id, patch.id);
  return changeConnector(ctx, party, path, patch.last_updated, (existing, stamp) => {
    if (!existing) throw unknownLocationPart('connector');
    return mergeConnector(existing, { ...patch, last_updated: stamp });
  });
}
