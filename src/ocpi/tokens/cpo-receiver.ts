import { route } from '../../gateway/route-table.js';
import type { OcpiContext } from '../core/context.js';
import { olderThan, stampOfReceipt } from '../core/datetime.js';
import { idMismatch, unknownToken } from '../core/errors.js';
import { assertOwnParty, assertSameId } from '../core/guards.js';
import { callerOwnPath, callersObject, type OcpiRequest, type OcpiRoute } from '../core/mount-kit.js';
import { Envelope } from '../core/schemas.js';
import { tokenFrom211, tokenPatchFrom211, tokenTo211 } from './mappers.js';
import * as T211 from './schemas-2.1.1.js';
import * as T221 from './schemas-2.2.1.js';

/**
 * The Receiver interface of the tokens module (the CPO side): a partner eMSP pushes the tokens
 * of its party that our CPO should know, and reads back what we hold (docs/OCPI.md "Who sees
 * what"). Tokens are stored in the 2.2.1 shape, keyed by party and uid (docs/OCPI.md, Decisions 21).
 */

const PATH = '/tokens/:country_code/:party_id/:token_uid';

/** 2.1.1: GET, PUT and PATCH of `/tokens/{country_code}/{party_id}/{token_uid}`. */
export function tokensReceiver211(ctx: OcpiContext): OcpiRoute[] {
  const common = { path: PATH, module: 'tokens', params: T211.TokenPath } as const;
  return [
    route({
      ...common,
      method: 'GET',
      summary: "A token of the caller's party, as we hold it",
      response: Envelope(T211.Token),
      responses: { 404: 'unknown token (status_code 2000: 2.1.1 has no 2004)' },
      handler: async (req) => ({
        data: tokenTo211(
          (await callersObject(req, '2.1.1', ctx.stores.tokens, req.params.token_uid, () => unknownToken('2.1.1')))
            .object,
        ),
      }),
    }),
    route({
      ...common,
      method: 'PUT',
      summary: "A new or replaced token of the caller's party (the body's uid must be the path's)",
      body: T211.Token,
      response: Envelope(T211.Token),
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const uid = req.params.token_uid;
        assertSameId('uid', uid, req.body.uid);
        const token = tokenFrom211({ ...req.body, uid }, party);
        return { data: tokenTo211((await ctx.stores.tokens.putUnlessOlder({ ...party, id: uid }, token)).object) };
      },
    }),
    route({
      ...common,
      method: 'PATCH',
      summary: "Partial update of a token of the caller's party",
      body: T211.TokenPatch,
      response: Envelope(T211.Token),
      responses: { 404: 'unknown token (status_code 2000: 2.1.1 has no 2004)' },
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.1.1');
        const patch = tokenPatchFrom211(req.body);
        const uid = req.params.token_uid;
        // the 2.1.1 TokenPatch may omit last_updated (every field is optional): stamped on receipt (Decisions 33)
        const updated = await ctx.stores.tokens.update({ ...party, id: uid }, (existing) =>
          olderThan(patch.last_updated, existing.last_updated)
            ? existing
            : { ...existing, ...patch, uid, last_updated: patch.last_updated ?? stampOfReceipt(existing.last_updated) },
        );
        if (!updated) throw unknownToken('2.1.1');
        return { data: tokenTo211(updated) };
      },
    }),
  ];
}

/** The `?type=` of a 2.2.1 request: RFID when absent (OCPI 2.2.1 mod_tokens, Receiver interface). */
function typeOf(req: OcpiRequest): T221.TokenType {
  const type = (req.query as { type?: T221.TokenType }).type;
  return type ?? 'RFID';
}

/** 2.2.1: GET, PUT and PATCH of `/tokens/{country_code}/{party_id}/{token_uid}[?type=]`. */
export function tokensReceiver221(ctx: OcpiContext): OcpiRoute[] {
  const common = { path: PATH, module: 'tokens', params: T221.TokenPath, query: T221.TokenTypeQuery } as const;
  return [
    route({
      ...common,
      method: 'GET',
      summary: "A token of the caller's party, as we hold it (type RFID unless ?type= says otherwise)",
      response: Envelope(T221.Token),
      responses: { 404: 'unknown token, or one of another type (status_code 2004)' },
      handler: async (req) => {
        const found = await callersObject(req, '2.2.1', ctx.stores.tokens, req.params.token_uid, unknownToken);
        if (found.object.type !== typeOf(req)) throw unknownToken();
        return { data: found.object };
      },
    }),
    route({
      ...common,
      method: 'PUT',
      summary: "A new or replaced token of the caller's party (uid, type, country_code and party_id as the path says)",
      body: T221.Token,
      response: Envelope(T221.Token),
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.2.1');
        const token = req.body;
        const uid = req.params.token_uid;
        assertOwnParty(party, token);
        assertSameId('uid', uid, token.uid);
        const type = (req.query as { type?: T221.TokenType }).type;
        if (type !== undefined && type !== token.type) throw idMismatch('type', type, token.type);
        return { data: (await ctx.stores.tokens.putUnlessOlder({ ...party, id: uid }, token)).object };
      },
    }),
    route({
      ...common,
      method: 'PATCH',
      summary: "Partial update of a token of the caller's party (last_updated required)",
      body: T221.TokenPatch,
      response: Envelope(T221.Token),
      responses: { 404: 'unknown token, or one of another type (status_code 2004)' },
      handler: async (req) => {
        const { party } = callerOwnPath(req, '2.2.1');
        const patch = req.body;
        const uid = req.params.token_uid;
        assertOwnParty(party, patch);
        assertSameId('uid', uid, patch.uid);
        const type = typeOf(req);
        const updated = await ctx.stores.tokens.update({ ...party, id: uid }, (existing) => {
          if (existing.type !== type) throw unknownToken();
          if (olderThan(patch.last_updated, existing.last_updated)) return existing;
          return { ...existing, ...patch, uid };
        });
        if (!updated) throw unknownToken();
        return { data: updated };
      },
    }),
  ];
}
