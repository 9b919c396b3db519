import Type, { type Static, type TSchema } from '#typebox';
import { ocpiCommandProtocol } from '../../../actors/ocpi-command/protocol.js';
import { OcpiCommandState } from '../../../actors/ocpi-command/state.js';
import { pageHeaders, Paging } from '../../gateway/operator-paging.js';
import { route } from '../../gateway/route-table.js';
import { compileLazily } from '../../lazy-compile.js';
import { parseAddress } from '../../runtime/address.js';
import type { OcpiContext } from '../core/context.js';
import type { OperatorRoute } from '../core/mount-kit.js';

/**
 * The operator's view of the commands partner eMSPs sent our CPO that went to a charger
 * (docs/ROAMING.md "Commands"): each one's command actor (`ocpi-command/<uuid>`) as it last
 * committed, read from the runtime's state table. A command answered REJECTED at once (no linked
 * EVSE, the charger offline) never had an actor and is not listed.
 */

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

const ReceivedCommandOut = Type.Object({
  id: Type.String({ description: "the command actor's key (a UUID of ours)" }),
  partner: Type.Object({
    id: Nullable(Type.String()),
    country_code: Type.String(),
    party_id: Type.String(),
  }),
  version: Type.String(),
  command: Type.String(),
  charge_point_id: Type.String(),
  status: Type.Union([Type.Literal('new'), Type.Literal('sent'), Type.Literal('settled')], {
    description: 'sent: waiting for the charger; settled: the result is queued for the partner',
  }),
  charger_status: Nullable(Type.String({ description: "the charger's answer, or timeout, failed, expired" })),
  result: Nullable(Type.String({ description: 'the OCPI result sent to the partner (2.2.1 CommandResultType)' })),
  created_at: Nullable(Type.String()),
  settled_at: Nullable(Type.String()),
  updated_at: Type.String(),
});
type ReceivedCommandOut = Static<typeof ReceivedCommandOut>;

const checkState = compileLazily(OcpiCommandState);
const iso = (ms: number) => new Date(ms).toISOString();

/** GET /received-commands (the ocpi-management mount). */
export function receivedCommandRoutes(ctx: OcpiContext): OperatorRoute[] {
  const { db, config } = ctx.services;
  return [
    route({
      method: 'GET',
      path: '/received-commands',
      summary: "Partner eMSPs' commands carried to our chargers, the latest change first: charger, answer, result",
      query: Type.Object(Paging),
      response: Type.Array(ReceivedCommandOut),
      handler: async (req) => {
        const { offset, limit } = req.query;
        const kind = ocpiCommandProtocol.kind;
        const [countRows, rows, partners] = await Promise.all([
          db.sql.query('SELECT COUNT(*) AS n FROM actor_state WHERE kind = ?', [kind]),
          db.sql.query(
            'SELECT address, state, updated_at FROM actor_state WHERE kind = ? ORDER BY updated_at DESC, address DESC LIMIT ? OFFSET ?',
            [kind, limit, offset],
          ),
          ctx.partners.list(),
        ]);
        const byKey = new Map(partners.map((p) => [`${p.country_code}-${p.party_id}`, p.id]));
        const items: ReceivedCommandOut[] = [];
        for (const r of rows) {
          // the runtime's own serialisation of a state, checked against the actor's schema
          const state: unknown = JSON.parse(String(r.state));
          if (!checkState.Check(state)) continue;
          const [country_code = '', party_id = ''] = state.partner_key.split('-');
          items.push({
            id: parseAddress(String(r.address)).key,
            partner: { id: byKey.get(state.partner_key) ?? null, country_code, party_id },
            version: state.version,
            command: state.command,
            charge_point_id: state.charge_point_id,
            status: state.status,
            charger_status: state.charger_status,
            result: state.result,
            created_at: state.created_at > 0 ? iso(state.created_at) : null,
            settled_at: state.settled_at === null ? null : iso(state.settled_at),
            updated_at: iso(Number(r.updated_at)),
          });
        }
        const total = Number(countRows[0]?.n ?? 0);
        return { data: items, headers: pageHeaders(config, req, total, offset, limit) };
      },
    }),
  ];
}
