import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ActorSystem, PinnedActor } from '../runtime/actor-system.js';
import { ChargerConnection } from './connection.js';
import type { ChargerEvent, ChargerEventOutcome, ProtocolAdapter, ProtocolName } from './domain.js';
import type { OcppSchemas } from './schemas.js';
import { ocpp16Adapter } from './v16/adapter.js';
import { ocpp201Adapter } from './v201/adapter.js';

/** Chargers whose socket this process holds, by charge point id. The actor's turns send through it. */
export class ConnectionRegistry {
  private readonly byId = new Map<string, ChargerConnection>();

  get(id: string): ChargerConnection | undefined {
    return this.byId.get(id);
  }

  set(conn: ChargerConnection): void {
    this.byId.set(conn.chargePointId, conn);
  }

  /** Forgets the connection only if it is still the current one for its charger. */
  delete(conn: ChargerConnection): void {
    if (this.byId.get(conn.chargePointId) === conn) this.byId.delete(conn.chargePointId);
  }

  get size(): number {
    return this.byId.size;
  }

  all(): ChargerConnection[] {
    return [...this.byId.values()];
  }
}

export interface OcppEndpointOptions {
  log: Logger;
  actors: ActorSystem;
  schemas: OcppSchemas;
  registry: ConnectionRegistry;
  /** the charger's registered protocol when id and password match, else undefined */
  authenticate(id: string, password: string): Promise<ProtocolName | undefined>;
  address(id: string): string;
  /** called once a charger is connected and its actor pinned here, and once it is gone */
  onlineChanged(id: string, online: boolean, connectionId: string): void;
  pingIntervalMs: number;
  callTimeoutMs: number;
}

const PATH = /^\/ocpp\/([^/?#]+)\/?$/;
const IDENTITY = /^[A-Za-z0-9_.~*+|@=-]{1,48}$/;

const adapters: Record<ProtocolName, ProtocolAdapter> = { 'ocpp1.6': ocpp16Adapter, 'ocpp2.0.1': ocpp201Adapter };

function refuse(socket: Duplex, status: number, reason: string, headers: Record<string, string> = {}): void {
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n${extra}\r\n`);
}

function basicCredentials(header: string | undefined): { user: string; password: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * The OCPP WebSocket endpoint, `/ocpp/<charge point id>` on the platform's HTTP server
 * (DESIGN.md section 6). Identity, password (HTTP Basic, OCPP security profile 1) and the
 * subprotocol are checked before the upgrade, so a refused charger never gets a socket.
 */
export class OcppEndpoint {
  /** the subprotocol decided before the upgrade, per request */
  private readonly chosen = new WeakMap<IncomingMessage, ProtocolName>();
  private readonly wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    clientTracking: false,
    maxPayload: 256 * 1024,
    handleProtocols: (_offered, req) => this.chosen.get(req) ?? false,
  });
  private pinger: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly pins = new Map<ChargerConnection, PinnedActor>();
  /** the newest connection attempt per charger on this process (two may race through pin()) */
  private readonly newest = new Map<string, ChargerConnection>();

  constructor(private readonly opts: OcppEndpointOptions) {}

  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const m = PATH.exec(req.url ?? '');
      if (!m) return; // not ours: another module may handle it (or the socket times out)
      socket.on('error', () => undefined);
      let id: string;
      try {
        id = decodeURIComponent(m[1] ?? '');
      } catch {
        refuse(socket, 404, 'Not Found');
        return;
      }
      void this.upgrade(req, socket, head, id).catch((err: unknown) => {
        this.opts.log.error({ err }, 'OCPP upgrade failed');
        refuse(socket, 500, 'Internal Server Error');
      });
    });
    this.pinger = setInterval(() => {
      for (const conn of this.opts.registry.all()) conn.probe();
    }, this.opts.pingIntervalMs);
    this.pinger.unref();
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, id: string): Promise<void> {
    if (this.stopping) return refuse(socket, 503, 'Service Unavailable');
    if (!IDENTITY.test(id)) return refuse(socket, 404, 'Not Found');
    const offered = (req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const creds = basicCredentials(req.headers.authorization);
    const protocol = creds && creds.user === id ? await this.opts.authenticate(id, creds.password) : undefined;
    if (!protocol) return refuse(socket, 401, 'Unauthorized', { 'WWW-Authenticate': 'Basic realm="ocpp"' });
    // the charger must speak the protocol it was registered with (OCPP-J: no common subprotocol -> refuse)
    if (!offered.includes(protocol)) return refuse(socket, 400, 'Bad Request');
    this.chosen.set(req, protocol);
    const ws = await new Promise<WebSocket>((resolve) => {
      this.wss.handleUpgrade(req, socket, head, resolve);
    });
    try {
      await this.accept(ws, id, protocol);
    } catch (err) {
      this.opts.log.warn({ err, charge_point: id }, 'charger connection could not be set up');
      ws.close(1011, 'internal error');
    }
  }

  private async accept(ws: WebSocket, id: string, protocol: ProtocolName): Promise<void> {
    const { actors, registry, log } = this.opts;
    const address = this.opts.address(id);
    const conn = new ChargerConnection(ws, {
      chargePointId: id,
      adapter: adapters[protocol],
      schemas: this.opts.schemas,
      log,
      callTimeoutMs: this.opts.callTimeoutMs,
      handleEvent: (event: ChargerEvent) => actors.ask<ChargerEventOutcome>(address, { type: 'event', protocol, event }),
    });
    this.newest.set(id, conn);
    let released = false;
    // the close handler needs the pin, which exists only once pin() resolved
    const held: { pin?: PinnedActor } = {};
    const release = async (): Promise<void> => {
      if (released || !held.pin) return;
      released = true;
      registry.delete(conn);
      this.pins.delete(conn);
      if (this.newest.get(id) === conn) this.newest.delete(id);
      await held.pin.release().catch((err: unknown) => log.warn({ err, charge_point: id }, 'pin release failed'));
      this.opts.onlineChanged(id, false, conn.connectionId);
    };
    ws.on('close', () => void release());
    // the newest connection wins: pinning ends any older activation, whose onDeactivate closes its socket
    const pinned = await actors.pin(address);
    held.pin = pinned;
    if (!conn.isOpen || this.stopping || this.newest.get(id) !== conn) {
      const superseded = this.newest.get(id) !== conn;
      await release();
      if (conn.isOpen) conn.close(superseded ? 4000 : 1012, superseded ? 'replaced by a newer connection' : 'service restart');
      return;
    }
    registry.set(conn);
    this.pins.set(conn, pinned);
    await actors.ask(address, { type: 'connected', protocol, connection: conn.connectionId });
    conn.open();
    this.opts.onlineChanged(id, true, conn.connectionId);
  }

  /** Shutdown, first step: refuse upgrades, close every charger with 1012 (service restart). */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.pinger) clearInterval(this.pinger);
    const conns = this.opts.registry.all();
    for (const conn of conns) conn.close(1012, 'service restart');
    await Promise.all(
      [...this.pins.entries()].map(async ([conn, pin]) => {
        this.opts.registry.delete(conn);
        await pin.release().catch(() => undefined);
      }),
    );
    this.pins.clear();
  }
}
