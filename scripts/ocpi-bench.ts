import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { cpus, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import { ocpiModule } from '../src/ocpi/module.js';
import { aConnector } from '../test/support/ocpi-builders.js';
import { embeddedEnvironment, startPlatform } from '../test/support/platforms.js';
import { commandLine, numberOption, usageError } from './cli.js';

/**
 * HTTP benchmark of the OCPI request path, each beside a bare Koa baseline in the same run:
 *
 * - list: an authenticated `GET /ocpi/cpo/2.1.1/locations?limit=50` with 1,000 stored locations,
 *   beside a bare Koa handler returning the same bytes;
 * - put: a registered CPO partner's `PUT /ocpi/emsp/2.2.1/locations/{cc}/{party}/{id}`, the ids
 *   cycling over a set (the first pass inserts, later ones update), beside a bare Koa handler
 *   that parses the same JSON (koa-bodyparser) and stores it with one better-sqlite3 prepared
 *   `INSERT ... ON CONFLICT DO UPDATE` into a temporary SQLite file (WAL, as the platform).
 *
 *   npm run build && node dist/scripts/ocpi-bench.js [--seconds=10] [--connections=64] [--only=list|put]
 *     [--rounds=5] [--cpu-prof-dir=DIR]
 *
 * The servers run in a child process (embedded mode, SQLite), autocannon in this one, so the
 * load generator does not share the servers' event loop. Bounded: each target is loaded for a
 * fixed time (in turns alternating with its baseline), then the child is stopped and its temporary databases removed.
 */
const { values: args } = commandLine({
  summary:
    "The OCPI request path (an authenticated locations list GET, a partner's PUT of a location),\n" +
    'each beside a bare Koa handler in the same run.',
  options: {
    seconds: { type: 'string', default: '10', value: 'S', help: 'load per target, over all its turns' },
    connections: { type: 'string', default: '64', help: 'concurrent connections' },
    only: { type: 'string', value: 'list|put', help: 'measure one of the two (default: both)' },
    rounds: { type: 'string', default: '5', help: 'turns per target, alternating with its baseline' },
    'cpu-prof-dir': { type: 'string', value: 'DIR', help: "write the server child's V8 CPU profile to DIR" },
    serve: { type: 'boolean', default: false, help: 'run as the server child (internal)' },
  },
  notes: 'Figures: docs/PERFORMANCE.md "OCPI request path".',
});
const SECONDS = numberOption('seconds', args.seconds, { min: 0.1 });
const CONNECTIONS = numberOption('connections', args.connections, { min: 1, integer: true });
if (args.only !== undefined && args.only !== 'list' && args.only !== 'put') usageError('--only must be list or put');
const ONLY = args.only;
/** each target is loaded in this many turns, alternating with its baseline */
const ROUNDS = numberOption('rounds', args.rounds, { min: 1, integer: true });
const LOCATIONS = 1000;
/** how many distinct ids the PUT load cycles over */
const PUT_IDS = 1000;
const LIST_PATH = '/ocpi/cpo/2.1.1/locations?limit=50';
const PUT_PREFIX = '/ocpi/emsp/2.2.1/locations';
const CPO_PARTY = { country_code: 'DE', party_id: 'BCP' };

interface Targets {
  ocpi: string;
  bareList: string;
  barePut: string;
  /** the eMSP partner's token (list), the CPO partner's (put) */
  emspToken: string;
  cpoToken: string;
  bytes: number;
}

type JsonCall = (method: string, path: string, body: unknown, auth: string) => Promise<Record<string, unknown>>;

function jsonCaller(url: string): JsonCall {
  return async (method, path, body, auth) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { Authorization: auth, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    const answer: unknown = await res.json();
    if (typeof answer !== 'object' || answer === null) throw new Error(`${method} ${path}: not a JSON object`);
    return { ...answer };
  };
}

function portOf(server: { address(): AddressInfo | string | null }): number {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the server is not listening on TCP');
  return address.port;
}

/** A partner whose versions endpoint answers our discovery (listing the credentials module OCPI requires). */
async function startPartnerStub(): Promise<Server> {
  const partner = createServer((req, res) => {
    res.setHeader('Content-Type', 'application/json');
    const base = `http://127.0.0.1:${portOf(partner)}`;
    const credentials = { identifier: 'credentials', role: 'SENDER', url: `${base}/2.2.1/credentials` };
    const data =
      req.url === '/versions'
        ? [{ version: '2.2.1', url: `${base}/2.2.1` }]
        : { version: '2.2.1', endpoints: [credentials] };
    res.end(JSON.stringify({ status_code: 1000, data }));
  });
  await new Promise<void>((r) => partner.listen(0, '127.0.0.1', () => r()));
  return partner;
}

interface PartnerToRegister {
  country_code: string;
  party_id: string;
  role: 'CPO' | 'EMSP';
  /** the token we call the partner with */
  token: string;
}

/** Onboards the partner and completes its credentials handshake; the token it calls us with. */
async function registerPartner(json: JsonCall, key: string, partnerUrl: string, p: PartnerToRegister): Promise<string> {
  const party = { country_code: p.country_code, party_id: p.party_id };
  const onboarded = await json('POST', '/v1/partners', { ...party, role: p.role }, `Bearer ${key}`);
  const credentials = await json(
    'POST',
    '/ocpi/2.2.1/credentials',
    {
      token: p.token,
      url: partnerUrl,
      roles: [{ role: p.role, ...party, business_details: { name: 'Bench' } }],
    },
    `Token ${String(onboarded.token)}`,
  );
  const data = credentials.data;
  if (typeof data !== 'object' || data === null || !('token' in data)) {
    throw new Error(`the credentials handshake failed: ${JSON.stringify(credentials)}`);
  }
  return String(data.token);
}

function benchLocation(i: number, countryCode: string, partyId: string): Record<string, unknown> {
  const id = `LOC-${String(i).padStart(4, '0')}`;
  // the test suite's connector, without tariffs
  const connector = aConnector({ tariff_ids: undefined, last_updated: '2026-01-01T00:00:00Z' });
  return {
    country_code: countryCode,
    party_id: partyId,
    id,
    publish: true,
    name: `Station ${i}`,
    address: `Main street ${i}`,
    city: 'Utrecht',
    country: 'NLD',
    coordinates: { latitude: '52.090000', longitude: '5.121000' },
    parking_type: 'ON_STREET',
    time_zone: 'Europe/Amsterdam',
    evses: [
      {
        uid: `${id}-1`,
        status: 'AVAILABLE',
        capabilities: ['RFID_READER'],
        connectors: [connector],
        last_updated: '2026-01-01T00:00:00Z',
      },
    ],
    last_updated: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  };
}

async function listening(server: Server): Promise<Server> {
  if (!server.listening) await new Promise<void>((r) => server.once('listening', () => r()));
  return server;
}

/** A bare Koa server answering every request with `body` and `headers`. */
function startBareList(headers: Record<string, string>, body: Buffer): Promise<Server> {
  const bare = new Koa();
  bare.use((ctx) => {
    ctx.set(headers);
    ctx.type = 'application/json';
    ctx.body = body;
  });
  return listening(bare.listen(0, '127.0.0.1'));
}

/**
 * A bare Koa server storing every PUT body, as parsed JSON, with one prepared upsert into a
 * SQLite file in `dir` (the platform's pragmas), and answering it in an OCPI envelope.
 */
function startBarePut(dir: string): { server: Promise<Server>; close(): void } {
  const db = new Database(join(dir, 'bare.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(
    'CREATE TABLE object (country_code TEXT, party_id TEXT, object_id TEXT, last_updated_ms INTEGER, data TEXT, ' +
      'updated_at INTEGER, PRIMARY KEY (country_code, party_id, object_id))',
  );
  const upsert = db.prepare(
    'INSERT INTO object (country_code, party_id, object_id, last_updated_ms, data, updated_at) VALUES (?, ?, ?, ?, ?, ?) ' +
      'ON CONFLICT (country_code, party_id, object_id) DO UPDATE SET last_updated_ms = excluded.last_updated_ms, ' +
      'data = excluded.data, updated_at = excluded.updated_at',
  );
  const bare = new Koa();
  bare.use(bodyParser({ enableTypes: ['json'] }));
  bare.use((ctx) => {
    const [, , , , , cc = '', party = '', id = ''] = ctx.path.split('/');
    const body: unknown = ctx.request.body;
    const lastUpdated = typeof body === 'object' && body !== null && 'last_updated' in body ? body.last_updated : '';
    upsert.run(cc, party, id, Date.parse(String(lastUpdated)), JSON.stringify(body), Date.now());
    ctx.type = 'application/json';
    ctx.body = JSON.stringify({ status_code: 1000, data: body, timestamp: new Date().toISOString() });
  });
  return { server: listening(bare.listen(0, '127.0.0.1')), close: () => db.close() };
}

/** The platform with 1,000 of our locations, an eMSP and a CPO partner; the bare servers. */
async function serve(): Promise<void> {
  const key = 'bench-operator-key-0123456789';
  // the partner stub listens on loopback, which the default policy refuses
  const env = await embeddedEnvironment({ CSMS_API_KEY: key, LOG_LEVEL: 'silent', PARTNER_URL_POLICY: 'loopback' });
  const started = await startPlatform(env, [ocpiModule()]);
  const url = started.platform.url;
  const json = jsonCaller(url);
  const partner = await startPartnerStub();
  const partnerUrl = `http://127.0.0.1:${portOf(partner)}/versions`;
  const emspToken = await registerPartner(json, key, partnerUrl, {
    country_code: 'DE',
    party_id: 'BEN',
    role: 'EMSP',
    token: 'emsp-partner-token',
  });
  const cpoToken = await registerPartner(json, key, partnerUrl, { ...CPO_PARTY, role: 'CPO', token: 'cpo-token' });
  const { OCPI_COUNTRY_CODE, OCPI_PARTY_ID } = started.config;
  for (let i = 0; i < LOCATIONS; i++) {
    const location = benchLocation(i, OCPI_COUNTRY_CODE, OCPI_PARTY_ID);
    await json('PUT', `/v1/ocpi/locations/${String(location.id)}`, location, `Bearer ${key}`);
  }
  const sample = await fetch(`${url}${LIST_PATH}`, { headers: { Authorization: `Token ${emspToken}` } });
  const body = Buffer.from(await sample.arrayBuffer());
  if (sample.status !== 200) throw new Error(`sample request answered ${sample.status}`);
  const headers: Record<string, string> = {};
  for (const h of ['x-total-count', 'x-limit', 'link']) {
    const v = sample.headers.get(h);
    if (v) headers[h] = v;
  }
  const bareList = await startBareList(headers, body);
  const dir = mkdtempSync(join(tmpdir(), 'ocpi-bench-'));
  const barePut = startBarePut(dir);
  const putServer = await barePut.server;
  const local = (s: Server) => `http://127.0.0.1:${portOf(s)}`;
  const targets: Targets = {
    ocpi: url,
    bareList: local(bareList),
    barePut: local(putServer),
    emspToken,
    cpoToken,
    bytes: body.length,
  };
  process.stdout.write(`${JSON.stringify(targets)}\n`);
  process.once('SIGTERM', () => {
    for (const s of [bareList, putServer, partner]) s.close();
    barePut.close();
    rmSync(dir, { recursive: true, force: true });
    void started
      .stop()
      .then(() => env.cleanup())
      .finally(() => process.exit(0));
  });
}

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  non2xx: number;
  errors: number;
}
interface AutocannonRequest {
  method?: string;
  path?: string;
  body?: string;
  headers?: Record<string, string>;
}
type Autocannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
  requests?: Array<AutocannonRequest & { setupRequest?: (req: AutocannonRequest) => AutocannonRequest }>;
}) => Promise<AutocannonResult>;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon; // CommonJS, typed above

/** One scenario: how a target is loaded, and its name in the table. */
interface Load {
  name: string;
  url: string;
  headers: Record<string, string>;
  requests?: Parameters<Autocannon>[0]['requests'];
}

function run(load: Load, duration: number, connections: number): Promise<AutocannonResult> {
  return autocannon({ url: load.url, connections, duration, headers: load.headers, requests: load.requests });
}

/**
 * PUT requests cycling over `PUT_IDS` ids in a scattered order (the first pass inserts, later
 * passes update), the bodies serialized once up front so the load generator stays cheap.
 */
function putRequests(auth: Record<string, string>): Load['requests'] {
  const bodies: Array<{ path: string; body: string }> = [];
  for (let i = 0; i < PUT_IDS; i++) {
    const location = benchLocation(i, CPO_PARTY.country_code, CPO_PARTY.party_id);
    const path = `${PUT_PREFIX}/${CPO_PARTY.country_code}/${CPO_PARTY.party_id}/${String(location.id)}`;
    bodies.push({ path, body: JSON.stringify(location) });
  }
  let n = 0;
  const headers = { ...auth, 'Content-Type': 'application/json' };
  return [
    {
      method: 'PUT',
      setupRequest: (req) => {
        // 7919 is prime, so the stride visits every id once per pass
        const next = bodies[(n++ * 7919) % PUT_IDS];
        return next ? { ...req, method: 'PUT', path: next.path, body: next.body, headers } : req;
      },
    },
  ];
}

interface Pair {
  what: string;
  aim: number;
  bare: Load;
  ocpi: Load;
}

function pairs(t: Targets): Pair[] {
  const list: Pair = {
    what: 'list GET',
    aim: 0.5,
    bare: { name: 'bare Koa, same bytes', url: `${t.bareList}${LIST_PATH}`, headers: {} },
    ocpi: {
      name: `OCPI GET ${LIST_PATH}`,
      url: `${t.ocpi}${LIST_PATH}`,
      headers: { Authorization: `Token ${t.emspToken}` },
    },
  };
  // 2.2.1 clients send the token base64-encoded
  const cpoAuth = { Authorization: `Token ${Buffer.from(t.cpoToken, 'utf8').toString('base64')}` };
  const put: Pair = {
    what: 'PUT location',
    aim: 0.5,
    bare: { name: 'bare Koa, parse + 1 prepared upsert', url: t.barePut, headers: {}, requests: putRequests({}) },
    ocpi: {
      name: `OCPI PUT ${PUT_PREFIX}/{cc}/{party}/{id}`,
      url: t.ocpi,
      headers: cpoAuth,
      requests: putRequests(cpoAuth),
    },
  };
  return [list, put].filter((p) => ONLY === undefined || p.what.startsWith(ONLY === 'put' ? 'PUT' : 'list'));
}

/** Several loads of one target, summed: requests per second over all, the worst p50 and p99. */
interface Summed {
  rate: number;
  p50: number;
  p99: number;
  failed: number;
}

function sum(results: readonly AutocannonResult[], seconds: number): Summed {
  return {
    rate: results.reduce((n, r) => n + r.requests.total, 0) / seconds,
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    failed: results.reduce((n, r) => n + r.non2xx + r.errors, 0),
  };
}

/**
 * Warms both targets of a pair up, then loads them in turns, bare first, `ROUNDS` turns of
 * SECONDS / ROUNDS each: on a busy machine both see the same stretches of background load.
 */
async function measure(pair: Pair): Promise<string[]> {
  await run(pair.bare, 2, 8);
  await run(pair.ocpi, 2, 8);
  const slice = Math.max(1, Math.round(SECONDS / ROUNDS));
  process.stdout.write(`loading ${pair.what}: ${ROUNDS} x ${slice} s per target at ${CONNECTIONS} connections...\n`);
  const bareRuns: AutocannonResult[] = [];
  const ocpiRuns: AutocannonResult[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    bareRuns.push(await run(pair.bare, slice, CONNECTIONS));
    ocpiRuns.push(await run(pair.ocpi, slice, CONNECTIONS));
  }
  const bare = sum(bareRuns, slice * ROUNDS);
  const ocpi = sum(ocpiRuns, slice * ROUNDS);
  const row = (name: string, r: Summed) => `| ${name} | ${r.rate.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.failed} |`;
  const ratio = ocpi.rate / bare.rate;
  return [
    row(pair.bare.name, bare),
    row(pair.ocpi.name, ocpi),
    `ratio ${pair.what}: ${(ratio * 100).toFixed(1)}% of its bare handler (aim >= ${pair.aim * 100}%); p99 ${ocpi.p99} ms (aim < 50 ms)`,
  ];
}

async function main(): Promise<void> {
  if (args.serve) return serve();
  // --cpu-prof-dir=DIR: the server child writes a V8 CPU profile there when it stops
  const profile = args['cpu-prof-dir'];
  const nodeArgs = profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, import.meta.filename, '--serve'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const line = await new Promise<string>((resolveLine, reject) => {
      createInterface({ input: child.stdout }).once('line', resolveLine);
      child.once('exit', (code) => reject(new Error(`server process exited with ${String(code)}`)));
    });
    const targets = JSON.parse(line) as Targets; // the child's own JSON line, written just above
    const rows: string[] = [];
    const ratios: string[] = [];
    for (const pair of pairs(targets)) {
      const [bareRow = '', ocpiRow = '', ratio = ''] = await measure(pair);
      rows.push(bareRow, ocpiRow);
      ratios.push(ratio);
    }
    const machine = `machine: ${cpus().length} cpu(s) ${cpus()[0]?.model ?? ''}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}`;
    const shape = `list response: ${targets.bytes} bytes (50 of ${LOCATIONS} locations); PUT over ${PUT_IDS} ids; ${CONNECTIONS} connections, ${SECONDS} s per target in ${ROUNDS} turns`;
    const table = [
      '| target | req/s | worst p50 ms | worst p99 ms | non-2xx + errors |',
      '|---|---|---|---|---|',
      ...rows,
    ];
    process.stdout.write(['', machine, shape, '', ...table, '', ...ratios, ''].join('\n'));
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(undefined)));
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
