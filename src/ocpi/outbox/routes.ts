import Type, { type Static } from '#typebox';
import { partnerOutboxProtocol } from '../../../actors/partner-outbox/protocol.js';
import { PartnerOutboxState } from '../../../actors/partner-outbox/state.js';
import { HttpError } from '../../gateway/errors.js';
import { pageHeaders, Paging } from '../../gateway/operator-paging.js';
import { route } from '../../gateway/route-table.js';
import { compileLazily } from '../../lazy-compile.js';
import { addressOf } from '../../runtime/address.js';
import { storedStates } from '../../runtime/stored-states.js';
import type { OcpiContext } from '../core/context.js';
import type { OperatorRoute } from '../core/mount-kit.js';
import type { PartnerRow } from '../core/partners.js';
import type { OutboxSweeper } from './sweeper.js';
import { OutboxStore, type OutboxRow } from './outbox-store.js';

/**
 * The operator's view of the outbox (docs/ROAMING.md "The outbox"): what waits to be sent to
 * each partner, the dead letters (rows that failed OUTBOX_MAX_ATTEMPTS times, or that a partner
 * refused), each partner's breaker; a dead letter can be sent again or discarded.
 */

const Status = Type.Union([Type.Literal('pending'), Type.Literal('dead')]);
const RowOut = Type.Object({
  id: Type.Integer(),
  partner: Type.Object({
    id: Type.Union([Type.String(), Type.Null()]),
    country_code: Type.String(),
    party_id: Type.String(),
  }),
  object: Type.String({ description: 'what the row sends: the object (a later change of it coalesces into this row)' }),
  kind: Type.String(),
  status: Status,
  attempts: Type.Integer(),
  next_attempt_at: Type.String(),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const IdPath = Type.Object({ id: Type.Integer({ minimum: 1 }) });
const PartnerSummary = Type.Object({
  partner: Type.Object({ id: Type.String(), country_code: Type.String(), party_id: Type.String() }),
  pending: Type.Integer(),
  dead: Type.Integer(),
  breaker: Type.Union([Type.Literal('closed'), Type.Literal('open')]),
  open_until: Type.Union([Type.String(), Type.Null()]),
  sent_total: Type.Integer(),
  failed_total: Type.Integer(),
  last_error: Type.Union([Type.String(), Type.Null()], {
    description: 'the last failure of a send to the partner, kept after later sends went well (see last_failed_at)',
  }),
  last_failed_at: Type.Union([Type.String(), Type.Null()], { description: 'when last_error happened' }),
  last_sent_at: Type.Union([Type.String(), Type.Null()]),
});
const checkState = compileLazily(PartnerOutboxState);

const iso = (ms: number) => new Date(ms).toISOString();

function rowOut(row: OutboxRow, partners: Map<string, PartnerRow>): Static<typeof RowOut> {
  const [country_code = '', party_id = ''] = row.partner_key.split('-');
  return {
    id: row.id,
    partner: { id: partners.get(row.partner_key)?.id ?? null, country_code, party_id },
    object: row.object_key,
    kind: row.intent.kind,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: iso(row.next_attempt_at),
    last_error: row.last_error,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

async function partnersByKey(ctx: OcpiContext): Promise<Map<string, PartnerRow>> {
  return new Map((await ctx.partners.list()).map((p) => [`${p.country_code}-${p.party_id}`, p]));
}

export function outboxRoutes(ctx: OcpiContext, sweeper: OutboxSweeper): OperatorRoute[] {
  const store = new OutboxStore(ctx.services.db);
  return [...outboxReadRoutes(ctx, store), ...deadLetterRoutes(ctx, store, sweeper)];
}

/** GET /outbox and GET /outbox/partners. */
function outboxReadRoutes(ctx: OcpiContext, store: OutboxStore): OperatorRoute[] {
  return [
    route({
      method: 'GET',
      path: '/outbox',
      summary: 'What waits to be sent to partners, and the dead letters',
      query: Type.Object({
        status: Type.Optional(Status),
        partner_id: Type.Optional(Type.String({ format: 'uuid' })),
        ...Paging,
      }),
      response: Type.Array(RowOut),
      handler: async (req) => {
        const q = req.query;
        const partners = await partnersByKey(ctx);
        let partnerKey: string | undefined;
        if (q.partner_id !== undefined) {
          const p = [...partners.values()].find((x) => x.id === q.partner_id);
          if (!p) throw new HttpError(404, 'partner_not_found', `no partner ${q.partner_id}`);
          partnerKey = `${p.country_code}-${p.party_id}`;
        }
        const page = await store.list({
          limit: q.limit,
          offset: q.offset,
          ...(q.status ? { status: q.status } : {}),
          ...(partnerKey ? { partner_key: partnerKey } : {}),
        });
        return {
          data: page.items.map((r) => rowOut(r, partners)),
          headers: pageHeaders(ctx.services.config, req, page.total, q.offset, q.limit),
        };
      },
    }),
    route({
      method: 'GET',
      path: '/outbox/partners',
      summary: "Each partner's queue: rows pending and dead, its breaker, what it was sent",
      response: Type.Array(PartnerSummary),
      handler: async () => ({ data: await partnerSummaries(ctx, store) }),
    }),
  ];
}

/** POST /outbox/{id}/retry and DELETE /outbox/{id}. */
function deadLetterRoutes(ctx: OcpiContext, store: OutboxStore, sweeper: OutboxSweeper): OperatorRoute[] {
  return [
    route({
      method: 'POST',
      path: '/outbox/:id/retry',
      summary:
        'Sends a dead letter again (due now, attempts reset); a newer pending change of the same object replaces it',
      params: IdPath,
      response: Type.Object({ superseded: Type.Boolean(), row: RowOut }),
      responses: { 404: 'no dead letter of that id' },
      handler: async (req) => {
        const retried = await store.retry(req.params.id);
        if (!retried) throw new HttpError(404, 'not_found', `no dead letter ${req.params.id}`);
        req.log.info({ outbox: req.params.id, superseded: retried.superseded }, 'dead letter queued again');
        sweeper.kick();
        return { data: { superseded: retried.superseded, row: rowOut(retried.row, await partnersByKey(ctx)) } };
      },
    }),
    route({
      method: 'DELETE',
      path: '/outbox/:id',
      summary: 'Discards a dead letter; answers the row it was',
      params: IdPath,
      response: RowOut,
      responses: { 404: 'no dead letter of that id' },
      handler: async (req) => {
        const removed = await store.discard(req.params.id);
        if (!removed) throw new HttpError(404, 'not_found', `no dead letter ${req.params.id}`);
        req.log.info({ outbox: req.params.id, object: removed.object_key }, 'dead letter discarded');
        return { data: rowOut(removed, await partnersByKey(ctx)) };
      },
    }),
  ];
}

/** Each partner's counts of rows and its outbox actor's breaker (read from its stored state). */
async function partnerSummaries(ctx: OcpiContext, store: OutboxStore): Promise<Array<Static<typeof PartnerSummary>>> {
  const [partners, counts] = await Promise.all([ctx.partners.list(), store.counts()]);
  const addresses = partners.map((p) => addressOf(partnerOutboxProtocol.kind, `${p.country_code}-${p.party_id}`));
  const states = await storedStates(ctx.services.db.sql, addresses);
  return partners.map((p, i) => {
    const key = `${p.country_code}-${p.party_id}`;
    const raw = states.get(addresses[i] ?? '');
    const s = checkState.Check(raw) ? raw : undefined;
    const n = (status: string) => counts.find((c) => c.partner_key === key && c.status === status)?.n ?? 0;
    const open = s?.breaker === 'open';
    return {
      partner: { id: p.id, country_code: p.country_code, party_id: p.party_id },
      pending: n('pending'),
      dead: n('dead'),
      breaker: open ? 'open' : 'closed',
      open_until: open && s ? iso(s.open_until) : null,
      sent_total: s?.sent_total ?? 0,
      failed_total: s?.failed_total ?? 0,
      last_error: s?.last_error ?? null,
      last_failed_at: s?.last_failed_at ? iso(s.last_failed_at) : null,
      last_sent_at: s?.last_sent_at ? iso(s.last_sent_at) : null,
    };
  });
}
