import { request as httpRequest } from 'node:http';
import { createConnection, type Socket } from 'node:net';
import { expect } from 'chai';
import nock from 'nock';
import { platformModules } from '../../src/modules.js';
import { API_KEY, OcpiApi, base64, type Answer, type RegisteredPartner } from '../support/ocpi-harness.js';
import { aLocation } from '../support/ocpi-builders.js';
import { loopbackPartner, type FakePartner } from '../support/ocpi-partners.js';
import {
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../support/platforms.js';

/**
 * Issue 7, the gateway's part: body depth, path ids and query numbers, one error shape per
 * surface, forwarded headers, security headers and /metrics. Each `it` names the finding it
 * covers; before the fix each of them failed (500s, the wrong shape, links to another host).
 */

interface Started {
  env: TestEnvironment;
  p: StartedPlatform;
}

async function start(extra: Record<string, string>): Promise<Started> {
  const env = await embeddedEnvironment({ CSMS_API_KEY: API_KEY, ...extra });
  return { env, p: await startPlatform(env, platformModules()) };
}

async function stop(s: Started | undefined): Promise<void> {
  await s?.p.stop();
  await s?.env.cleanup();
}

function isOcpiEnvelope(a: Answer, statusCode: number): void {
  expect(a.body, JSON.stringify(a.body)).to.include({ status_code: statusCode });
  expect(a.body.status_message).to.be.a('string');
  expect(a.body.timestamp).to.be.a('string');
  expect(a.body).to.not.have.property('error');
}

/** A request with headers fetch refuses to send (Host), on a plain socket. */
function rawGet(
  url: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** the partners' servers on loopback, closed after the suite */
const partners: FakePartner[] = [];
function remember(partner: FakePartner): FakePartner {
  partners.push(partner);
  return partner;
}

describe('gateway hardening (issue 7)', () => {
  let main: Started;
  let api: OcpiApi;
  let cpo: RegisteredPartner;
  let emsp: RegisteredPartner;

  before(async () => {
    main = await start({ PARTNER_URL_POLICY: 'loopback', HTTP_REQUEST_TIMEOUT_MS: '3000' });
    api = new OcpiApi({
      mode: 'embedded',
      urls: [main.p.platform.url],
      platform: main.p,
      partner: async (token, versions) => remember(await loopbackPartner(token, versions)),
      stop: async () => undefined,
    });
    cpo = await api.register('CPO');
    emsp = await api.register('EMSP');
  });
  after(async () => {
    nock.cleanAll();
    await Promise.all(partners.splice(0).map((x) => x.close()));
    await stop(main);
  });

  const cpoLocation = (id: string) =>
    `/ocpi/emsp/2.2.1/locations/${cpo.party.country_code}/${cpo.party.party_id}/${id}`;

  it('refuses a body nested 5,000 levels deep with a 422 on /ocpi and on /v1, not a 500', async () => {
    const deep = '['.repeat(5000) + ']'.repeat(5000);
    const ocpi = await api.request('PUT', cpoLocation('LOC-DEEP'), {
      token: cpo.token,
      encoding: 'base64',
      rawBody: deep,
    });
    expect(ocpi.status).to.equal(422);
    expect((ocpi.body.detail as Array<{ type: string }>)[0]?.type).to.equal('json_too_deep');
    const v1 = await api.request('POST', '/v1/charge-points', {
      rawBody: `{"id":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}`,
    });
    expect(v1.status).to.equal(422);
    expect((v1.body.detail as Array<{ type: string; ctx: { max_depth: number } }>)[0]).to.deep.include({
      type: 'json_too_deep',
      ctx: { max_depth: 64 },
    });
    // brackets inside strings are text, not nesting
    const text = await api.request('POST', '/v1/charge-points', { body: { id: '['.repeat(200), protocol: 'ocpp1.6' } });
    expect(text.status).to.equal(422);
    expect((text.body.detail as Array<{ type: string }>)[0]?.type).to.equal('string_pattern_mismatch');
  });

  it('refuses a NUL byte or odd characters in a path id or a query value, and huge offsets, with a 4xx in the shape of the surface', async () => {
    for (const id of ['a%00b', '%E2%80%AE', 'x'.repeat(37)]) {
      const res = await api.request('PATCH', cpoLocation(id), {
        token: cpo.token,
        encoding: 'base64',
        body: { last_updated: new Date().toISOString() },
      });
      expect(res.status, id).to.equal(422);
      expect((res.body.detail as Array<{ loc: unknown[] }>)[0]?.loc).to.deep.equal(['path', 'location_id']);
    }
    const cp = await api.request('GET', `/v1/charge-points/CP%00-1`);
    expect(cp.status).to.equal(422);
    const huge = '99999999999999999999999';
    const ocpiList = await api.request('GET', `/ocpi/2.2.1/locations?offset=${huge}`, {
      token: emsp.token,
      encoding: 'base64',
    });
    expect(ocpiList.status).to.equal(422);
    expect((ocpiList.body.detail as Array<{ loc: unknown[] }>)[0]?.loc).to.deep.equal(['query', 'offset']);
    for (const path of [
      `/v1/sessions?offset=${huge}`,
      `/v1/charge-points?offset=${huge}`,
      '/v1/sessions?limit=1e400',
      '/v1/sessions?charge_point_id=%00',
      // a number that does not read as one is refused, not read loosely (limit=1.5 served a page of 1)
      '/v1/sessions?limit=1.5',
      '/v1/charge-points?offset=true',
      '/v1/charge-points?limit=0x10',
      '/v1/charge-points?online=0',
    ]) {
      expect((await api.request('GET', path)).status, path).to.equal(422);
    }
    for (const query of ['limit=1.5', 'limit=%20%205', 'offset=0x10']) {
      const res = await api.request('GET', `/ocpi/2.2.1/locations?${query}`, { token: emsp.token, encoding: 'base64' });
      expect(res.status, query).to.equal(422);
    }
  });

  it('refuses a control character or a lone surrogate in a body string with a 422 at that string; tabs, line breaks and escaped emoji pass', async () => {
    const party = { country_code: cpo.party.country_code, party_id: cpo.party.party_id };
    const put = (id: string, over: Record<string, unknown>) =>
      api.request('PUT', cpoLocation(id), {
        token: cpo.token,
        encoding: 'base64',
        body: aLocation({ ...party, id, ...over }),
      });
    const nul = await put('LOC-NUL', { name: 'Station\u0000A' });
    expect(nul.status).to.equal(422);
    expect((nul.body.detail as Array<{ loc: unknown[]; type: string }>)[0]).to.deep.include({
      loc: ['body', 'name'],
      type: 'string_pattern_mismatch',
    });
    const lone = await put('LOC-SURROGATE', { directions: [{ language: 'en', text: 'left \ud800 then right' }] });
    expect(lone.status).to.equal(422);
    expect((lone.body.detail as Array<{ loc: unknown[] }>)[0]?.loc).to.deep.equal(['body', 'directions', 0, 'text']);
    // nothing of either was stored
    const stored = await api.request('GET', cpoLocation('LOC-NUL'), { token: cpo.token, encoding: 'base64' });
    expect(stored.body.status_code).to.not.equal(1000);
    // a key is a string too; the answer names it
    const key = await api.request('POST', '/v1/charge-points/CP-NONE/remote-start', {
      rawBody: '{"id_tag":"TAG","\\u0007":1}',
    });
    expect(key.status).to.equal(422);
    // an operator's id tag with a NUL never reaches a charger
    const tag = await api.request('POST', '/v1/charge-points/CP-NONE/remote-start', {
      rawBody: '{"id_tag":"AB\\u0000C"}',
    });
    expect(tag.status).to.equal(422);
    expect((tag.body.detail as Array<{ loc: unknown[] }>)[0]?.loc).to.deep.equal(['body', 'id_tag']);
    // what is fine: a tab and a line break (common in partners' texts), an emoji written as an escaped pair,
    // and a backslash followed by "u0000" as plain text
    const fine = await put('LOC-FINE', {
      name: 'Station\t\ud83d\ude00 \\u0000',
      directions: [{ language: 'en', text: 'left,\nthen right' }],
    });
    expect(fine.body.status_code, JSON.stringify(fine.body)).to.equal(1000);
    const back = await api.request('GET', cpoLocation('LOC-FINE'), { token: cpo.token, encoding: 'base64' });
    expect((back.body.data as { name: string }).name).to.equal('Station\t\u{1f600} \\u0000');
  });

  it('answers unknown paths, wrong methods and too large bodies on /ocpi with an OCPI envelope (2000), a 405 with Allow', async () => {
    const unknown = await api.request('GET', '/ocpi/emsp/2.2.1/nothing-here', { token: cpo.token, encoding: 'base64' });
    expect(unknown.status).to.equal(404);
    isOcpiEnvelope(unknown, 2000);
    const wrong = await api.request('DELETE', cpoLocation('LOC-1'), { token: cpo.token, encoding: 'base64' });
    expect(wrong.status).to.equal(405);
    isOcpiEnvelope(wrong, 2000);
    expect(wrong.headers.get('allow')).to.equal('GET, HEAD, PUT, PATCH');
    const odd = await fetch(`${main.p.platform.url}/ocpi/cpo/versions`, { method: 'PROPFIND' });
    expect(odd.status).to.equal(405);
    expect(odd.headers.get('allow')).to.equal('GET, HEAD');
    const big = await api.request('PUT', cpoLocation('LOC-BIG'), {
      token: cpo.token,
      encoding: 'base64',
      body: { name: 'x'.repeat(1024 * 1024 + 10) },
    });
    expect(big.status).to.equal(413);
    isOcpiEnvelope(big, 2000);
    const bad = await api.request('GET', '/ocpi/emsp/2.1.1/tokens', { token: 'nobody' });
    expect(bad.status).to.equal(401);
    isOcpiEnvelope(bad, 2000);
  });

  it('answers /v1 errors in the /v1 shape, including an unknown OCPI location behind /v1', async () => {
    const missing = await api.request('PATCH', '/v1/ocpi/locations/NOT-THERE', {
      body: { name: 'renamed', last_updated: new Date().toISOString() },
    });
    expect(missing.status).to.equal(404);
    expect(missing.body).to.not.have.property('status_code');
    expect(missing.body.error).to.include({ code: 'not_found' });
    expect(missing.body.request_id).to.be.a('string');
    const wrong = await api.request('DELETE', '/v1/charge-points');
    expect(wrong.status).to.equal(405);
    expect(wrong.headers.get('allow')).to.equal('GET, HEAD, POST');
    expect(wrong.body.error).to.include({ code: 'method_not_allowed' });
    const options = await fetch(`${main.p.platform.url}/v1/charge-points`, { method: 'OPTIONS' });
    expect(options.status).to.equal(204);
    expect(options.headers.get('allow')).to.equal('GET, HEAD, POST');
  });

  it('builds links from the Host header, not from X-Forwarded-Host, when TRUST_PROXY is off', async () => {
    const url = main.p.platform.url;
    const forwarded = { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https' };
    const created = await fetch(`${url}/v1/charge-points`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${API_KEY}`, 'Content-Type': 'application/json', ...forwarded },
      body: JSON.stringify({ protocol: 'ocpp1.6' }),
    });
    const host = new URL(url).host;
    expect(((await created.json()) as { ocpp_url: string }).ocpp_url).to.match(new RegExp(`^ws://${host}/ocpp/`));
    await api.request('POST', '/v1/charge-points', { body: { protocol: 'ocpp1.6' } });
    const list = await fetch(`${url}/v1/charge-points?limit=1`, {
      headers: { Authorization: `Bearer ${API_KEY}`, ...forwarded },
    });
    expect(list.headers.get('link')).to.match(new RegExp(`^<http://${host}/v1/charge-points\\?`));
    const versions = await fetch(`${url}/ocpi/2.2.1/versions`, {
      headers: { Authorization: `Token ${base64(emsp.token)}`, ...forwarded },
    });
    expect(JSON.stringify(await versions.json()))
      .to.contain(`http://${host}/ocpi/2.2.1/versions/2.2.1`)
      .and.not.contain('evil.example');
    // a Host that is no host name cannot end the Link early: the configured origin is used
    const odd = await rawGet(url, '/v1/charge-points?limit=1', {
      Authorization: `Bearer ${API_KEY}`,
      Host: 'a>; rel="next", <http://evil.example',
    });
    expect(odd.status).to.equal(200);
    expect(String(odd.headers.link))
      .to.match(/^<http:\/\/localhost:\d+\/v1\/charge-points\?/)
      .and.not.contain('evil');
  });

  /**
   * Sends `head` on a raw socket, then a byte of body every 200 ms, and answers what came back and
   * after how long the server closed the socket (-1: still open after `waitMs`).
   */
  async function trickled(head: string, chunk: string, waitMs: number): Promise<{ answer: string; ms: number }> {
    const { port } = new URL(main.p.platform.url);
    const socket = createConnection({ host: '127.0.0.1', port: Number(port) });
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => (answer += c));
    socket.on('error', () => undefined);
    const t0 = Date.now();
    const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - t0)));
    socket.write(head);
    const trickle = setInterval(() => socket.write(chunk), 200);
    const ms = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), waitMs))]);
    clearInterval(trickle);
    socket.destroy();
    return { answer, ms };
  }

  it('ends the connection of a request answered before its body was read, instead of reading a trickled body for minutes', async () => {
    // no credentials, a chunked body whose first byte comes and whose end never does
    for (const path of ['/v1/charge-points', '/ocpi/2.2.1/cdrs']) {
      const { answer, ms } = await trickled(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n`,
        '1\r\n \r\n',
        5000,
      );
      expect(answer, path).to.match(/^HTTP\/1\.1 401 /);
      expect(answer, path).to.match(/\r\nconnection: close\r\n/i);
      expect(ms, `${path}: closed after (ms; -1: still open after 5 s)`).to.be.within(0, 5000);
    }
    // routes that need no credentials and read no body, answered 200 while a declared body trickles:
    // any client could hold connections this way until the process ran out of file descriptors
    for (const path of ['/healthz', '/ocpi/2.2.1/versions']) {
      const { answer, ms } = await trickled(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 500000\r\n\r\n{`,
        ' ',
        5000,
      );
      expect(answer, path).to.match(/^HTTP\/1\.1 200 /);
      expect(answer, path).to.match(/\r\nconnection: close\r\n/i);
      expect(ms, `${path}: closed after (ms; -1: still open after 5 s)`).to.be.within(0, 5000);
    }
    // a request whose body was read keeps its connection for the next one
    const kept = await rawGet(main.p.platform.url, '/v1/charge-points', {
      Authorization: 'Bearer wrong-wrong-wrong-wrong',
    });
    expect(kept.status).to.equal(401);
    expect(kept.headers.connection).to.not.equal('close');
  });

  it('answers Expect: 100-continue with 413 and no invitation for a declared body over BODY_LIMIT; invites one within it', async () => {
    const { port } = new URL(main.p.platform.url);
    const ask = async (length: number): Promise<string> => {
      const socket = createConnection({ host: '127.0.0.1', port: Number(port) });
      let answer = '';
      socket.setEncoding('utf8');
      socket.on('error', () => undefined);
      const got = new Promise<string>((resolve) => {
        socket.on('data', (c: string) => {
          answer += c;
          // the first status line is what we look at
          if (answer.includes('\r\n')) resolve(answer);
        });
        socket.on('close', () => resolve(answer));
      });
      socket.write(
        `POST /v1/charge-points HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${API_KEY}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`,
      );
      const first = await got;
      socket.destroy();
      return first.split('\r\n')[0] ?? '';
    };
    // was `HTTP/1.1 100 Continue`, then the 413
    expect(await ask(99_999_999_999)).to.equal('HTTP/1.1 413 Payload Too Large');
    expect(await ask(20)).to.equal('HTTP/1.1 100 Continue');
  });

  it('answers 408 and closes a request whose body is still trickling after HTTP_REQUEST_TIMEOUT_MS', async () => {
    // with the key, so the body is read: only the deadline ends it (3 s in this suite; 30 s by default)
    const { answer, ms } = await trickled(
      `POST /v1/charge-points HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${API_KEY}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 500000\r\n\r\n{',
      ' ',
      12_000,
    );
    expect(answer).to.match(/^HTTP\/1\.1 408 /);
    expect(ms, 'closed after (ms; -1: still open after 12 s)').to.be.within(2500, 12_000);
  });

  it("serves /openapi.json and the docs' files with an ETag (304 when the client holds them), one copy in memory for every client that does not read", async () => {
    const url = main.p.platform.url;
    for (const path of ['/openapi.json', '/docs/swagger-ui-bundle.js', '/docs/', '/dashboard/console.js']) {
      const first = await fetch(`${url}${path}`);
      const etag = first.headers.get('etag');
      expect(etag, path).to.match(/^"[\w-]+"$/);
      const bytes = Buffer.from(await first.arrayBuffer());
      const again = await fetch(`${url}${path}`);
      expect(Buffer.from(await again.arrayBuffer()).equals(bytes), path).to.equal(true);
      const held = await fetch(`${url}${path}`, { headers: { 'If-None-Match': `W/${etag}, "other"` } });
      expect(held.status, path).to.equal(304);
      expect(await held.text(), path).to.equal('');
    }
    // 200 connections that ask for the 1.7 MB bundle three times each (pipelined) and never read:
    // each answer was a copy of its own (1,000 such connections held 660 MB, and /healthz waited 15 s)
    const before = process.memoryUsage().arrayBuffers;
    const { port } = new URL(url);
    const sockets = await Promise.all(
      Array.from(
        { length: 200 },
        () =>
          new Promise<Socket>((resolve, reject) => {
            const socket = createConnection({ host: '127.0.0.1', port: Number(port) }, () => {
              socket.pause();
              socket.write('GET /docs/swagger-ui-bundle.js HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'.repeat(3));
              resolve(socket);
            });
            socket.on('error', reject);
          }),
      ),
    );
    try {
      await new Promise((r) => setTimeout(r, 1500));
      const grown = process.memoryUsage().arrayBuffers - before;
      expect(grown, `buffers grew by ${Math.round(grown / 2 ** 20)} MiB`).to.be.below(64 * 2 ** 20);
      expect((await fetch(`${url}/healthz`)).status).to.equal(200);
    } finally {
      for (const s of sockets) s.destroy();
    }
  });

  it('answers a client that pipelines a few requests and reads; ends a connection that piles up requests it never reads the answers of', async () => {
    const { port } = new URL(main.p.platform.url);
    const open = () =>
      new Promise<Socket>((resolve, reject) => {
        const socket = createConnection({ host: '127.0.0.1', port: Number(port) }, () => resolve(socket));
        socket.on('error', reject);
      });
    const request = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    // ten at once, read: ten answers, and the connection stays
    const reader = await open();
    let read = '';
    reader.on('data', (chunk: Buffer) => (read += chunk.toString()));
    reader.write(request.repeat(10));
    await new Promise((r) => setTimeout(r, 500));
    expect(read.match(/HTTP\/1\.1 200 /g)).to.have.length(10);
    expect(reader.destroyed).to.equal(false);
    reader.destroy();
    // 100 connections of 1,000 that never read: each is ended, the process stays small and answers
    // (300 such connections grew a process to 2.6 GB and held a charger's Heartbeat 29 s)
    const before = process.memoryUsage().rss;
    const flooding = await Promise.all(Array.from({ length: 100 }, () => open()));
    const closed = flooding.map(
      (socket) =>
        new Promise<void>((resolve) => {
          socket.removeAllListeners('error');
          socket.on('error', () => undefined);
          socket.once('close', () => resolve());
          socket.pause();
          socket.write(request.repeat(1000));
        }),
    );
    try {
      await Promise.race([Promise.all(closed), new Promise((r) => setTimeout(r, 10_000))]);
      expect(
        flooding.filter((s) => !s.destroyed),
        'connections still open after 10 s',
      ).to.have.length(0);
      const grown = process.memoryUsage().rss - before;
      expect(grown, `the process grew by ${Math.round(grown / 2 ** 20)} MiB`).to.be.below(200 * 2 ** 20);
      expect((await fetch(`${main.p.platform.url}/healthz`)).status).to.equal(200);
    } finally {
      for (const s of flooding) s.destroy();
    }
  });

  it('sends nosniff on every answer, errors included', async () => {
    for (const path of ['/healthz', '/nowhere', '/ocpi/nowhere', '/v1/charge-points']) {
      const res = await fetch(`${main.p.platform.url}${path}`);
      expect(res.headers.get('x-content-type-options'), path).to.equal('nosniff');
    }
  });

  describe('behind a proxy (TRUST_PROXY=true), /metrics with METRICS_TOKEN', () => {
    let proxied: Started;
    before(async () => {
      proxied = await start({ TRUST_PROXY: 'true', METRICS_TOKEN: 'metrics-token-0123456789' });
    });
    after(() => stop(proxied));

    it('builds links from X-Forwarded-Proto and -Host', async () => {
      const created = await fetch(`${proxied.p.platform.url}/v1/charge-points`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${API_KEY}`,
          'Content-Type': 'application/json',
          'X-Forwarded-Host': 'csms.example.com',
          'X-Forwarded-Proto': 'https',
        },
        body: JSON.stringify({ protocol: 'ocpp2.0.1' }),
      });
      expect(((await created.json()) as { ocpp_url: string }).ocpp_url).to.match(/^wss:\/\/csms\.example\.com\/ocpp\//);
    });

    it('answers /metrics only to the Bearer METRICS_TOKEN; /healthz stays open', async () => {
      const url = proxied.p.platform.url;
      const none = await fetch(`${url}/metrics`);
      expect(none.status).to.equal(401);
      expect(none.headers.get('www-authenticate')).to.contain('Bearer');
      expect(
        (await fetch(`${url}/metrics`, { headers: { Authorization: 'Bearer wrong-token-0123456789' } })).status,
      ).to.equal(401);
      const ok = await fetch(`${url}/metrics`, { headers: { Authorization: 'Bearer metrics-token-0123456789' } });
      expect(ok.status).to.equal(200);
      expect(await ok.text()).to.contain('http_request_duration_seconds');
      expect((await fetch(`${url}/healthz`)).status).to.equal(200);
    });
  });

  describe('guessing credentials (HTTP_AUTH_FAILURES=3, behind a proxy)', () => {
    let guarded: Started;
    before(async () => {
      guarded = await start({
        TRUST_PROXY: 'true',
        HTTP_AUTH_FAILURES: '3',
        PARTNER_URL_POLICY: 'loopback',
        METRICS_TOKEN: 'metrics-token-0123456789',
      });
    });
    after(() => stop(guarded));

    const from = (address: string, authorization: string, path = '/v1/charge-points') =>
      fetch(`${guarded.p.platform.url}${path}`, {
        headers: { Authorization: authorization, 'X-Forwarded-For': address },
      });
    const good = `Bearer ${API_KEY}`;
    const guess = (n: number) => `Bearer guess-${n}-0123456789abcdef`;

    // first: the onboarding below comes from the peer's address, which a later test refuses
    it("serves a partner's token this process has seen from an address refused for another client's failures; made-up and revoked ones wait", async () => {
      const ocpi = new OcpiApi({
        mode: 'embedded',
        urls: [guarded.p.platform.url],
        platform: guarded.p,
        partner: async (token, versions) => remember(await loopbackPartner(token, versions)),
        stop: async () => undefined,
      });
      const partner = await ocpi.register('EMSP');
      const path = '/ocpi/cpo/2.2.1/locations';
      const its = `Token ${base64(partner.token)}`;
      expect((await from('203.0.113.50', its, path)).status).to.equal(200);
      // another client behind the same address (a hub, a NAT) keeps sending an old token
      for (let n = 0; n < 3; n++)
        expect((await from('203.0.113.50', `Token stale-${n}-0123456789`, path)).status).to.equal(401);
      expect((await from('203.0.113.50', 'Token stale-x-0123456789', path)).status).to.equal(429);
      // the partner's token is checked and answered: it was 429 with the others for the back-off
      expect((await from('203.0.113.50', its, path)).status).to.equal(200);
      expect((await from('203.0.113.50', 'Token stale-y-0123456789', path)).status).to.equal(429);
      // the /v1 key is one that is guessed: its back-off holds the right key too (the first test)

      // unregistered, the token is refused once, checked, and then waits with the rest
      const gone = await fetch(`${guarded.p.platform.url}/ocpi/cpo/2.2.1/credentials`, {
        method: 'DELETE',
        headers: { Authorization: its, 'X-Forwarded-For': '203.0.113.51' },
      });
      expect(gone.status).to.equal(200);
      expect((await from('203.0.113.50', its, path)).status).to.equal(401);
      expect((await from('203.0.113.50', its, path)).status).to.equal(429);
    });

    it('refuses an address after three wrong API keys in a row, with Retry-After, even its right key; others go on', async () => {
      for (let n = 0; n < 3; n++) expect((await from('203.0.113.7', guess(n))).status).to.equal(401);
      const refused = await from('203.0.113.7', good);
      expect(refused.status).to.equal(429);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 300);
      expect(((await refused.json()) as { error: { code: string } }).error.code).to.equal('too_many_failures');
      // a first entry the client wrote itself changes nothing: the proxy's (last) one counts
      expect((await from('198.51.100.1, 203.0.113.7', good)).status).to.equal(429);
      // another address, and the OCPI surface of the same address, are not held back
      expect((await from('203.0.113.8', good)).status).to.equal(200);
      const ocpi = await from('203.0.113.7', 'Token nope-0123456789', '/ocpi/cpo/2.2.1/locations');
      expect(ocpi.status).to.equal(401);

      // after the back-off the right key is answered; it takes one failure off the count, not all
      // of them (a guesser holding one real credential cleared every failure with it)
      await new Promise((r) => setTimeout(r, Number(refused.headers.get('retry-after')) * 1000 + 100));
      expect((await from('203.0.113.7', good)).status).to.equal(200);
      expect((await from('203.0.113.7', guess(9))).status).to.equal(401);
      expect((await from('203.0.113.7', good)).status).to.equal(429);
    });

    it('does not count requests without credentials; counts an IPv6 /64 as one address, and a forwarded entry that is no address as the peer', async () => {
      for (let n = 0; n < 5; n++)
        expect(
          (
            await fetch(`${guarded.p.platform.url}/v1/charge-points`, {
              headers: { 'X-Forwarded-For': '203.0.113.30' },
            })
          ).status,
        ).to.equal(401);
      expect((await from('203.0.113.30', good)).status).to.equal(200);
      // three addresses of one /64, written three ways
      for (const address of ['2001:db8:1:2::1', '2001:0db8:0001:0002:0:0:0:2', '2001:db8:1:2:ffff::3'])
        expect((await from(address, guess(1))).status).to.equal(401);
      expect((await from('2001:db8:1:2::9', good)).status).to.equal(429);
      expect((await from('2001:db8:1:3::9', good)).status).to.equal(200);
      // made-up entries (15,000 characters grew the table by 143 MB) all count against the peer
      for (let n = 0; n < 3; n++) expect((await from(`junk-${n}-${'x'.repeat(2000)}`, guess(n))).status).to.equal(401);
      expect((await from('junk-other', good)).status).to.equal(429);
      expect(
        (await fetch(`${guarded.p.platform.url}/v1/charge-points`, { headers: { Authorization: good } })).status,
      ).to.equal(429);
    });

    it('counts a token looked up where none is needed (the versions details) and METRICS_TOKEN guesses too', async () => {
      const details = '/ocpi/2.2.1/versions/2.1.1';
      for (let n = 0; n < 3; n++)
        expect((await from('203.0.113.40', `Token guess-${n}-0123456789`, details)).status).to.equal(200);
      // the same surface as the module endpoints: refused there now
      expect((await from('203.0.113.40', 'Token guess-z-0123456789', '/ocpi/cpo/2.2.1/locations')).status).to.equal(
        429,
      );
      for (let n = 0; n < 3; n++)
        expect((await from('203.0.113.41', `Bearer metrics-guess-${n}-0123456789`, '/metrics')).status).to.equal(401);
      expect((await from('203.0.113.41', 'Bearer metrics-token-0123456789', '/metrics')).status).to.equal(429);
    });

    it('refuses OCPI token guesses the same way, in the OCPI envelope', async () => {
      const path = '/ocpi/cpo/2.2.1/locations';
      for (let n = 0; n < 3; n++)
        expect((await from('203.0.113.20', `Token guess-${n}-0123456789`, path)).status).to.equal(401);
      const refused = await from('203.0.113.20', 'Token guess-x-0123456789', path);
      expect(refused.status).to.equal(429);
      expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
      const body = (await refused.json()) as Answer['body'];
      expect(body).to.include({ status_code: 2000 });
      expect(String(body.status_message)).to.contain('too many failed authentications');
    });
  });

  describe('in production without METRICS_TOKEN', () => {
    let production: Started;
    before(async () => {
      production = await start({ NODE_ENV: 'production' });
    });
    after(() => stop(production));

    it('has no /metrics (404); /healthz stays open', async () => {
      const res = await fetch(`${production.p.platform.url}/metrics`);
      expect(res.status).to.equal(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('not_found');
      expect((await fetch(`${production.p.platform.url}/healthz`)).status).to.equal(200);
    });
  });
});
