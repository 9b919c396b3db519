import Type, { type Static } from '#typebox';
import { compileLazily } from '../lazy-compile.js';
import { ChargePointState, recordAsSeen } from '../../actors/charge-point/protocol.js';
import { ChargingProfileSchema, idTagText, ocppInteger, ProtocolName, RegistrationStatus } from '../ocpp/domain.js';
import type { ChargePointRow } from './charge-point-store.js';
import { titled } from '../gateway/openapi.js';
import { explainedPattern } from '../gateway/validation.js';

/** Schemas of the /v1 bodies (docs/CSMS.md, "The /v1 API", describes them). */
export const ChargePointView = titled(
  'ChargePointView',
  Type.Object({
    id: Type.String(),
    protocol: ProtocolName,
    online: Type.Boolean({ description: 'the charger holds a WebSocket to some web process now' }),
    created_at: Type.String({ format: 'date-time' }),
    last_seen: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description:
        'when the CSMS last received an OCPP frame from the charger (any message, not only heartbeats); exact when asked of the process holding its socket, else stored at most every 30 s and at disconnect; null: never connected since this was kept',
    }),
    ocpp_url: Type.String({ description: 'where the charger connects' }),
    boot: ChargePointState.properties.boot,
    boot_policy: Type.Union([RegistrationStatus, Type.Null()], {
      description: "the operator's boot policy for this charger; null: the default (OCPP_BOOT_POLICY)",
    }),
    registration: Type.Union([RegistrationStatus, Type.Null()], {
      description: 'the status its last BootNotification was answered with; null: it has not booted',
    }),
    connectors: Type.Array(
      Type.Intersect([
        // received_at is the actor's own bookkeeping (state.ts isOlderReport), not shown
        Type.Omit(ChargePointState.properties.connectors.items, ['received_at']),
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
    reservations: Type.Array(
      Type.Object({
        reservation_id: Type.Integer(),
        evse_id: Type.Union([Type.Integer(), Type.Null()], { description: 'null: any EVSE of the charger' }),
        id_tag: Type.String(),
        expiry_date: Type.String(),
        status: Type.String(),
      }),
    ),
    active_transactions: Type.Array(Type.String()),
    open_transactions: Type.Array(
      Type.Object({
        transaction_id: Type.String(),
        evse_id: Type.Integer({ description: '0 while the charger has named no EVSE for it' }),
      }),
      { description: 'the open transactions with the EVSE each runs on (active_transactions, with their EVSE)' },
    ),
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
    password: Type.Object(
      {
        changed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
          description: 'when the password last changed; null: still the one given at registration',
        }),
        pending_since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
          description:
            'a new password was sent to the charger and its outcome is not known: since then the old and the new one both let it in',
        }),
      },
      { description: 'the HTTP Basic password (never shown here): PUT /v1/charge-points/{id}/password' },
    ),
    evse_links: Type.Optional(
      Type.Array(Type.Object({ evse_number: Type.Integer(), location_id: Type.String(), evse_uid: Type.String() }), {
        description: 'which EVSE of which of our OCPI locations each EVSE is (GET of one charge point)',
      }),
    ),
  }),
);
export type ChargePointView = Static<typeof ChargePointView>;

export const CreatedChargePoint = Type.Object({
  id: Type.String(),
  protocol: ProtocolName,
  ocpp_url: Type.String(),
  username: Type.String({ description: 'HTTP Basic user name: the charge point id' }),
  password: Type.String({ description: 'HTTP Basic password (identity key material); shown once, stored hashed' }),
  created_at: Type.String({ format: 'date-time' }),
  boot_policy: Type.Union([RegistrationStatus, Type.Null()]),
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
        // "." and ".." are path segments a client resolves away (ws://host/ocpp/.. is ws://host/):
        // such a charger could never connect
        pattern: explainedPattern(
          '^(?!\\.{1,2}$)[A-Za-z0-9_.~*+|@=-]{1,48}$',
          'must be 1-48 characters of A-Z a-z 0-9 _ . ~ * + | @ = -, and not "." or ".." (a URL resolves those away)',
        ),
        description:
          'charge point identity (OCPP identifierString without ":", which HTTP Basic user names cannot hold; not "." or "..", which a URL resolves away); generated when absent',
      }),
    ),
    protocol: ProtocolName,
    boot_policy: Type.Optional(
      Type.Union([RegistrationStatus, Type.Null()], {
        description: 'its boot policy (docs/CSMS.md "Boot and registration policy"); absent or null: OCPP_BOOT_POLICY',
      }),
    ),
  },
  { additionalProperties: false },
);

export const BootPolicyBody = Type.Object(
  {
    policy: Type.Union([RegistrationStatus, Type.Null()], {
      description: 'the status its BootNotification is answered with; null: the default (OCPP_BOOT_POLICY)',
    }),
  },
  { additionalProperties: false },
);

export const RegisterUnknownBody = Type.Object({ protocol: ProtocolName }, { additionalProperties: false });

export const RemoteStartBody = Type.Object(
  {
    id_tag: idTagText(36, 'the token the session is started for (at most 20 characters for an OCPP 1.6 charger)'),
    evse_id: Type.Optional(ocppInteger({ minimum: 1 })),
    connector_id: Type.Optional(ocppInteger({ minimum: 1 })),
    profile: Type.Optional(
      Type.Object(ChargingProfileSchema.properties, {
        additionalProperties: false,
        description:
          'a limit for the transaction it starts: purpose tx, no transaction_id (1.6 chargingProfile, 2.0.1 chargingProfile of RequestStartTransaction)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RemoteStopBody = Type.Object(
  {
    // 1.6 transaction ids are integers on the wire and strings in our views: take either
    transaction_id: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 36 }), ocppInteger({ minimum: 0 })], {
        description: "default: the charger's open transaction",
      }),
    ),
  },
  { additionalProperties: false },
);

export const CommandAcceptedView = titled(
  'CommandAccepted',
  Type.Object({
    result: Type.Literal('ACCEPTED', { description: 'the CSMS took the request; the charger answers separately' }),
    command_id: Type.String(),
    command_status: Type.String({
      description:
        "sent, or queued behind another outstanding call; refused when settled at once (see detail); with ?wait_ms=, the charger's answer (Accepted, Rejected) or timeout / failed / expired when it came to that within the wait",
    }),
    answered: Type.Optional(Type.Boolean({ description: 'whether command_status is final' })),
    detail: Type.Optional(
      Type.String({ description: 'why the command was settled (the charger is Pending or Rejected; a timeout, ...)' }),
    ),
    transaction_id: Type.Optional(Type.String()),
  }),
);
export type CommandAcceptedView = Static<typeof CommandAcceptedView>;

const checkState = compileLazily(ChargePointState);

/** Whether a stored state is a charge point's (it is checked where read, as every stored state). */
export function checkChargePointState(state: unknown): state is ChargePointState {
  return checkState.Check(state);
}

/** One command of a charger, as `GET /v1/charge-points/{id}/commands/{command_id}` answers it. */
export const CommandView = titled(
  'ChargerCommand',
  Type.Object({
    ...ChargePointState.properties.commands.items.properties,
    reply: Type.Optional(
      Type.Unknown({ description: "the charger's reply, for the operations that return data (while it is kept)" }),
    ),
  }),
);

export function chargePointView(
  row: ChargePointRow,
  online: boolean,
  state: unknown,
  ocppUrl: string,
  /** when a connection of this process last heard from it (fresher than the stored time) */
  seenHere?: number,
): ChargePointView {
  const s = checkState.Check(state) ? state : undefined;
  const lastSeen = Math.max(row.last_seen_at ?? 0, seenHere ?? 0);
  return {
    id: row.id,
    // the version it last spoke (its firmware may have changed since it was registered)
    protocol: s?.protocol ?? row.protocol,
    online,
    created_at: new Date(row.created_at).toISOString(),
    last_seen: lastSeen > 0 ? new Date(lastSeen).toISOString() : null,
    ocpp_url: ocppUrl,
    boot: s?.boot ?? null,
    boot_policy: row.boot_policy,
    registration: s?.registration ?? (s?.boot ? 'Accepted' : null),
    // what an offline charger last said may no longer hold (OCPI's UNKNOWN for an offline EVSE)
    connectors: (s?.connectors ?? []).map(({ received_at: _received, ...c }) =>
      online ? c : { ...c, status: 'Unknown', last_reported_status: c.status },
    ),
    // a reservation past its expiry is over, whether or not the charger said so (1.6 never does)
    reservations: (s?.reservations ?? [])
      .filter((r) => !(Date.parse(r.expiry_date) <= Date.now()))
      // what the charger holds; a partner's token and command address stay inside
      .map(({ reservation_id, evse_id, id_tag, expiry_date, status }) => ({
        reservation_id,
        evse_id,
        id_tag,
        expiry_date,
        status,
      })),
    active_transactions: s?.transactions.map((t) => t.transaction_id) ?? [],
    open_transactions: s?.transactions.map((t) => ({ transaction_id: t.transaction_id, evse_id: t.evse_id })) ?? [],
    // a call sent on a connection its process lost (a kill -9 of that process) is answered by no one
    commands: (s?.commands ?? []).map((c) => recordAsSeen(c, online)),
    operations: s?.operations ?? {},
    password: {
      changed_at: row.key_changed_at === null ? null : new Date(row.key_changed_at).toISOString(),
      pending_since: row.pending_since === null ? null : new Date(row.pending_since).toISOString(),
    },
  };
}

const FleetAlertView = Type.Object({
  charge_point_id: Type.String(),
  online: Type.Boolean({ description: 'false: the last report of a charger that is offline now' }),
  evse_id: Type.Integer(),
  connector_id: Type.Integer(),
  status: Type.String(),
  error_code: Type.Union([Type.String(), Type.Null()]),
  info: Type.Optional(Type.String({ description: "1.6 StatusNotification info: the charger's words for the fault" })),
  vendor_id: Type.Optional(
    Type.String({ description: '1.6 StatusNotification vendorId: whose vendorErrorCode it is' }),
  ),
  vendor_error_code: Type.Optional(Type.String({ description: '1.6 StatusNotification vendorErrorCode' })),
  updated_at: Type.String(),
});

export const FleetOverviewView = titled(
  'FleetOverview',
  Type.Object({
    total: Type.Integer({ description: 'registered charge points' }),
    online: Type.Integer(),
    offline: Type.Integer(),
    charging: Type.Integer({ description: 'online, with an open transaction or a connector Charging' }),
    faulted: Type.Integer({ description: 'online, with a connector Faulted or reporting an error code' }),
    by_protocol: Type.Record(Type.String(), Type.Integer()),
    connectors_by_status: Type.Record(Type.String(), Type.Integer(), {
      description: 'connectors (not 1.6 connector 0) by the status the views show (Unknown while offline)',
    }),
    alerts_total: Type.Integer(),
    alerts: Type.Array(FleetAlertView, {
      description: 'connectors that reported Faulted or an error code other than NoError, newest first',
    }),
    online_scope: Type.Union([Type.Literal('cluster'), Type.Literal('this_process')], {
      description:
        "whose connections `online` counts: every process's (`cluster`), or, while Redis cannot be reached, only the answering process's (`this_process`: the others' chargers count as offline)",
    }),
  }),
);
