import type { TSchema } from '#typebox';
import { route } from '../../gateway/route-table.js';
import type { PartyIdentity } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import { assertOwnParty, assertSameId } from '../core/guards.js';
import { callerOwnPath, type OcpiRequest, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope } from '../core/schemas.js';
import {
  connectorFrom211,
  connectorPatchFrom211,
  connectorTo211,
  evseFrom211,
  evsePatchFrom211,
  evseTo211,
  locationFrom211,
  locationPatchFrom211,
  locationTo211,
} from './mappers.js';
import * as L211 from './schemas-2.1.1.js';
import * as L221 from './schemas-2.2.1.js';
import {
  connectorOf,
  evseOf,
  findLocation,
  patchConnector,
  patchEvse,
  patchLocation,
  putConnector,
  putEvse,
  putLocation,
} from './service.js';

/**
 * The Receiver interface of the locations module (the eMSP side), both versions: a partner CPO
 * pushes its own locations, EVSEs and connectors (PUT, PATCH) and reads back what we hold of
 * them (GET), at `/locations/{country_code}/{party_id}/{location_id}[/{evse_uid}[/{connector_id}]]`
 * (OCPI 2.1.1 mod_locations.md and 2.2.1 mod_locations.asciidoc, "Receiver Interface"). Stored
 * in the 2.2.1 shape; a 2.1.1 body is converted on the way in and out (mappers.ts). An EVSE or
 * connector of a location we do not have is 404 2003 (docs/OCPI.md, Decisions 10).
 */

/** What differs between the versions: the body schemas and the conversions to and from the stored shape. */
interface Codec {
  version: OcpiVersion;
  location: TSchema;
  locationSchema: TSchema;
  locationPatch: TSchema;
  evse: TSchema;
  evsePatch: TSchema;
  connector: TSchema;
  connectorPatch: TSchema;
  /** the path parameters of each level (2.1.1 ids have 39 characters, 2.2.1 ones 36) */
  paths: {
    location: typeof L221.LocationPath;
    evse: typeof L221.EvsePath;
    connector: typeof L221.ConnectorPath;
  };
  locationIn(body: unknown, party: PartyIdentity, id: string): L221.StoredLocation;
  locationOut(l: L221.StoredLocation): unknown;
  /** `last_updated` absent: a 2.1.1 PATCH without it, stamped on receipt (Decisions 33) */
  locationPatchIn(p: unknown): L221.LocationPatch;
  evseIn(e: unknown): L221.Evse;
  evseOut(e: L221.Evse): unknown;
  evsePatchIn(p: unknown): L221.EvsePatch;
  connectorIn(c: unknown): L221.Connector;
  connectorOut(c: L221.Connector): unknown;
  connectorPatchIn(p: unknown): Partial<L221.Connector>;
}

// the route's body schema has validated each `unknown` below before a codec function sees it
const codec221: Codec = {
  version: '2.2.1',
  location: L221.Location,
  locationSchema: L221.LocationOut,
  locationPatch: L221.LocationPatchBody,
  evse: L221.Evse,
  evsePatch: L221.EvsePatchBody,
  connector: L221.Connector,
  connectorPatch: L221.ConnectorPatchBody,
  paths: { location: L221.LocationPath, evse: L221.EvsePath, connector: L221.ConnectorPath },
  locationIn: (body, party, id) => {
    const location = body as L221.Location;
    // the body names the party of the path (the path's is one of the caller's)
    assertOwnParty(party, location);
    // the body's id, when given, must be the path's (putLocation sees the stored object only)
    assertSameId('id', id, location.id);
    return { ...location, ...party, id };
  },
  locationOut: (l) => l,
  locationPatchIn: (p) => p as L221.LocationPatch,
  evseIn: (e) => e as L221.Evse,
  evseOut: (e) => e,
  evsePatchIn: (p) => p as L221.EvsePatch,
  connectorIn: (c) => c as L221.Connector,
  connectorOut: (c) => c,
  connectorPatchIn: (p) => p as Partial<L221.Connector>,
};

const codec211: Codec = {
  version: '2.1.1',
  location: L211.Location,
  locationSchema: L211.Location,
  locationPatch: L211.LocationPatchBody,
  evse: L211.Evse,
  evsePatch: L211.EvsePatchBody,
  connector: L211.Connector,
  connectorPatch: L211.ConnectorPatchBody,
  paths: { location: L211.LocationPath, evse: L211.EvsePath, connector: L211.ConnectorPath },
  locationIn: (body, party, id) => {
    const location = body as L211.Location;
    assertSameId('id', id, location.id);
    return { ...locationFrom211(location, party), id };
  },
  locationOut: locationTo211,
  locationPatchIn: (p) => {
    const patch = p as L211.LocationPatch & { last_updated?: string };
    return locationPatchFrom211(patch);
  },
  evseIn: (e) => evseFrom211(e as L211.Evse),
  evseOut: evseTo211,
  evsePatchIn: (p) => {
    const patch = p as L211.EvsePatch & { last_updated?: string };
    return evsePatchFrom211(patch);
  },
  connectorIn: (c) => connectorFrom211(c as L211.Connector),
  connectorOut: connectorTo211,
  connectorPatchIn: (p) => {
    const patch = p as L211.ConnectorPatch & { last_updated?: string };
    return connectorPatchFrom211(patch);
  },
};

const LOCATION = '/locations/:country_code/:party_id/:location_id';
const EVSE = `${LOCATION}/:evse_uid`;
const CONNECTOR = `${EVSE}/:connector_id`;
const unknown = { 404: 'unknown location, EVSE or connector (status_code 2003)' };

function paramsOf(req: OcpiRequest): { location_id: string; evse_uid: string; connector_id: string } {
  const p = req.params as Record<string, string | undefined>;
  return { location_id: p.location_id ?? '', evse_uid: p.evse_uid ?? '', connector_id: p.connector_id ?? '' };
}

export interface ReceiverOptions {
  /** the location-level GET (the overview has its own, which also reads ours) */
  locationGet?: boolean;
  summaries?: { put?: string; patch?: string };
}

/** The helpers the routes of one version share. */
function kit(ctx: OcpiContext, c: Codec) {
  const party = (req: OcpiRequest) => callerOwnPath(req, c.version);
  const held = (req: OcpiRequest) => findLocation(ctx, party(req).party, paramsOf(req).location_id);
  return { c, party, held, common: { module: 'locations' as const, responses: unknown } };
}
type Kit = ReturnType<typeof kit>;

/** Every route of the locations Receiver of `version`. */
export function locationsReceiver(ctx: OcpiContext, version: OcpiVersion, opts: ReceiverOptions = {}): OcpiRoute[] {
  const k = kit(ctx, version === '2.2.1' ? codec221 : codec211);
  return [...locationRoutes(ctx, k, opts), ...evseRoutes(ctx, k), ...connectorRoutes(ctx, k)];
}

/** GET (unless the options leave it out), PUT and PATCH of a location. */
function locationRoutes(ctx: OcpiContext, { c, party, held, common }: Kit, opts: ReceiverOptions): OcpiRoute[] {
  const routes: OcpiRoute[] = [];
  if (opts.locationGet !== false)
    routes.push(
      route({
        ...common,
        method: 'GET',
        path: LOCATION,
        summary: "One of the caller's locations, as we hold it",
        params: c.paths.location,
        response: Envelope(c.locationSchema),
        handler: async (req) => ({ data: c.locationOut(await held(req)) }),
      }),
    );
  routes.push(
    route({
      ...common,
      method: 'PUT',
      path: LOCATION,
      summary: opts.summaries?.put ?? "A new or replaced location of the caller (the body's id must be the path's)",
      responses: {},
      params: c.paths.location,
      body: c.location,
      response: Envelope(c.locationSchema),
      handler: async (req) => {
        const { party: own } = party(req);
        const id = req.params.location_id;
        const location = c.locationIn(req.body, own, id);
        return { data: c.locationOut(await putLocation(ctx, own, id, location, undefined, true)) };
      },
    }),
    route({
      ...common,
      method: 'PATCH',
      path: LOCATION,
      summary: opts.summaries?.patch ?? "Partial update of one of the caller's locations (EVSEs merge by uid)",
      params: c.paths.location,
      body: c.locationPatch,
      response: Envelope(c.locationSchema),
      handler: async (req) => {
        const { party: own } = party(req);
        const patch = c.locationPatchIn(req.body);
        // the body names the party of the path, if any (the path's is one of the caller's)
        assertOwnParty(own, patch);
        const held = await patchLocation(ctx, own, req.params.location_id, patch, undefined, true);
        return { data: c.locationOut(held) };
      },
    }),
  );
  return routes;
}

/** GET, PUT and PATCH of an EVSE. */
function evseRoutes(ctx: OcpiContext, { c, party, held, common }: Kit): OcpiRoute[] {
  return [
    route({
      ...common,
      method: 'GET',
      path: EVSE,
      summary: "One EVSE of one of the caller's locations",
      params: c.paths.evse,
      response: Envelope(c.evse),
      handler: async (req) => ({ data: c.evseOut(evseOf(await held(req), req.params.evse_uid)) }),
    }),
    route({
      ...common,
      method: 'PUT',
      path: EVSE,
      summary: "A new or replaced EVSE of one of the caller's locations",
      params: c.paths.evse,
      body: c.evse,
      response: Envelope(c.evse),
      handler: async (req) => {
        const { location_id, evse_uid } = paramsOf(req);
        return { data: c.evseOut(await putEvse(ctx, party(req).party, location_id, evse_uid, c.evseIn(req.body))) };
      },
    }),
    route({
      ...common,
      method: 'PATCH',
      path: EVSE,
      summary: "Partial update of an EVSE of one of the caller's locations (connectors merge by id)",
      params: c.paths.evse,
      body: c.evsePatch,
      response: Envelope(c.evse),
      handler: async (req) => {
        const { location_id, evse_uid } = paramsOf(req);
        const patch = c.evsePatchIn(req.body);
        return { data: c.evseOut(await patchEvse(ctx, party(req).party, location_id, evse_uid, patch)) };
      },
    }),
  ];
}

/** GET, PUT and PATCH of a connector. */
function connectorRoutes(ctx: OcpiContext, { c, party, held, common }: Kit): OcpiRoute[] {
  return [
    route({
      ...common,
      method: 'GET',
      path: CONNECTOR,
      summary: "One connector of one of the caller's locations",
      params: c.paths.connector,
      response: Envelope(c.connector),
      handler: async (req) => {
        const evse = evseOf(await held(req), req.params.evse_uid);
        return { data: c.connectorOut(connectorOf(evse, req.params.connector_id)) };
      },
    }),
    route({
      ...common,
      method: 'PUT',
      path: CONNECTOR,
      summary: "A new or replaced connector of an EVSE of one of the caller's locations",
      params: c.paths.connector,
      body: c.connector,
      response: Envelope(c.connector),
      handler: async (req) => ({
        data: c.connectorOut(await putConnector(ctx, party(req).party, paramsOf(req), c.connectorIn(req.body))),
      }),
    }),
    route({
      ...common,
      method: 'PATCH',
      path: CONNECTOR,
      summary: 'Partial update of a connector',
      params: c.paths.connector,
      body: c.connectorPatch,
      response: Envelope(c.connector),
      handler: async (req) => ({
        data: c.connectorOut(await patchConnector(ctx, party(req).party, paramsOf(req), c.connectorPatchIn(req.body))),
      }),
    }),
  ];
}
