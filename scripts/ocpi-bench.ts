import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { cpus, totalmem } from 'node:os';
import { createInterface } from 'node:readline';
import Koa from 'koa';
import { ocpiModule } from '../src/ocpi/module.js';
import { aConnector } from '../test/support/ocpi-builders.js';
import { embeddedEnvironment, startPlatform } from '../test/support/platforms.js';

/**
 * HTTP benchmark of an authenticated `GET /ocpi/cpo/2.1.1/locations?limit=50` with 1,000 stored
 * locations, beside a bare Koa handler returning the same bytes, in the same run.
 *
 *   npm run build && node dist/scripts/ocpi-bench.js [--seconds=10] [--connections=64]
 *
 * The servers run in a child process (embedded mode, SQLite), autocannon in this one, so the
 * load generator does not share the servers' event loop. Bounded: each target is loaded for a
 * fixed time, then the child is stopped and its temporary database removed.
 */
const SECONDS = Number(process.argv.find((a) => a.startsWith('--seconds='))?.split('=')[1] ?? 10);
const CONNECTIONS = Number(process.argv.find((a) => a.startsWith('--connections='))?.split('=')[1] ?? 64);
const LOCATIONS = 1000;
const PATH = '/ocpi/cpo/2.1.1/locations?limit=50';

interface Targets {
  ocpi: string;
  bare: string;
  token: string;
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

/** A partner eMSP whose versions endpoint answers our discovery. */
async function startPartnerStub(): Promise<Server> {
  const partner = createServer((req, res) => {
    res.setHeader('Content-Type', 'application/json');
    const base = `http://127.0.0.1:${portOf(partner)}`;
    const data =
      req.url === '/versions' ? [{ version: '2.2.1', url: `${base}/2.2.1` }] : { version: '2.2.1', endpoints: [] };
    res.end(JSON.stringify({ status_code: 1000, data }));
  });
  await new Promise<void>((r) => partner.listen(0, '127.0.0.1', () => r()));
  return partner;
}

/** Onboards the partner and completes its credentials handshake; the token it calls us with. */
async function registerPartner(json: JsonCall, key: string, partnerUrl: string): Promise<string> {
  const onboarded = await json(
    'POST',
    '/v1/partners',
    { country_code: 'DE', party_id: 'BEN', role: 'EMSP' },
    `Bearer ${key}`,
  );
  const credentials = await json(
    'POST',
    '/ocpi/2.2.1/credentials',
    {
      token: 'partner-token',
      url: partnerUrl,
      roles: [{ role: 'EMSP', country_code: 'DE', party_id: 'BEN', business_details: { name: 'Bench' } }],
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
    coordinates: { latitude: '52.090', longitude: '5.121' },
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

/** A bare Koa server answering every request with `body` and `headers`. */
async function startBareKoa(headers: Record<string, string>, body: Buffer): Promise<Server> {
  const bare = new Koa();
  bare.use((ctx) => {
    ctx.set(headers);
    ctx.type = 'application/json';
    ctx.body = body;
  });
  const bareServer = bare.listen(0, '127.0.0.1');
  await new Promise<void>((r) => bareServer.once('listening', () => r()));
  return bareServer;
}

/** The child: the platform with 1,000 locations and a registered partner, and the bare Koa server. */
async function serve(): Promise<void> {
  const key = 'bench-operator-key-0123456789';
  const env = await embeddedEnvironment({
    CSMS_API_KEY: key,
    LOG_LEVEL: 'silent',
    // the partner stub listens on loopback, which the default policy refuses
    PARTNER_URL_POLICY: 'loopback',
  });
  const started = await startPlatform(env, [ocpiModule()]);
  const url = started.platform.url;
  const json = jsonCaller(url);
  const partner = await startPartnerStub();
  const token = await registerPartner(json, key, `http://127.0.0.1:${portOf(partner)}/versions`);
  const { OCPI_COUNTRY_CODE, OCPI_PARTY_ID } = started.config;
  for (let i = 0; i < LOCATIONS; i++) {
    const location = benchLocation(i, OCPI_COUNTRY_CODE, OCPI_PARTY_ID);
    await json('PUT', `/v1/ocpi/locations/${String(location.id)}`, location, `Bearer ${key}`);
  }
  const sample = await fetch(`${url}${PATH}`, { headers: { Authorization: `Token ${token}` } });
  const body = Buffer.from(await sample.arrayBuffer());
  if (sample.status !== 200) throw new Error(`sample request answered ${sample.status}`);
  const headers: Record<string, string> = {};
  for (const h of ['x-total-count', 'x-limit', 'link']) {
    const v = sample.headers.get(h);
    if (v) headers[h] = v;
  }
  const bareServer = await startBareKoa(headers, body);
  const targets: Targets = { ocpi: url, bare: `http://127.0.0.1:${portOf(bareServer)}`, token, bytes: body.length };
  process.stdout.write(`${JSON.stringify(targets)}\n`);
  process.once('SIGTERM', () => {
    bareServer.close();
    partner.close();
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
type Autocannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
}) => Promise<AutocannonResult>;

async function load(name: string, url: string, headers: Record<string, string>): Promise<AutocannonResult> {
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  process.stdout.write(`loading ${name} for ${SECONDS} s at ${CONNECTIONS} connections...\n`);
  return autocannon({ url: `${url}${PATH}`, connections: CONNECTIONS, duration: SECONDS, headers });
}

async function main(): Promise<void> {
  if (process.argv.includes('--serve')) return serve();
  const child = spawn(process.execPath, [import.meta.filename, '--serve'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const line = await new Promise<string>((resolveLine, reject) => {
      createInterface({ input: child.stdout }).once('line', resolveLine);
      child.once('exit', (code) => reject(new Error(`server process exited with ${String(code)}`)));
    });
    const targets = JSON.parse(line) as Targets;
    // warm both up, then measure bare first and the OCPI endpoint second
    const auth = { Authorization: `Token ${targets.token}` };
    const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
    await autocannon({ url: `${targets.bare}${PATH}`, connections: 8, duration: 2 });
    await autocannon({ url: `${targets.ocpi}${PATH}`, connections: 8, duration: 2, headers: auth });
    const bare = await load('bare Koa handler', targets.bare, {});
    const ocpi = await load('OCPI GET /ocpi/cpo/2.1.1/locations?limit=50', targets.ocpi, auth);
    const row = (name: string, r: AutocannonResult) =>
      `| ${name} | ${r.requests.average.toFixed(0)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx + r.errors} |`;
    const ratio = ocpi.requests.average / bare.requests.average;
    process.stdout.write(
      [
        '',
        `machine: ${cpus().length} cpu(s) ${cpus()[0]?.model ?? ''}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}`,
        `response: ${targets.bytes} bytes (50 of ${LOCATIONS} locations), ${CONNECTIONS} connections, ${SECONDS} s each`,
        '',
        '| target | req/s | p50 ms | p99 ms | non-2xx + errors |',
        '|---|---|---|---|---|',
        row('bare Koa, same bytes', bare),
        row('OCPI locations, authenticated', ocpi),
        '',
        `ratio: ${(ratio * 100).toFixed(1)}% of the bare handler (aim >= 40%); OCPI p99 ${ocpi.latency.p99} ms (aim < 50 ms)`,
        '',
      ].join('\n'),
    );
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(undefined)));
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
