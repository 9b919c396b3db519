import Type from '#typebox';
import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import { unknownLocation } from '../core/errors.js';
import { assertOwnParty, requireLink } from '../core/guards.js';
import { responseRoutingHeaders } from '../core/routing.js';
import { listRoute, pathParty, type OcpiRequest, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope, ObjectId, ObjectId39 } from '../core/schemas.js';
import { connectorTo211, evseTo211, locationTo211 } from './mappers.js';
import { ourTariffChoice, type TariffChoice } from './tariff-choice.js';
import * as L211 from './schemas-2.1.1.js';
import * as L221 from './schemas-2.2.1.js';
import { visibilityOf } from '../store/object-store.js';
import { connectorOf, evseOf, findLocation } from './service.js';

/**
 * The Sender interface of the locations module (the CPO side): partners read our published
 * locations (docs/OCPI.md "Who sees what"; an unpublished one is left out and answers 404).
 */

/** 2.1.1: GET `/locations`, our published locations served in the 2.1.1 shape. */
export function locationsSender211(ctx: OcpiContext): OcpiRoute[] {
  return [
    listRoute(ctx, {
      path: '/locations',
      module: 'locations',
      summary: 'Our published locations (publish: true), paged (date_from inclusive, date_to exclusive)',
      version: '2.1.1',
      store: ctx.stores.locations,
      owner: 'ours',
      item: L211.Location,
      render: {
        name: '2.1.1',
        // a connector's one 2.1.1 tariff_id: the tariff that prices a roamed session now (tariff-choice.ts)
        page: async (items: L221.StoredLocation[]) => {
          const choose = await ourTariffChoice(ctx.stores.tariffs, ctx.own, items);
          return items.map((l) => locationTo211(l, choose));
        },
      },
      // 2.1.1 has no publish field: a location not for everyone is not served there
      publishedOnly: 'public',
    }),
  ];
}

/** 2.2.1: GET `/locations`, our published locations, paged. */
export function locationsList221(ctx: OcpiContext): OcpiRoute {
  return listRoute(ctx, {
    path: '/locations',
    module: 'locations',
    summary: 'Our published locations, and those publish_allowed_to lets the eMSP show to some drivers, paged',
    version: '2.2.1',
    store: ctx.stores.locations,
    owner: 'ours',
    item: L221.LocationOut,
    publishedOnly: 'allowed-to',
  });
}

/** 2.2.1 (the overview): GET of one location, ours or the caller's own (the caller reads back what it pushed). */
export function locationReadBack221(ctx: OcpiContext): OcpiRoute {
  return route({
    method: 'GET',
    path: '/locations/:country_code/:party_id/:location_id',
    module: 'locations',
    summary: "One of our locations, or one of the caller's",
    params: L221.LocationPath,
    response: Envelope(L221.LocationOut),
    responses: { 404: 'unknown location (status_code 2003)' },
    handler: async (req) => {
      const caller = requireLink(req.auth, '2.2.1');
      const party = pathParty(req);
      if (!ctx.isOwn(party)) assertOwnParty(caller, party);
      // ours is read by the platform's eMSP party: the answer goes to it, unless OCPI-from chose a party
      const reader = caller.role === 'EMSP' ? caller : caller.parties.find((p) => p.role === 'EMSP');
      if (ctx.isOwn(party) && !req.auth.routed && reader) req.koa.set(responseRoutingHeaders(ctx.ownParty(), reader));
      const location = await findLocation(ctx, party, req.params.location_id);
      // an unpublished location of ours is shown only when it names who may see it
      if (ctx.isOwn(party) && visibilityOf(location) === 0) throw unknownLocation();
      return { data: location };
    },
  });
}

const OneLocation = Type.Object({ location_id: ObjectId });
const OneEvse = Type.Object({ location_id: ObjectId, evse_uid: ObjectId });
const OneConnector = Type.Object({ location_id: ObjectId, evse_uid: ObjectId, connector_id: ObjectId });
// 2.1.1 gives location ids and EVSE uids 39 characters
const OneLocation211 = Type.Object({ location_id: ObjectId39 });
const OneEvse211 = Type.Object({ location_id: ObjectId39, evse_uid: ObjectId39 });
const OneConnector211 = Type.Object({ location_id: ObjectId39, evse_uid: ObjectId39, connector_id: ObjectId });

/** One of our published locations, for the one-object routes (its EVSE and connector: `evseOf`, `connectorOf`). */
type FindOurs = (req: OcpiRequest, id: string) => Promise<L221.StoredLocation>;

const ONE_OBJECT = { method: 'GET', module: 'locations', responses: { 404: 'unknown (status_code 2003)' } } as const;

/**
 * The Sender's GET of one object (OCPI 2.1.1 and 2.2.1 mod_locations, "Sender Interface"):
 * `/locations/{location_id}[/{evse_uid}[/{connector_id}]]`, one of our published locations, one
 * of its EVSEs or one connector, in the mount's version. Unknown or unpublished: 404, 2003.
 */
export function locationObjectRoutes(ctx: OcpiContext, version: OcpiVersion): OcpiRoute[] {
  const ours: FindOurs = async (req, id) => {
    requireLink(req.auth, version);
    const location = await findLocation(ctx, ctx.own, id);
    // 2.1.1 cannot say `publish: false`; 2.2.1 serves it with the tokens that may be shown it
    const visibility = visibilityOf(location);
    if (visibility === 0 || (visibility === 2 && version === '2.1.1')) throw unknownLocation();
    return location;
  };
  return version === '2.1.1'
    ? objectRoutes211(ours, (l) => ourTariffChoice(ctx.stores.tariffs, ctx.own, [l]))
    : objectRoutes221(ours);
}

function objectRoutes211(ours: FindOurs, choice: (l: L221.StoredLocation) => Promise<TariffChoice>): OcpiRoute[] {
  return [
    route({
      ...ONE_OBJECT,
      path: '/locations/:location_id',
      summary: 'One of our published locations',
      params: OneLocation211,
      response: Envelope(L211.Location),
      handler: async (req) => {
        const location = await ours(req, req.params.location_id);
        return { data: locationTo211(location, await choice(location)) };
      },
    }),
    route({
      ...ONE_OBJECT,
      path: '/locations/:location_id/:evse_uid',
      summary: 'One EVSE of one of our published locations',
      params: OneEvse211,
      response: Envelope(L211.Evse),
      handler: async (req) => {
        const location = await ours(req, req.params.location_id);
        return { data: evseTo211(evseOf(location, req.params.evse_uid), await choice(location)) };
      },
    }),
    route({
      ...ONE_OBJECT,
      path: '/locations/:location_id/:evse_uid/:connector_id',
      summary: 'One connector of one of our published locations',
      params: OneConnector211,
      response: Envelope(L211.Connector),
      handler: async (req) => {
        const location = await ours(req, req.params.location_id);
        const connector = connectorOf(evseOf(location, req.params.evse_uid), req.params.connector_id);
        return { data: connectorTo211(connector, await choice(location)) };
      },
    }),
  ];
}

function objectRoutes221(ours: FindOurs): OcpiRoute[] {
  return [
    route({
      ...ONE_OBJECT,
      path: '/locations/:location_id',
      summary: 'One of our published locations',
      params: OneLocation,
      response: Envelope(L221.LocationOut),
      handler: async (req) => ({ data: await ours(req, req.params.location_id) }),
    }),
    route({
      ...ONE_OBJECT,
      path: '/locations/:location_id/:evse_uid',
      summary: 'One EVSE of one of our published locations',
      params: OneEvse,
      response: Envelope(L221.Evse),
      handler: async (req) => ({
        data: evseOf(await ours(req, req.params.location_id), req.params.evse_uid),
      }),
    }),
    route({
      ...ONE_OBJECT,
      path: '/locations/:location_id/:evse_uid/:connector_id',
      summary: 'One connector of one of our published locations',
      params: OneConnector,
      response: Envelope(L221.Connector),
      handler: async (req) => {
        const evse = evseOf(await ours(req, req.params.location_id), req.params.evse_uid);
        return { data: connectorOf(evse, req.params.connector_id) };
      },
    }),
  ];
}
