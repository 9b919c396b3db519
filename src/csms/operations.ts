import { randomInt } from 'node:crypto';
import Type, { type Static, type TSchema } from '#typebox';
import type { ChargePointState } from '../../actors/charge-point/protocol.js';
import { HttpError } from '../gateway/errors.js';
import { route, type RouteResult, type RouteSpec } from '../gateway/route-table.js';
import type { OperatorAuth } from '../gateway/csms-auth.js';
import {
  COMMAND_VERSIONS,
  TriggeredMessage,
  VariableRefSchema,
  type ChargerCommand,
  type ProtocolName,
} from '../ocpp/domain.js';
import { ChargePointId } from './views.js';

/**
 * The operations an operator runs on a charger (docs/CSMS.md "Operations"): one /v1 route each,
 * one domain command each, mapped by each version's adapter. A route answers once the command is
 * queued or sent, with the charger's answer when it came within `wait_ms` (default 5 s), and the
 * outcome stays in the charge point's `commands`.
 */

/** What the routes need of the charge points (api.ts ChargePointAccess). */
export interface OperationAccess {
  /** the version the charger last spoke, else the registered one; 404 for an unknown charger */
  protocolOf(id: string): Promise<ProtocolName>;
  command(id: string, cmd: ChargerCommand): Promise<{ command_id: string; status: string }>;
  /** the charge point's state as last committed, undefined when there is none yet */
  storedState(id: string): Promise<ChargePointState | undefined>;
  /** the stored reply of an operation that returns data */
  reply(commandId: string): Promise<unknown>;
}

const IdParams = Type.Object({ id: ChargePointId });
const Wait = Type.Object({
  wait_ms: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 30_000,
      description: "how long to wait for the charger's answer before answering (default 5000; 0: do not wait)",
    }),
  ),
});
const DEFAULT_WAIT_MS = 5_000;
const POLL_MS = 100;

export const OperationResult = Type.Object({
  result: Type.Literal('ACCEPTED', { description: 'the CSMS queued or sent the call' }),
  command_id: Type.String(),
  command_status: Type.String({
    description:
      "the charger's answer (Accepted, Rejected, ...), or queued / sent when it had not answered within wait_ms, or timeout / failed / expired",
  }),
  answered: Type.Boolean({ description: 'whether command_status is the final outcome' }),
  detail: Type.Union([Type.String(), Type.Null()]),
  reply: Type.Optional(
    Type.Unknown({
      description: "the charger's reply, for the operations that return data (configuration, variables, ...)",
    }),
  ),
});
type OperationResult = Static<typeof OperationResult>;

const PENDING = new Set(['queued', 'sent']);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function outcome(access: OperationAccess, id: string, commandId: string, status: string, waitMs: number) {
  const until = Date.now() + waitMs;
  let last: OperationResult = {
    result: 'ACCEPTED',
    command_id: commandId,
    command_status: status,
    answered: false,
    detail: null,
  };
  if (!PENDING.has(status)) return { ...last, answered: true };
  while (Date.now() < until) {
    await sleep(Math.min(POLL_MS, Math.max(0, until - Date.now())));
    // the committed state, read from the store: a charger that answers and then drops its
    // connection (a reset) still gets its answer reported, not a 409
    const state = await access.storedState(id).catch(() => undefined);
    const record = state?.commands.find((c) => c.command_id === commandId);
    if (!record) continue;
    last = { ...last, command_status: record.status, detail: record.detail };
    if (PENDING.has(record.status)) continue;
    const reply = record.has_reply === true ? await access.reply(commandId).catch(() => undefined) : undefined;
    return { ...last, answered: true, ...(reply === undefined ? {} : { reply }) };
  }
  return last;
}

interface Operation<B extends TSchema> {
  path: string;
  kind: ChargerCommand['kind'];
  summary: string;
  body: B;
  command(body: Static<B>): ChargerCommand;
}

function operationRoute<B extends TSchema>(access: OperationAccess, op: Operation<B>): RouteSpec<OperatorAuth> {
  const versions = COMMAND_VERSIONS[op.kind];
  return route({
    method: 'POST',
    path: `/charge-points/:id/${op.path}`,
    summary: `${op.summary} (${versions.join(', ')})`,
    params: IdParams,
    query: Wait,
    body: op.body,
    response: OperationResult,
    responses: {
      404: 'unknown charge point',
      409: 'charge point offline',
      422: "a bad body, or an operation the charger's OCPP version does not have",
      503: 'the process holding the charger did not answer in time',
    },
    handler: async (req): Promise<RouteResult> => {
      const id = String(req.params.id);
      const protocol = await access.protocolOf(id);
      if (!versions.includes(protocol))
        throw new HttpError(
          422,
          'not_in_version',
          `${op.path} is not an operation of ${protocol}: it exists in ${versions.join(', ')}`,
        );
      const sent = await access.command(id, op.command(req.body as Static<B>));
      const waitMs = (req.query as { wait_ms?: number }).wait_ms ?? DEFAULT_WAIT_MS;
      return { data: await outcome(access, id, sent.command_id, sent.status, waitMs) };
    },
  });
}

const date = (description: string) => Type.String({ format: 'date-time', description });
const nullable = <T>(v: T | undefined): T | null => v ?? null;
/**
 * A requestId for firmware and log uploads, echoed by their status notifications: random, so that
 * processes of a cluster do not hand out the same ones.
 */
const nextRequestId = (): number => randomInt(1, 2 ** 31 - 1);

/** Availability, reset, authorization cache. */
function stateOperations(access: OperationAccess): RouteSpec<OperatorAuth>[] {
  return [
    operationRoute(access, {
      path: 'change-availability',
      kind: 'change-availability',
      summary: 'Make the charger, an EVSE or a connector operative or inoperative (ChangeAvailability)',
      body: Type.Object({
        operative: Type.Boolean(),
        evse_id: Type.Optional(Type.Integer({ minimum: 1, description: 'absent: the whole charger' })),
        connector_id: Type.Optional(Type.Integer({ minimum: 1, description: '2.0.1: a connector of the EVSE' })),
      }),
      command: (b) => {
        if (b.connector_id !== undefined && b.evse_id === undefined)
          throw new HttpError(
            422,
            'connector_without_evse',
            'connector_id names a connector of evse_id: give evse_id too',
          );
        return {
          kind: 'change-availability',
          operative: b.operative,
          evse_id: nullable(b.evse_id),
          connector_id: nullable(b.connector_id),
        };
      },
    }),
    operationRoute(access, {
      path: 'reset',
      kind: 'reset',
      summary: 'Restart the charger: soft (1.6 Soft, 2.0.1 OnIdle) or hard (1.6 Hard, 2.0.1 Immediate) (Reset)',
      body: Type.Object({ type: Type.Union([Type.Literal('soft'), Type.Literal('hard')]) }),
      command: (b) => ({ kind: 'reset', type: b.type }),
    }),
    operationRoute(access, {
      path: 'clear-cache',
      kind: 'clear-cache',
      summary: "Clear the charger's authorization cache (ClearCache)",
      body: Type.Object({}),
      command: () => ({ kind: 'clear-cache' }),
    }),
  ];
}

/** Configuration (1.6), device-model variables (2.0.1), the local list's version. */
function configurationOperations(access: OperationAccess): RouteSpec<OperatorAuth>[] {
  return [
    operationRoute(access, {
      path: 'get-configuration',
      kind: 'get-configuration',
      summary: "Read configuration keys, all when none is named; the reply is the charger's (GetConfiguration)",
      body: Type.Object({
        keys: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 100 })),
      }),
      command: (b) => ({ kind: 'get-configuration', keys: b.keys ?? [] }),
    }),
    operationRoute(access, {
      path: 'change-configuration',
      kind: 'change-configuration',
      summary: 'Set one configuration key (ChangeConfiguration)',
      body: Type.Object({ key: Type.String({ minLength: 1, maxLength: 50 }), value: Type.String({ maxLength: 500 }) }),
      command: (b) => ({ kind: 'change-configuration', key: b.key, value: b.value }),
    }),
    operationRoute(access, {
      path: 'get-variables',
      kind: 'get-variables',
      summary: "Read device-model variables; the reply is the charger's (GetVariables)",
      body: Type.Object({ variables: Type.Array(VariableRefSchema, { minItems: 1, maxItems: 100 }) }),
      command: (b) => ({ kind: 'get-variables', variables: b.variables }),
    }),
    operationRoute(access, {
      path: 'set-variables',
      kind: 'set-variables',
      summary: "Set device-model variables; the reply has each variable's status (SetVariables)",
      body: Type.Object({
        variables: Type.Array(
          Type.Intersect([VariableRefSchema, Type.Object({ value: Type.String({ maxLength: 1000 }) })]),
          {
            minItems: 1,
            maxItems: 100,
          },
        ),
      }),
      command: (b) => ({ kind: 'set-variables', variables: b.variables }),
    }),
    operationRoute(access, {
      path: 'get-local-list-version',
      kind: 'get-local-list-version',
      summary: "The version of the charger's local authorization list (GetLocalListVersion)",
      body: Type.Object({}),
      command: () => ({ kind: 'get-local-list-version' }),
    }),
  ];
}

/** DataTransfer, firmware, log uploads. */
function transferOperations(access: OperationAccess): RouteSpec<OperatorAuth>[] {
  return [
    operationRoute(access, {
      path: 'data-transfer',
      kind: 'data-transfer',
      summary: 'A vendor-specific message to the charger; the reply is its answer (DataTransfer)',
      body: Type.Object({
        vendor_id: Type.String({ minLength: 1, maxLength: 255 }),
        message_id: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
        data: Type.Optional(Type.String({ maxLength: 10_000 })),
      }),
      command: (b) => ({
        kind: 'data-transfer',
        vendor_id: b.vendor_id,
        message_id: nullable(b.message_id),
        data: nullable(b.data),
      }),
    }),
    operationRoute(access, {
      path: 'update-firmware',
      kind: 'update-firmware',
      summary: 'Install firmware from a URL; progress comes as firmware status in the event log (UpdateFirmware)',
      body: Type.Object({
        location: Type.String({ format: 'uri', maxLength: 512, description: 'URL of the firmware' }),
        retrieve_at: Type.Optional(date('when to download it (default: now)')),
        retries: Type.Optional(Type.Integer({ minimum: 0 })),
        retry_interval_s: Type.Optional(Type.Integer({ minimum: 0 })),
      }),
      command: (b) => ({
        kind: 'update-firmware',
        location: b.location,
        retrieve_at: b.retrieve_at ?? new Date().toISOString(),
        retries: nullable(b.retries),
        retry_interval_s: nullable(b.retry_interval_s),
        request_id: nextRequestId(),
      }),
    }),
    operationRoute(access, {
      path: 'upload-log',
      kind: 'upload-log',
      summary:
        'Upload a log to a URL: diagnostics (1.6 GetDiagnostics, 2.0.1 GetLog DiagnosticsLog) or security (GetLog SecurityLog); progress in the event log',
      body: Type.Object({
        location: Type.String({ format: 'uri', maxLength: 512, description: 'URL to upload to' }),
        log_type: Type.Optional(Type.Union([Type.Literal('diagnostics'), Type.Literal('security')])),
        since: Type.Optional(date('oldest entry to include')),
        until: Type.Optional(date('newest entry to include')),
      }),
      command: (b) => ({
        kind: 'upload-log',
        location: b.location,
        log_type: b.log_type ?? 'diagnostics',
        since: nullable(b.since),
        until: nullable(b.until),
        request_id: nextRequestId(),
      }),
    }),
  ];
}

/** A connector's cable, and messages asked for now. */
function connectorOperations(access: OperationAccess): RouteSpec<OperatorAuth>[] {
  return [
    operationRoute(access, {
      path: 'unlock',
      kind: 'unlock',
      summary: 'Release the cable of a connector (UnlockConnector)',
      body: Type.Object({
        evse_id: Type.Integer({ minimum: 1, description: '1.6: the connector' }),
        connector_id: Type.Optional(
          Type.Integer({ minimum: 1, description: '2.0.1: the connector of the EVSE (default 1)' }),
        ),
      }),
      command: (b) => ({ kind: 'unlock', evse_id: b.evse_id, connector_id: b.connector_id ?? 1 }),
    }),
    operationRoute(access, {
      path: 'trigger',
      kind: 'trigger',
      summary: 'Ask the charger to send a message now (TriggerMessage)',
      body: Type.Object({
        message: TriggeredMessage,
        evse_id: Type.Optional(Type.Integer({ minimum: 1 })),
      }),
      command: (b) => ({ kind: 'trigger', message: b.message, evse_id: nullable(b.evse_id) }),
    }),
  ];
}

/** Every operation's route. */
export function operationRoutes(access: OperationAccess): RouteSpec<OperatorAuth>[] {
  return [
    ...stateOperations(access),
    ...connectorOperations(access),
    ...configurationOperations(access),
    ...transferOperations(access),
  ];
}
