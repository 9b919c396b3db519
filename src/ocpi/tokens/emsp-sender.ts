import Type from '#typebox';
import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { unknownToken } from '../core/errors.js';
import { requireLink } from '../core/guards.js';
import { listRoute, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope } from '../core/schemas.js';
import * as T211 from './schemas-2.1.1.js';

/**
 * The Sender interface of the tokens module (the eMSP side): partners read our own tokens and
 * ask for real-time authorization of one (docs/OCPI.md "Who sees what").
 */

const AuthorizeQuery = Type.Object({
  type: Type.Optional(Type.Union([Type.Literal('RFID'), Type.Literal('OTHER')], { default: 'RFID' })),
});

/** 2.1.1: GET `/tokens` and POST `/tokens/{token_uid}/authorize`. */
export function tokensSender211(ctx: OcpiContext): OcpiRoute[] {
  return [
    listRoute(ctx, {
      path: '/tokens',
      module: 'tokens',
      summary: 'Our own tokens for the CPO to pull, paged',
      version: '2.1.1',
      store: ctx.stores.tokens,
      owner: 'ours',
      item: T211.Token,
    }),
    authorizeRoute211(ctx),
  ];
}

/**
 * POST `/tokens/{token_uid}/authorize` (2.1.1): ALLOWED for a valid token of ours, BLOCKED for
 * `valid: false`, 404 2004 for an unknown uid or another type (docs/OCPI.md, Decisions 8).
 */
function authorizeRoute211(ctx: OcpiContext): OcpiRoute {
  return route({
    method: 'POST',
    path: '/tokens/:token_uid/authorize',
    module: 'tokens',
    summary: 'Real-time authorization of one of our tokens',
    params: Type.Object({ token_uid: T211.Token.properties.uid }),
    query: AuthorizeQuery,
    body: T211.LocationReferences,
    bodyOptional: true,
    response: Envelope(T211.AuthorizationInfo),
    responses: { 404: 'unknown token (status_code 2004)' },
    handler: async (req) => {
      requireLink(req.auth, '2.1.1');
      const type = req.query.type ?? 'RFID';
      const token = await ctx.stores.tokens.get({ ...ctx.own, id: req.params.token_uid });
      if (!token || token.type !== type) throw unknownToken();
      const location = req.body;
      // OCPI 2.1.1 shows ALLOWED only; a refused token is BLOCKED (docs/OCPI.md, Decisions 8)
      return { data: { allowed: token.valid ? 'ALLOWED' : 'BLOCKED', ...(location ? { location } : {}) } };
    },
  });
}

/** 2.2.1 (the overview): GET `/tokens`, served in the stored 2.1.1 shape (docs/OCPI.md, Decisions 6). */
export function tokensSender221(ctx: OcpiContext): OcpiRoute[] {
  return [
    listRoute(ctx, {
      path: '/tokens',
      module: 'tokens',
      summary: 'Our own tokens, paged',
      version: '2.2.1',
      store: ctx.stores.tokens,
      owner: 'ours',
      item: T211.Token,
    }),
  ];
}
