import type { IncomingMessage, ServerResponse } from 'node:http';
import { expect } from 'chai';
import { waitFor } from '../support/eventually.js';
import { aLocation, aLocation211, credentials211, credentials221 } from '../support/ocpi-builders.js';
import { ocpiModule } from '../../src/ocpi/module.js';
import { createLogger } from '../../src/logger.js';
import { API_KEY, OcpiApi, embeddedTarget, uniqueParty, type OcpiTarget } from '../support/ocpi-harness.js';
import { embeddedEnvironment, startPlatform } from '../support/platforms.js';
import { loopbackPartner, partnerServer, type PartnerServer } from '../support/ocpi-partners.js';

/**
 * Issue 7: every call to a partner goes through one client with a time limit, a size limit read
 * while streaming, no redirects and a destination policy. The partners here are real HTTP
 * servers on loopback that misbehave; the platform is a real embedded one.
 */

const TIMEOUT_MS = 1000;
const UNABLE = "Unable to use the client's API: partner unreachable:";

/** A handshake against `versionsUrl`: a new partner's POST /credentials with its Token A. */
async function handshake(
  api: OcpiApi,
  versionsUrl: string,
): Promise<{ status: number; code: unknown; message: string; ms: number }> {
  const party = uniqueParty();
  const { token } = await api.onboard(party, 'CPO');
  const started = Date.now();
  const res = await api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
    token,
    encoding: 'base64',
    body: credentials221(party, 'their-token', versionsUrl),
  });
  return {
    status: res.status,
    code: res.body.status_code,
    message: String(res.body.status_message),
    ms: Date.now() - started,
  };
}

describe('OCPI outbound calls: limits, redirects and the destination policy (real partner servers)', function () {
  this.timeout(60_000);
  let target: OcpiTarget;
  let api: OcpiApi;
  const partners: PartnerServer[] = [];

  async function rogue(
    handler: (req: IncomingMessage, res: ServerResponse) => void,
    host?: string,
  ): Promise<PartnerServer> {
    const p = await partnerServer(handler, host);
    partners.push(p);
    return p;
  }

  before(async () => {
    target = await embeddedTarget({ PARTNER_TIMEOUT_MS: String(TIMEOUT_MS), PARTNER_RESPONSE_LIMIT: '1mb' });
    api = new OcpiApi(target);
  });
  afterEach(async () => {
    await Promise.all(partners.splice(0).map((p) => p.close()));
  });
  after(async () => target.stop());

  it('stops reading a 64 MB reply at the limit, aborts the connection, and memory stays near the limit', async () => {
    const total = 64 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 0x20); // spaces: valid JSON whitespace, one buffer reused
    let written = 0;
    let aborted = false;
    const partner = await rogue((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.on('close', () => {
        aborted = !res.writableFinished;
      });
      const pump = (): void => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });

    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 2);
    const res = await handshake(api, `${partner.url}/versions`);
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);

    const growthMb = (peak - before) / 1024 / 1024;
    console.log(
      `      reply cut at ${(written / 1024 / 1024).toFixed(1)} MB written by the partner; RSS grew ${growthMb.toFixed(1)} MB (limit 1 MB)`,
    );
    // unbounded, the 64 MB were buffered, then decoded into a string: over 128 MB
    expect(growthMb).to.be.below(24);
    expect(written).to.be.below(total);
    await waitFor('the partner sees its socket aborted', async () => aborted, 5000, 20);
    expect(res).to.include({ status: 200, code: 3001, message: `${UNABLE} reply too large` });
  });

  it('refuses a Content-Length above the limit before reading the body', async () => {
    let aborted = false;
    const partner = await rogue((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(300 * 1024 * 1024) });
      res.write('{"status_code": 1000, "data": [');
      res.on('close', () => {
        aborted = !res.writableFinished;
      });
    });
    const res = await handshake(api, `${partner.url}/versions`);
    expect(res).to.include({ status: 200, code: 3001, message: `${UNABLE} reply too large` });
    await waitFor('the partner sees its socket aborted', async () => aborted, 5000, 20);
  });

  it('gives up within PARTNER_TIMEOUT_MS on a partner that never answers, and on one that trickles', async () => {
    const silent = await rogue(() => undefined);
    const trickles: NodeJS.Timeout[] = [];
    const trickling = await rogue((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"status_code": 1000, "data": [');
      const t = setInterval(() => res.write(' '), 50);
      trickles.push(t);
      res.on('close', () => clearInterval(t));
    });
    try {
      for (const partner of [silent, trickling]) {
        const res = await handshake(api, `${partner.url}/versions`);
        expect(res).to.include({ status: 200, code: 3001, message: `${UNABLE} timeout` });
        // generous margin for a loaded machine: the point is "about the limit", not "forever"
        expect(res.ms).to.be.below(TIMEOUT_MS + 3000);
      }
    } finally {
      for (const t of trickles) clearInterval(t);
    }
  });

  it('refuses a redirect without following it', async () => {
    const elsewhere = await loopbackPartner('their-token');
    try {
      const redirecting = await rogue((_req, res) => {
        res.writeHead(302, { Location: elsewhere.versionsUrl });
        res.end();
      });
      const res = await handshake(api, `${redirecting.url}/versions`);
      expect(res).to.include({ status: 200, code: 3001, message: `${UNABLE} redirect refused` });
      expect(elsewhere.seen).to.deep.equal([]);
    } finally {
      await elsewhere.close();
    }
  });

  it('does not echo what answered: an error page and a non-OCPI body give categories only', async () => {
    const partner = await rogue((req, res) => {
      if (req.url === '/error') {
        res.writeHead(500, 'Internal Secret Server', { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ status_code: 3000, status_message: 'db at 10.1.2.3 down' }));
      } else {
        res.writeHead(200, { Server: 'SecretDaemon/1.0' });
        res.end('SSH-2.0-OpenSSH_9.6 secret banner');
      }
    });
    const error = await handshake(api, `${partner.url}/error`);
    expect(error).to.include({ code: 3001, message: `${UNABLE} error answer` });
    const banner = await handshake(api, `${partner.url}/banner`);
    expect(banner).to.include({ code: 3001, message: `${UNABLE} not an OCPI envelope` });
  });

  it('refuses a pulled page nested 100,000 levels deep with 502 (it made storing the page throw: 500)', async () => {
    const party = uniqueParty();
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const location = JSON.stringify(
      aLocation({
        ...party,
        images: [{ url: 'https://img.test/a.png', category: 'OTHER', type: 'png', extra: 'DEEP' }],
      }),
    );
    let base = '';
    const partner = await rogue((req, res) => {
      const ok = (data: string): void => void res.end(`{"status_code": 1000, "data": ${data}}`);
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/versions') return ok(JSON.stringify([{ version: '2.2.1', url: `${base}/2.2.1` }]));
      if (req.url === '/2.2.1') {
        const endpoints = ['credentials', 'locations'].map((identifier) => ({
          identifier,
          role: 'SENDER',
          url: `${base}/2.2.1/${identifier}`,
        }));
        return ok(JSON.stringify({ version: '2.2.1', endpoints }));
      }
      if (req.url === '/2.2.1/credentials')
        return ok(JSON.stringify(credentials221(party, 'their-token-c', `${base}/versions`)));
      if (req.url === '/2.2.1/locations') return ok(`[${location.replace('"DEEP"', deep)}]`);
      res.statusCode = 404;
      res.end('{}');
    });
    base = partner.url;
    const { id } = await api.onboard(party, 'CPO');
    const registered = await api.request('POST', `/v1/partners/${id}/register`, {
      body: { versions_url: `${base}/versions`, token: 'their-token-a' },
    });
    expect(registered.status).to.equal(200);
    const pulled = await api.request('POST', `/v1/partners/${id}/pull-locations`, { body: {} });
    expect(pulled.status).to.equal(502);
    expect(JSON.stringify(pulled.body)).to.include('partner unreachable: reply too deep');
  });

  for (const version of ['2.1.1', '2.2.1'] as const)
    it(`pulls a ${version}-only CPO partner's locations page by page, with request ids and (2.2.1) routing headers`, async () => {
      const party = uniqueParty();
      let base = '';
      const locations = ['P-1', 'P-2', 'P-3'].map((id) =>
        version === '2.1.1' ? aLocation211({ id }) : aLocation({ id, ...party }),
      );
      const seen: Array<{ path: string; headers: IncomingMessage['headers'] }> = [];
      const partner = await rogue((req, res) => {
        const url = new URL(req.url ?? '/', 'http://x');
        seen.push({ path: url.pathname, headers: req.headers });
        const ok = (data: unknown, headers: Record<string, string> = {}): void => {
          res.writeHead(200, { 'Content-Type': 'application/json', ...headers });
          res.end(JSON.stringify({ status_code: 1000, timestamp: new Date().toISOString(), data }));
        };
        if (url.pathname === '/versions') return ok([{ version, url: `${base}/${version}` }]);
        if (url.pathname === `/${version}`)
          return ok({
            version,
            endpoints: ['credentials', 'locations'].map((identifier) => ({
              identifier,
              url: `${base}/${version}/${identifier}`,
              ...(version === '2.2.1' ? { role: 'SENDER' } : {}),
            })),
          });
        if (url.pathname === `/${version}/credentials` && req.method === 'POST')
          return ok(
            version === '2.1.1'
              ? credentials211(party, 'their-token-c', `${base}/versions`)
              : credentials221(party, 'their-token-c', `${base}/versions`),
          );
        if (url.pathname === `/${version}/locations`) {
          const offset = Number(url.searchParams.get('offset') ?? 0);
          const limit = Number(url.searchParams.get('limit') ?? 10);
          const next =
            offset + limit < locations.length
              ? `<${base}/${version}/locations?offset=${offset + limit}&limit=${limit}>; rel="next"`
              : undefined;
          return ok(locations.slice(offset, offset + limit), {
            'X-Total-Count': String(locations.length),
            'X-Limit': String(limit),
            ...(next ? { Link: next } : {}),
          });
        }
        res.statusCode = 404;
        res.end('{}');
      });
      base = partner.url;
      const { id } = await api.onboard(party, 'CPO');
      const registered = await api.request('POST', `/v1/partners/${id}/register`, {
        body: { versions_url: `${base}/versions`, token: 'their-token-a' },
      });
      expect(registered.status, JSON.stringify(registered.body)).to.equal(200);
      expect(registered.body).to.include({ version });
      const pulled = await api.request('POST', `/v1/partners/${id}/pull-locations`, { body: { limit: 2 } });
      expect(pulled.status, JSON.stringify(pulled.body)).to.equal(200);
      expect(pulled.body).to.include({ version, pages: 2, stored: 3, rejected: 0 });
      expect(pulled.body.location_ids).to.deep.equal(['P-1', 'P-2', 'P-3']);

      // every call has its own X-Request-ID; the two pages of the pull share one X-Correlation-ID
      const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
      for (const call of seen) {
        expect(call.headers['x-request-id'], call.path).to.match(uuid);
        expect(call.headers['x-correlation-id'], call.path).to.match(uuid);
      }
      expect(new Set(seen.map((c) => c.headers['x-request-id'])).size).to.equal(seen.length);
      const pages = seen.filter((c) => c.path.endsWith('/locations'));
      expect(pages).to.have.length(2);
      expect(pages[0]?.headers['x-correlation-id']).to.equal(pages[1]?.headers['x-correlation-id']);
      // routing headers: 2.2.1 functional modules only, never versions or credentials
      for (const call of seen) {
        const routed = version === '2.2.1' && call.path.endsWith('/locations');
        const expected = routed
          ? {
              'ocpi-from-country-code': 'NL',
              'ocpi-from-party-id': 'EVP',
              'ocpi-to-country-code': party.country_code,
              'ocpi-to-party-id': party.party_id,
            }
          : {};
        const got = Object.fromEntries(Object.entries(call.headers).filter(([k]) => k.startsWith('ocpi-')));
        expect(got, call.path).to.deep.equal(expected);
      }
    });

  it('answers 422 naming the token, before calling the partner, for a token that is no OCPI token (whitespace, non-ASCII)', async () => {
    const partner = await rogue((_req, res) => {
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end('{"status_code": 2001, "status_message": "Unauthorized"}');
    });
    const { id } = await api.onboard(uniqueParty(), 'CPO');
    for (const token of ['their\ntoken\u2603', 'a b']) {
      const res = await api.request('POST', `/v1/partners/${id}/register`, {
        body: { versions_url: `${partner.url}/versions`, token },
      });
      // was 502 after calling the partner (a token that cannot go raw into a 2.1.1 header; 'a b'
      // sent base64-encoded)
      expect(res.status, token).to.equal(422);
      expect(JSON.stringify(res.body), token).to.include('token');
    }
    expect(partner.requests).to.equal(0);
  });

  it('answers 422 naming versions_url for what is no http(s) URL, before calling anyone', async () => {
    const { id } = await api.onboard(uniqueParty(), 'CPO');
    for (const versions_url of [
      'not a url',
      'ftp://example.invalid/x',
      'http://',
      `http://a.example/${'x'.repeat(255)}`,
    ]) {
      const res = await api.request('POST', `/v1/partners/${id}/register`, { body: { versions_url, token: 't' } });
      // was 502 "partner unreachable": the operator was told the partner was down
      expect(res.status, versions_url).to.equal(422);
      expect(JSON.stringify(res.body), versions_url).to.include('versions_url');
    }
  });

  describe('PARTNER_URL_POLICY=public (the default)', () => {
    let strict: OcpiTarget;
    let strictApi: OcpiApi;

    before(async () => {
      strict = await embeddedTarget({ PARTNER_URL_POLICY: 'public', PARTNER_TIMEOUT_MS: String(TIMEOUT_MS) });
      strictApi = new OcpiApi(strict);
    });
    after(async () => strict.stop());

    it('refuses loopback, private, link-local and unspecified destinations without connecting, and says only that', async () => {
      // '::' accepts IPv4 too (dual stack): one server sees attempts at 127.0.0.1, ::1 and 0.0.0.0
      const local = await rogue((_req, res) => res.end('{"status_code": 1000, "data": []}'), '::');
      const p = local.port;
      const urls = [
        `http://127.0.0.1:${p}/versions`,
        `http://localhost:${p}/versions`,
        `http://[::1]:${p}/versions`,
        `http://0.0.0.0:${p}/versions`,
        `http://[::ffff:127.0.0.1]:${p}/versions`,
        `http://2130706433:${p}/versions`,
        `http://169.254.169.254/latest/meta-data/`,
        `http://10.0.0.1:${p}/versions`,
        `http://192.168.1.1:${p}/versions`,
        `http://100.64.0.1:${p}/versions`,
        `http://[fd00::1]:${p}/versions`,
        `file:///etc/passwd`,
        `gopher://127.0.0.1:${p}/`,
      ];
      const answers = [];
      for (const url of urls) answers.push({ url, ...(await handshake(strictApi, url)) });
      for (const a of answers) {
        expect(a, a.url).to.include({ status: 200, code: 3001, message: `${UNABLE} destination refused` });
      }
      expect(local.connections, 'connections seen by the local server').to.equal(0);
    });

    it('answers the operator 502 with the same category on the outbound handshake', async () => {
      const local = await rogue((_req, res) => res.end('{}'));
      const party = uniqueParty();
      const { id } = await strictApi.onboard(party, 'EMSP');
      const res = await strictApi.request('POST', `/v1/partners/${id}/register`, {
        body: { versions_url: `${local.url}/versions`, token: 'their-token-a' },
      });
      expect(res.status).to.equal(502);
      expect(JSON.stringify(res.body))
        .to.include('partner unreachable: destination refused')
        .and.not.include(String(local.port));
      expect(local.connections).to.equal(0);
    });
  });

  it('PARTNER_URL_POLICY=loopback allows 127.0.0.1 and still refuses private addresses', async () => {
    const partner = await loopbackPartner('their-token');
    try {
      const ok = await handshake(api, partner.versionsUrl);
      expect(ok.code).to.equal(1000);
      expect(partner.seen.length).to.be.above(0);
    } finally {
      await partner.close();
    }
    const res = await handshake(api, 'http://10.0.0.1/versions');
    expect(res).to.include({ code: 3001, message: `${UNABLE} destination refused` });
  });
});

describe('OCPI outbound calls: what our log keeps of a partner URL', function () {
  this.timeout(30_000);

  it("masks the user and password of a partner's versions URL in the log line of a refused call", async () => {
    const lines: string[] = [];
    const env = await embeddedEnvironment({ CSMS_API_KEY: API_KEY });
    const started = await startPlatform(env, [ocpiModule()], {
      log: createLogger('info', {}, { write: (s: string) => void lines.push(s) }),
    });
    try {
      const api = new OcpiApi({
        mode: 'embedded',
        urls: [started.platform.url],
        platform: started,
        partner: () => Promise.reject(new Error('no partner in this test')),
        stop: async () => undefined,
      });
      const party = uniqueParty();
      const created = await api.request('POST', '/v1/partners', { body: { ...party, role: 'EMSP' } });
      expect(created.status, JSON.stringify(created.body)).to.equal(201);
      // the partner registers with a versions URL that carries a user and password; the default
      // policy (public) refuses the private address before any connection
      const url = 'http://svc:S3cretPassw0rd@10.1.2.3/versions';
      const res = await api.request('POST', '/ocpi/cpo/2.2.1/credentials', {
        token: String(created.body.token),
        encoding: 'base64',
        body: credentials221(party, 'token-b-0123456789', url, 'EMSP'),
      });
      expect(res.body.status_code, JSON.stringify(res.body)).to.equal(3001);
      const logged = lines.filter((l) => l.includes('10.1.2.3'));
      expect(logged, 'a log line names the refused destination').to.not.deep.equal([]);
      for (const l of logged) expect(l).to.include('http://***@10.1.2.3/versions').and.not.include('S3cretPassw0rd');
    } finally {
      await started.stop();
      await env.cleanup();
    }
  });
});
