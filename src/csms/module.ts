import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PassThrough } from 'node:stream';
import { chargePointActor } from '../../actors/charge-point/actor.js';
import type { ChargePointActorDeps, RoamingPort } from '../../actors/charge-point/ports.js';
import { defineMount, type MountSpec } from '../gateway/route-table.js';
import { OcppEndpoint, ConnectionRegistry } from '../ocpp/endpoint.js';
import { LoginThrottle } from '../ocpp/login-throttle.js';
import { OcppSchemas } from '../ocpp/schemas.js';
import type { ActorHost, PlatformModule, PlatformServices } from '../platform/services.js';
import { csmsApiMount } from './api.js';
import { ChargePointStore } from './charge-point-store.js';
import { CsmsEventBus } from './events.js';
import { identityKeyMatches } from './identity-key.js';
import { DataTransferRegistry } from './data-transfer.js';
import { ReportReader, reportWrites } from './report-store.js';
import { SessionReader, sessionWrites } from './session-store.js';

export interface CsmsModuleOptions {
  /** WebSocket ping interval; a charger that misses one pong is dropped (default 30 s) */
  pingIntervalMs?: number;
  /** how long a CSMS-to-charger call waits for its answer (default 30 s) */
  callTimeoutMs?: number;
  /** the Heartbeat interval given to chargers in the BootNotification reply (default 300 s) */
  heartbeatIntervalS?: number;
  /** the roaming bridge (src/roaming/): linked EVSEs' status goes to our OCPI locations */
  roaming?: (host: ActorHost) => RoamingPort;
  /** handlers of vendors' DataTransfer (default: none, every vendor is UnknownVendorId) */
  dataTransfer?: DataTransferRegistry;
}

const dashboardDir = join(import.meta.dirname, '../dashboard');

/**
 * The dashboard's own answers (docs/SECURITY.md): scripts and styles from its own files only (no inline
 * script can run, so injected markup stays inert), calls to this origin only, never framed
 * (clickjacking), no referrer to other sites. nosniff is on every answer (gateway.ts).
 */
export const DASHBOARD_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

function dashboardMount(): MountSpec<unknown> {
  const page = (file: string, type: string) => {
    let cached: string | undefined;
    return () => ({
      headers: { ...DASHBOARD_SECURITY_HEADERS },
      raw: { body: (cached ??= readFileSync(join(dashboardDir, file), 'utf8')), type },
    });
  };
  return defineMount<unknown>({
    name: 'csms-dashboard',
    prefix: '/dashboard',
    description: 'Operator dashboard (static page; it calls /v1 with the operator key)',
    routes: [
      {
        method: 'GET',
        path: '/',
        summary: 'Operator dashboard',
        handler: page('index.html', 'text/html; charset=utf-8'),
      },
      {
        method: 'GET',
        path: '/dashboard.css',
        summary: 'Dashboard styles',
        handler: page('dashboard.css', 'text/css; charset=utf-8'),
      },
      {
        method: 'GET',
        path: '/dashboard.js',
        summary: 'Dashboard script',
        handler: page('dashboard.js', 'text/javascript; charset=utf-8'),
      },
    ],
  });
}

/** What the module learns only once it is running, read by the actor's deps and at stop. */
interface LateParts {
  events?: CsmsEventBus;
  endpoint?: OcppEndpoint;
  maxOpenTransactions?: number;
}

/** The charge-point actor's ports: the sockets of this process, the session table, the change feed. */
function chargePointDeps(registry: ConnectionRegistry, late: LateParts, opts: CsmsModuleOptions): ChargePointActorDeps {
  const dataTransfer = opts.dataTransfer ?? new DataTransferRegistry();
  return {
    sendCommand(id, command, remoteStartId) {
      const conn = registry.get(id);
      if (!conn?.isOpen) return undefined;
      return { connection: conn.connectionId, ...conn.command(command, remoteStartId) };
    },
    closeSocket(id, reason) {
      const conn = registry.get(id);
      if (!conn) return;
      if (reason === 'shutdown') conn.close(1012, 'service restart');
      else if (reason === 'pin-lost') conn.close(4000, 'replaced by a newer connection');
      // the actor failed: the charger reconnects and gets a fresh activation
      else conn.close(1011, 'charge point actor ended');
    },
    sessions: sessionWrites,
    reports: reportWrites,
    dataTransfer: (id, request) => dataTransfer.answer(id, request),
    publish(event) {
      late.events?.publish(event);
    },
    heartbeatIntervalS: opts.heartbeatIntervalS ?? 300,
    maxOpenTransactions() {
      // a charge-point actor runs only where a charger's socket was accepted, so attach() has run
      if (late.maxOpenTransactions === undefined) throw new Error('the CSMS module is not attached to an HTTP server');
      return late.maxOpenTransactions;
    },
  };
}

/** The OCPP WebSocket endpoint, checking chargers against the registry of identities. */
function ocppEndpoint(
  services: PlatformServices,
  registry: ConnectionRegistry,
  events: CsmsEventBus,
  opts: CsmsModuleOptions,
): OcppEndpoint {
  const { config } = services;
  const chargePoints = new ChargePointStore(services.db);
  return new OcppEndpoint({
    log: services.log.child({ module: 'ocpp' }),
    actors: services.actors,
    schemas: new OcppSchemas(),
    registry,
    authenticate: async (id, password) => {
      const row = await chargePoints.find(id);
      return row && identityKeyMatches(password, row.key_hash) ? row.protocol : undefined;
    },
    onlineChanged: (id, online) => events.publish({ type: 'charge-point', charge_point_id: id, online }),
    pingIntervalMs: opts.pingIntervalMs ?? 30_000,
    callTimeoutMs: opts.callTimeoutMs ?? 30_000,
    handshakeTimeoutMs: config.OCPP_HANDSHAKE_TIMEOUT_MS,
    bootDeadlineMs: config.OCPP_BOOT_DEADLINE_MS,
    logins: new LoginThrottle({ maxFailures: config.OCPP_LOGIN_FAILURES }),
    trustProxy: config.TRUST_PROXY === 'true',
    degradedBy: () => services.health.degradedBy(),
  });
}

/**
 * Charge-point management as a platform module: the OCPP WebSocket endpoint, the pinned
 * charge-point actor, the /v1 API for charge points and sessions, and the dashboard.
 */
export function csmsModule(opts: CsmsModuleOptions = {}): PlatformModule {
  const registry = new ConnectionRegistry();
  const streams = new Set<PassThrough>();
  const late: LateParts = {};
  const eventsOf = (services: PlatformServices): CsmsEventBus =>
    (late.events ??= new CsmsEventBus(services.log, services.redis, {
      events: services.redisKeys.csmsEvents(),
      listeners: services.redisKeys.csmsEventListeners(),
    }));

  return {
    name: 'csms',
    actors: (host) => {
      const deps = chargePointDeps(registry, late, opts);
      return [chargePointActor(opts.roaming ? { ...deps, roaming: opts.roaming(host) } : deps)];
    },
    mounts(services: PlatformServices) {
      return [
        csmsApiMount({
          config: services.config,
          actors: services.actors,
          chargePoints: new ChargePointStore(services.db),
          sessions: new SessionReader(services.db, {
            country_code: services.config.OCPI_COUNTRY_CODE,
            party_id: services.config.OCPI_PARTY_ID,
          }),
          reports: new ReportReader(services.db),
          events: eventsOf(services),
          streams,
        }),
        dashboardMount(),
      ];
    },
    async attach(services, server) {
      late.maxOpenTransactions = services.config.OCPP_MAX_OPEN_TRANSACTIONS;
      const events = eventsOf(services);
      await events.start();
      const endpoint = ocppEndpoint(services, registry, events, opts);
      endpoint.attach(server);
      late.endpoint = endpoint;
    },
    async stop() {
      for (const s of streams) s.end();
      streams.clear();
      await late.endpoint?.stop();
      await late.events?.stop();
    },
  };
}
