import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ActorSystem, PinnedActor } from '../runtime/actor-system.js';
import { ActorUnavailableError, PinSupersededError } from '../runtime/errors.js';
import { chargePointProtocol } from '../../actors/charge-point/protocol.js';
import { chargerConnection, noteFrameError, type AnyChargerConnection, type ConnectionSettings } from './connection.js';
import type { ProtocolName, RegistrationStatus } from './domain.js';
import type { LoginThrottle } from './login-throttle.js';
import type { OcppSchemas } from './schemas.js';
import type { OcppSignals, RefusalReason } from './signals.js';
import {
  HandshakeDeadlines,
  basicCredentials,
  clientAddress,
  throttledAddress,
  jitteredRetryAfterS,
  refuseUpgrade,
  routeUpgrade,
} from './upgrade.js';

/** Chargers whose socket this process holds, by charge point id. The actor's turns send through it. */
export class ConnectionRegistry {
  private readonly byId = new Map<string, AnyChargerConnection>();
  /** closed connections whose last-seen time is being written (`delete` to `stored`) */
  private readonly leaving = new Map<string, AnyChargerConnection>();
  /** connections held per version, kept with `byId` (the connected-chargers gauge reads it) */
  private readonly counts: Record<ProtocolName, number> = { 'ocpp1.6': 0, 'ocpp2.0.1': 0 };

  get(id: string): AnyChargerConnection | undefined {
    return this.byId.get(id);
  }

  set(conn: AnyChargerConnection): void {
    const before = this.byId.get(conn.chargePointId);
    if (before) this.counts[before.version] -= 1;
    this.byId.set(conn.chargePointId, conn);
    this.counts[conn.version] += 1;
  }

  /**
   * Forgets the connection only if it is still the current one for its charger. Its last-seen
   * time stays readable (`seenAt`) until `stored` says it was written: a view that read the
   * charger's row before that write finds it here.
   */
  delete(conn: AnyChargerConnection): void {
    if (this.byId.get(conn.chargePointId) !== conn) return;
    this.byId.delete(conn.chargePointId);
    this.counts[conn.version] -= 1;
    this.leaving.set(conn.chargePointId, conn);
  }

  /** The closed connection's last-seen time is in the charger's row now. */
  stored(conn: AnyChargerConnection): void {
    if (this.leaving.get(conn.chargePointId) === conn) this.leaving.delete(conn.chargePointId);
  }

  /** When this process last heard from the charger, while it is connected or its last frame's time is being written. */
  seenAt(id: string): number | undefined {
    return (this.byId.get(id) ?? this.leaving.get(id))?.lastSeenAt;
  }

  /** the chargers connected to this process, with the version each speaks */
  connected(): Array<[string, ProtocolName]> {
    return [...this.byId].map(([id, conn]) => [id, conn.version]);
  }

  /** connections held, per OCPP version */
  byProtocol(): Readonly<Record<ProtocolName, number>> {
    return { ...this.counts };
  }

  get size(): number {
    return this.byId.size;
  }

  all(): AnyChargerConnection[] {
    return [...this.byId.values()];
  }
}

export interface OcppEndpointOptions {
  log: Logger;
  actors: ActorSystem;
  schemas: OcppSchemas;
  registry: ConnectionRegistry;
  /** the endpoint's log lines and counters (docs/OPERATIONS.md "Signals") */
  signals: OcppSignals;
  /** the login of charger `id` with the HTTP Basic credentials it sent, if any */
  authenticate(id: string, credentials: { user: string; password: string } | undefined): Promise<ChargerLogin>;
  /** a login refused as `unknown` or `bad_password` (the password tried is not passed on) */
  refused(attempt: RefusedLogin): void;
  /** called once a charger is connected and its actor pinned here, and once it is gone */
  onlineChanged(id: string, online: boolean, connectionId: string): void;
  pingIntervalMs: number;
  callTimeoutMs: number;
  /** OCPP_HANDSHAKE_TIMEOUT_MS: a connection must be a request or a completed upgrade by then */
  handshakeTimeoutMs: number;
  /** OCPP_BOOT_DEADLINE_MS: a charger never booted must send BootNotification within this */
  bootDeadlineMs: number;
  /** the largest message a charger may send (OCPP_MAX_MESSAGE_KB): a larger one is closed with 1009 */
  maxMessageBytes: number;
  /** failed logins per identity and per address (OCPP_LOGIN_FAILURES) */
  logins: LoginThrottle;
  /** TRUST_PROXY: whether X-Forwarded-For names the client */
  trustProxy: boolean;
  /** the unreachable dependency (database, Redis) while the process is degraded */
  degradedBy(): string | undefined;
  /**
   * Stores when chargers were last seen (any OCPP frame), called with the connections that
   * received frames since the last call: every `lastSeenFlushMs`, and for one connection at its
   * close. Must not reject (the store logs its own failures).
   */
  persistLastSeen(seen: ReadonlyArray<{ id: string; at: number }>): Promise<void>;
  lastSeenFlushMs: number;
}

/**
 * What a login finds: the charger's registered protocol and boot policy, or why it is refused: an
 * id that is not registered, a wrong password (or a user name other than the id), or, for a
 * registered id, no credentials at all (a client asking for the challenge).
 */
export type ChargerLogin =
  | { t: 'ok'; protocol: ProtocolName; policy: RegistrationStatus }
  | { t: 'refused'; reason: 'unknown' | 'bad_password' | 'no_credentials' };

/** A refused login worth an operator's eyes (GET /v1/unknown-charge-points). */
export interface RefusedLogin {
  id: string;
  address: string;
  reason: 'unknown' | 'bad_password';
  at: number;
}

const IDENTITY = /^[A-Za-z0-9_.~*+|@=-]{1,48}$/;
/** at shutdown, how long a charger has to answer our close frame before its socket is ended */
const CLOSE_HANDSHAKE_MS = 2000;

/**
 * The OCPP WebSocket endpoint, `/ocpp/<charge point id>` on the platform's HTTP server
 * (docs/CSMS.md, "Connecting a charger"). Identity, password (HTTP Basic, OCPP security profile 1) and the
 * subprotocol are checked before the upgrade, so a refused charger never gets a socket.
 */
export class OcppEndpoint {
  /** the subprotocol decided before the upgrade, per request */
  private readonly chosen = new WeakMap<IncomingMessage, ProtocolName>();
  private readonly wss: WebSocketServer;
  private pinger: NodeJS.Timeout | undefined;
  private lastSeenFlusher: NodeJS.Timeout | undefined;
  /** connections closed since the last write of their last-seen times (see `flushClosed`) */
  private closedSeen: AnyChargerConnection[] = [];
  private closedSeenWrite: Promise<void> | undefined;
  private stopping = false;
  private readonly pins = new Map<AnyChargerConnection, PinnedActor>();
  /** the newest connection attempt per charger on this process (two may race through pin()) */
  private readonly newest = new Map<string, AnyChargerConnection>();
  private readonly deadlines: HandshakeDeadlines;

  /**
   * The settings every connection of this endpoint shares; a connection keeps only its socket,
   * its id and this (no closures per connection: see `ChargerConnection`).
   */
  private readonly connectionSettings: ConnectionSettings;

  constructor(private readonly opts: OcppEndpointOptions) {
    this.wss = new WebSocketServer({
      noServer: true,
      perMessageDeflate: false,
      clientTracking: false,
      maxPayload: opts.maxMessageBytes,
      handleProtocols: (_offered, req) => this.chosen.get(req) ?? false,
    });
    this.deadlines = new HandshakeDeadlines(opts.handshakeTimeoutMs);
    this.connectionSettings = {
      schemas: opts.schemas,
      log: opts.log,
      callTimeoutMs: opts.callTimeoutMs,
      signals: opts.signals,
      degradedBy: () => opts.degradedBy(),
      handleEvent: (id, protocol, event) =>
        opts.actors.ref(chargePointProtocol, id).ask({ type: 'event', protocol, event }),
    };
  }

  /**
   * Takes every upgrade request of the server: the platform serves WebSockets only here, so an
   * upgrade this endpoint does not serve is answered (404/400) and closed, never left hanging.
   */
  attach(server: Server): void {
    this.deadlines.watch(server);
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      // a reset or a write to a vanished client must not become an unhandled 'error'
      socket.on('error', ignoreSocketError);
      this.deadlines.arm(socket);
      const route = routeUpgrade(req.url);
      if (route.t === 'refuse') return refuseUpgrade(socket, route.status);
      void this.upgrade(req, socket, head, route.id).catch((err: unknown) => {
        // e.g. the identity lookup failed: the charger should come back, not give up
        this.opts.log.warn({ err }, 'OCPP upgrade failed');
        refuseUpgrade(socket, 503, { 'Retry-After': String(jitteredRetryAfterS()) });
      });
    });
    this.pinger = setInterval(() => {
      for (const conn of this.opts.registry.all()) conn.probe();
    }, this.opts.pingIntervalMs);
    this.pinger.unref();
    this.lastSeenFlusher = setInterval(
      () => void this.flushLastSeen(this.opts.registry.all()),
      this.opts.lastSeenFlushMs,
    );
    this.lastSeenFlusher.unref();
  }

  /**
   * When the connections' chargers were last seen, for those seen since their last flush: one
   * call (one statement per few thousand chargers) instead of a write per frame.
   */
  private flushLastSeen(conns: readonly AnyChargerConnection[]): Promise<void> {
    const seen: Array<{ id: string; at: number }> = [];
    for (const conn of conns) {
      if (conn.lastSeenAt <= conn.persistedSeenAt) continue;
      conn.persistedSeenAt = conn.lastSeenAt;
      seen.push({ id: conn.chargePointId, at: conn.lastSeenAt });
    }
    return seen.length === 0 ? Promise.resolve() : this.opts.persistLastSeen(seen);
  }

  /**
   * The last-seen time of a closed connection, written with those of every connection closed in
   * the same turn of the event loop: when a site's network or a load balancer drops thousands of
   * chargers at once, one call (one transaction on SQLite, a statement per few thousand on
   * PostgreSQL) instead of a transaction per charger while they all come back.
   */
  private flushClosed(conn: AnyChargerConnection): Promise<void> {
    this.closedSeen.push(conn);
    this.closedSeenWrite ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      const closed = this.closedSeen;
      this.closedSeen = [];
      this.closedSeenWrite = undefined;
      return this.flushLastSeen(closed);
    });
    return this.closedSeenWrite;
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, id: string): Promise<void> {
    const { log, logins, signals } = this.opts;
    // the peer's address is read only when a failure is on record somewhere or the charger is
    // served (reading it is a getpeername system call: 24 us per charger of a boot storm on our machines)
    let address: string | undefined;
    const peer = (): string => (address ??= clientAddress(req, this.opts.trustProxy));
    // what failures count against: the address normalised (an IPv6 /64, no port, no made-up entry)
    const counted = (): string => throttledAddress(peer(), req.socket.remoteAddress);
    const refuse = (reason: RefusalReason, status: number, headers?: Record<string, string>): void => {
      signals.refused(id, peer(), reason, status);
      refuseUpgrade(socket, status, headers);
    };
    if (this.stopping) return refuse('shutting_down', 503);
    // degraded mode (docs/ARCHITECTURE.md): accepting a charger we cannot serve only starts a reconnect storm
    const degraded = this.opts.degradedBy();
    if (degraded) return refuse('degraded', 503, { 'Retry-After': String(jitteredRetryAfterS()) });
    if (!IDENTITY.test(id)) return refuse('invalid_id', 404);
    const waitMs = logins.size === 0 ? 0 : logins.retryAfterMs([identityKey(id, counted()), `address:${counted()}`]);
    if (waitMs > 0) return refuse('throttled', 429, { 'Retry-After': String(Math.ceil(waitMs / 1000)) });
    const offered = (req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const creds = basicCredentials(req.headers.authorization);
    const login = await this.opts.authenticate(id, creds);
    if (login.t === 'refused') {
      if (login.reason !== 'no_credentials')
        this.opts.refused({ id, address: peer(), reason: login.reason, at: Date.now() });
      // No credentials for a registered id is a client asking for the challenge, not a guess: not
      // counted; for an id we do not know it is a guess (a scanner), counted like a bad password
      if (creds !== undefined || login.reason === 'unknown') this.loginFailed(id, peer(), counted());
      return refuse(login.reason, 401, { 'WWW-Authenticate': 'Basic realm="ocpp"' });
    }
    if (logins.size > 0) logins.succeeded(identityKey(id, counted()));
    const registered = login.protocol;
    const protocol = negotiated(registered, offered);
    // OCPP-J 1.6 and 2.0.1 ("OCPP version" of the connection): with no subprotocol in common the
    // server MUST complete the handshake without a Sec-WebSocket-Protocol header, then close
    if (!protocol) return this.completeAndClose(req, socket, head, id, peer());
    if (protocol !== registered)
      log.info(
        { charge_point: id, registered, negotiated: protocol },
        'charger speaks another OCPP version than registered',
      );
    // ajv and the schemas load on the first charger's upgrade, not at start (cold start); the
    // socket is not upgraded yet, so nothing it sends meanwhile is missed
    await this.opts.schemas.load();
    // the client may have left during the lookup; ws would then destroy the socket without calling back
    if (socket.destroyed || !socket.writable || !socket.readable) return void socket.destroy();
    this.chosen.set(req, protocol);
    // the offer as ws reads it again, strictly: the subprotocol chosen. A list with empty elements
    // ("ocpp1.6, , ocpp2.0.1", which RFC 7230 section 7 says to accept and ignore) or an element
    // twice was refused with 400 by ws, after we had chosen. An offer of none (or of empty
    // elements only) is answered without one
    if (offered.length > 0) req.headers['sec-websocket-protocol'] = protocol;
    else delete req.headers['sec-websocket-protocol'];
    const ws = await completeUpgrade(this.wss, req, socket, head, frameErrorLogger(log, id, this.opts.maxMessageBytes));
    if (!ws) return;
    this.deadlines.clear(socket);
    try {
      await this.accept(ws, socket, id, { protocol, registered }, login.policy, peer());
    } catch (err) {
      this.opts.log.warn({ err, charge_point: id }, 'charger connection could not be set up');
      ws.close(1011, 'internal error');
    }
  }

  /**
   * A charger that offered only subprotocols we do not speak: the handshake completes (101, no
   * `Sec-WebSocket-Protocol`) and the socket is closed at once with 1002, saying which we speak.
   * A 400 here was a deviation from OCPP-J's MUST, and a charger built to it may take a 400 for a
   * network fault and retry for ever instead of reporting the version.
   */
  private async completeAndClose(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    id: string,
    address: string,
  ): Promise<void> {
    this.opts.signals.refused(id, address, 'no_subprotocol', 101);
    delete req.headers['sec-websocket-protocol'];
    const ws = await completeUpgrade(
      this.wss,
      req,
      socket,
      head,
      frameErrorLogger(this.opts.log, id, this.opts.maxMessageBytes),
    );
    if (!ws) return;
    this.deadlines.clear(socket);
    ws.close(1002, 'no common subprotocol: this CSMS speaks ocpp1.6 and ocpp2.0.1');
  }

  /**
   * A wrong password counts against the identity from that address, and against the address only
   * for an identity's first failure: an address counts identities that fail, not failures, so
   * that one misconfigured charger retrying does not lock out every charger behind the same NAT
   * or proxy; and an identity is counted per address, so that failing logins from elsewhere
   * cannot keep a charger out (docs/CSMS.md "Limits and hardening").
   */
  private loginFailed(id: string, address: string, counted: string): void {
    const { logins, log } = this.opts;
    const idKey = identityKey(id, counted);
    const keys = logins.failures(idKey) === 0 ? [idKey, `address:${counted}`] : [idKey];
    for (const block of logins.failed(keys)) {
      log.warn(
        { charge_point: id, address, key: block.key, failures: block.failures, retry_after_ms: block.backoffMs },
        'failed charger logins: backing off',
      );
    }
  }

  private async accept(
    ws: WebSocket,
    socket: Duplex,
    id: string,
    versions: { protocol: ProtocolName; registered: ProtocolName },
    policy: RegistrationStatus,
    address: string,
  ): Promise<void> {
    const { actors, registry } = this.opts;
    const { protocol, registered } = versions;
    const chargePoint = actors.ref(chargePointProtocol, id);
    const conn = chargerConnection(ws, socket, protocol, id, this.connectionSettings);
    this.newest.set(id, conn);
    ws.on('close', () => void this.release(conn));
    // the newest connection wins: pinning ends any older activation, whose onDeactivate closes its socket
    const pinned = await actors.pin(chargePoint.address).catch((err: unknown) => {
      // a newer connection's claim overtook this one's (two devices of one identity, here or elsewhere)
      if (err instanceof PinSupersededError) return undefined;
      throw err;
    });
    if (!pinned) return this.giveUp(conn);
    // from here `release` (the socket's close, a superseded or stopping accept) lets the pin go
    this.pins.set(conn, pinned);
    if (!conn.isOpen || this.stopping || this.newest.get(id) !== conn) return this.giveUp(conn);
    registry.set(conn);
    const connected = await chargePoint
      .ask({ type: 'connected', protocol, registered, connection: conn.connectionId, policy })
      .catch((err: unknown) => {
        // the pin went to a newer connection (another process's) between the claim and this ask
        if (err instanceof ActorUnavailableError) return undefined;
        throw err;
      });
    if (!connected) return this.giveUp(conn);
    const { booted, registration } = connected;
    // closed (or the endpoint stopped) during the ask: `release` has run, nothing goes online
    if (this.pins.get(conn) !== pinned || !conn.isOpen) return;
    conn.open({ bootDeadlineMs: booted ? null : this.opts.bootDeadlineMs, registration });
    this.opts.signals.connected(id, protocol, address, conn.connectionId);
    this.opts.onlineChanged(id, true, conn.connectionId);
  }

  /**
   * A connection that will not be set up: released, and closed as a restart while the endpoint
   * stops, else as replaced (a newer connection of the charger, here or in another process, holds
   * or claims its pin).
   */
  private async giveUp(conn: AnyChargerConnection): Promise<void> {
    await this.release(conn);
    if (!conn.isOpen) return;
    if (this.stopping) conn.close(1012, 'service restart');
    else conn.close(4000, 'replaced by a newer connection');
  }

  /** Once per pinned connection: forgets it, releases its pin, reports the charger offline. */
  private async release(conn: AnyChargerConnection): Promise<void> {
    const id = conn.chargePointId;
    if (this.newest.get(id) === conn) this.newest.delete(id);
    const pin = this.pins.get(conn);
    if (!pin) return;
    this.pins.delete(conn);
    this.opts.registry.delete(conn);
    // a charger's last frame is kept when it goes (at shutdown, stop() flushed them together)
    await this.flushClosed(conn);
    this.opts.registry.stored(conn);
    await pin.release().catch((err: unknown) => this.opts.log.warn({ err, charge_point: id }, 'pin release failed'));
    // a newer connection of the charger here has taken over (and reported it online)
    if (!this.newest.has(id)) this.opts.onlineChanged(id, false, conn.connectionId);
  }

  /** Shutdown, first step: refuse upgrades, close every charger with 1012 (service restart). */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.pinger) clearInterval(this.pinger);
    if (this.lastSeenFlusher) clearInterval(this.lastSeenFlusher);
    const open = this.opts.registry.all();
    await this.flushLastSeen(open);
    for (const conn of open) conn.close(1012, 'service restart');
    await Promise.all([
      // each pin once: the sockets' own close events find theirs already released
      ...[...this.pins.keys()].map((conn) => this.release(conn)),
      // the close handshakes: a process whose stop was quick (embedded) exited before they came
      // back, and logged no `charger disconnected` for the chargers it closed
      ...open.map((conn) => conn.whenClosed(CLOSE_HANDSHAKE_MS)),
    ]);
  }
}

const SPOKEN: readonly ProtocolName[] = ['ocpp2.0.1', 'ocpp1.6'];

/**
 * The version a charger is served with (docs/CSMS.md "Connecting a charger"): the registered one
 * when it offers it, else a version it offers that this CSMS speaks (firmware was updated: the
 * negotiated subprotocol wins, and the actor records it), else, when it offers none at all (some
 * firmware sends no Sec-WebSocket-Protocol), the registered one; undefined when it offers only
 * versions this CSMS does not speak.
 */
export function negotiated(registered: ProtocolName, offered: readonly string[]): ProtocolName | undefined {
  if (offered.length === 0 || offered.includes(registered)) return registered;
  return SPOKEN.find((p) => offered.includes(p));
}

/**
 * ws's upgrade as a promise: the socket, or undefined when ws answered a bad handshake (version,
 * key) itself, which it does without calling back. A module function, and the close listener
 * removed once upgraded, so that nothing the connection keeps for its lifetime holds the
 * closure scope of `upgrade`, and with it the request and its headers (a few hundred bytes per
 * connected charger).
 */
function completeUpgrade(
  wss: WebSocketServer,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  onError: (err: Error & { code?: string }) => void,
): Promise<WebSocket | undefined> {
  return new Promise((resolve) => {
    const gone = (): void => resolve(undefined);
    socket.once('close', gone);
    wss.handleUpgrade(req, socket, head, (upgraded) => {
      socket.off('close', gone);
      // attached before anything can read a frame: an invalid frame (bad UTF-8, reserved
      // opcode, oversized) makes ws emit 'error' and close with 1007/1002/1009; unhandled,
      // that 'error' ended the whole process (docs/SECURITY.md)
      upgraded.on('error', onError);
      resolve(upgraded);
    });
  });
}

/**
 * The 'error' listener of a charger's socket; it closes over the logger, the id and the limit
 * only. A message over the limit is a warning that names the setting: a charger that sends its
 * device model in large parts is closed (1009) at every try until the limit is raised.
 */
function frameErrorLogger(
  log: Logger,
  id: string,
  maxMessageBytes: number,
): (this: WebSocket, err: Error & { code?: string }) => void {
  return function (this: WebSocket, err) {
    const fields = { charge_point: id, code: err.code, err: err.message };
    if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH')
      log.warn(
        { ...fields, max_message_kb: maxMessageBytes / 1024 },
        'charger sent a message over OCPP_MAX_MESSAGE_KB',
      );
    else log.info(fields, 'charger sent an invalid WebSocket frame');
    noteFrameError(this, err);
  };
}

/** The 'error' listener every upgrading socket gets (one function for all of them). */
function ignoreSocketError(): void {
  // a reset or a write to a vanished client; the socket's 'close' follows
}

/**
 * The login throttle's key of an identity: per remote address. Counted across addresses, anyone
 * who knows a charger's id (often printed on it) could keep it from reconnecting for minutes at a
 * time with wrong passwords sent from elsewhere.
 */
function identityKey(id: string, address: string): string {
  return `id:${id}@${address}`;
}
