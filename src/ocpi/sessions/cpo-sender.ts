import Type from '#typebox';
import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import { noChargingPreferences, unknownObject } from '../core/errors.js';
import { requireLink } from '../core/guards.js';
import { listRoute, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope, ObjectId } from '../core/schemas.js';
import { session211Of } from './emsp-receiver.js';
import { sessionFor211Partner, sessionTo221 } from './mappers.js';
import * as S211 from './schemas-2.1.1.js';
import * as S221 from './schemas-2.2.1.js';
import { isSession221, type StoredSession } from './stored.js';

/**
 * The Sender interface of the sessions module (the CPO side): an eMSP reads the sessions our
 * chargers had with its tokens, the ones written for its party (docs/OCPI.md "Who sees what").
 * Our sessions are written in the 2.2.1 shape; the 2.1.1 list adds the location we hold.
 */

/** GET `/sessions`: our sessions for the calling eMSP, paged, in the shape of `version`. */
export function sessionsSender(ctx: OcpiContext, version: OcpiVersion): OcpiRoute[] {
  const own = () => ctx.ownParty();
  const to221 = (s: StoredSession) => sessionTo221(s, own(), own());
  const routes: OcpiRoute[] = [
    listRoute(ctx, {
      path: '/sessions',
      module: 'sessions',
      summary: "Our sessions with the caller's tokens, paged",
      version,
      store: ctx.stores.sessions,
      owner: 'ours-for-caller',
      ...(version === '2.1.1'
        ? {
            item: S211.SessionCreate,
            render: {
              name: '2.1.1',
              page: (items: StoredSession[]) =>
                Promise.all(
                  items.map(async (s) => sessionFor211Partner(isSession221(s) ? await session211Of(ctx.stores, s) : s)),
                ),
            },
          }
        : { item: S221.Session, render: { name: '2.2.1', as: to221 } }),
    }),
  ];
  if (version === '2.2.1') routes.push(chargingPreferencesRoute(ctx));
  return routes;
}

/**
 * PUT `/sessions/{session_id}/charging_preferences` (2.2.1): our chargers take no charging
 * preferences. An EVSE without CHARGING_PROFILE_CAPABLE is 404, as OCPI says; otherwise the
 * answer is NOT_POSSIBLE (docs/OCPI.md, Decisions 24).
 */
function chargingPreferencesRoute(ctx: OcpiContext): OcpiRoute {
  return route({
    method: 'PUT',
    path: '/sessions/:session_id/charging_preferences',
    module: 'sessions',
    summary: 'Charging preferences of the driver of one of our sessions with the caller’s tokens',
    params: Type.Object({ session_id: ObjectId }),
    body: S221.ChargingPreferences,
    response: Envelope(S221.ChargingPreferencesResponse),
    responses: { 404: 'unknown session, or an EVSE that takes no charging preferences' },
    handler: async (req) => {
      const caller = requireLink(req.auth, '2.2.1');
      const own = ctx.ownParty();
      const session = await ctx.stores.sessions.getFor({ ...own, id: req.params.session_id }, caller);
      if (!session) throw unknownObject('session');
      const s = sessionTo221(session, own, own);
      const location = await ctx.stores.locations.get({ ...own, id: s.location_id });
      const evse = location?.evses?.find((e) => e.uid === s.evse_uid);
      if (!evse?.capabilities?.includes('CHARGING_PROFILE_CAPABLE')) throw noChargingPreferences(s.id);
      return { data: 'NOT_POSSIBLE' };
    },
  });
}
