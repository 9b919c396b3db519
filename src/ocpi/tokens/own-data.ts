import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { assertPathId } from '../core/guards.js';
import type { OperatorRoute } from '../core/mount-kit.js';
import * as T211 from './schemas-2.1.1.js';

/**
 * The operator's route for tokens, on the management mount: ours (eMSP tokens), or a partner's
 * our CPO should know (docs/OCPI.md "Our own data").
 */
export function ownTokenRoutes(ctx: OcpiContext): OperatorRoute[] {
  return [
    route({
      method: 'PUT',
      path: '/ocpi/tokens/:country_code/:party_id/:token_uid',
      summary: "Creates or replaces a token: ours (eMSP tokens), or a partner's known to our CPO",
      params: T211.TokenPath,
      body: T211.Token,
      response: T211.Token,
      handler: async (req) => {
        const body = req.body;
        const uid = req.params.token_uid;
        assertPathId('token_uid', uid, 'uid', body.uid);
        const party = { country_code: req.params.country_code, party_id: req.params.party_id };
        return { data: await ctx.stores.tokens.put({ ...party, id: uid }, body) };
      },
    }),
  ];
}
