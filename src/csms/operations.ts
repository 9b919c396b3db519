import { randomInt } from 'node:crypto';
import Type, { type Static, type TProperties, type TSchema } from '#typebox';
import { recordAsSeen, type ChargePointState } from '../../actors/charge-point/protocol.js';
import { HttpError } from '../gateway/errors.js';
import { route, type RouteResult, type RouteSpec } from '../gateway/route-table.js';
import type { OperatorAuth } from '../gateway/csms-auth.js';
import {
  ChargingProfilePurpose,
  ChargingProfileSchema,
  COMMAND_VERSIONS,
  IdTokenKind,
  idTagText,
  ocppInteger,
  LOCAL_LIST_MESSAGE_MAX,
  LocalListEntry,
  type ChargingProfile,
  TriggeredMessage,
  VariableRefSchema,
  type ChargerCommand,
  type ProtocolName,
} from '../ocpp/domain.js';
import { ID_TAG_16_MAX, localListUpdates, wantedFor, type HeldList } from './local-list.js';
import { ChargePointId } from './views.js';
import { titled } from '../gateway/openapi.js';
import { isSecretName } from '../ocpp/reports.js';

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
  /** whether a live process holds the charger's connection */
  online(id: string): Promise<boolean>;
  /** the stored reply of an operation that returns data */
  reply(commandId: string): Promise<unknown>;
  /** a new OCPP reservation id, from the id space OCPI reservations share (src/roaming/reservations.ts) */
  reservationId(id: string, evse: number, expiryAt: number): Promise<number>;
  /** the local list the charger holds, and the one it should hold (src/csms/local-list.ts) */
  heldLocalList(id: string): Promise<HeldList>;
  wantedLocalList(): Promise<LocalListEntry[]>;
  /** whether this process is stopping: a route waiting for an answer answers with what it has */
  stopping(): boolean;
}

const IdParams = Type.Object({ id: ChargePointId });
/** `?wait_ms=`: how long a route waits for the charger's answer, at most 30 s. */
function waitQuery(defaultMs: number) {
  return Type.Object({
    wait_ms: Type.Optional(
      ocppInteger({
        minimum: 0,
        maximum: 30_000,
        description: `how long to wait for the charger's answer before answering (default ${defaultMs}; 0: do not wait)`,
      }),
    ),
  });
}
export const DEFAULT_WAIT_MS = 5_000;
export const Wait = waitQuery(DEFAULT_WAIT_MS);
/**
 * A remote start's or stop's: by default they answer at once (the charger's own answer is a
 * separate matter, the service contract says); given, they wait for it as the operations do.
 */
export const CommandWait = waitQuery(0);
const POLL_MS = 100;

export const OperationResult = titled(
  'OperationResult',
  Type.Object({
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
    reservation_id: Type.Optional(
      ocppInteger({
        description:
          'reserve: the id the charger knows the reservation by; absent when it made none (not sent: refused, expired; or the charger refused it: Rejected, Occupied, Faulted, Unavailable)',
      }),
    ),
  }),
);
export type OperationResult = Static<typeof OperationResult>;

const PENDING = new Set(['queued', 'sent']);
/**
 * The ends of a reserve that made no reservation: never sent (refused: a Pending charger's;
 * expired), or refused by the charger (1.6 and 2.0.1 ReserveNowStatus)
 */
const NO_RESERVATION = new Set(['refused', 'expired', 'Rejected', 'Occupied', 'Faulted', 'Unavailable']);
/** how often a route waiting for a call still sent asks whether its charger is online */
const OFFLINE_CHECK_MS = 1_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The operation's result once the charger answered command `commandId` (queued or sent with
 * `status`), or after `waitMs` with the status it then has.
 */
export async function awaitOutcome(
  access: OperationAccess,
  id: string,
  commandId: string,
  status: string,
  waitMs: number,
): Promise<OperationResult> {
  const until = Date.now() + waitMs;
  const recordOf = async () =>
    (await access.storedState(id).catch(() => undefined))?.commands.find((c) => c.command_id === commandId);
  let last: OperationResult = {
    result: 'ACCEPTED',
    command_id: commandId,
    command_status: status,
    answered: false,
    detail: null,
  };
  // settled as it was queued (refused: a Pending charger's unlock): the record says why
  if (!PENDING.has(status)) return { ...last, answered: true, detail: (await recordOf())?.detail ?? null };
  // when a call still sent was first seen with its charger offline, and when that was last asked
  let offlineSince: number | undefined;
  let askedAt = 0;
  // a process that stops answers with the record as it is (queued, sent): its HTTP server drains
  // for a few seconds only, and a wait cut there was an empty reply with no command id
  while (Date.now() < until && !access.stopping()) {
    await sleep(Math.min(POLL_MS, Math.max(0, until - Date.now())));
    // the committed state, read from the store: a charger that answers and then drops its
    // connection (a reset) still gets its answer reported, not a 409
    // a call queued past its expiry reads expired, as in a read of the charger (recordAsSeen)
    const stored = await recordOf();
    if (!stored) continue;
    const record = recordAsSeen(stored, true);
    last = { ...last, command_status: record.status, detail: record.detail };
    if (record.status === 'sent' && Date.now() - askedAt >= OFFLINE_CHECK_MS) {
      // the process that sent it may have died (kill -9): no one will record its end until the
      // charger connects again. Offline for a second (an answer that came just before a close
      // has committed by then), the call has failed as a read of the charger shows it
      askedAt = Date.now();
      if (await access.online(id).catch(() => true)) offlineSince = undefined;
      else if (offlineSince === undefined) offlineSince = askedAt;
      else {
        const failed = recordAsSeen(record, false);
        return { ...last, command_status: failed.status, detail: failed.detail, answered: true };
      }
    }
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
  /**
   * The command for a checked body, for charger `id` speaking `protocol` (as the route read it);
   * may read the charger's state and throw an HttpError (422).
   */
  command(body: Static<B>, id: string, protocol: ProtocolName): ChargerCommand | Promise<ChargerCommand>;
}

function operationRoute<B extends TSchema>(access: OperationAccess, op: Operation<B>): RouteSpec<OperatorAuth> {
  const versions = COMMAND_VERSIONS[op.kind];
  // a body whose fields are all optional may be left out (`curl -X POST .../clear-cache`): it is {}
  const required: unknown = (op.body as { required?: unknown }).required;
  const bodyOptional = !Array.isArray(required) || required.length === 0;
  return route({
    method: 'POST',
    path: `/charge-points/:id/${op.path}`,
    summary: `${op.summary} (${versions.join(', ')})`,
    params: IdParams,
    query: Wait,
    body: op.body,
    bodyOptional,
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
      const command = await op.command((req.body ?? {}) as Static<B>, id, protocol);
      const sent = await access.command(id, command);
      const waitMs = (req.query as { wait_ms?: number }).wait_ms ?? DEFAULT_WAIT_MS;
      const result = await awaitOutcome(access, id, sent.command_id, sent.status, waitMs);
      // a reservation never sent, or refused, was never made: an id would be one no cancel finds
      const reserved = command.kind === 'reserve' && !NO_RESERVATION.has(result.command_status);
      return { data: reserved ? { ...result, reservation_id: command.reservation_id } : result };
    },
  });
}

const date = (description: string) => Type.String({ format: 'date-time', description });
const nullable = <T>(v: T | undefined): T | null => v ?? null;
/**
 * An operation's body object: a field it does not know is a 422, never dropped (a misspelt
 * `profileId` cleared every profile; an `evse_id` given to reset restarted the whole charger).
 */
const closed = <P extends TProperties>(properties: P) => Type.Object(properties, { additionalProperties: false });
/**
 * A requestId for firmware and log uploads, echoed by their status notifications: random, so that
 * processes of a cluster do not hand out the same ones.
 */
const nextRequestId = (): number => randomInt(1, 2 ** 31 - 1);

/** The EVSE and the connector of it an operation acts on, as the charger's version numbers them. */
export interface ChargerPlace {
  evse_id: number | null;
  /** 2.0.1 only: a 1.6 connector is its EVSE, numbered by evse_id */
  connector_id: number | null;
}

/**
 * The place a body names (`evse_id`, `connector_id`) for a charger of `protocol`: the one rule of
 * every route that takes both (docs/CSMS.md "Operations"). A 2.0.1 connector is one of an EVSE
 * (EVSEType): connector_id without evse_id is 422. A 1.6 connector is its EVSE: connector_id alone
 * names it, and two different numbers name two places of which one would be dropped (422; unlock
 * and change-availability sent evse_id and dropped connector_id without a word).
 */
export function placeOf(protocol: ProtocolName, body: { evse_id?: number; connector_id?: number }): ChargerPlace {
  const evse = body.evse_id ?? null;
  const connector = body.connector_id ?? null;
  if (protocol === 'ocpp2.0.1') {
    if (connector !== null && evse === null)
      throw new HttpError(422, 'connector_without_evse', 'connector_id names a connector of evse_id: give evse_id too');
    return { evse_id: evse, connector_id: connector };
  }
  if (evse !== null && connector !== null && evse !== connector)
    throw new HttpError(
      422,
      'connector_evse_conflict',
      `a 1.6 connector is its EVSE: connector_id ${connector} and evse_id ${evse} name two; give one`,
    );
  return { evse_id: evse ?? connector, connector_id: null };
}

/** 422 for a variable that names a connector without its EVSE (2.0.1 EVSEType: a connector is one of an EVSE). */
function requireEvseOfConnector(variables: ReadonlyArray<{ evse_id?: number; connector_id?: number }>): void {
  if (variables.some((v) => v.connector_id !== undefined && v.evse_id === undefined))
    throw new HttpError(422, 'connector_without_evse', 'connector_id names a connector of evse_id: give evse_id too');
}

/**
 * 422 for the charger's password set as a configuration key or variable: it changes through
 * PUT /v1/charge-points/{id}/password, which keeps the CSMS's copy in step with the charger's and
 * never writes it down in clear; set here, the charger would take a password the CSMS does not
 * know and be locked out at its next login.
 */
function refusePassword(names: readonly string[]): void {
  if (names.some(isSecretName))
    throw new HttpError(
      422,
      'use_password_route',
      "the charger's password is set with PUT /v1/charge-points/{id}/password, not as a configuration key or variable",
    );
}

const UploadLogBody = closed({
  location: Type.String({ format: 'uri', maxLength: 512, description: 'URL to upload to' }),
  log_type: Type.Optional(Type.Union([Type.Literal('diagnostics'), Type.Literal('security')])),
  since: Type.Optional(date('oldest entry to include')),
  until: Type.Optional(date('newest entry to include')),
});

function uploadLogCommand(b: Static<typeof UploadLogBody>): ChargerCommand {
  if (b.since !== undefined && b.until !== undefined && Date.parse(b.since) > Date.parse(b.until))
    throw new HttpError(422, 'since_after_until', 'since is later than until: no log entry lies between them');
  return {
    kind: 'upload-log',
    location: b.location,
    log_type: b.log_type ?? 'diagnostics',
    since: nullable(b.since),
    until: nullable(b.until),
    request_id: nextRequestId(),
  };
}

/** Availability, reset, authorization cache. */
function stateOperations(access: OperationAccess): RouteSpec<OperatorAuth>[] {
  return [
    operationRoute(access, {
      path: 'change-availability',
      kind: 'change-availability',
      summary: 'Make the charger, an EVSE or a connector operative or inoperative (ChangeAvailability)',
      body: closed({
        operative: Type.Boolean(),
        evse_id: Type.Optional(ocppInteger({ minimum: 1, description: 'absent: the whole charger' })),
        connector_id: Type.Optional(
          ocppInteger({ minimum: 1, description: '2.0.1: a connector of the EVSE; 1.6: the connector (its EVSE)' }),
        ),
      }),
      command: (b, _id, protocol) => ({ kind: 'change-availability', operative: b.operative, ...placeOf(protocol, b) }),
    }),
    operationRoute(access, {
      path: 'reset',
      kind: 'reset',
      summary: 'Restart the charger: soft (1.6 Soft, 2.0.1 OnIdle) or hard (1.6 Hard, 2.0.1 Immediate) (Reset)',
      body: closed({ type: Type.Union([Type.Literal('soft'), Type.Literal('hard')]) }),
      command: (b) => ({ kind: 'reset', type: b.type }),
    }),
    operationRoute(access, {
      path: 'clear-cache',
      kind: 'clear-cache',
      summary: "Clear the charger's authorization cache (ClearCache)",
      body: closed({}),
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
      body: closed({
        keys: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 100 })),
      }),
      command: (b) => ({ kind: 'get-configuration', keys: b.keys ?? [] }),
    }),
    operationRoute(access, {
      path: 'change-configuration',
      kind: 'change-configuration',
      summary: 'Set one configuration key (ChangeConfiguration)',
      body: closed({ key: Type.String({ minLength: 1, maxLength: 50 }), value: Type.String({ maxLength: 500 }) }),
      command: (b) => {
        refusePassword([b.key]);
        return { kind: 'change-configuration', key: b.key, value: b.value };
      },
    }),
    operationRoute(access, {
      path: 'get-variables',
      kind: 'get-variables',
      summary: "Read device-model variables; the reply is the charger's (GetVariables)",
      body: closed({ variables: Type.Array(VariableRefSchema, { minItems: 1, maxItems: 100 }) }),
      command: (b) => {
        requireEvseOfConnector(b.variables);
        return { kind: 'get-variables', variables: b.variables };
      },
    }),
    operationRoute(access, {
      path: 'set-variables',
      kind: 'set-variables',
      summary: "Set device-model variables; the reply has each variable's status (SetVariables)",
      body: closed({
        variables: Type.Array(closed({ ...VariableRefSchema.properties, value: Type.String({ maxLength: 1000 }) }), {
          minItems: 1,
          maxItems: 100,
        }),
      }),
      command: (b) => {
        requireEvseOfConnector(b.variables);
        refusePassword(b.variables.map((v) => v.variable));
        return { kind: 'set-variables', variables: b.variables };
      },
    }),
    operationRoute(access, {
      path: 'get-local-list-version',
      kind: 'get-local-list-version',
      summary: "The version of the charger's local authorization list (GetLocalListVersion)",
      body: closed({}),
      command: () => ({ kind: 'get-local-list-version' }),
    }),
  ];
}

/** The 2.0.1 device model, reported by the charger as NotifyReport messages (docs/CSMS.md "Device model"). */
function reportOperations(access: OperationAccess): RouteSpec<OperatorAuth>[] {
  return [
    operationRoute(access, {
      path: 'get-base-report',
      kind: 'get-base-report',
      summary:
        'Ask a 2.0.1 charger for its device model (GetBaseReport); it sends the report as NotifyReport messages, kept at /device-model',
      body: closed({
        report_base: Type.Union([Type.Literal('configuration'), Type.Literal('full'), Type.Literal('summary')], {
          description:
            'configuration: the variables that can be set; full: every component and variable; summary: a summary',
        }),
      }),
      command: (b) => ({ kind: 'get-base-report', report_base: b.report_base, request_id: nextRequestId() }),
    }),
  ];
}

/** The most characters of a DataTransfer's data (its JSON on 2.0.1): it waits in the charger's state. */
const MAX_TRANSFER_DATA = 10_000;

/**
 * A DataTransfer's `data` for a charger of `protocol`: text on 1.6, any JSON on 2.0.1 (anyType);
 * 422 for JSON other than a string on 1.6, and for more than MAX_TRANSFER_DATA characters.
 */
function transferData(data: unknown, protocol: ProtocolName): unknown {
  if (data === undefined || data === null) return null;
  if (protocol === 'ocpp1.6' && typeof data !== 'string')
    throw new HttpError(
      422,
      'data_not_text',
      'data must be a string on ocpp1.6, whose DataTransfer carries text: send JSON as its text',
    );
  const size = typeof data === 'string' ? data.length : JSON.stringify(data).length;
  if (size > MAX_TRANSFER_DATA)
    throw new HttpError(422, 'data_too_long', `data holds ${size} characters: at most ${MAX_TRANSFER_DATA}`);
  return data;
}

/** DataTransfer, firmware, log uploads. */
function transferOperations(access: OperationAccess): RouteSpec<OperatorAuth>[] {
  return [
    operationRoute(access, {
      path: 'data-transfer',
      kind: 'data-transfer',
      summary: 'A vendor-specific message to the charger; the reply is its answer (DataTransfer)',
      body: closed({
        vendor_id: Type.String({ minLength: 1, maxLength: 255 }),
        message_id: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
        data: Type.Optional(
          Type.Unknown({
            description:
              'ocpp1.6: a string (its DataTransfer data is text); ocpp2.0.1: any JSON value. At most 10,000 characters (as JSON on 2.0.1)',
          }),
        ),
      }),
      command: (b, _id, protocol) => ({
        kind: 'data-transfer',
        vendor_id: b.vendor_id,
        message_id: nullable(b.message_id),
        data: transferData(b.data, protocol),
      }),
    }),
    operationRoute(access, {
      path: 'update-firmware',
      kind: 'update-firmware',
      summary: 'Install firmware from a URL; progress comes as firmware status in the event log (UpdateFirmware)',
      body: closed({
        location: Type.String({ format: 'uri', maxLength: 512, description: 'URL of the firmware' }),
        retrieve_at: Type.Optional(date('when to download it (default: now)')),
        retries: Type.Optional(ocppInteger({ minimum: 0 })),
        retry_interval_s: Type.Optional(ocppInteger({ minimum: 0 })),
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
      body: UploadLogBody,
      command: uploadLogCommand,
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
      body: closed({
        evse_id: Type.Optional(ocppInteger({ minimum: 1, description: '1.6: the connector; 2.0.1: required' })),
        connector_id: Type.Optional(
          ocppInteger({
            minimum: 1,
            description: '2.0.1: the connector of the EVSE (default 1); 1.6: the connector (its EVSE)',
          }),
        ),
      }),
      command: (b, _id, protocol) => {
        const place = placeOf(protocol, b);
        if (place.evse_id === null)
          throw new HttpError(
            422,
            'connector_required',
            'unlock names a connector: give evse_id (and connector_id on 2.0.1; on 1.6 either one)',
          );
        return { kind: 'unlock', evse_id: place.evse_id, connector_id: place.connector_id ?? 1 };
      },
    }),
    operationRoute(access, {
      path: 'trigger',
      kind: 'trigger',
      summary: 'Ask the charger to send a message now (TriggerMessage)',
      body: closed({
        message: TriggeredMessage,
        evse_id: Type.Optional(ocppInteger({ minimum: 1, description: '1.6: the connector' })),
        connector_id: Type.Optional(
          ocppInteger({
            minimum: 1,
            description: '2.0.1: the connector of the EVSE, required for StatusNotification; 1.6: the connector',
          }),
        ),
      }),
      command: (b, _id, protocol) => {
        const place = placeOf(protocol, b);
        // 2.0.1 F06.FR.12: a station asked for a StatusNotification without evse.connectorId
        // answers Rejected; refused here, the operator learns what to add before anything is sent
        if (protocol === 'ocpp2.0.1' && b.message === 'StatusNotification' && place.connector_id === null)
          throw new HttpError(
            422,
            'connector_required',
            'a 2.0.1 StatusNotification trigger names a connector (F06.FR.12): give evse_id and connector_id',
          );
        return { kind: 'trigger', message: b.message, ...place };
      },
    }),
  ];
}

/** 422 for an id tag a 1.6 charger cannot take (a CiString20); 2.0.1 takes the 36 the schemas allow. */
export function requireIdTagsFit(protocol: ProtocolName, idTags: readonly string[]): void {
  if (protocol === 'ocpp1.6' && idTags.some((t) => t.length > ID_TAG_16_MAX))
    throw new HttpError(422, 'id_tag_too_long', `an OCPP 1.6 id tag has at most ${ID_TAG_16_MAX} characters`);
}

/** Reservations (shared with OCPI RESERVE_NOW: docs/CSMS.md "Reservations"). */
function reservationOperations(access: OperationAccess): RouteSpec<OperatorAuth>[] {
  return [
    operationRoute(access, {
      path: 'reserve',
      kind: 'reserve',
      summary: 'Reserve an EVSE, or any EVSE of the charger, for an id tag until a time (ReserveNow)',
      body: closed({
        id_tag: idTagText(36),
        id_tag_type: Type.Optional({
          ...IdTokenKind,
          description:
            "2.0.1: the id tag's idToken type, ISO14443 for an RFID card, so that the charger knows the card the reservation is for when it is tapped; default Central (an id of ours, an app user's). 1.6 has none",
        }),
        expiry_date: date('when the reservation ends; in the future'),
        evse_id: Type.Optional(ocppInteger({ minimum: 1, description: 'absent: any EVSE (1.6 connector 0)' })),
      }),
      command: async (b, id, protocol) => {
        requireIdTagsFit(protocol, [b.id_tag]);
        const expiry = Date.parse(b.expiry_date);
        if (!(expiry > Date.now())) throw new HttpError(422, 'expiry_in_past', 'expiry_date is not in the future');
        return {
          kind: 'reserve',
          reservation_id: await access.reservationId(id, b.evse_id ?? 0, expiry),
          id_tag: b.id_tag,
          ...(b.id_tag_type === undefined ? {} : { id_tag_type: b.id_tag_type }),
          expiry_date: new Date(expiry).toISOString(),
          evse_id: nullable(b.evse_id),
          connector_id: null,
        };
      },
    }),
    operationRoute(access, {
      path: 'cancel-reservation',
      kind: 'cancel-reservation',
      summary: "Cancel one of the charger's reservations, the operator's or a partner's (CancelReservation)",
      body: closed({ reservation_id: ocppInteger() }),
      command: async (b, id) => {
        const held = (await access.storedState(id))?.reservations ?? [];
        if (!held.some((r) => r.reservation_id === b.reservation_id))
          throw new HttpError(
            404,
            'no_such_reservation',
            `charge point ${id} holds no reservation ${b.reservation_id}`,
          );
        return { kind: 'cancel-reservation', reservation_id: b.reservation_id };
      },
    }),
  ];
}

/**
 * What OCPP requires of a profile beyond its schema (1.6 section 3.13, 2.0.1 K01): where each
 * purpose may go, the transaction of a TxProfile, schedule periods in order from 0.
 */
async function checkProfile(
  access: OperationAccess,
  id: string,
  protocol: ProtocolName,
  evseId: number,
  p: ChargingProfile,
): Promise<void> {
  const fail = (detail: string): never => {
    throw new HttpError(422, 'bad_charging_profile', detail);
  };
  if (p.purpose === 'charger_max' && evseId !== 0) fail('a charger_max profile goes on evse_id 0 (the whole charger)');
  if (p.purpose !== 'tx' && p.transaction_id !== undefined) fail('only a tx profile names a transaction');
  if (p.purpose === 'tx') {
    if (evseId === 0) fail('a tx profile goes on the EVSE of its transaction');
    if (p.transaction_id === undefined) fail('a tx profile names its transaction_id');
    const open = (await access.storedState(id))?.transactions ?? [];
    const tx = open.find((t) => t.transaction_id === p.transaction_id);
    if (!tx) fail(`transaction ${p.transaction_id} is not open on charge point ${id}`);
    else if (tx.evse_id !== evseId) fail(`transaction ${p.transaction_id} runs on EVSE ${tx.evse_id}, not ${evseId}`);
  }
  profileShape(protocol, p);
}

/**
 * A remote start's profile (1.6 section 5.11, 2.0.1 F01): a tx profile for the transaction about
 * to start, which it cannot name yet; then the rules of every profile (422 otherwise).
 */
export function checkStartProfile(protocol: ProtocolName, p: ChargingProfile): void {
  if (p.purpose !== 'tx') throw new HttpError(422, 'bad_charging_profile', "a remote start's profile has purpose tx");
  if (p.transaction_id !== undefined)
    throw new HttpError(422, 'bad_charging_profile', "a remote start's profile names no transaction: it has none yet");
  profileShape(protocol, p);
}

/** The rules of every profile's own fields: kind and recurrency, validity, periods, 1.6 limits. */
function profileShape(protocol: ProtocolName, p: ChargingProfile): void {
  const fail = (detail: string): never => {
    throw new HttpError(422, 'bad_charging_profile', detail);
  };
  if (p.kind === 'recurring' && p.recurrency === undefined)
    fail('a recurring profile needs recurrency (daily or weekly)');
  if (p.kind !== 'recurring' && p.recurrency !== undefined) fail('recurrency is given with kind recurring only');
  if (p.valid_from !== undefined && p.valid_to !== undefined && Date.parse(p.valid_from) >= Date.parse(p.valid_to))
    fail('valid_from is not before valid_to');
  if (p.kind === 'recurring' && p.schedule.start === undefined) fail('a recurring profile needs schedule.start');
  if (p.kind === 'relative' && p.schedule.start !== undefined) fail('a relative profile has no schedule.start');
  // 2.0.1 K01.FR.38 and K01.FR.40; 1.6 says neither (its startSchedule is optional, "relative to
  // start of charging" when absent), so a 1.6 charger gets what its version allows
  if (protocol === 'ocpp2.0.1' && p.purpose === 'charger_max' && p.kind === 'relative')
    fail('an OCPP 2.0.1 charger_max profile (ChargingStationMaxProfile) is not relative (K01.FR.38)');
  if (protocol === 'ocpp2.0.1' && p.kind === 'absolute' && p.schedule.start === undefined)
    fail('an OCPP 2.0.1 absolute profile needs schedule.start (K01.FR.40)');
  if (p.schedule.periods[0]?.start_s !== 0) fail('the first period starts at start_s 0');
  // a 1.6 limit is a multiple of 0.1 (its schema says so)
  const tenths = (v: number): boolean => Math.abs(v * 10 - Math.round(v * 10)) < 1e-6;
  const rates = [
    ...p.schedule.periods.map((q) => q.limit),
    ...(p.schedule.min_rate === undefined ? [] : [p.schedule.min_rate]),
  ];
  if (protocol === 'ocpp1.6' && !rates.every(tenths)) fail('an OCPP 1.6 limit or min_rate has at most one decimal');
  p.schedule.periods.forEach((q, i) => {
    const before = p.schedule.periods[i - 1];
    if (before && q.start_s <= before.start_s) fail('periods are in increasing order of start_s');
  });
}

/** A profile as an operator sends it: its transaction as text or, as 1.6 numbers it, an integer. */
const ProfileBody = Type.Object(
  {
    ...ChargingProfileSchema.properties,
    transaction_id: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 36 }), ocppInteger({ minimum: 0 })], {
        description: 'purpose tx: the open transaction it limits',
      }),
    ),
  },
  { additionalProperties: false },
);

/** Smart charging: profiles and the schedule that results. */
function limitOperations(access: OperationAccess): RouteSpec<OperatorAuth>[] {
  return [
    operationRoute(access, {
      path: 'set-charging-profile',
      kind: 'set-charging-profile',
      summary: 'Install a charging profile: a power or current limit over time (SetChargingProfile)',
      body: closed({
        evse_id: ocppInteger({ minimum: 0, description: '0: the charger as a whole (1.6 connector 0)' }),
        profile: ProfileBody,
      }),
      command: async (b, id, protocol) => {
        const { transaction_id: tx, ...rest } = b.profile;
        // a 1.6 transaction id is an integer on the wire: taken as the charger reported it, or as text
        const profile: ChargingProfile = tx === undefined ? rest : { ...rest, transaction_id: String(tx) };
        await checkProfile(access, id, protocol, b.evse_id, profile);
        return { kind: 'set-charging-profile', evse_id: b.evse_id, profile };
      },
    }),
    operationRoute(access, {
      path: 'clear-charging-profile',
      kind: 'clear-charging-profile',
      summary:
        'Remove charging profiles: by id, or all that match the criteria given (none: all) (ClearChargingProfile)',
      body: closed({
        profile_id: Type.Optional(ocppInteger({ minimum: 1 })),
        evse_id: Type.Optional(ocppInteger({ minimum: 0 })),
        purpose: Type.Optional(ChargingProfilePurpose),
        stack_level: Type.Optional(ocppInteger({ minimum: 0 })),
      }),
      command: (b) => ({
        kind: 'clear-charging-profile',
        profile_id: nullable(b.profile_id),
        evse_id: nullable(b.evse_id),
        purpose: nullable(b.purpose),
        stack_level: nullable(b.stack_level),
      }),
    }),
    operationRoute(access, {
      path: 'get-composite-schedule',
      kind: 'get-composite-schedule',
      summary:
        "The limits the charger will apply from now on, all profiles combined; the reply is the charger's (GetCompositeSchedule)",
      body: closed({
        evse_id: ocppInteger({ minimum: 0, description: '0: the grid connection of the whole charger' }),
        duration_s: ocppInteger({ minimum: 1, maximum: 7 * 86_400 }),
        rate_unit: Type.Optional(Type.Union([Type.Literal('A'), Type.Literal('W')])),
      }),
      command: (b) => ({
        kind: 'get-composite-schedule',
        evse_id: b.evse_id,
        duration_s: b.duration_s,
        rate_unit: nullable(b.rate_unit),
      }),
    }),
  ];
}

/** SendLocalList with the operator's own entries. */
function localListOperation(access: OperationAccess): RouteSpec<OperatorAuth> {
  return operationRoute(access, {
    path: 'send-local-list',
    kind: 'send-local-list',
    summary:
      "Replace (full) or change (differential) the charger's local authorization list; a null status removes an id tag (SendLocalList)",
    body: closed({
      update: Type.Union([Type.Literal('full'), Type.Literal('differential')]),
      entries: Type.Array(LocalListEntry, { maxItems: LOCAL_LIST_MESSAGE_MAX }),
      version: Type.Optional(
        ocppInteger({ minimum: 1, description: 'default: one above the version the charger last accepted' }),
      ),
    }),
    command: async (b, id, protocol) => {
      if (b.update === 'full' && b.entries.some((e) => e.status === null))
        throw new HttpError(
          422,
          'removal_in_full_update',
          'a full update lists id tags with their status; null removes in a differential one',
        );
      requireIdTagsFit(
        protocol,
        b.entries.map((e) => e.id_tag),
      );
      // id tags compare case-insensitively (CiString): one entry each, or the charger and our record of its list disagree
      const tags = b.entries.map((e) => e.id_tag.toLowerCase());
      const twice = tags.find((t, i) => tags.indexOf(t) !== i);
      if (twice !== undefined)
        throw new HttpError(422, 'duplicate_id_tag', `id tag ${twice} is listed twice: one entry per id tag`);
      const held = await access.heldLocalList(id);
      return {
        kind: 'send-local-list',
        version: b.version ?? (held.version ?? 0) + 1,
        update: b.update,
        entries: b.entries,
      };
    },
  });
}

const SyncResult = closed({
  result: Type.Literal('ACCEPTED'),
  in_sync: Type.Boolean({ description: 'the charger already held the list: nothing was sent' }),
  update: Type.Union([Type.Literal('full'), Type.Literal('differential'), Type.Null()]),
  changes: ocppInteger({ description: 'id tags sent (added, changed or removed)' }),
  commands: Type.Array(Type.Omit(OperationResult, ['reply', 'reservation_id'])),
});

/** Brings the charger's local list to the tokens the platform knows (docs/CSMS.md "Local authorization list"). */
function localListSync(access: OperationAccess): RouteSpec<OperatorAuth> {
  return route({
    method: 'POST',
    path: '/charge-points/:id/sync-local-list',
    summary:
      'Send the charger what its local list lacks: a differential update from the version it holds, or a full one (SendLocalList)',
    params: IdParams,
    query: Wait,
    body: closed({
      full: Type.Optional(Type.Boolean({ description: 'send the whole list even when the version is known' })),
    }),
    // its one field is optional: it may be sent without a body, as the operations are
    bodyOptional: true,
    response: SyncResult,
    responses: {
      404: 'unknown charge point',
      409: 'charge point offline',
      503: 'the process holding the charger did not answer in time',
    },
    handler: async (req): Promise<RouteResult> => {
      const id = String(req.params.id);
      const protocol = await access.protocolOf(id);
      const [held, tokens] = await Promise.all([access.heldLocalList(id), access.wantedLocalList()]);
      const wanted = wantedFor(protocol, tokens);
      const updates = localListUpdates(held, wanted, (req.body as { full?: boolean } | undefined)?.full === true);
      const sent = [];
      for (const u of updates) sent.push(await access.command(id, { kind: 'send-local-list', ...u }));
      const until = Date.now() + ((req.query as { wait_ms?: number }).wait_ms ?? DEFAULT_WAIT_MS);
      const commands = [];
      for (const c of sent) {
        const { reply: _reply, ...result } = await awaitOutcome(
          access,
          id,
          c.command_id,
          c.status,
          Math.max(0, until - Date.now()),
        );
        commands.push(result);
      }
      return {
        data: {
          result: 'ACCEPTED',
          in_sync: updates.length === 0,
          update: updates[0]?.update ?? null,
          changes: updates.reduce((n, u) => n + u.entries.length, 0),
          commands,
        },
      };
    },
  });
}

/** GET the local list the charger holds, as its last accepted update left it. */
function localListView(access: OperationAccess): RouteSpec<OperatorAuth> {
  return route({
    method: 'GET',
    path: '/charge-points/:id/local-list',
    summary: "The charger's local authorization list as its last accepted SendLocalList left it",
    params: IdParams,
    response: closed({
      version: Type.Union([ocppInteger(), Type.Null()], { description: 'null: not known (the next update is full)' }),
      entries: Type.Array(LocalListEntry),
    }),
    responses: { 404: 'unknown charge point' },
    handler: async (req): Promise<RouteResult> => {
      const id = String(req.params.id);
      await access.protocolOf(id);
      const held = await access.heldLocalList(id);
      return { data: { version: held.version, entries: [...held.entries.values()] } };
    },
  });
}

/** Every operation's route. */
export function operationRoutes(access: OperationAccess): RouteSpec<OperatorAuth>[] {
  return [
    ...stateOperations(access),
    ...connectorOperations(access),
    ...configurationOperations(access),
    ...reportOperations(access),
    ...transferOperations(access),
    ...reservationOperations(access),
    ...limitOperations(access),
    localListOperation(access),
    localListSync(access),
    localListView(access),
  ];
}
