import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { unknownObject } from '../core/errors.js';
import { assertSameId } from '../core/guards.js';
import { callerOwnPath, callersObject, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope } from '../core/schemas.js';

import * as S211 from './schemas-2.1.1.js';

/** The Receiver interface of the sessions module (the eMSP side): a partner CPO pushes its sessions. */

/** 2.1.1: GET, PUT and PATCH of `/sessions/{country_code}/{party_id}/{session_id}`. */
export function sessionsReceiver211(ctx: OcpiContext): OcpiRoute[] {
  const common = {
    path: '/sessions/:country_code/:party_id/:session_id',
    module: 'sessions',
    params: S211.SessionPath,
  } as const;
  return [
    route({
      ...common,
      method: 'GET',
      summary: 'A session of the caller, as we hold it',
      response: Envelope(S211.SessionOut),
      responses: { 404: 'unknown session' },
      handler: async (req) => {
        const found = await callersObject(req, '2.1.1', ctx.stores.sessions, req.params.session_id, () =>
          unknownObject('session'),
        );
        return { data: found.object };
      },
    }),
    route({
      ...common,
      method: 'PATCH',
      summary: 'Partial update of a session of the caller (kwh, status, ...; last_updated required)',
      body: S211.SessionPatch,
      response: Envelope(S211.SessionOut),
      responses: { 404: 'unknown session' },
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const id = req.params.session_id;
        assertSameId('id', id, req.body.id);
        const updated = await ctx.stores.sessions.update({ ...party, id }, (s) => {
          const next = { ...s, ...req.body, id };
          return { ...next, authorization_id: next.auth_id };
        });
        if (!updated) throw unknownObject('session');
        return { data: updated };
      },
    }),
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
