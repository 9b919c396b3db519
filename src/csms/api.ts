import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import Type from '#typebox';
import type { Config } from '../../config/index.js';
import {
  chargePointProtocol,
  type ChargePointMessage,
  type ChargePointReplies,
  type CommandAccepted,
} from '../../actors/charge-point/protocol.js';
import { operatorAuthenticator, type OperatorAuth } from '../gateway/csms-auth.js';
import { HttpError } from '../gateway/errors.js';
import { pageHeaders, Paging } from '../gateway/operator-paging.js';
import { publicOrigin } from '../gateway/public-origin.js';
import { defineMount, route, type MountSpec, type RouteResult, type RouteSpec } from '../gateway/route-table.js';
import type { ChargerCommand } from '../ocpp/domain.js';
import { ProtocolName, ReportSeverity } from '../ocpp/domain.js';
import type { ActorSystem } from '../runtime/actor-system.js';
import type { ReplyTo } from '../runtime/protocol.js';
import { ActorUnavailableError, AskTimeoutError } from '../runtime/errors.js';
import { DuplicateChargePointError, type ChargePointStore } from './charge-point-store.js';
import type { CsmsEventBus } from './events.js';
import { hashIdentityKey, newIdentityKey } from './identity-key.js';
import { operationRoutes, type OperationAccess } from './operations.js';
import { ChargerEventEntry, DeviceModel, type ReportReader } from './report-store.js';
import { ChargingSession, type SessionReader } from './session-store.js';
import {
  ChargePointView,
  CommandAcceptedView,
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
  events: CsmsEventBus;
  /** open event streams, ended at shutdown */
  streams: Set<PassThrough>;
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
}

function chargePointAccess(deps: CsmsApiDeps): ChargePointAccess {
  const { config, actors, chargePoints } = deps;
  const addressOf = (id: string): string => actors.ref(chargePointProtocol, id).address;
  const access: ChargePointAccess = {
    deps,
    addressOf,
    async view(id, koa) {
      const row = await chargePoints.find(id);
      if (!row) throw new HttpError(404, 'not_found', `no charge point ${id}`);
      const address = addressOf(id);
      const [online, state, links] = await Promise.all([
        actors.isPinned(address),
        chargePoints.actorState(address),
        chargePoints.evseLinksOf([id]),
      ]);
      return { ...chargePointView(row, online, state, ocppUrlFor(config, id, koa)), evse_links: links.get(id) ?? [] };
    },
    async ask(id, message) {
      try {
        return await actors.ref(chargePointProtocol, id).ask(message);
      } catch (err) {
        if (err instanceof ActorUnavailableError)
          throw new HttpError(409, 'charge_point_offline', `charge point ${id} is not connected`);
        // e.g. the process holding the socket died and its pin has not expired yet
        if (err instanceof AskTimeoutError)
          throw new HttpError(503, 'charge_point_unreachable', `charge point ${id} did not answer in time; retry`);
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
    async storedState(id) {
      const state = await chargePoints.actorState(cp.addressOf(id));
      return checkChargePointState(state) ? state : undefined;
    },
  };
}

/** GET /charge-points: the registry with each charger's online status, filtered and paged. */
function listChargePoints(cp: ChargePointAccess): CsmsRoute {
  const { config, actors, chargePoints } = cp.deps;
  return route({
    method: 'GET',
    path: '/charge-points',
    summary: 'List charge points with their protocol and live online status',
    query: Type.Object({
      protocol: Type.Optional(ProtocolName),
      online: Type.Optional(Type.Boolean({ description: 'filter by WebSocket connection state' })),
      ...Paging,
    }),
    response: Type.Array(ChargePointView),
    handler: async (req): Promise<RouteResult> => {
      const q = req.query;
      const rows = await chargePoints.list(q.protocol);
      const online = await Promise.all(rows.map((r) => actors.isPinned(cp.addressOf(r.id))));
      const matching = rows
        .map((row, i) => ({ row, online: online[i] ?? false }))
        .filter((x) => q.online === undefined || x.online === q.online);
      const page = matching.slice(q.offset, q.offset + q.limit);
      const [states, links] = await Promise.all([
        chargePoints.actorStates(page.map((x) => cp.addressOf(x.row.id))),
        chargePoints.evseLinksOf(page.map((x) => x.row.id)),
      ]);
      return {
        data: page.map((x) => ({
          ...chargePointView(
            x.row,
            x.online,
            states.get(cp.addressOf(x.row.id)),
            ocppUrlFor(config, x.row.id, req.koa),
          ),
          evse_links: links.get(x.row.id) ?? [],
        })),
        headers: pageHeaders(config, req, matching.length, q.offset, q.limit),
      };
    },
  });
}

/** POST /charge-points: a new identity; its key is in the answer only. */
function createChargePoint(cp: ChargePointAccess): CsmsRoute {
  const { config, chargePoints, events } = cp.deps;
  return route({
    method: 'POST',
    path: '/charge-points',
    summary: 'Create a charge-point identity; the answer carries the OCPP URL and the key, shown once',
    body: CreateChargePointBody,
    response: CreatedChargePoint,
    responses: { 201: 'created', 409: 'the id exists' },
    handler: async (req): Promise<RouteResult> => {
      const body = req.body;
      const id =
        body.id ??
        `CP-${newIdentityKey()
          .slice(0, 10)
          .replace(/[^A-Za-z0-9]/g, 'X')}`;
      const key = newIdentityKey();
      const createdAt = Date.now();
      try {
        await chargePoints.create({
          id,
          protocol: body.protocol,
          key_hash: hashIdentityKey(key),
          created_at: createdAt,
        });
      } catch (err) {
        if (err instanceof DuplicateChargePointError) throw new HttpError(409, 'conflict', err.message);
        throw err;
      }
      events.publish({ type: 'charge-point', charge_point_id: id });
      return {
        status: 201,
        headers: { Location: `/v1/charge-points/${encodeURIComponent(id)}` },
        data: {
          id,
          protocol: body.protocol,
          ocpp_url: ocppUrlFor(config, id, req.koa),
          username: id,
          password: key,
          created_at: new Date(createdAt).toISOString(),
        },
      };
    },
  });
}

/** The charge-point registry: list, create, one. */
function chargePointRoutes(cp: ChargePointAccess): CsmsRoute[] {
  return [
    listChargePoints(cp),
    createChargePoint(cp),
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
        ...Paging,
      }),
      response: Type.Array(ChargingSession),
      handler: async (req): Promise<RouteResult> => {
        const q = req.query;
        const { total, items } = await deps.sessions.list(q);
        return { data: items, headers: pageHeaders(deps.config, req, total, q.offset, q.limit) };
      },
    }),
  ];
}

/** POST /charge-points/:id/remote-stop: of the given transaction, by default the open one. */
function remoteStop(cp: ChargePointAccess): CsmsRoute {
  return route({
    method: 'POST',
    path: '/charge-points/:id/remote-stop',
    summary: 'Ask the charger to stop a session (1.6 RemoteStopTransaction, 2.0.1 RequestStopTransaction)',
    params: IdParams,
    body: RemoteStopBody,
    bodyOptional: true,
    response: CommandAcceptedView,
    responses: { 404: 'unknown charge point', 409: 'charge point offline, or no open transaction' },
    handler: async (req): Promise<RouteResult> => {
      const id = String(req.params.id);
      await cp.requireKnown(id);
      const requested = req.body?.transaction_id;
      let transactionId = requested === undefined ? undefined : String(requested);
      if (transactionId === undefined) {
        const state = await cp.ask(id, { type: 'get' });
        transactionId = state.transactions[state.transactions.length - 1]?.transaction_id;
        if (transactionId === undefined)
          throw new HttpError(409, 'no_active_transaction', `charge point ${id} has no open transaction`);
      }
      const res = await cp.command(id, { kind: 'stop', transaction_id: transactionId });
      return {
        data: {
          result: 'ACCEPTED',
          command_id: res.command_id,
          command_status: res.status,
          transaction_id: transactionId,
        },
      };
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
      body: RemoteStartBody,
      response: CommandAcceptedView,
      responses: {
        404: 'unknown charge point',
        409: 'charge point offline',
        503: 'the process holding the charger did not answer in time',
      },
      handler: async (req): Promise<RouteResult> => {
        const id = String(req.params.id);
        await cp.requireKnown(id);
        const b = req.body;
        const res = await cp.command(id, {
          kind: 'start',
          id_tag: b.id_tag,
          evse_id: b.evse_id ?? null,
          connector_id: b.connector_id ?? null,
        });
        return { data: { result: 'ACCEPTED', command_id: res.command_id, command_status: res.status } };
      },
    }),
    remoteStop(cp),
  ];
}

/** The live change feed (server-sent events) the dashboard listens to. */
function eventRoutes(deps: CsmsApiDeps): CsmsRoute[] {
  return [
    route({
      method: 'GET',
      path: '/events',
      summary: 'Server-sent events: charge point and session changes, for live views (the dashboard)',
      handler: (req): RouteResult => {
        const stream = new PassThrough();
        deps.streams.add(stream);
        stream.write(': connected\n\n');
        const unsubscribe = deps.events.subscribe((e) =>
          stream.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`),
        );
        const keepAlive = setInterval(() => stream.write(': keep-alive\n\n'), 15_000);
        keepAlive.unref();
        const end = (): void => {
          clearInterval(keepAlive);
          unsubscribe();
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
      ...reportRoutes(cp),
      ...operationRoutes(operationAccess(cp)),
      ...sessionRoutes(deps),
      ...commandRoutes(cp),
      ...eventRoutes(deps),
    ],
  });
}
