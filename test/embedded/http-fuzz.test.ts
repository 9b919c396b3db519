import { expect } from 'chai';
import nock from 'nock';
import { platformModules } from '../../src/modules.js';
import { API_KEY, OcpiApi, base64, type RegisteredPartner } from '../support/ocpi-harness.js';
import { loopbackPartner, type FakePartner } from '../support/ocpi-partners.js';
import {
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../support/platforms.js';
import { seededRandom } from '../../scripts/prng.js';
import { operationsOf, sample, type Operation } from '../support/openapi-doc.js';

/**
 * HTTP fuzz over every route of /openapi.json (issue 7, "What to build" 7): for each route, a
 * seeded batch of bad requests (malformed JSON, deep nesting, huge strings, NUL bytes and odd
 * unicode in path ids and query values, huge numbers, wrong types, bad or absent Authorization,
 * wrong methods, odd content types), some with a valid token so the handlers are reached.
 * Asserted for every answer: no 5xx, the error shape of the surface (OCPI envelope or the 422
 * detail on /ocpi, `{error}` or the 422 detail on /v1), and the process still answers /healthz.
 * FUZZ_SEED=<n> replays a run.
 */

type Json = Record<string, unknown>;

const BODY_LIMIT = 16 * 1024;
const SEED = Number(process.env.FUZZ_SEED ?? 7);

interface FuzzRequest {
  what: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

const ODD_IDS = [
  '%00',
  'a%00b',
  '%FF',
  '%E2%80%AE',
  '%F0%9F%92%A9',
  '%C0%AF',
  '%2e%2e',
  '%2F',
  'x'.repeat(300),
  '%20',
  '-1',
  '99999999999999999999999',
  "'%3B--",
  '%EF%BF%BF',
  '%ED%A0%80',
];
const ODD_QUERY = [
  '%00',
  '%FF',
  '99999999999999999999999',
  '-1',
  '1e400',
  'NaN',
  '0x10',
  '1.5',
  '',
  'true',
  '%E2%80%AE',
  'x'.repeat(2000),
];
const WRONG_VALUES: unknown[] = [null, true, 1e308, -1, '', 'x'.repeat(5000), [], {}, [[[]]], '\u0000', '\ud800'];
const BAD_AUTH = [
  '',
  'Token',
  'Token ',
  'Bearer',
  'Basic YTpi',
  'Token x',
  `Token ${'A'.repeat(5000)}`,
  'Token =====',
  'Bearer ' + 'x'.repeat(3000),
  'token  spaced  out',
  'Token \u00ff\u00fe',
];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'HEAD'];
const CONTENT_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=utf-16',
  'application/xml',
  'application/json; charset=bogus',
  '',
];

function deepArray(n: number): string {
  return '['.repeat(n) + ']'.repeat(n);
}
function deepObject(n: number): string {
  return '{"a":'.repeat(n) + '1' + '}'.repeat(n);
}

/** the partners' servers on loopback, closed after the suite */
const partners: FakePartner[] = [];
function remember(partner: FakePartner): FakePartner {
  partners.push(partner);
  return partner;
}

describe('HTTP fuzz over every route of /openapi.json (embedded)', function () {
  this.timeout(120_000);
  let env: TestEnvironment;
  let p: StartedPlatform;
  let cpo: RegisteredPartner;
  let emsp: RegisteredPartner;
  const outcomes = new Map<number, number>();
  const failures: string[] = [];
  let tried = 0;

  before(async () => {
    env = await embeddedEnvironment({
      CSMS_API_KEY: API_KEY,
      BODY_LIMIT: `${BODY_LIMIT / 1024}kb`,
      PARTNER_URL_POLICY: 'loopback',
    });
    p = await startPlatform(env, platformModules());
    // the fuzzed bodies name URLs: nothing may leave the machine
    nock.disableNetConnect();
    nock.enableNetConnect('127.0.0.1');
    const api = new OcpiApi({
      mode: 'embedded',
      urls: [p.platform.url],
      platform: p,
      partner: async (token, versions) => remember(await loopbackPartner(token, versions)),
      stop: async () => undefined,
    });
    cpo = await api.register('CPO');
    emsp = await api.register('EMSP');
  });

  after(async () => {
    nock.cleanAll();
    await Promise.all(partners.splice(0).map((x) => x.close()));
    nock.enableNetConnect();
    const byStatus = [...outcomes.entries()]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ');
    console.log(`      http fuzz (seed ${SEED}): ${tried} requests; by status: ${byStatus}`);
    for (const f of failures) console.log(`      FAILED ${f}`);
    await p?.stop();
    await env?.cleanup();
  });

  /** The partner whose token reaches the handlers of a path: partner CPOs call our eMSP mounts. */
  function partnerFor(path: string): RegisteredPartner {
    return path.startsWith('/ocpi/emsp/') ? cpo : emsp;
  }

  function goodAuth(op: Operation): Record<string, string> {
    if (op.security === 'bearer') return { Authorization: `Bearer ${API_KEY}` };
    if (op.security !== 'ocpiToken') return {};
    const token = partnerFor(op.template).token;
    return { Authorization: `Token ${op.template.includes('/2.1.1') ? token : base64(token)}` };
  }

  function goodPath(op: Operation): string {
    const party = partnerFor(op.template).party;
    const values: Record<string, string> = {
      country_code: party.country_code,
      party_id: party.party_id,
      version: '2.2.1',
      command: 'START_SESSION',
      connector_id: '1',
      id: 'CP-1',
    };
    return op.template.replace(/\{([^}]+)\}/g, (_m, name: string) => values[name] ?? `FUZZ-${name.length}`);
  }

  function withParam(op: Operation, param: string, value: string): string {
    return goodPath({ ...op, template: op.template.replace(`{${param}}`, value) });
  }

  /** The bad requests for one operation; `pick` chooses among the variants of each kind. */
  function requestsFor(op: Operation, pick: <T>(xs: readonly T[]) => T): FuzzRequest[] {
    const auth = goodAuth(op);
    const json = { 'Content-Type': 'application/json', ...auth };
    const path = goodPath(op);
    const valid = op.body ? sample(op.body) : undefined;
    const out: FuzzRequest[] = [];
    const send = (what: string, body: string, headers: Record<string, string> = json): void => {
      out.push({ what, method: op.method, path, headers, body });
    };
    out.push({
      what: 'plausible',
      method: op.method,
      path,
      headers: json,
      ...(valid === undefined ? {} : { body: JSON.stringify(valid) }),
    });
    for (const param of op.pathParams) {
      for (let i = 0; i < 5; i++)
        out.push({
          what: `path ${param}`,
          method: op.method,
          path: withParam(op, param, pick(ODD_IDS)),
          headers: json,
          ...(valid === undefined ? {} : { body: JSON.stringify(valid) }),
        });
    }
    for (const q of op.queryParams) {
      for (let i = 0; i < 4; i++)
        out.push({
          what: `query ${q.name}`,
          method: op.method,
          path: `${path}?${q.name}=${pick(ODD_QUERY)}`,
          headers: json,
        });
      out.push({
        what: `query ${q.name} twice`,
        method: op.method,
        path: `${path}?${q.name}=1&${q.name}=2`,
        headers: json,
      });
    }
    for (let i = 0; i < 4; i++) {
      const header = pick(BAD_AUTH);
      out.push({
        what: 'bad auth',
        method: op.method,
        path,
        headers: { 'Content-Type': 'application/json', ...(header ? { Authorization: header } : {}) },
      });
    }
    const allowedHere = new Set([op.method]);
    for (let i = 0; i < 3; i++) {
      const m = pick(METHODS.filter((x) => !allowedHere.has(x)));
      out.push({ what: `method ${m}`, method: m, path, headers: json });
    }
    if (op.method === 'GET' || op.method === 'DELETE') return out;
    for (let i = 0; i < 2; i++)
      send('malformed json', pick(['{"a":\'x\'}', '{a:1}', 'NaN', '{"a":"\\uZZZZ"}', '{"a":"\\ud800"}']));
    send(
      'malformed json',
      pick(['{"a":', '{]', 'nul', '"unterminated', '{"a":1}}', '\u0000', '{"a":1,}', '[1,2', '\ufeff{}']),
    );
    send('deep array', deepArray(5000));
    send('deep object', deepObject(pick([100, 1000, 5000])));
    send(
      'huge string within limit',
      JSON.stringify({ ...(typeof valid === 'object' && valid ? valid : {}), id: 'x'.repeat(BODY_LIMIT - 1024) }),
    );
    send('huge string beyond limit', JSON.stringify({ id: 'x'.repeat(BODY_LIMIT * 4) }));
    send(
      'huge number',
      pick([
        '{"id":1e400}',
        '{"limit":99999999999999999999999}',
        '-1e999',
        '{"offset":-0}',
        '123456789012345678901234567890',
      ]),
    );
    send('scalar body', pick(['null', 'true', '1', '"x"', '[]']));
    if (typeof valid === 'object' && valid !== null && !Array.isArray(valid)) {
      const keys = Object.keys(valid);
      for (let i = 0; i < Math.min(5, keys.length); i++) {
        const key = pick(keys);
        send(`wrong type ${key}`, JSON.stringify({ ...valid, [key]: pick(WRONG_VALUES) }));
      }
      const strings = Object.keys(valid).filter((k) => typeof (valid as Json)[k] === 'string');
      for (let i = 0; i < Math.min(2, strings.length); i++) {
        const key = pick(strings);
        send(
          `odd string ${key}`,
          JSON.stringify({
            ...valid,
            [key]: pick(['a\u0000b', '\u202e\u0000', '\ud83d\udca9'.repeat(50), '\uffff', 'x'.repeat(BODY_LIMIT / 2)]),
          }),
        );
      }
      send(
        'proto keys',
        JSON.stringify(valid).replace(/^\{/, '{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}},'),
      );
    }
    for (let i = 0; i < 2; i++) {
      const ct = pick(CONTENT_TYPES);
      send(`content type "${ct}"`, JSON.stringify(valid ?? {}), { ...auth, ...(ct ? { 'Content-Type': ct } : {}) });
    }
    send('gzip claimed', '{"a":1}', { ...json, 'Content-Encoding': pick(['gzip', 'br', 'deflate', 'x-bogus']) });
    return out;
  }

  async function fire(r: FuzzRequest): Promise<{ status: number; type: string; text: string }> {
    const res = await fetch(`${p.platform.url}${r.path}`, {
      method: r.method,
      headers: r.headers,
      redirect: 'manual',
      ...(r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD' ? { body: r.body } : {}),
    });
    const type = res.headers.get('content-type') ?? '';
    // the live event stream of /v1/events never ends: its headers are the answer
    if (type.startsWith('text/event-stream')) {
      await res.body?.cancel();
      return { status: res.status, type, text: '' };
    }
    return { status: res.status, type, text: await res.text() };
  }

  function checkShape(r: FuzzRequest, status: number, type: string, text: string): string | undefined {
    if (status >= 500) return `${status}`;
    const surface = r.path.startsWith('/ocpi') ? 'ocpi' : r.path.startsWith('/v1') ? 'v1' : 'other';
    // HEAD and 204 carry no body; the event stream and the other surfaces have theirs
    if (r.method === 'HEAD' || status === 204 || type.startsWith('text/event-stream') || surface === 'other')
      return undefined;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return `${status} not JSON (${type}): ${text.slice(0, 80)}`;
    }
    if (status < 400 && surface === 'v1') return undefined;
    const b = (body ?? {}) as Json;
    if (status === 422 && Array.isArray(b.detail)) return undefined;
    if (surface === 'ocpi') {
      return typeof b.status_code === 'number' &&
        typeof b.status_message === 'string' &&
        typeof b.timestamp === 'string'
        ? undefined
        : `${status} not an OCPI envelope: ${text.slice(0, 120)}`;
    }
    const e = b.error as Json | undefined;
    return typeof e?.code === 'string' && typeof e.message === 'string'
      ? undefined
      : `${status} not the /v1 error shape: ${text.slice(0, 120)}`;
  }

  it('answers every generated bad request with a 4xx (or a success) in the shape of its surface, and stays up', async () => {
    const doc = (await (await fetch(`${p.platform.url}/openapi.json`)).json()) as Json;
    const ops = operationsOf(doc);
    expect(ops.length).to.be.greaterThan(40);
    const random = seededRandom(SEED);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)] as T;
    // credentials last: a fuzzed DELETE or PUT with a valid token may end the partners' links
    const ordered = [...ops].sort(
      (a, b) => Number(a.template.includes('credentials')) - Number(b.template.includes('credentials')),
    );
    for (const op of ordered) {
      const batch = requestsFor(op, pick);
      const answers = await Promise.all(
        batch.map(async (r) => {
          try {
            return { r, ...(await fire(r)) };
          } catch (err) {
            return { r, status: -1, type: '', text: String(err) };
          }
        }),
      );
      for (const a of answers) {
        tried += 1;
        outcomes.set(a.status, (outcomes.get(a.status) ?? 0) + 1);
        const problem = a.status === -1 ? `no answer: ${a.text}` : checkShape(a.r, a.status, a.type, a.text);
        if (problem)
          failures.push(
            `${a.r.method} ${a.r.path.slice(0, 120)} [${op.method} ${op.template}: ${a.r.what}] -> ${problem}`,
          );
      }
    }
    const health = await fetch(`${p.platform.url}/healthz`);
    expect(health.status).to.equal(200);
    expect(failures, failures.slice(0, 40).join('\n')).to.deep.equal([]);
  });
});
