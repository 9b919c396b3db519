import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import nock from 'nock';

/**
 * A roaming partner's HTTP side as our platform sees it during discovery: a versions URL and
 * version details, answering only to the token it was given. `nockPartner` intercepts fetch in
 * this process (embedded mode); `loopbackPartner` is a real server, for platforms running in
 * other processes (cluster mode), which nock cannot reach.
 */
export interface FakePartner {
  versionsUrl: string;
  /** the token the partner expects us to present (its Token B / C) */
  token: string;
  /** Authorization headers seen, in order */
  seen: string[];
  close(): Promise<void>;
}

function envelope(data: unknown): string {
  return JSON.stringify({ status_code: 1000, status_message: 'Success', timestamp: new Date().toISOString(), data });
}

function details(base: string, version: string): unknown {
  const endpoints = [{ identifier: 'credentials', role: 'SENDER', url: `${base}/${version}/credentials` }];
  return { version, endpoints: version === '2.1.1' ? endpoints.map(({ identifier, url }) => ({ identifier, url })) : endpoints };
}

function accepts(header: string | undefined, token: string): boolean {
  return header === `Token ${token}` || header === `Token ${Buffer.from(token).toString('base64')}`;
}

let counter = 0;

export function nockPartner(token: string, versions: string[] = ['2.1.1', '2.2.1']): FakePartner {
  counter += 1;
  const origin = `http://partner-${counter}.test`;
  const base = `${origin}/ocpi`;
  const seen: string[] = [];
  const scope = nock(origin)
    .persist()
    .get(/^\/ocpi\/.*/)
    .reply(function reply(uri) {
      const auth = String(this.req.headers.authorization ?? '');
      seen.push(auth);
      if (!accepts(auth, token)) return [401, JSON.stringify({ status_code: 2001, status_message: 'Unauthorized' })];
      if (uri === '/ocpi/versions') return [200, envelope(versions.map((v) => ({ version: v, url: `${base}/${v}` })))];
      const v = uri.replace('/ocpi/', '');
      if (versions.includes(v)) return [200, envelope(details(base, v))];
      return [404, '{}'];
    });
  return {
    versionsUrl: `${base}/versions`,
    token,
    seen,
    // the suite calls nock.cleanAll() after each test
    close: async () => {
      scope.persist(false);
    },
  };
}

export async function loopbackPartner(token: string, versions: string[] = ['2.1.1', '2.2.1']): Promise<FakePartner> {
  const seen: string[] = [];
  let base = '';
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
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
      res.end(envelope(details(base, v)));
      return;
    }
    res.statusCode = 404;
    res.end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/ocpi`;
  return {
    versionsUrl: `${base}/versions`,
    token,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
