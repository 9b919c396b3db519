import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { assertSameId } from '../core/guards.js';
import { callerOwnPath, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope } from '../core/schemas.js';
import * as S211 from './schemas-2.1.1.js';

/** The Receiver interface of the sessions module (the eMSP side): a partner CPO pushes its sessions. */

/** 2.1.1: PUT `/sessions/{country_code}/{party_id}/{session_id}`. */
export function sessionsReceiver211(ctx: OcpiContext): OcpiRoute[] {
  return [
    route({
      method: 'PUT',
      path: '/sessions/:country_code/:party_id/:session_id',
      module: 'sessions',
      summary: 'A new or updated session of the caller',
      params: S211.SessionPath,
      body: S211.SessionCreate,
      response: Envelope(S211.SessionOut),
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const body = req.body;
        const id = req.params.session_id;
        assertSameId('id', id, body.id);
        // authorization_id: the auth_id the session was started with (docs/OCPI.md, Decisions 9)
        const session = { ...body, authorization_id: body.auth_id };
        return { data: await ctx.stores.sessions.put({ ...party, id }, session) };
      },
    }),
  ];
}
