import Type from '#typebox';
import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { assertPathId } from '../core/guards.js';
import { ownListRoute, type OperatorRoute } from '../core/mount-kit.js';
import { HttpError } from '../../gateway/errors.js';
import { enqueue } from '../outbox/outbox-store.js';
import { tokenFrom211, tokenTo211 } from './mappers.js';
import * as T211 from './schemas-2.1.1.js';
import * as T221 from './schemas-2.2.1.js';

/**
 * The operator's route for tokens, on the management mount: ours (eMSP tokens), or a partner's
 * our CPO should know (docs/OCPI.md "Our own data"). The body is a 2.2.1 Token or a 2.1.1 one;
 * it is stored in the 2.2.1 shape and answered in the shape it came in.
 */
export function ownTokenRoutes(ctx: OcpiContext): OperatorRoute[] {
  return [
    ownListRoute(ctx, {
      path: '/ocpi/tokens',
      summary: 'Our tokens (2.2.1), in the order they were first stored',
      item: T221.Token,
      store: ctx.stores.tokens,
    }),
    route({
      method: 'GET',
      path: '/ocpi/tokens/:country_code/:party_id/:token_uid',
      summary: "One token (2.2.1): ours, or a partner's our CPO knows",
      params: T211.TokenPath,
      response: T221.Token,
      responses: { 404: 'no such token' },
      handler: async (req) => {
        const { country_code, party_id, token_uid } = req.params;
        const token = await ctx.stores.tokens.get({ country_code, party_id, id: token_uid });
        if (!token) throw new HttpError(404, 'token_not_found', `no token ${token_uid} of ${country_code} ${party_id}`);
        return { data: token };
      },
    }),
    route({
      method: 'PUT',
      path: '/ocpi/tokens/:country_code/:party_id/:token_uid',
      summary: "Creates or replaces a token: ours (eMSP tokens), or a partner's known to our CPO",
      params: T211.TokenPath,
      body: Type.Union([T221.Token, T211.Token]),
      response: Type.Union([T221.Token, T211.Token]),
      handler: async (req) => {
        const body = req.body;
        const uid = req.params.token_uid;
        assertPathId('token_uid', uid, 'uid', body.uid);
        const party = { country_code: req.params.country_code, party_id: req.params.party_id };
        if (!('auth_id' in body) && (body.country_code !== party.country_code || body.party_id !== party.party_id))
          throw new HttpError(400, 'party_mismatch', 'the body names another party than the path');
        const token = 'auth_id' in body ? tokenFrom211(body, party) : body;
        // ours go to every partner CPO (docs/ROAMING.md "What is pushed"), in the same transaction
        const stored = await ctx.services.db.group.run(async (tx) => {
          const written = await ctx.stores.tokens.on(tx).put({ ...party, id: uid }, token);
          if (ctx.isOwn(party)) await enqueue(tx, { role: 'CPO' }, { kind: 'token', uid, type: written.type });
          return written;
        });
        if (ctx.isOwn(party)) ctx.outbox.kick();
        return { data: 'auth_id' in body ? tokenTo211(stored) : stored };
      },
    }),
  ];
}
