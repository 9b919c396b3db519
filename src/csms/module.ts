import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { chargePointActor } from '../../actors/charge-point/actor.js';
import { chargePointProtocol } from '../../actors/charge-point/protocol.js';
import { addressOf, parseAddress } from '../runtime/address.js';
import type { ChargePointActorDeps, RoamingPort } from '../../actors/charge-point/ports.js';
import { defineMount, type MountSpec, type RouteSpec } from '../gateway/route-table.js';
import { staticAnswer, staticBytes } from '../gateway/static-bytes.js';
import { OcppEndpoint, ConnectionRegistry } from '../ocpp/endpoint.js';
import { LoginThrottle } from '../ocpp/login-throttle.js';
import { OcppSchemas } from '../ocpp/schemas.js';
import { OcppSignals, type OcppSignalsOptions } from '../ocpp/signals.js';
import type { ActorHost, PlatformModule, PlatformServices } from '../platform/services.js';
import { csmsApiMount, type CsmsApiDeps } from './api.js';
import { ChargePointStore, chargePointPasswordWrites } from './charge-point-store.js';
import { CsmsEventBus } from './events.js';
import { HeldPasswords } from './held-passwords.js';
import { credentialOf } from './identity-key.js';
import { DataTransferRegistry } from './data-transfer.js';
import { ReportReader, reportWrites } from './report-store.js';
import { LocalListStore, localListWrites, wantedLocalList } from './local-list.js';
import { LocalListSweep } from './local-list-sync.js';
import { MeterSampler, MeterSampleSweep } from './meter-samples.js';
import { ReservationStore } from '../roaming/reservations.js';
import { SessionReader, finishedSession, lastReadings, sessionWrites } from './session-store.js';
import { UnknownChargePoints } from './unknown-charge-points.js';

export interface CsmsModuleOptions {
  /** WebSocket ping interval; a charger that misses one pong is dropped (default 30 s) */
  pingIntervalMs?: number;
  /** how long a CSMS-to-charger call waits for its answer (default 30 s) */
  callTimeoutMs?: number;
  /** how often refused charger logins gathered in memory are written (default 5 s; unknown-charge-points.ts) */
  unknownFlushMs?: number;
  /** the roaming bridge (src/roaming/): linked EVSEs' status goes to our OCPI locations */
  roaming?: (host: ActorHost) => RoamingPort;
  /** handlers of vendors' DataTransfer (default: none, every vendor is UnknownVendorId) */
  dataTransfer?: DataTransferRegistry;
  /** how often the chargers' last-seen times are stored (default 30 s; also at each disconnect) */
  lastSeenFlushMs?: number;
  /** limits of the endpoint's log lines a client can cause (default 10 per key, 100 in all, per minute) */
  logLimits?: Pick<OcppSignalsOptions, 'linesPerKey' | 'linesTotal' | 'intervalMs'>;
}

const dashboardDir = fileURLToPath(new URL('../dashboard', import.meta.url));

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
  // read once, one Buffer for every answer, with its ETag (gateway/static-bytes.ts)
  const page = (file: string, type: string): RouteSpec<unknown>['handler'] => {
    const bytes = staticBytes(() => readFileSync(join(dashboardDir, file)));
    return (req) => staticAnswer(req.koa, bytes(), type, DASHBOARD_SECURITY_HEADERS);
  };
  return defineMount<unknown>({
    name: 'csms-dashboard',
    prefix: '/dashboard',
    description: 'Operator console (static page and its bundled script; it calls /v1 with the operator key)',
    routes: [
      {
        method: 'GET',
        path: '/',
        summary: 'Operator dashboard',
        operationId: 'getDashboard',
        handler: page('index.html', 'text/html; charset=utf-8'),
      },
      {
        method: 'GET',
        path: '/console.css',
        summary: 'Console styles',
        handler: page('console.css', 'text/css; charset=utf-8'),
      },
      {
        method: 'GET',
        path: '/icon.svg',
        summary: 'Console icon',
        handler: page('icon.svg', 'image/svg+xml'),
      },
      {
        method: 'GET',
        path: '/console.js',
        summary: 'Console script (Preact, bundled by scripts/bundle-console.mjs)',
        handler: page('console.js', 'text/javascript; charset=utf-8'),
      },
    ],
  });
}

/** What the module learns only once it is running, read by the actor's deps and at stop. */
interface LateParts {
  events?: CsmsEventBus;
  localLists?: LocalListSweep;
  meterSamples?: MeterSampleSweep;
  unknown?: UnknownChargePoints;
  endpoint?: OcppEndpoint;
  maxOpenTransactions?: number;
}

/** The charge-point actor's ports: the sockets of this process, the session table, the change feed. */
function chargePointDeps(
  registry: ConnectionRegistry,
  late: LateParts,
  opts: CsmsModuleOptions,
  { config, db }: ActorHost,
): ChargePointActorDeps {
  const dataTransfer = opts.dataTransfer ?? new DataTransferRegistry();
  const held = new HeldPasswords();
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
      // policy violation: the identity it logged in with no longer exists
      else if (reason === 'removed') conn.close(1008, 'charge point removed');
      else if (reason === 'pin-lost') conn.close(4000, 'replaced by a newer connection');
      // the actor failed: the charger reconnects and gets a fresh activation
      else conn.close(1011, 'charge point actor ended');
    },
    sessions: sessionWrites,
    lastReadings: (ids) => lastReadings(db, ids),
    finishedSession: (id, query) => finishedSession(db, id, query),
    meterSamples: new MeterSampler(config.CSMS_METER_SAMPLE_S * 1000),
    reports: reportWrites,
    localLists: localListWrites,
    dataTransfer: (id, request) => dataTransfer.answer(id, request),
    passwords: {
      hold: (commandId, password) => held.hold(commandId, password),
      get: (commandId) => held.get(commandId),
      forget: (commandId) => held.forget(commandId),
      accepted: chargePointPasswordWrites.accepted,
      refused: chargePointPasswordWrites.refused,
    },
    publish(event) {
      late.events?.publish(event);
    },
    publishing() {
      return late.events?.listened() ?? false;
    },
    heartbeatIntervalS: config.OCPP_HEARTBEAT_INTERVAL_S,
    authCacheS: config.OCPP_AUTH_CACHE_S,
    bootRetryIntervalS: config.OCPP_BOOT_RETRY_INTERVAL_S,
    holdConnection(id, status) {
      registry.get(id)?.hold(status);
    },
    maxOpenTransactions() {
      // a charge-point actor runs only where a charger's socket was accepted, so attach() has run
      if (late.maxOpenTransactions === undefined) throw new Error('the CSMS module is not attached to an HTTP server');
      return late.maxOpenTransactions;
    },
  };
}

/** The local lists chargers hold (m0017) and the one the tokens make (docs/CSMS.md "Local authorization list"). */
function localListsOf(services: PlatformServices): CsmsApiDeps['localLists'] {
  const store = new LocalListStore(services.db);
  const { config } = services;
  const own = { country_code: config.OCPI_COUNTRY_CODE, party_id: config.OCPI_PARTY_ID };
  return {
    held: (id) => store.held(id),
    wanted: () => wantedLocalList(services.db, own, config.OCPP_LOCAL_LIST_MAX),
  };
}

/** The sweep that keeps the local lists of this process's chargers in sync (OCPP_LOCAL_LIST_SYNC_S). */
function localListSweepOf(services: PlatformServices, registry: ConnectionRegistry): LocalListSweep {
  const lists = localListsOf(services);
  return new LocalListSweep({
    connected: () => registry.connected(),
    held: lists.held,
    wanted: lists.wanted,
    send: (id, command) => services.actors.ref(chargePointProtocol, id).ask({ type: 'command', command }),
    log: services.log.child({ module: 'ocpp' }),
    intervalMs: services.config.OCPP_LOCAL_LIST_SYNC_S * 1000,
  });
}

/**
 * A charger whose process died holding its socket (a kill -9) could not be said to go offline by
 * that process: the web process that takes the dead one's pins says it (docs/CSMS.md "Cluster
 * behaviour").
 */
function tellOrphanedOffline(services: PlatformServices, events: CsmsEventBus): void {
  services.actors.onPinsOrphaned((addresses) => {
    for (const address of addresses) {
      const { kind, key } = parseAddress(address);
      if (kind === chargePointProtocol.kind)
        events.publish({ type: 'charge-point', charge_point_id: key, online: false });
    }
  });
}

/**
 * A charger's socket here opened or closed. A closed one whose charger another process holds now
 * (a newer connection there replaced this one) is no offline: that process said online, and an
 * offline published after it was the stream's last word for a connected charger.
 */
function tellOnline(services: PlatformServices, events: CsmsEventBus, id: string, online: boolean): void {
  const publish = (now: boolean) => events.publish({ type: 'charge-point', charge_point_id: id, online: now });
  if (online) return publish(true);
  services.actors.isPinned(addressOf(chargePointProtocol.kind, id)).then(
    (held) => {
      if (!held) publish(false);
    },
    // Redis away: said as before, the read of the charger tells the truth
    () => publish(false),
  );
}

/** The OCPP WebSocket endpoint, checking chargers against the registry of identities; it also tells of chargers a dead process held. */
function ocppEndpoint(
  services: PlatformServices,
  registry: ConnectionRegistry,
  events: CsmsEventBus,
  unknown: UnknownChargePoints,
  opts: CsmsModuleOptions,
): OcppEndpoint {
  tellOrphanedOffline(services, events);
  const { config } = services;
  const chargePoints = new ChargePointStore(services.db);
  const log = services.log.child({ module: 'ocpp' });
  return new OcppEndpoint({
    log,
    actors: services.actors,
    schemas: new OcppSchemas(),
    registry,
    signals: new OcppSignals({ log, metrics: services.metrics, ...opts.logLimits }),
    authenticate: async (id, credentials) => {
      const row = await chargePoints.find(id);
      if (!row) return { t: 'refused', reason: 'unknown' };
      if (!credentials) return { t: 'refused', reason: 'no_credentials' };
      const credential = credentials.user === id ? credentialOf(credentials.password, row) : undefined;
      if (!credential) return { t: 'refused', reason: 'bad_password' };
      if (credential === 'pending') {
        // the charger has its new password, whatever became of the answer: it is its only one now
        await chargePoints.promotePending(id, row.pending_key_hash ?? '');
        services.log.info(
          { charge_point: id },
          'charger logged in with its new password; the old one is no longer valid',
        );
      }
      return { t: 'ok', protocol: row.protocol, policy: row.boot_policy ?? config.OCPP_BOOT_POLICY };
    },
    refused: (attempt) => unknown.record(attempt),
    onlineChanged: (id, online) => tellOnline(services, events, id, online),
    pingIntervalMs: opts.pingIntervalMs ?? 30_000,
    callTimeoutMs: opts.callTimeoutMs ?? 30_000,
    handshakeTimeoutMs: config.OCPP_HANDSHAKE_TIMEOUT_MS,
    bootDeadlineMs: config.OCPP_BOOT_DEADLINE_MS,
    maxMessageBytes: config.OCPP_MAX_MESSAGE_KB * 1024,
    logins: new LoginThrottle({ maxFailures: config.OCPP_LOGIN_FAILURES }),
    trustProxy: config.TRUST_PROXY === 'true',
    degradedBy: () => services.health.degradedBy(),
    // best effort: a lost flush makes last_seen older by one interval, nothing else
    persistLastSeen: (seen) =>
      chargePoints
        .recordLastSeen(seen)
        .catch((err: unknown) => services.log.warn({ err, chargers: seen.length }, 'last-seen times not stored')),
    lastSeenFlushMs: opts.lastSeenFlushMs ?? 30_000,
  });
}

/** What the /v1 API reads: the stores, the change feed, this process's connections. */
function apiDeps(
  services: PlatformServices,
  parts: {
    events: CsmsEventBus;
    unknown: UnknownChargePoints;
    streams: Set<PassThrough>;
    registry: ConnectionRegistry;
    shutdown: AbortSignal;
  },
): CsmsApiDeps {
  return {
    config: services.config,
    actors: services.actors,
    chargePoints: new ChargePointStore(services.db),
    sessions: new SessionReader(services.db, {
      country_code: services.config.OCPI_COUNTRY_CODE,
      party_id: services.config.OCPI_PARTY_ID,
    }),
    reports: new ReportReader(services.db),
    localLists: localListsOf(services),
    reservations: new ReservationStore(services.db),
    events: parts.events,
    unknown: parts.unknown,
    streams: parts.streams,
    shutdown: parts.shutdown,
    lastSeenHere: (id) => parts.registry.seenAt(id),
    redisAway: () => services.health.degradedBy() === 'redis',
    healthChanges: (fn) => services.health.onChange(fn),
  };
}

/** The local lists' and the meter samples' periodic sweeps of a web process. */
function startSweeps(services: PlatformServices, registry: ConnectionRegistry, late: LateParts): void {
  late.localLists = localListSweepOf(services, registry);
  late.localLists.start();
  late.meterSamples = new MeterSampleSweep({
    db: services.db,
    retentionMs: services.config.CSMS_METER_SAMPLE_RETENTION_DAYS * 86_400_000,
    intervalMs: 3_600_000,
    log: services.log.child({ module: 'csms' }),
  });
  late.meterSamples.start();
}

/**
 * Charge-point management as a platform module: the OCPP WebSocket endpoint, the pinned
 * charge-point actor, the /v1 API for charge points and sessions, and the dashboard.
 */
export function csmsModule(opts: CsmsModuleOptions = {}): PlatformModule {
  const registry = new ConnectionRegistry();
  const streams = new Set<PassThrough>();
  /** aborted as the process stops: operations waiting for a charger's answer answer at once */
  const shutdown = new AbortController();
  const late: LateParts = {};
  const eventsOf = (services: PlatformServices): CsmsEventBus =>
    (late.events ??= new CsmsEventBus(services.log, services.redis, {
      events: services.redisKeys.csmsEvents(),
      listeners: services.redisKeys.csmsEventListeners(),
    }));
  const unknownOf = (services: PlatformServices): UnknownChargePoints =>
    (late.unknown ??= new UnknownChargePoints(
      services.db,
      services.log.child({ module: 'ocpp' }),
      opts.unknownFlushMs ?? 5_000,
    ));

  return {
    name: 'csms',
    actors: (host) => {
      const deps = chargePointDeps(registry, late, opts, host);
      return [chargePointActor(opts.roaming ? { ...deps, roaming: opts.roaming(host) } : deps)];
    },
    mounts(services: PlatformServices) {
      return [
        csmsApiMount(
          apiDeps(services, {
            events: eventsOf(services),
            unknown: unknownOf(services),
            streams,
            registry,
            shutdown: shutdown.signal,
          }),
        ),
        dashboardMount(),
      ];
    },
    async attach(services, server) {
      late.maxOpenTransactions = services.config.OCPP_MAX_OPEN_TRANSACTIONS;
      const events = eventsOf(services);
      await events.start();
      const unknown = unknownOf(services);
      unknown.start();
      const endpoint = ocppEndpoint(services, registry, events, unknown, opts);
      endpoint.attach(server);
      services.metrics.sources.connectedChargers = () => registry.byProtocol();
      late.endpoint = endpoint;
      startSweeps(services, registry, late);
    },
    async stop() {
      shutdown.abort();
      for (const s of streams) s.end();
      streams.clear();
      await late.localLists?.stop();
      await late.meterSamples?.stop();
      await late.endpoint?.stop();
      await late.unknown?.stop();
      await late.events?.stop();
    },
  };
}
