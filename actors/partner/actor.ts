import { defineActor, type ActorContext } from '../../src/runtime/types.js';
import type { PartnerActorDeps } from './ports.js';
import { partnerProtocol, type PartnerMessage, type PartnerReply } from './protocol.js';
import { allHashes, hashesExcept, initialPartnerState, linked, PartnerState, unlinked, viewOf } from './state.js';

/**
 * The partner actor, `partner/<country_code>-<party_id>`: the one owner of a roaming partner's
 * link (docs/OCPI.md, "The credentials link"). Every change of tokens and every handshake step
 * for a partner is a turn of this actor, so two web processes serving the same partner at once
 * cannot interleave a handshake. The state is the truth; `ocpi_partner` and
 * `ocpi_partner_token` are projections written (deps.projection) in the same fenced
 * transaction, for the per-request token lookup and the operator's lists.
 *
 * Messages carry token hashes only: plaintext tokens are made and handed out by the web
 * process that answers the HTTP request, and never cross the bus.
 */

type Ctx = ActorContext<PartnerState>;
type MessageOf<Op extends PartnerMessage['op']> = Extract<PartnerMessage, { op: Op }>;

function fail(code: Extract<PartnerReply, { ok: false }>['code'], message: string): PartnerReply {
  return { ok: false, code, message };
}

/** Commits the new state and its projections in the turn's fenced transaction. */
function commit(deps: PartnerActorDeps, ctx: Ctx, next: PartnerState, revoked: string[]): PartnerReply {
  const s = { ...next, updated_at: Date.now() };
  ctx.setState(s);
  ctx.write((tx) => deps.projection.write(tx, s));
  return { ok: true, partner: viewOf(s), revoked, their_token: s.their_token };
}

/** An operator onboards the partner: an unregistered one gets a fresh Token A; any older one stops working. */
function create(deps: PartnerActorDeps, ctx: Ctx, msg: MessageOf<'create'>): PartnerReply {
  const s = ctx.state;
  if (s.status === 'registered')
    return fail('exists', `partner ${ctx.key} is registered; end its link first (POST /v1/partners/{id}/unregister)`);
  const now = Date.now();
  const next: PartnerState = {
    ...s,
    id: s.id || msg.id,
    role: msg.role,
    allowed_parties: msg.allowed_parties ?? [],
    status: 'unregistered',
    tokens: [{ hash: msg.initial_hash, kind: 'initial' }],
    created_at: s.created_at || now,
  };
  return commit(deps, ctx, next, allHashes(s));
}

/** The partner registers (POST /credentials) or rotates (PUT): we discover it with its token. */
async function handshake(
  deps: PartnerActorDeps,
  ctx: Ctx,
  msg: MessageOf<'register' | 'rotate'>,
): Promise<PartnerReply> {
  const s = ctx.state;
  const presented = s.tokens.find((t) => t.hash === msg.caller_hash);
  if (!presented) return fail('not_found', 'the token used is no longer valid');
  if (msg.op === 'register' && (s.status === 'registered' || presented.kind !== 'initial')) {
    return fail('method_not_allowed', 'already registered: use PUT /credentials to update the credentials');
  }
  if (
    msg.op === 'rotate' &&
    (s.status !== 'registered' || presented.kind === 'initial' || presented.kind === 'retired')
  ) {
    return fail('method_not_allowed', 'not registered yet: initial registration uses POST /credentials');
  }
  const discovery = await deps.discovery.discover(msg.versions_url, msg.their_token, msg.version);
  if (!discovery.ok) {
    // the caller (a partner holding Token A) gets the category; our log gets what happened
    ctx.log.warn({ partner: ctx.key, op: msg.op, partnerCall: discovery.log }, 'partner discovery failed');
    return fail(discovery.code, discovery.message);
  }
  ctx.log.info({ partner: ctx.key, op: msg.op, version: discovery.version }, 'partner discovered');
  // the previous token (Token A on register, the old token on rotation) stops working now
  const next = linked(s, {
    ...msg,
    current_hash: msg.new_hash,
    version: discovery.version,
    endpoints: discovery.endpoints,
  });
  return commit(deps, ctx, next, allHashes(s));
}

/** Every message but `create`, for a partner that exists. */
function handleKnown(
  deps: PartnerActorDeps,
  ctx: Ctx,
  msg: Exclude<PartnerMessage, { op: 'create' }>,
): PartnerReply | Promise<PartnerReply> {
  const s = ctx.state;
  switch (msg.op) {
    case 'get':
      return { ok: true, partner: viewOf(s), revoked: [], their_token: s.their_token };
    case 'register':
    case 'rotate':
      return handshake(deps, ctx, msg);
    case 'unregister':
      // the state table: DELETE before the registration (with Token A) is not allowed
      if (s.status !== 'registered') return fail('method_not_allowed', 'not registered: nothing to unregister');
      return commit(deps, ctx, unlinked(s), allHashes(s));
    case 'prepare-outbound': {
      const pending: PartnerState['tokens'][number] = { hash: msg.pending_hash, kind: 'pending' };
      return commit(deps, ctx, { ...s, tokens: [...s.tokens.filter((t) => t.hash !== msg.pending_hash), pending] }, []);
    }
    case 'complete-outbound':
      if (!s.tokens.some((t) => t.hash === msg.pending_hash)) return fail('not_found', 'the handshake was superseded');
      return commit(
        deps,
        ctx,
        linked(s, { ...msg, current_hash: msg.pending_hash }),
        hashesExcept(s, msg.pending_hash),
      );
    case 'abort-outbound':
      return commit(deps, ctx, { ...s, tokens: s.tokens.filter((t) => t.hash !== msg.pending_hash) }, [
        msg.pending_hash,
      ]);
  }
}

/** The partner actor, given the calls to partners and the projection writes (ports.ts). */
export function partnerActor(deps: PartnerActorDeps) {
  return defineActor(partnerProtocol, {
    placement: 'sharded',
    state: PartnerState,
    initialState: initialPartnerState,
    async handle(ctx, msg): Promise<PartnerReply> {
      if (msg.op === 'create') return create(deps, ctx, msg);
      if (ctx.state.status === 'new') return fail('not_found', `no partner ${ctx.key}`);
      return handleKnown(deps, ctx, msg);
    },
  });
}
