import type { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import Type from '#typebox';
import type { Config } from '../../config/index.js';
import {
  chargePointProtocol,
  type ChargePointMessage,
  type ChargePointReplies,
  type CommandAccepted,
} from '../../actors/charge-point/protocol.js';
import { retiredChargePointState } from '../../actors/charge-point/state.js';
import { operatorAuthenticator, type OperatorAuth } from '../gateway/csms-auth.js';
import { HttpError, RequestValidationError } from '../gateway/errors.js';
import { pageHeaders, Paging } from '../gateway/operator-paging.js';
import { Defaulted } from '../gateway/validation.js';
import { fleetOverview, selectFleet } from './fleet.js';
import { FleetIndex } from './fleet-index.js';
import { publicOrigin } from '../gateway/public-origin.js';
import { defineMount, route, type MountSpec, type RouteResult, type RouteSpec } from '../gateway/route-table.js';
import type { ChargerCommand, RegistrationStatus } from '../ocpp/domain.js';
import { ProtocolName, ReportSeverity } from '../ocpp/domain.js';
import type { ActorSystem } from '../runtime/actor-system.js';
import type { ReplyTo } from '../runtime/protocol.js';
import { ActorUnavailableError, AskTimeoutError } from '../runtime/errors.js';
import { DuplicateChargePointError, type ChargePointStore } from './charge-point-store.js';
import type { CsmsEventBus } from './events.js';
import { UnknownChargePoint, type UnknownChargePoints } from './unknown-charge-points.js';
import { hashIdentityKey, newIdentityKey } from './identity-key.js';
import {
  awaitOutcome,
  CommandWait,
  checkStartProfile,
  operationRoutes,
  placeOf,
  requireIdTagsFit,
  type OperationAccess,
} from './operations.js';
import type { HeldList } from './local-list.js';
import type { LocalListEntry } from '../ocpp/domain.js';
import { dropPendingPasswordRoute, passwordRoute } from './password-route.js';
import { ChargerEventEntry, DeviceModel, type ReportReader } from './report-store.js';
import { ChargingSession, type SessionReader } from './session-store.js';
import { EventStream } from './event-stream.js';
import { titled } from '../gateway/openapi.js';
import { onlineAmong, type OnlineSource } from './online.js';
import {
  BootPolicyBody,
  ChargePointView,
  CommandAcceptedView,
  CommandView,
  FleetOverviewView,
  RegisterUnknownBody,
  CreateChargePointBody,
  CreatedChargePoint,
  RemoteStartBody,
  RemoteStopBody,
  ChargePointId,
  chargePointView,
  checkChargePointState,
} from './views.js';

export interface CsmsApiDeps {
  config: Config;
  actors: ActorSystem;
  chargePoints: ChargePointStore;
  sessions: SessionReader;
  reports: ReportReader;
  /** the local lists chargers hold and the one they should hold */
  localLists: { held(id: string): Promise<HeldList>; wanted(): Promise<LocalListEntry[]> };
  /** OCPP reservation ids, shared with OCPI reservations */
  reservations: { operatorReservation(id: string, evse: number, expiryAt: number): Promise<number> };
  events: CsmsEventBus;
  /** chargers refused at the upgrade (GET /v1/unknown-charge-points) */
  unknown: UnknownChargePoints;
  /** open event streams, ended at shutdown */
  streams: Set<PassThrough>;
  /** aborted as the process stops (its first step, before the HTTP server drains) */
  shutdown: AbortSignal;
  /** when this process's connection of the charger last received a frame (none here: undefined) */
  lastSeenHere(id: string): number | undefined;
  /** the health probe finds Redis away (cluster mode) */
  redisAway(): boolean;
  /** `fn` whenever the health probe finds a dependency gone or back (dependency-health.ts); the unsubscribe */
  healthChanges(fn: (degradedBy: 'database' | 'redis' | undefined) => void): () => void;
}

const IdParams = Type.Object({ id: ChargePointId });

/** The charger's WebSocket URL, under the origin of gateway/public-origin.ts. */
export function ocppUrlFor(config: Config, id: string, koa?: Context): string {
  return `${publicOrigin(config, koa).replace(/^http/, 'ws')}/ocpp/${encodeURIComponent(id)}`;
}

/** What the route groups share: the mount's deps and the ways to reach a charge point. */
interface ChargePointAccess {
  deps: CsmsApiDeps;
  addressOf(id: string): string;
  view(id: string, koa: Context): Promise<ChargePointView>;
  /** An ask to the charger's actor, wherever its socket is; offline -> 409, no answer -> 503. */
  ask<M extends ChargePointMessage>(id: string, message: M): Promise<ReplyTo<ChargePointReplies, 'type', M>>;
  command(id: string, cmd: ChargerCommand): Promise<CommandAccepted>;
  requireKnown(id: string): Promise<void>;
  /** the list's and the overview's index of the fleet, this process's (fleet-index.ts) */
  fleet: FleetIndex;
}

function chargePointAccess(deps: CsmsApiDeps): ChargePointAccess {
  const { config, actors, chargePoints } = deps;
  const addressOf = (id: string): string => actors.ref(chargePointProtocol, id).address;
  const connected: OnlineSource = {
    pinnedAmong: (addresses) => actors.pinnedAmong(addresses),
    pinnedHere: (addresses) => actors.pinnedHere(addresses),
    redisAway: () => deps.redisAway(),
  };
  const access: ChargePointAccess = {
    deps,
    addressOf,
    fleet: new FleetIndex({
      registry: () => chargePoints.registryFacts(),
      stateVersions: () => chargePoints.stateVersions(),
      stateSummaries: (addresses) => chargePoints.stateSummaries(addresses),
      ...connected,
      addressOf,
      lastSeenHere: (id) => deps.lastSeenHere(id),
    }),
    async view(id, koa) {
      const address = addressOf(id);
      // the actor's state before its row: a turn writes both (a command's outcome, the password
      // it settles) in one commit, so a row read after the state is at least as new. Read the
      // other way round, a commit between the reads showed a refused password still pending
      const state = await chargePoints.actorState(address);
      // this process's time before the row: a charger that just left has its time here until its
      // row holds it (ConnectionRegistry.seenAt), so one of the two has it whatever the order of events
      const seenHere = deps.lastSeenHere(id);
      const row = await chargePoints.find(id);
      if (!row) throw new HttpError(404, 'not_found', `no charge point ${id}`);
      const [{ pinned, scope }, links] = await Promise.all([
        onlineAmong(connected, [address]),
        chargePoints.evseLinksOf([id]),
      ]);
      const online = pinned.has(address);
      // while Redis is away: whose connections `online` counts (online.ts)
      if (scope !== 'cluster') koa.set('X-Online-Scope', scope);
      return {
        ...chargePointView(row, online, state, ocppUrlFor(config, id, koa), seenHere),
        evse_links: links.get(id) ?? [],
      };
    },
    async ask(id, message) {
      try {
        return await actors.ref(chargePointProtocol, id).ask(message);
      } catch (err) {
        if (err instanceof ActorUnavailableError)
          throw new HttpError(409, 'charge_point_offline', `charge point ${id} is not connected`);
        // e.g. the process holding the socket died, or is paused, and its pin has not expired yet:
        // the operation may still reach the charger (a paused process sends it when it resumes), so
        // the answer says to look before sending it again (a "retry" started a charger twice)
        if (err instanceof AskTimeoutError)
          throw new HttpError(
            503,
            'charge_point_unreachable',
            `charge point ${id} did not answer in time; the operation may still reach it: check its commands (GET /v1/charge-points/${id}) before sending it again`,
          );
        throw err;
      }
    },
    command: (id, cmd) => access.ask(id, { type: 'command', command: cmd }),
    async requireKnown(id) {
      if (!(await chargePoints.find(id))) throw new HttpError(404, 'not_found', `no charge point ${id}`);
    },
  };
  return access;
}

type CsmsRoute = RouteSpec<OperatorAuth>;

/** What the operation routes need: the charger's version (as it last spoke, else as registered) and its actor. */
function operationAccess(cp: ChargePointAccess): OperationAccess {
  const { chargePoints } = cp.deps;
  return {
    async protocolOf(id) {
      const [row, state] = await Promise.all([chargePoints.find(id), chargePoints.actorState(cp.addressOf(id))]);
      if (!row) throw new HttpError(404, 'not_found', `no charge point ${id}`);
      const spoken = (state as { protocol?: unknown } | undefined)?.protocol;
      return spoken === 'ocpp1.6' || spoken === 'ocpp2.0.1' ? spoken : row.protocol;
    },
    command: (id, cmd) => cp.command(id, cmd),
    reply: (commandId) => cp.deps.reports.reply(commandId),
    reservationId: (id, evse, expiryAt) => cp.deps.reservations.operatorReservation(id, evse, expiryAt),
    heldLocalList: (id) => cp.deps.localLists.held(id),
    wantedLocalList: () => cp.deps.localLists.wanted(),
    async storedState(id) {
      const state = await chargePoints.actorState(cp.addressOf(id));
      return checkChargePointState(state) ? state : undefined;
    },
    online: (id) => cp.deps.actors.isPinned(cp.addressOf(id)),
    stopping: () => cp.deps.shutdown.aborted,
  };
}

const CONNECTOR_STATUS_WORDS = [
  'Available',
  'Preparing',
  'Charging',
  'SuspendedEVSE',
  'SuspendedEV',
  'Finishing',
  'Reserved',
  'Unavailable',
  'Faulted',
  'Occupied',
  'Unknown',
];
const STATUS_WORDS_LOWER = new Set(CONNECTOR_STATUS_WORDS.map((w) => w.toLowerCase()));

/** 422 for a status filter that is no connector status (any case): a typo, not a filter matching nothing. */
function assertConnectorStatus(status: string | undefined): void {
  if (status === undefined || STATUS_WORDS_LOWER.has(status.toLowerCase())) return;
  throw new RequestValidationError([
    {
      loc: ['query', 'status'],
      msg: `must be a connector status: ${CONNECTOR_STATUS_WORDS.join(', ')} (any case)`,
      type: 'enum',
      input: status,
      ctx: { expected: CONNECTOR_STATUS_WORDS },
    },
  ]);
}

const ListSort = Type.Union([Type.Literal('id'), Type.Literal('last_seen'), Type.Literal('status')], {
  default: 'id',
  description:
    'id: natural order (CP-2 before CP-10); last_seen: when it was last heard from; status: faulted first, then charging, occupied, reserved, unavailable, available, no connector reported, offline',
});
const ListOrder = Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc' });

const ListQuery = Type.Object({
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'case-insensitive substring of the id, the vendor or the model (as its boot reported them)',
    }),
  ),
  protocol: Type.Optional(ProtocolName),
  online: Type.Optional(Type.Boolean({ description: 'filter by WebSocket connection state' })),
  status: Type.Optional(
    Type.String({
      // the statuses of 1.6 (ChargePointStatus) and 2.0.1 (ConnectorStatusEnumType), and Unknown
      // (offline), in any case; another word is 422 (assertConnectorStatus), not an empty list
      pattern: '^[A-Za-z]{1,32}$',
      description: `a connector status (${CONNECTOR_STATUS_WORDS.join(', ')}; case-insensitive): chargers with a connector in it, as the views show it (Unknown while offline)`,
    }),
  ),
  location: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 36,
      description: 'an OCPI location id of ours: chargers with an EVSE linked to it',
    }),
  ),
  state: Type.Optional(
    Type.Union([Type.Literal('charging'), Type.Literal('faulted')], {
      description:
        "the chargers GET /v1/fleet counts as charging (online, with an open transaction or a connector Charging) or faulted (online, with a connector Faulted or reporting an error code): the overview's counts, listed",
    }),
  ),
  sort: Defaulted(ListSort),
  order: Defaulted(ListOrder),
  ...Paging,
});

/**
 * GET /charge-points: the registry with each charger's online status, searched, filtered, sorted
 * and paged over the fleet index; only the page is read in full (its states and EVSE links).
 */
function listChargePoints(cp: ChargePointAccess): CsmsRoute {
  const { config, chargePoints } = cp.deps;
  return route({
    method: 'GET',
    path: '/charge-points',
    summary: 'List charge points with their protocol and live online status: searched, filtered, sorted, paged',
    query: ListQuery,
    response: Type.Array(ChargePointView),
    handler: async (req): Promise<RouteResult> => {
      const q = req.query;
      assertConnectorStatus(q.status);
      const [{ entries, online_scope }, linked] = await Promise.all([
        cp.fleet.entries(q.protocol),
        q.location === undefined ? undefined : chargePoints.linkedTo(q.location),
      ]);
      const matching = selectFleet(linked ? entries.filter((e) => linked.has(e.id)) : entries, {
        sort: q.sort,
        order: q.order,
        ...(q.q === undefined ? {} : { q: q.q }),
        ...(q.online === undefined ? {} : { online: q.online }),
        ...(q.status === undefined ? {} : { status: q.status }),
        ...(q.state === undefined ? {} : { state: q.state }),
      });
      const page = matching.slice(q.offset, q.offset + q.limit);
      // the states before the rows, as in `view`
      const states = await chargePoints.actorStates(page.map((x) => cp.addressOf(x.id)));
      const [rows, links] = await Promise.all([
        chargePoints.findMany(page.map((x) => x.id)),
        chargePoints.evseLinksOf(page.map((x) => x.id)),
      ]);
      const data: ChargePointView[] = [];
      for (const x of page) {
        const row = rows.get(x.id);
        // removed since the index was read
        if (!row) continue;
        data.push({
          ...chargePointView(
            row,
            x.online,
            states.get(cp.addressOf(x.id)),
            ocppUrlFor(config, x.id, req.koa),
            cp.deps.lastSeenHere(x.id),
          ),
          evse_links: links.get(x.id) ?? [],
        });
      }
      const headers = pageHeaders(config, req, matching.length, q.offset, q.limit);
      // while Redis is away: whose connections `online` counts (online.ts)
      if (online_scope !== 'cluster') headers['X-Online-Scope'] = online_scope;
      return { data, headers };
    },
  });
}

/** GET /fleet: the console's overview, over the same index as the list. */
function fleetRoute(cp: ChargePointAccess): CsmsRoute {
  return route({
    method: 'GET',
    path: '/fleet',
    summary: 'Fleet overview: chargers online, offline, charging and faulted, connectors by status, and the alerts',
    operationId: 'getFleetOverview',
    query: Type.Object({
      alerts: Defaulted(
        Type.Integer({ minimum: 0, maximum: 1000, default: 50, description: 'how many alerts to list (newest first)' }),
      ),
    }),
    response: FleetOverviewView,
    handler: async (req): Promise<RouteResult> => {
      const { entries, online_scope } = await cp.fleet.entries();
      return { data: { ...fleetOverview(entries, req.query.alerts), online_scope } };
    },
  });
}

/**
 * A new charger identity (POST /charge-points, POST /unknown-charge-points/{id}/register): its
 * row, and the answer that carries its key, shown this once.
 */
async function issueIdentity(
  cp: ChargePointAccess,
  koa: Context,
  chargePoint: { id: string; protocol: ProtocolName; boot_policy: RegistrationStatus | null },
): Promise<RouteResult> {
  const { config, chargePoints, events, unknown } = cp.deps;
  const key = newIdentityKey();
  const createdAt = Date.now();
  try {
    await chargePoints.create({ ...chargePoint, key_hash: hashIdentityKey(key), created_at: createdAt });
  } catch (err) {
    if (err instanceof DuplicateChargePointError) throw new HttpError(409, 'conflict', err.message);
    throw err;
  }
  // a registered id is no longer unknown
  await unknown.remove(chargePoint.id);
  events.publish({ type: 'charge-point', charge_point_id: chargePoint.id });
  return {
    status: 201,
    headers: { Location: `/v1/charge-points/${encodeURIComponent(chargePoint.id)}` },
    data: {
      id: chargePoint.id,
      protocol: chargePoint.protocol,
      ocpp_url: ocppUrlFor(config, chargePoint.id, koa),
      username: chargePoint.id,
      password: key,
      created_at: new Date(createdAt).toISOString(),
      boot_policy: chargePoint.boot_policy,
    },
  };
}

/** POST /charge-points: a new identity; its key (identity-key.ts: the OCPP password rule) is in the answer only. */

function createChargePoint(cp: ChargePointAccess): CsmsRoute {
  return route({
    method: 'POST',
    path: '/charge-points',
    summary: 'Create a charge-point identity; the answer carries the OCPP URL and the key, shown once',
    body: CreateChargePointBody,
    response: CreatedChargePoint,
    status: 201,
    responses: { 201: 'created', 409: 'the id exists' },
    handler: async (req): Promise<RouteResult> => {
      const body = req.body;
      const id =
        body.id ??
        `CP-${newIdentityKey()
          .slice(0, 10)
          .replace(/[^A-Za-z0-9]/g, 'X')}`;
      return issueIdentity(cp, req.koa, { id, protocol: body.protocol, boot_policy: body.boot_policy ?? null });
    },
  });
}

/**
 * PUT /charge-points/:id/boot-policy: stored, then told to the charger's actor when it is
 * connected (a charger that is not learns it with its next connection).
 */
function setBootPolicy(cp: ChargePointAccess): CsmsRoute {
  const { config, chargePoints } = cp.deps;
  return route({
    method: 'PUT',
    path: '/charge-points/:id/boot-policy',
    summary:
      "Set the status the charger's BootNotification is answered with (Accepted, Pending, Rejected; null: OCPP_BOOT_POLICY); a connected charger that must learn it is asked to boot again",
    params: IdParams,
    body: BootPolicyBody,
    response: ChargePointView,
    responses: { 404: 'unknown charge point' },
    handler: async (req): Promise<RouteResult> => {
      const id = String(req.params.id);
      const policy = req.body.policy;
      if (!(await chargePoints.setBootPolicy(id, policy)))
        throw new HttpError(404, 'not_found', `no charge point ${id}`);
      await cp
        .ask(id, { type: 'boot-policy-changed', policy: policy ?? config.OCPP_BOOT_POLICY })
        .catch((err: unknown) => {
          // offline, or its process did not answer: the policy is stored, its next connection reads it
          if (!(err instanceof HttpError)) throw err;
        });
      return { data: await cp.view(id, req.koa) };
    },
  });
}

/**
 * DELETE /charge-points/{id} (docs/CSMS.md "Removing a charge point"): refused while a
 * transaction runs (unless `force`) or an EVSE is linked to an OCPI location; a connected charger
 * is disconnected (1008) and its actor's state starts over; its sessions stay.
 */
function deleteChargePoint(cp: ChargePointAccess): CsmsRoute {
  const { actors, chargePoints, events } = cp.deps;
  return route({
    method: 'DELETE',
    path: '/charge-points/:id',
    summary:
      'Remove a charge point: its identity, event log, device model and local-list record (its sessions stay, open ones closed when forced)',
    params: IdParams,
    query: Type.Object({
      force: Type.Optional(Type.Boolean({ description: 'remove it even while a transaction runs' })),
    }),
    responses: {
      204: 'removed',
      404: 'unknown charge point',
      409: 'a transaction runs (and no force), a roamed one runs, or an EVSE is linked to an OCPI location',
    },
    handler: async (req): Promise<RouteResult> => {
      const id = String(req.params.id);
      await cp.requireKnown(id);
      const address = cp.addressOf(id);
      const stored = await chargePoints.actorState(address);
      const state = checkChargePointState(stored) ? stored : undefined;
      const open = state?.transactions ?? [];
      if (open.some((t) => t.ocpi))
        throw new HttpError(
          409,
          'roamed_transaction_running',
          `charge point ${id} has a roamed transaction open: its eMSP waits for its end and CDR; stop it first`,
        );
      if (open.length > 0 && req.query.force !== true)
        throw new HttpError(
          409,
          'transaction_running',
          `charge point ${id} has ${open.length} open transaction(s): stop them, or delete with ?force=true`,
        );
      const online = await actors.isPinned(address);
      // the identity goes first, so the charger cannot log in again; an offline charger's stored
      // state is reset here, a connected one's actor resets its own and closes the socket
      const retired = online ? undefined : JSON.stringify(retiredChargePointState(state));
      if (!(await chargePoints.remove(id, address, { state: retired })))
        throw new HttpError(
          409,
          'evse_linked',
          `an EVSE of charge point ${id} is linked to an OCPI location: unlink it first`,
        );
      if (online) await cp.ask(id, { type: 'retire' }).catch(() => undefined);
      events.publish({ type: 'charge-point', charge_point_id: id });
      return { status: 204 };
    },
  });
}

/** Chargers refused at the upgrade, and registering one of them. */
function unknownChargePointRoutes(cp: ChargePointAccess): CsmsRoute[] {
  const { config, unknown } = cp.deps;
  return [
    route({
      method: 'GET',
      path: '/unknown-charge-points',
      summary:
        'Chargers refused at the OCPP upgrade (an id that is not registered, a wrong password), most recently seen first',
      query: Type.Object({ ...Paging }),
      response: Type.Array(UnknownChargePoint),
      handler: async (req): Promise<RouteResult> => {
        const q = req.query;
        const { total, items } = await unknown.list(q);
        return { data: items, headers: pageHeaders(config, req, total, q.offset, q.limit) };
      },
    }),
    route({
      method: 'POST',
      path: '/unknown-charge-points/:id/register',
      summary:
        'Register an unknown charger with boot policy Pending: the answer carries its key, shown once; accept it with PUT /v1/charge-points/{id}/boot-policy',
      params: IdParams,
      body: RegisterUnknownBody,
      response: CreatedChargePoint,
      status: 201,
      responses: { 201: 'registered', 404: 'not in the unknown list', 409: 'a charge point has this id' },
      handler: async (req): Promise<RouteResult> => {
        const id = String(req.params.id);
        if (!(await unknown.find(id))) throw new HttpError(404, 'not_found', `no unknown charge point ${id}`);
        return issueIdentity(cp, req.koa, { id, protocol: req.body.protocol, boot_policy: 'Pending' });
      },
    }),
  ];
}

/** The charge-point registry: list, create, one. */
function chargePointRoutes(cp: ChargePointAccess): CsmsRoute[] {
  return [
    listChargePoints(cp),
    fleetRoute(cp),
    createChargePoint(cp),
    setBootPolicy(cp),
    deleteChargePoint(cp),
    route({
      method: 'GET',
      path: '/charge-points/:id',
      summary: 'One charge point: boot information, connector status, reservations, recent commands',
      params: IdParams,
      response: ChargePointView,
      responses: { 404: 'unknown charge point' },
      handler: async (req) => ({ data: await cp.view(String(req.params.id), req.koa) }),
    }),
  ];
}

/** What chargers reported about themselves: the event log and the 2.0.1 device model. */
function reportRoutes(cp: ChargePointAccess): CsmsRoute[] {
  const { deps } = cp;
  return [
    route({
      method: 'GET',
      path: '/charge-points/:id/events',
      summary:
        "The charger's event log, newest first: security events, NotifyEvent, firmware, diagnostics and log status, DataTransfer, certificate requests, charging limits",
      params: IdParams,
      query: Type.Object({ severity: Type.Optional(ReportSeverity), ...Paging }),
      response: Type.Array(ChargerEventEntry),
      responses: { 404: 'unknown charge point' },
      handler: async (req): Promise<RouteResult> => {
        const id = String(req.params.id);
        await cp.requireKnown(id);
        const q = req.query;
        const { total, items } = await deps.reports.events(id, {
          limit: q.limit,
          offset: q.offset,
          ...(q.severity === undefined ? {} : { severity: q.severity }),
        });
        return { data: items, headers: pageHeaders(deps.config, req, total, q.offset, q.limit) };
      },
    }),
    route({
      method: 'GET',
      path: '/charge-points/:id/commands/:command_id',
      summary:
        "One of the charger's recent commands with its outcome, and the charger's reply when the operation returns data (GetConfiguration, GetVariables, DataTransfer, ...)",
      params: Type.Object({ id: ChargePointId, command_id: Type.String({ minLength: 1, maxLength: 64 }) }),
      response: CommandView,
      responses: { 404: 'unknown charge point, or no such command among its recent ones' },
      handler: async (req): Promise<RouteResult> => {
        const id = String(req.params.id);
        const view = await cp.view(id, req.koa);
        const record = view.commands.find((c) => c.command_id === req.params.command_id);
        if (!record) throw new HttpError(404, 'not_found', `no recent command ${req.params.command_id} of ${id}`);
        // the reply is kept apart (csms_command_reply), read when the record says there is one
        const reply = record.has_reply === true ? await deps.reports.reply(record.command_id) : undefined;
        return { data: reply === undefined ? record : { ...record, reply } };
      },
    }),
    route({
      method: 'GET',
      path: '/charge-points/:id/device-model',
      summary: "A 2.0.1 charger's device model as its NotifyReport messages gave it: components, variables, attributes",
      params: IdParams,
      response: DeviceModel,
      responses: { 404: 'unknown charge point' },
      handler: async (req): Promise<RouteResult> => {
        const id = String(req.params.id);
        await cp.requireKnown(id);
        return { data: await deps.reports.deviceModel(id) };
      },
    }),
  ];
}

/** The charging sessions built from the transactions chargers report. */
function sessionRoutes(deps: CsmsApiDeps): CsmsRoute[] {
  return [
    route({
      method: 'GET',
      path: '/sessions',
      summary: 'Charging sessions built from the transactions chargers report, newest first',
      query: Type.Object({
        charge_point_id: Type.Optional(ChargePointId),
        status: Type.Optional(Type.Union([Type.Literal('ACTIVE'), Type.Literal('COMPLETED')])),
        started_from: Type.Optional(
          Type.String({ format: 'date-time', description: 'sessions started at or after this instant' }),
        ),
        started_before: Type.Optional(
          Type.String({
            format: 'date-time',
            description: 'sessions started before this instant: with started_from, a month exported in pages',
          }),
        ),
        ...Paging,
      }),
      response: Type.Array(ChargingSession),
      handler: async (req): Promise<RouteResult> => {
        const q = req.query;
        const { total, items } = await deps.sessions.list(q);
        return { data: items, headers: pageHeaders(deps.config, req, total, q.offset, q.limit) };
      },
    }),
    route({
      method: 'GET',
      path: '/sessions/:id',
      summary: 'One charging session',
      params: SessionParams,
      response: ChargingSession,
      responses: { 404: 'unknown session' },
      handler: async (req): Promise<RouteResult> => ({ data: await sessionOf(deps, req.params.id) }),
    }),
    route({
      method: 'GET',
      path: '/sessions/:id/meter-values',
      summary: "A session's energy over time: its first and last readings and one per CSMS_METER_SAMPLE_S between",
      params: SessionParams,
      response: SessionMeterValues,
      responses: { 404: 'unknown session' },
      handler: async (req): Promise<RouteResult> => {
        const id = req.params.id;
        const samples = await deps.sessions.samples(id);
        if (!samples) throw new HttpError(404, 'not_found', `no session ${id}`);
        return { data: { session_id: id, samples } };
      },
    }),
  ];
}

const SessionParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 36 }) });

const SessionMeterValues = titled(
  'SessionMeterValues',
  Type.Object({
    session_id: Type.String(),
    samples: Type.Array(
      Type.Object({
        at: Type.String({ format: 'date-time' }),
        wh: Type.Number({ description: 'the energy register (Wh)' }),
        energy_wh: Type.Number({ description: "energy since the session's first reading (Wh)" }),
        power_w: Type.Union([Type.Number(), Type.Null()], {
          description: 'average power since the previous reading (W); null for the first',
        }),
      }),
      {
        description:
          'oldest first; past 2,000 readings, the last of each of 2,000 equal spans of time (the first kept)',
      },
    ),
  }),
);

async function sessionOf(deps: CsmsApiDeps, id: string): Promise<ChargingSession> {
  const session = await deps.sessions.get(id);
  if (!session) throw new HttpError(404, 'not_found', `no session ${id}`);
  return session;
}

/** POST /charge-points/:id/remote-stop: of the given transaction, by default the only open one. */
function remoteStop(cp: ChargePointAccess): CsmsRoute {
  return route({
    method: 'POST',
    path: '/charge-points/:id/remote-stop',
    summary: 'Ask the charger to stop a session (1.6 RemoteStopTransaction, 2.0.1 RequestStopTransaction)',
    params: IdParams,
    query: CommandWait,
    body: RemoteStopBody,
    bodyOptional: true,
    response: CommandAcceptedView,
    responses: {
      404: 'unknown charge point',
      409: 'charge point offline, no open transaction, several and none named, or the one named is not open',
    },
    handler: async (req): Promise<RouteResult> => {
      const id = String(req.params.id);
      await cp.requireKnown(id);
      const requested = req.body?.transaction_id;
      let transactionId = requested === undefined ? undefined : String(requested);
      const open = (await cp.ask(id, { type: 'get' })).transactions.map((t) => t.transaction_id);
      // a stop of a transaction the charger does not run here would be refused or, for an id
      // 1.6 cannot carry (not an integer), never sent at all: said now, with those that are open
      if (transactionId !== undefined && !open.includes(transactionId))
        throw new HttpError(
          409,
          'transaction_not_open',
          `charge point ${id} has no open transaction ${transactionId} (open: ${open.join(', ') || 'none'})`,
        );
      if (transactionId === undefined) {
        const [only] = open;
        if (only === undefined)
          throw new HttpError(409, 'no_active_transaction', `charge point ${id} has no open transaction`);
        // the operator did not say which: stopping one of them would be a guess
        if (open.length > 1)
          throw new HttpError(
            409,
            'transaction_id_required',
            `charge point ${id} has ${open.length} open transactions (${open.join(', ')}): name one in transaction_id`,
          );
        transactionId = only;
      }
      const res = await cp.command(id, { kind: 'stop', transaction_id: transactionId });
      const waitMs = req.query.wait_ms ?? 0;
      return { data: { ...(await commandAccepted(cp, id, res, waitMs)), transaction_id: transactionId } };
    },
  });
}

/** Commands to a charger: remote start and stop. */
function commandRoutes(cp: ChargePointAccess): CsmsRoute[] {
  return [
    route({
      method: 'POST',
      path: '/charge-points/:id/remote-start',
      summary: 'Ask the charger to start a session (1.6 RemoteStartTransaction, 2.0.1 RequestStartTransaction)',
      params: IdParams,
      query: CommandWait,
      body: RemoteStartBody,
      response: CommandAcceptedView,
      responses: {
        404: 'unknown charge point',
        409: 'charge point offline',
        503: 'the process holding the charger did not answer in time',
      },
      handler: async (req): Promise<RouteResult> => {
        const id = String(req.params.id);
        const b = req.body;
        // 2.0.1 IdTokenType takes 36 characters, a 1.6 IdToken 20
        const protocol = await operationAccess(cp).protocolOf(id);
        requireIdTagsFit(protocol, [b.id_tag]);
        // RequestStartTransaction names an EVSE only (a connector alone would have the charger
        // pick any EVSE); a 1.6 connector is its EVSE, so two different numbers are refused
        const place = placeOf(protocol, b);
        if (b.profile) checkStartProfile(protocol, b.profile);
        const res = await cp.command(id, {
          kind: 'start',
          id_tag: b.id_tag,
          ...place,
          ...(b.profile ? { profile: b.profile } : {}),
        });
        return { data: await commandAccepted(cp, id, res, req.query.wait_ms ?? 0) };
      },
    }),
    remoteStop(cp),
  ];
}

/**
 * A remote start's or stop's answer: the command as queued or sent, or its end when it was
 * settled at once (refused: the charger is Pending or Rejected) or within `waitMs` (the charger's
 * answer), with `answered` (whether the status is final) and why.
 */
async function commandAccepted(
  cp: ChargePointAccess,
  id: string,
  res: { command_id: string; status: string },
  waitMs: number,
): Promise<CommandAcceptedView> {
  const outcome = await awaitOutcome(operationAccess(cp), id, res.command_id, res.status, waitMs);
  return {
    result: 'ACCEPTED',
    command_id: res.command_id,
    command_status: outcome.command_status,
    answered: outcome.answered,
    ...(outcome.detail === null ? {} : { detail: outcome.detail }),
  };
}

/** The live change feed (server-sent events) the dashboard listens to. */
function eventRoutes(deps: CsmsApiDeps): CsmsRoute[] {
  return [
    route({
      method: 'GET',
      path: '/events',
      summary:
        'Server-sent events: charge point and session changes, and this process losing or finding the database or Redis (health), for live views (the dashboard)',
      responses: { 503: 'this process is stopping: connect again (to another process)' },
      handler: (req): RouteResult => {
        // the streams were ended when the process began to stop; one opened since, on a connection
        // kept alive, stayed open through the drain, and the console said live while it stopped
        if (deps.shutdown.aborted) {
          req.koa.set('Connection', 'close');
          throw new HttpError(503, 'shutting_down', 'this process is stopping: connect again in a moment');
        }
        const events = new EventStream(req.koa.req.socket, req.log);
        const stream = events.body;
        deps.streams.add(stream);
        const send = (text: string): void => events.send(text);
        send(': connected\n\n');
        const unsubscribe = deps.events.subscribe((e) => send(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`));
        // this process lost or found a dependency: what its views show of who is online changed
        // with no charger event (online.ts), so the console reads them again
        const unwatch = deps.healthChanges((by) =>
          send(`event: health\ndata: ${JSON.stringify({ type: 'health', degraded_by: by ?? null })}\n\n`),
        );
        const keepAlive = setInterval(() => send(': keep-alive\n\n'), 15_000);
        keepAlive.unref();
        const end = (): void => {
          clearInterval(keepAlive);
          unsubscribe();
          unwatch();
          deps.streams.delete(stream);
          stream.end();
        };
        req.koa.req.on('close', end);
        stream.on('close', end);
        return {
          headers: { 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' },
          raw: { body: stream, type: 'text/event-stream' },
        };
      },
    }),
  ];
}

/** The management surface for charge points and sessions (docs/CSMS.md, "The /v1 API"). */
export function csmsApiMount(deps: CsmsApiDeps): MountSpec<OperatorAuth> {
  const cp = chargePointAccess(deps);
  return defineMount<OperatorAuth>({
    name: 'csms-v1',
    prefix: '/v1',
    description: 'Charge-point management: registry, sessions, remote start/stop',
    authenticate: operatorAuthenticator(deps.config),
    security: 'bearer',
    routes: [
      ...chargePointRoutes(cp),
      ...unknownChargePointRoutes(cp),
      ...reportRoutes(cp),
      ...operationRoutes(operationAccess(cp)),
      ...[passwordRoute, dropPendingPasswordRoute].map((r) =>
        r({
          ...operationAccess(cp),
          online: (id) => deps.actors.isPinned(cp.addressOf(id)),
          chargePoints: deps.chargePoints,
        }),
      ),
      ...sessionRoutes(deps),
      ...commandRoutes(cp),
      ...eventRoutes(deps),
    ],
  });
}
