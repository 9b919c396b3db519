import Type, { type Static } from 'typebox';
import type { SqlEntityManager } from '@mikro-orm/knex';
import { defineActor, type ActorContext } from '../../src/runtime/types.js';
import {
  Business,
  Endpoint,
  partnerProtocol,
  Role,
  Version,
  type PartnerDiscoveryPort,
  type PartnerMessage,
  type PartnerReply,
  type PartnerView,
} from './protocol.js';

/**
 * The partner actor, `partner/<country_code>-<party_id>`: the one owner of a roaming partner's
 * link (spec "States and transitions", credentials link). Every change of tokens and every
 * handshake step for a partner is a turn of this actor, so two web processes serving the same
 * partner at once cannot interleave a handshake. The state is the truth; `ocpi_partner` and
 * `ocpi_partner_token` are projections written in the same fenced transaction, for the
 * per-request token lookup and the operator's lists.
 *
 * Messages carry token hashes only: plaintext tokens are made and handed out by the web
 * process that answers the HTTP request, and never cross the bus.
 */

const Kind = Type.Union([Type.Literal('initial'), Type.Literal('current'), Type.Literal('pending')]);

export const PartnerState = Type.Object({
  id: Type.String(),
  country_code: Type.String(),
  party_id: Type.String(),
  role: Role,
  /** new: never created; unregistered: known, no link (Token A out, or after DELETE); registered: linked */
  status: Type.Union([Type.Literal('new'), Type.Literal('unregistered'), Type.Literal('registered')]),
  tokens: Type.Array(Type.Object({ hash: Type.String(), kind: Kind })),
  /** the token we present to the partner, and where its versions are */
  their_token: Type.Union([Type.String(), Type.Null()]),
  versions_url: Type.Union([Type.String(), Type.Null()]),
  version: Type.Union([Version, Type.Null()]),
  endpoints: Type.Array(Endpoint),
  business_details: Type.Union([Business, Type.Null()]),
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
});
export type PartnerState = Static<typeof PartnerState>;

function viewOf(s: PartnerState): PartnerView {
  return {
    id: s.id,
    country_code: s.country_code,
    party_id: s.party_id,
    role: s.role,
    status: s.status === 'registered' ? 'registered' : 'unregistered',
    versions_url: s.versions_url,
    version: s.version,
    endpoints: s.endpoints,
    business_details: s.business_details,
  };
}

function fail(code: Extract<PartnerReply, { ok: false }>['code'], message: string): PartnerReply {
  return { ok: false, code, message };
}

/** Commits the new state and its projections in the turn's fenced transaction. */
function commit(ctx: ActorContext<PartnerState>, next: PartnerState, revoked: string[]): PartnerReply {
  const s = { ...next, updated_at: Date.now() };
  ctx.setState(s);
  ctx.write(async (em: SqlEntityManager) => {
    await em.execute(
      `INSERT INTO ocpi_partner (id, country_code, party_id, role, status, versions_url, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET role = excluded.role, status = excluded.status, versions_url = excluded.versions_url,
       version = excluded.version, updated_at = excluded.updated_at`,
      [s.id, s.country_code, s.party_id, s.role, s.status, s.versions_url, s.version, s.created_at, s.updated_at],
    );
    await em.execute('DELETE FROM ocpi_partner_token WHERE partner_id = ?', [s.id]);
    for (const t of s.tokens) {
      await em.execute(
        'INSERT INTO ocpi_partner_token (token_hash, partner_id, country_code, party_id, role, kind, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [t.hash, s.id, s.country_code, s.party_id, s.role, t.kind, s.updated_at],
      );
    }
  });
  return { ok: true, partner: viewOf(s), revoked, their_token: s.their_token };
}

/** A registered link: `current_hash` is our one valid token; the partner's token, URL and endpoints as discovered. */
function linked(
  s: PartnerState,
  link: Pick<PartnerState, 'their_token' | 'versions_url' | 'version' | 'endpoints' | 'business_details'> & {
    current_hash: string;
  },
): PartnerState {
  return {
    ...s,
    status: 'registered',
    tokens: [{ hash: link.current_hash, kind: 'current' }],
    their_token: link.their_token,
    versions_url: link.versions_url,
    version: link.version,
    endpoints: link.endpoints,
    business_details: link.business_details ?? s.business_details,
  };
}

function hashesExcept(s: PartnerState, keep: string): string[] {
  return s.tokens.filter((t) => t.hash !== keep).map((t) => t.hash);
}

async function handshake(
  client: PartnerDiscoveryPort,
  ctx: ActorContext<PartnerState>,
  msg: Extract<PartnerMessage, { op: 'register' | 'rotate' }>,
): Promise<PartnerReply> {
  const s = ctx.state;
  const presented = s.tokens.find((t) => t.hash === msg.caller_hash);
  if (!presented) return fail('not_found', 'the token used is no longer valid');
  if (msg.op === 'register' && (s.status === 'registered' || presented.kind !== 'initial')) {
    return fail('method_not_allowed', 'already registered: use PUT /credentials to update the credentials');
  }
  if (msg.op === 'rotate' && (s.status !== 'registered' || presented.kind === 'initial')) {
    return fail('method_not_allowed', 'not registered yet: initial registration uses POST /credentials');
  }
  const discovery = await client.discover(msg.versions_url, msg.their_token, msg.version);
  if (!discovery.ok) {
    // the caller (a partner holding Token A) gets the category; our log gets what happened
    ctx.log.warn({ partner: ctx.key, op: msg.op, partnerCall: discovery.log }, 'partner discovery failed');
    return fail(discovery.code, discovery.message);
  }
  ctx.log.info({ partner: ctx.key, op: msg.op, version: discovery.version }, 'partner discovered');
  // the previous token (Token A on register, the old token on rotation) stops working now
  return commit(
    ctx,
    linked(s, { ...msg, current_hash: msg.new_hash, version: discovery.version, endpoints: discovery.endpoints }),
    s.tokens.map((t) => t.hash),
  );
}

/** `client` makes the calls to partners (the process's limits and destination policy). */
export function partnerActor(client: PartnerDiscoveryPort) {
  return defineActor(partnerProtocol, {
    placement: 'sharded',
    state: PartnerState,
    initialState: (key) => {
      const [country_code = '', party_id = ''] = key.split('-');
      return {
        id: '',
        country_code,
        party_id,
        role: 'CPO' as const,
        status: 'new' as const,
        tokens: [],
        their_token: null,
        versions_url: null,
        version: null,
        endpoints: [],
        business_details: null,
        created_at: 0,
        updated_at: 0,
      };
    },
    async handle(ctx, msg): Promise<PartnerReply> {
      const s = ctx.state;
      if (msg.op === 'create') {
        if (s.status === 'registered')
          return fail('exists', `partner ${ctx.key} is registered; DELETE its credentials first`);
        const now = Date.now();
        // an unregistered partner gets a fresh Token A; any older one stops working
        return commit(
          ctx,
          {
            ...s,
            id: s.id || msg.id,
            role: msg.role,
            status: 'unregistered',
            tokens: [{ hash: msg.initial_hash, kind: 'initial' }],
            created_at: s.created_at || now,
          },
          s.tokens.map((t) => t.hash),
        );
      }
      if (s.status === 'new') return fail('not_found', `no partner ${ctx.key}`);
      switch (msg.op) {
        case 'get':
          return { ok: true, partner: viewOf(s), revoked: [], their_token: s.their_token };
        case 'register':
        case 'rotate':
          return handshake(client, ctx, msg);
        case 'unregister':
          return commit(
            ctx,
            {
              ...s,
              status: 'unregistered',
              tokens: [],
              their_token: null,
              versions_url: null,
              version: null,
              endpoints: [],
            },
            s.tokens.map((t) => t.hash),
          );
        case 'prepare-outbound':
          return commit(
            ctx,
            {
              ...s,
              tokens: [
                ...s.tokens.filter((t) => t.hash !== msg.pending_hash),
                { hash: msg.pending_hash, kind: 'pending' },
              ],
            },
            [],
          );
        case 'complete-outbound': {
          if (!s.tokens.some((t) => t.hash === msg.pending_hash))
            return fail('not_found', 'the handshake was superseded');
          return commit(ctx, linked(s, { ...msg, current_hash: msg.pending_hash }), hashesExcept(s, msg.pending_hash));
        }
        case 'abort-outbound':
          return commit(ctx, { ...s, tokens: s.tokens.filter((t) => t.hash !== msg.pending_hash) }, [msg.pending_hash]);
      }
    },
  });
}
