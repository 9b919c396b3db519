import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { assertOwnParty } from '../core/guards.js';
import { assertSameId } from '../core/guards.js';
import { callerOwnPath, type OcpiRequest, type OcpiRoute } from '../core/mount-kit.js';
import { connectorTo211, evseTo211, locationFrom211, locationTo211 } from './mappers.js';
import { Envelope } from '../core/schemas.js';
import * as L211 from './schemas-2.1.1.js';
import * as L221 from './schemas-2.2.1.js';
import {
  connectorOf,
  evseOf,
  findLocation,
  patchConnector211,
  patchEvse,
  patchLocation,
  putEvse211,
  putLocation,
} from './service.js';

/**
 * The Receiver interface of the locations module (the eMSP side): a partner CPO pushes its own
 * locations, EVSEs and connectors to us (docs/OCPI.md "Mounts", "Who sees what").
 */

/**
 * PUT and PATCH `/locations/{country_code}/{party_id}/{location_id}` (2.2.1): a partner pushes
 * one of its own locations. The eMSP 2.2.1 mount and the overview serve the same routes; only
 * their summaries differ.
 */
export function locationPushRoutes221(ctx: OcpiContext, summaries: { put: string; patch: string }): OcpiRoute[] {
  return [
    route({
      method: 'PUT',
      path: '/locations/:country_code/:party_id/:location_id',
      module: 'locations',
      summary: summaries.put,
      params: L221.LocationPath,
      body: L221.Location,
      response: Envelope(L221.LocationOut),
      handler: async (req) => {
        const { caller, party } = callerOwnPath(req, '2.2.1');
        const body = req.body;
        assertOwnParty(caller, body);
        return { data: await putLocation(ctx, party, req.params.location_id, body) };
      },
    }),
    route({
      method: 'PATCH',
      path: '/locations/:country_code/:party_id/:location_id',
      module: 'locations',
      summary: summaries.patch,
      params: L221.LocationPath,
      body: L221.LocationPatchBody,
      response: Envelope(L221.LocationOut),
      responses: { 404: 'unknown location (status_code 2003)' },
      handler: async (req) => {
        const { caller, party } = callerOwnPath(req, '2.2.1');
        const body = req.body;
        assertOwnParty(caller, body);
        return { data: await patchLocation(ctx, party, req.params.location_id, body) };
      },
    }),
  ];
}

/** PATCH `/locations/{country_code}/{party_id}/{location_id}/{evse_uid}` (2.2.1). */
export function evsePatchRoute221(ctx: OcpiContext): OcpiRoute {
  return route({
    method: 'PATCH',
    path: '/locations/:country_code/:party_id/:location_id/:evse_uid',
    module: 'locations',
    summary: "Partial update of an EVSE of one of the caller's locations",
    params: L221.EvsePath,
    body: L221.EvsePatchBody,
    response: Envelope(L221.Evse),
    responses: { 404: 'unknown location or EVSE (status_code 2003)' },
    handler: async (req) => {
      const { party } = callerOwnPath(req, '2.2.1');
      const body = req.body;
      return { data: await patchEvse(ctx, party, req.params.location_id, req.params.evse_uid, body) };
    },
  });
}

/**
 * 2.1.1: PUT of an EVSE and PATCH of a connector of one of the caller's locations (a location
 * we do not have is 404 2003: docs/OCPI.md, Decisions 10).
 */
export function locationsReceiver211(ctx: OcpiContext): OcpiRoute[] {
  return [
    route({
      method: 'PUT',
      path: '/locations/:country_code/:party_id/:location_id/:evse_uid',
      module: 'locations',
      summary: "A new or updated EVSE of one of the caller's locations",
      params: L211.EvsePath,
      body: L211.Evse,
      response: Envelope(L211.Evse),
      responses: { 404: 'unknown location (status_code 2003)' },
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        return { data: await putEvse211(ctx, party, req.params.location_id, req.params.evse_uid, req.body) };
      },
    }),
    route({
      method: 'PATCH',
      path: '/locations/:country_code/:party_id/:location_id/:evse_uid/:connector_id',
      module: 'locations',
      summary: 'Partial update of a connector',
      params: L211.ConnectorPath,
      body: L211.ConnectorPatchBody,
      response: Envelope(L211.Connector),
      responses: { 404: 'unknown location, EVSE or connector (status_code 2003)' },
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const path = {
          location_id: req.params.location_id,
          evse_uid: req.params.evse_uid,
          connector_id: req.params.connector_id,
        };
        return { data: await patchConnector211(ctx, party, path, req.body) };
      },
    }),
  ];
}

/** The caller's stored location of the path (404 2003 when we have none). */
async function callersLocation(ctx: OcpiContext, req: OcpiRequest, id: string): Promise<L221.StoredLocation> {
  const { party } = callerOwnPath(req, '2.1.1');
  return findLocation(ctx, party, id);
}

/**
 * 2.1.1: GET of one of the caller's locations, EVSEs or connectors as we hold them (in the 2.1.1
 * shape), and PUT of a whole location (OCPI 2.1.1 mod_locations, "Receiver Interface").
 */
export function locationObjects211(ctx: OcpiContext): OcpiRoute[] {
  const common = { method: 'GET', module: 'locations', responses: { 404: 'unknown (status_code 2003)' } } as const;
  return [
    route({
      ...common,
      path: '/locations/:country_code/:party_id/:location_id',
      summary: "One of the caller's locations, as we hold it",
      params: L221.LocationPath,
      response: Envelope(L211.Location),
      handler: async (req) => ({ data: locationTo211(await callersLocation(ctx, req, req.params.location_id)) }),
    }),
    route({
      ...common,
      path: '/locations/:country_code/:party_id/:location_id/:evse_uid',
      summary: "One EVSE of one of the caller's locations",
      params: L211.EvsePath,
      response: Envelope(L211.Evse),
      handler: async (req) => {
        const location = await callersLocation(ctx, req, req.params.location_id);
        return { data: evseTo211(evseOf(location, req.params.evse_uid)) };
      },
    }),
    route({
      ...common,
      path: '/locations/:country_code/:party_id/:location_id/:evse_uid/:connector_id',
      summary: "One connector of one of the caller's locations",
      params: L211.ConnectorPath,
      response: Envelope(L211.Connector),
      handler: async (req) => {
        const evse = evseOf(await callersLocation(ctx, req, req.params.location_id), req.params.evse_uid);
        return { data: connectorTo211(connectorOf(evse, req.params.connector_id)) };
      },
    }),
    locationPut211(ctx),
  ];
}

/** 2.1.1: PUT of a whole location of the caller, stored in the 2.2.1 shape and answered in 2.1.1. */
function locationPut211(ctx: OcpiContext): OcpiRoute {
  return route({
    method: 'PUT',
    path: '/locations/:country_code/:party_id/:location_id',
    module: 'locations',
    summary: "A new or replaced location of the caller (the body's id must be the path's)",
    params: L221.LocationPath,
    body: L211.Location,
    response: Envelope(L211.Location),
    handler: async (req) => {
      const { party } = callerOwnPath(req, '2.1.1');
      const id = req.params.location_id;
      assertSameId('id', id, req.body.id);
      const stored = await ctx.stores.locations.put({ ...party, id }, { ...locationFrom211(req.body, party), id });
      return { data: locationTo211(stored) };
    },
  });
}
