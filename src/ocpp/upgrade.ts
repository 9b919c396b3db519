import type { IncomingMessage, Server } from 'node:http';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * The HTTP side of an OCPP upgrade: which requests are ours, how a refusal is written, and how
 * long a connection may take to become either an HTTP request or a charger. Nothing here knows
 * about charge points beyond the shape of their URL.
 */

/** OCPP-J (1.6-J section 3.1.1, 2.0.1 part 4 section 3.2): the URL is <base>/<chargePointId>. */
const PATH = /^\/ocpp\/([^/?#]+)\/?(?:\?[^#]*)?$/;

export type UpgradeRoute = { t: 'charger'; id: string } | { t: 'refuse'; status: 400 | 404 };

/**
 * Where an upgrade request goes. `/ocpp/<id>` (a trailing slash and a query string are ignored:
 * some chargers append `?version=...`) names a charger; any other origin-form path is not served
 * (404); a request target that is not a path at all (`*`, absolute-form) is malformed (400).
 */
export function routeUpgrade(url: string | undefined): UpgradeRoute {
  if (!url?.startsWith('/')) return { t: 'refuse', status: 400 };
  const m = PATH.exec(url);
  if (!m?.[1]) return { t: 'refuse', status: 404 };
  try {
    return { t: 'charger', id: decodeURIComponent(m[1]) };
  } catch {
    // a broken percent-encoding cannot name any identity
    return { t: 'refuse', status: 404 };
  }
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/**
 * Answers an upgrade with an HTTP error and destroys the socket once the answer is flushed.
 * `end()` alone is not enough: the HTTP server allows half-open sockets, so a client that never
 * closes its side would hold the descriptor forever (docs/SECURITY.md; before, 50 requests exhausted 1,024).
 */
export function refuseUpgrade(socket: Duplex, status: number, headers: Record<string, string> = {}): void {
  if (socket.destroyed) return;
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nConnection: close\r\nContent-Length: 0\r\n${extra}\r\n`,
  );
}

export function basicCredentials(header: string | undefined): { user: string; password: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * The address a login attempt came from. Behind a trusted proxy (TRUST_PROXY=true) it is the
 * last X-Forwarded-For entry, the one the proxy itself appended: earlier entries are whatever
 * the client wrote, and trusting them would let one client pose as many addresses.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const direct = req.socket.remoteAddress ?? 'unknown';
  if (!trustProxy) return direct;
  const forwarded = req.headers['x-forwarded-for'];
  const last = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? '')).split(',').pop()?.trim();
  return last || direct;
}

/**
 * The address a failed login counts against (chargers' logins, and the HTTP surfaces'
 * authentications, src/gateway/auth-failures.ts): an IPv4 address as it is (an IPv4-mapped IPv6
 * one too, however written); an IPv6 one as its /64 (one client usually holds a whole /64, and each of its
 * addresses can be written several ways); a port a proxy wrote after it (`203.0.113.7:51000`,
 * `[2001:db8::5]:443`) left out; a forwarded entry that is no address at all as the peer's
 * address, so that a client reaching us past the proxy cannot fill the table with long made-up
 * keys (15,000-character entries grew a process by 143 MB).
 */
export function throttledAddress(address: string, peer: string | undefined): string {
  const plain = withoutPort(address.trim()).replace(/%.*$/, '');
  const kind = isIP(plain);
  if (kind === 4) return plain;
  if (kind === 6) {
    const groups = ipv6Groups(plain);
    const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
    if (mapped) return [groups[6] ?? 0, groups[7] ?? 0].flatMap((g) => [g >> 8, g & 0xff]).join('.');
    return `${groups
      .slice(0, 4)
      .map((g) => g.toString(16))
      .join(':')}::/64`;
  }
  return peer !== undefined && peer !== address ? throttledAddress(peer, undefined) : 'unknown';
}

/** `a.b.c.d:port` and `[v6]:port` (or `[v6]`) without the port and brackets; anything else as it is. */
function withoutPort(address: string): string {
  const v4 = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(address);
  if (v4?.[1]) return v4[1];
  const v6 = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  return v6?.[1] ?? address;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(ip: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  const text = dotted
    ? `${ip.slice(0, dotted.index)}${((Number(dotted[1]) << 8) | Number(dotted[2])).toString(16)}:${((Number(dotted[3]) << 8) | Number(dotted[4])).toString(16)}`
    : ip;
  const [head = '', tail] = text.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0');
  return [...left, ...zeros, ...right].map((g) => Number.parseInt(g, 16));
}

/** Seconds a refused charger should wait: 10-30 s with jitter, so a fleet does not return in lock-step. */
export function jitteredRetryAfterS(random: () => number = Math.random): number {
  return 10 + Math.floor(random() * 21);
}

/**
 * Every connection the HTTP server accepts gets a deadline: within `timeoutMs` it must become an
 * HTTP request (from then on the server's own header and keep-alive timeouts apply) or a completed
 * OCPP upgrade. A socket that says nothing, sends half a request, or whose upgrade stalls (a slow
 * password lookup included) is destroyed when the deadline passes.
 */
export class HandshakeDeadlines {
  constructor(private readonly timeoutMs: number) {}

  watch(server: Server): void {
    server.on('connection', (socket: Duplex) => {
      // a function of the module, not a closure: the listener stays for the socket's lifetime
      socket.on('close', clearDeadlineOnClose);
      this.arm(socket);
    });
    server.on('request', (req: IncomingMessage) => this.clear(req.socket));
  }

  /** (Re)starts the socket's deadline, e.g. when a keep-alive connection asks for an upgrade. */
  arm(socket: Duplex): void {
    this.clear(socket);
    const timer = setTimeout(() => socket.destroy(), this.timeoutMs);
    timer.unref();
    deadlineTimers.set(socket, timer);
  }

  clear(socket: Duplex): void {
    clearDeadline(socket);
  }
}

/** The armed deadline of each socket (a socket belongs to one server, so one map serves all). */
const deadlineTimers = new WeakMap<Duplex, NodeJS.Timeout>();

function clearDeadline(socket: Duplex): void {
  const timer = deadlineTimers.get(socket);
  if (timer === undefined) return;
  clearTimeout(timer);
  deadlineTimers.delete(socket);
}

function clearDeadlineOnClose(this: Duplex): void {
  clearDeadline(this);
}
