import Type, { type Static } from '#typebox';
import { compileLazily } from '../lazy-compile.js';
import { ChargePointState } from '../../actors/charge-point/protocol.js';
import { ProtocolName } from '../ocpp/domain.js';
import type { ChargePointRow } from './charge-point-store.js';

/** Schemas of the /v1 bodies (docs/CSMS.md, "The /v1 API", describes them). */
export const ChargePointView = Type.Object({
  id: Type.String(),
  protocol: ProtocolName,
  online: Type.Boolean({ description: 'the charger holds a WebSocket to some web process now' }),
  created_at: Type.String({ format: 'date-time' }),
  ocpp_url: Type.String({ description: 'where the charger connects' }),
  boot: ChargePointState.properties.boot,
  connectors: Type.Array(
    Type.Intersect([
      ChargePointState.properties.connectors.items,
      Type.Object({
        last_reported_status: Type.Optional(
          Type.String({
            description: 'while the charger is offline: the status it last reported (status is then Unknown)',
          }),
        ),
      }),
    ]),
    {
      description:
        'as the charger last reported them; while it is offline every status is Unknown (as OCPI EvseStatus UNKNOWN: no status information while offline)',
    },
  ),
  reservations: ChargePointState.properties.reservations,
  active_transactions: Type.Array(Type.String()),
  commands: ChargePointState.properties.commands,
  operations: Type.Record(
    Type.String(),
    Type.Object({
      status: Type.String(),
      request_id: Type.Union([Type.Integer(), Type.Null()]),
      updated_at: Type.String(),
    }),
    {
      description:
        'the last status each long operation reported, by operation: firmware, diagnostics, log (status notifications)',
    },
  ),
  evse_links: Type.Optional(
    Type.Array(Type.Object({ evse_number: Type.Integer(), location_id: Type.String(), evse_uid: Type.String() }), {
      description: 'which EVSE of which of our OCPI locations each EVSE is (GET of one charge point)',
    }),
  ),
});
export type ChargePointView = Static<typeof ChargePointView>;

export const CreatedChargePoint = Type.Object({
  id: Type.String(),
  protocol: ProtocolName,
  ocpp_url: Type.String(),
  username: Type.String({ description: 'HTTP Basic user name: the charge point id' }),
  password: Type.String({ description: 'HTTP Basic password (identity key material); shown once, stored hashed' }),
  created_at: Type.String({ format: 'date-time' }),
});

/** A charge point identity: OCPP identifierString without ':', which HTTP Basic user names cannot hold. */
export const ChargePointId = Type.String({
  pattern: '^[A-Za-z0-9_.~*+|@=-]{1,48}$',
  description: 'charge point identity (OCPP identifierString without ":")',
});

export const CreateChargePointBody = Type.Object(
  {
    id: Type.Optional(
      Type.String({
        ...ChargePointId,
        description:
          'charge point identity (OCPP identifierString without ":", which HTTP Basic user names cannot hold); generated when absent',
      }),
    ),
    protocol: ProtocolName,
  },
  { additionalProperties: false },
);

export const RemoteStartBody = Type.Object(
  {
    id_tag: Type.String({ minLength: 1, maxLength: 20, description: 'the token the session is started for' }),
    evse_id: Type.Optional(Type.Integer({ minimum: 1 })),
    connector_id: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

export const RemoteStopBody = Type.Object(
  {
    // 1.6 transaction ids are integers on the wire and strings in our views: take either
    transaction_id: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 0 })], {
        description: "default: the charger's open transaction",
      }),
    ),
  },
  { additionalProperties: false },
);

export const CommandAcceptedView = Type.Object({
  result: Type.Literal('ACCEPTED', { description: 'the CSMS took the request; the charger answers separately' }),
  command_id: Type.String(),
  command_status: Type.String({ description: 'sent, or queued behind another outstanding call' }),
  transaction_id: Type.Optional(Type.String()),
});

const checkState = compileLazily(ChargePointState);

/** Whether a stored state is a charge point's (it is checked where read, as every stored state). */
export function checkChargePointState(state: unknown): state is ChargePointState {
  return checkState.Check(state);
}

export function chargePointView(
  row: ChargePointRow,
  online: boolean,
  state: unknown,
  ocppUrl: string,
): ChargePointView {
  const s = checkState.Check(state) ? state : undefined;
  return {
    id: row.id,
    // the version it last spoke (its firmware may have changed since it was registered)
    protocol: s?.protocol ?? row.protocol,
    online,
    created_at: new Date(row.created_at).toISOString(),
    ocpp_url: ocppUrl,
    boot: s?.boot ?? null,
    // what an offline charger last said may no longer hold (OCPI's UNKNOWN for an offline EVSE)
    connectors: (s?.connectors ?? []).map((c) =>
      online ? c : { ...c, status: 'Unknown', last_reported_status: c.status },
    ),
    reservations: s?.reservations ?? [],
    active_transactions: s?.transactions.map((t) => t.transaction_id) ?? [],
    commands: s?.commands ?? [],
    operations: s?.operations ?? {},
  };
}
