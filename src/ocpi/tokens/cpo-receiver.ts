import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { unknownToken } from '../core/errors.js';
import { assertSameId } from '../core/guards.js';
import { callerOwnPath, callersObject, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope } from '../core/schemas.js';
import * as T211 from './schemas-2.1.1.js';

/**
 * The Receiver interface of the tokens module (the CPO side): a partner eMSP updates the tokens
 * of its party that our CPO knows (docs/OCPI.md "Who sees what").
 */

/** 2.1.1: GET, PUT and PATCH of `/tokens/{country_code}/{party_id}/{token_uid}`. */
export function tokensReceiver211(ctx: OcpiContext): OcpiRoute[] {
  return [
    route({
      method: 'GET',
      path: '/tokens/:country_code/:party_id/:token_uid',
      module: 'tokens',
      summary: "A token of the caller's party, as we hold it",
      params: T211.TokenPath,
      response: Envelope(T211.Token),
      responses: { 404: 'unknown token (status_code 2004)' },
      handler: async (req) => ({
        data: (await callersObject(req, '2.1.1', ctx.stores.tokens, req.params.token_uid, unknownToken)).object,
      }),
    }),
    route({
      method: 'PUT',
      path: '/tokens/:country_code/:party_id/:token_uid',
      module: 'tokens',
      summary: "A new or replaced token of the caller's party (the body's uid must be the path's)",
      params: T211.TokenPath,
      body: T211.Token,
      response: Envelope(T211.Token),
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const uid = req.params.token_uid;
        assertSameId('uid', uid, req.body.uid);
        return { data: await ctx.stores.tokens.put({ ...party, id: uid }, { ...req.body, uid }) };
      },
    }),
    route({
      method: 'PATCH',
      path: '/tokens/:country_code/:party_id/:token_uid',
      module: 'tokens',
      summary: "Partial update of a token of the caller's party",
      params: T211.TokenPath,
      body: T211.TokenPatch,
      response: Envelope(T211.Token),
      responses: { 404: 'unknown token (status_code 2004)' },
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const patch = req.body;
        const uid = req.params.token_uid;
        // TokenPatch may omit last_updated (every field is optional): the time of the change then
        const updated = await ctx.stores.tokens.update({ ...party, id: uid }, (existing) => ({
          ...existing,
          ...patch,
          uid,
          last_updated: patch.last_updated ?? new Date().toISOString(),
        }));
        if (!updated) throw unknownToken();
        return { data: updated };
      },
    }),
  ];
}
