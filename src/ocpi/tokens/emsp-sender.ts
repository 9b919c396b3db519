import Type from '#typebox';
import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { unknownToken } from '../core/errors.js';
import { requireLink } from '../core/guards.js';
import { listRoute, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope, ObjectId } from '../core/schemas.js';
import { matchesType211, tokenTo211 } from './mappers.js';
import * as T211 from './schemas-2.1.1.js';
import * as T221 from './schemas-2.2.1.js';

/**
 * The Sender interface of the tokens module (the eMSP side): CPO partners read our own tokens
 * and ask for real-time authorization of one (docs/OCPI.md "Who sees what").
 */

const AuthorizeQuery211 = Type.Object({
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
      render: { name: '2.1.1', as: tokenTo211 },
    }),
    authorizeRoute211(ctx),
  ];
}

/**
 * POST `/tokens/{token_uid}/authorize` (2.1.1): ALLOWED for a valid token of ours, BLOCKED for
 * `valid: false`, 404 2000 for an unknown uid or another type (2.1.1 has no 2004; docs/OCPI.md, Decisions 8).
 */
function authorizeRoute211(ctx: OcpiContext): OcpiRoute {
  return route({
    method: 'POST',
    path: '/tokens/:token_uid/authorize',
    module: 'tokens',
    summary: 'Real-time authorization of one of our tokens',
    params: Type.Object({ token_uid: ObjectId }),
    query: AuthorizeQuery211,
    body: T211.LocationReferences,
    bodyOptional: true,
    response: Envelope(T211.AuthorizationInfo),
    responses: { 404: 'unknown token (status_code 2000: 2.1.1 has no 2004)' },
    handler: async (req) => {
      requireLink(req.auth, '2.1.1');
      // token_uid is a CiString, as Token.uid is: any case of its letters finds it
      const token = await ctx.stores.tokens.getAnyCase({ ...ctx.own, id: req.params.token_uid });
      if (!token || !matchesType211(token, req.query.type ?? 'RFID')) throw unknownToken('2.1.1');
      // the location asked about comes back only when the driver may charge there (AuthorizationInfo)
      const location = token.valid ? req.body : undefined;
      // a refused token is BLOCKED (docs/OCPI.md, Decisions 8)
      return { data: { allowed: token.valid ? 'ALLOWED' : 'BLOCKED', ...(location ? { location } : {}) } };
    },
  });
}

/** 2.2.1: GET `/tokens` and POST `/tokens/{token_uid}/authorize[?type=]`. */
export function tokensSender221(ctx: OcpiContext): OcpiRoute[] {
  return [
    listRoute(ctx, {
      path: '/tokens',
      module: 'tokens',
      summary: 'Our own tokens for the CPO to pull, paged',
      version: '2.2.1',
      store: ctx.stores.tokens,
      owner: 'ours',
      item: T221.Token,
    }),
    authorizeRoute221(ctx),
  ];
}

/**
 * POST `/tokens/{token_uid}/authorize[?type=]` (2.2.1): the AuthorizationInfo with the token as
 * we hold it; ALLOWED or BLOCKED as in 2.1.1, 404 2004 for an unknown uid or another type.
 */
function authorizeRoute221(ctx: OcpiContext): OcpiRoute {
  return route({
    method: 'POST',
    path: '/tokens/:token_uid/authorize',
    module: 'tokens',
    summary: 'Real-time authorization of one of our tokens',
    params: Type.Object({ token_uid: ObjectId }),
    query: T221.TokenTypeQuery,
    body: T221.LocationReferences,
    bodyOptional: true,
    response: Envelope(T221.AuthorizationInfo),
    responses: { 404: 'unknown token (status_code 2004)' },
    handler: async (req) => {
      requireLink(req.auth, '2.2.1');
      // token_uid is a CiString, as Token.uid is: any case of its letters finds it
      const token = await ctx.stores.tokens.getAnyCase({ ...ctx.own, id: req.params.token_uid });
      if (!token || token.type !== (req.query.type ?? 'RFID')) throw unknownToken();
      // the location asked about comes back only when the driver may charge there (AuthorizationInfo),
      // with the fields of a 2.2.1 LocationReferences only (a 2.1.1 `connector_ids` sent along was echoed)
      const body = token.valid ? req.body : undefined;
      const location = body && {
        location_id: body.location_id,
        ...(body.evse_uids === undefined ? {} : { evse_uids: body.evse_uids }),
      };
      return {
        data: { allowed: token.valid ? 'ALLOWED' : 'BLOCKED', token, ...(location ? { location } : {}) },
      };
    },
  });
}
