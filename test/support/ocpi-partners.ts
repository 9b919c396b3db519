import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A roaming partner's HTTP side as our platform sees it during discovery: a versions URL and
 * version details, answering only to the token it was given. Real servers on loopback (the
 * targets allow loopback destinations with PARTNER_URL_POLICY=loopback): the platform's one
 * outbound client, its limits and its destination check run as they do against a real partner.
 */
export interface FakePartner {
  versionsUrl: string;
  /** the token the partner expects us to present (its Token B / C) */
  token: string;
  /** Authorization headers seen, in order */
  seen: string[];
  /** requests to the module endpoints of `options.modules`, in order */
  received: ReceivedRequest[];
  close(): Promise<void>;
}

export interface ReceivedRequest {
  method: string;
  /** the path below the version, e.g. `/commands/START_SESSION` */
  path: string;
  version: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

/** Module endpoints a fake partner lists besides credentials, and how it answers them. */
export interface FakePartnerOptions {
  modules?: Array<{ identifier: string; role: 'SENDER' | 'RECEIVER' }>;
  /** the envelope `data` to answer a module request with (default null) */
  answer?: (req: ReceivedRequest) => unknown;
  /** the `Link` header of a module answer, if any (a Sender's next page) */
  link?: (req: ReceivedRequest) => string | undefined;
  /** the HTTP status of a module answer, with status_code 3000 (default 200, 1000) */
  failWith?: (req: ReceivedRequest) => number | undefined;
}

/** Any HTTP server posing as a partner, on port 0; counts what reaches it. */
export interface PartnerServer {
  /** http://127.0.0.1:<port> */
  url: string;
  port: number;
  /** TCP connections accepted */
  connections: number;
  /** HTTP requests received */
  requests: number;
  close(): Promise<void>;
}

/** `host` '::' listens on IPv6 and IPv4 (dual stack): attempts at 127.0.0.1 and ::1 both show. */
export async function partnerServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  host = '127.0.0.1',
): Promise<PartnerServer> {
  const server: Server = createServer((req, res) => {
    partner.requests++;
    handler(req, res);
  });
  server.on('connection', (socket) => {
    partner.connections++;
    // the platform aborts replies it refuses: a reset is expected here
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, host, () => r()));
  const port = (server.address() as AddressInfo).port;
  const partner: PartnerServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    connections: 0,
    requests: 0,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
  return partner;
}

function envelope(data: unknown): string {
  return JSON.stringify({ status_code: 1000, status_message: 'Success', timestamp: new Date().toISOString(), data });
}

function details(base: string, version: string, options: FakePartnerOptions): unknown {
  const endpoints = [{ identifier: 'credentials', role: 'SENDER', url: `${base}/${version}/credentials` }];
  for (const m of options.modules ?? [])
    endpoints.push({ identifier: m.identifier, role: m.role, url: `${base}/${version}/${m.identifier}` });
  return {
    version,
    endpoints: version === '2.1.1' ? endpoints.map(({ identifier, url }) => ({ identifier, url })) : endpoints,
  };
}

function accepts(header: string | undefined, token: string): boolean {
  return header === `Token ${token}` || header === `Token ${Buffer.from(token).toString('base64')}`;
}

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as unknown) : undefined;
}

export async function loopbackPartner(
  token: string,
  versions: string[] = ['2.1.1', '2.2.1'],
  options: FakePartnerOptions = {},
): Promise<FakePartner> {
  const seen: string[] = [];
  const received: ReceivedRequest[] = [];
  let base = '';
  const server = await partnerServer((req, res) => {
    const auth = req.headers.authorization ?? '';
    seen.push(auth);
    res.setHeader('Content-Type', 'application/json');
    if (!accepts(auth, token)) {
      res.statusCode = 401;
      res.end(JSON.stringify({ status_code: 2001, status_message: 'Unauthorized' }));
      return;
    }
    const path = req.url ?? '';
    if (path === '/ocpi/versions') {
      res.end(envelope(versions.map((v) => ({ version: v, url: `${base}/${v}` }))));
      return;
    }
    const v = path.replace('/ocpi/', '');
    if (versions.includes(v)) {
      res.end(envelope(details(base, v, options)));
      return;
    }
    const module = /^\/ocpi\/([^/]+)(\/([^/?]+).*)$/.exec(path);
    if (module?.[1] && module[2] && options.modules?.some((m) => m.identifier === module[3])) {
      const [, version, below] = module;
      void bodyOf(req).then((body) => {
        const one: ReceivedRequest = { method: req.method ?? '', path: below, version, headers: req.headers, body };
        received.push(one);
        const link = options.link?.(one);
        if (link) res.setHeader('Link', link);
        const failed = options.failWith?.(one);
        if (failed !== undefined) {
          res.statusCode = failed;
          res.end(
            JSON.stringify({ status_code: 3000, status_message: 'failing', timestamp: new Date().toISOString() }),
          );
          return;
        }
        res.end(envelope(options.answer?.(one) ?? null));
      });
      return;
    }
    res.statusCode = 404;
    res.end('{}');
  });
  base = `${server.url}/ocpi`;
  return { versionsUrl: `${base}/versions`, token, seen, received, close: () => server.close() };
}
