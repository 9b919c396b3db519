import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { embeddedEnvironment, type TestEnvironment } from '../support/platforms.js';
import { MAIN, startNode, type NodeProcess } from '../support/processes.js';

const KEY = 'product-entry-key-0123456789';

/**
 * The product's entry as `npm start` and the Procfile run it: one bundle of the compiled modules
 * (scripts/bundle-server.mjs). What each module reads beside itself in dist/ is still found from
 * the bundle: the console's files, the API docs with Swagger UI, and the pricing threads' script.
 * (The cluster suite's processes run the same entry and load their Lua scripts the same way.)
 */
describe('the product entry (dist/server/main.js)', function () {
  this.timeout(60_000);
  let env: TestEnvironment;
  let node: NodeProcess;
  let probe: string;

  before(async () => {
    probe = mkdtempSync(join(tmpdir(), 'evp-loaded-'));
    // run before the entry: on SIGUSR2 it writes what the process has loaded so far
    writeFileSync(
      join(probe, 'report.mjs'),
      [
        "import { writeFileSync } from 'node:fs';",
        "import { createRequire } from 'node:module';",
        'const cache = createRequire(import.meta.url).cache;',
        "process.on('SIGUSR2', () => {",
        '  const loaded = { builtins: process.moduleLoadList, files: Object.keys(cache) };',
        '  writeFileSync(process.env.LOADED_REPORT, JSON.stringify(loaded));',
        '});',
      ].join('\n'),
    );
    env = await embeddedEnvironment({ CSMS_API_KEY: KEY, PRICING_THREADS: '1' });
    node = await startNode(
      {
        ...env.env,
        NODE_OPTIONS: `--import=${pathToFileURL(join(probe, 'report.mjs')).href}`,
        LOADED_REPORT: join(probe, 'loaded.json'),
      },
      { entry: MAIN },
    );
  });
  after(async () => {
    await node?.stop();
    await env?.cleanup();
    rmSync(probe, { recursive: true, force: true });
  });

  /** The built-in modules and the CommonJS files the process has loaded so far. */
  const loaded = async (): Promise<{ builtins: string[]; files: string[] }> => {
    const file = join(probe, 'loaded.json');
    rmSync(file, { force: true });
    node.signal('SIGUSR2');
    // read once it is there and whole
    for (let i = 0; ; i++) {
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as { builtins: string[]; files: string[] };
      } catch (err) {
        if (i >= 300) throw err;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  };

  const get = async (path: string) => {
    const res = await fetch(`${node.url}${path}`);
    return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
  };

  // first: what a start loads before it prices anything (docs/PERFORMANCE.md, "Fourteenth sitting")
  it('answers JSON without loading fetch (undici), and loads Piscina only to price', async () => {
    expect((await get('/readyz')).status).to.equal(200);
    const list = await fetch(`${node.url}/v1/charge-points`, { headers: { Authorization: `Bearer ${KEY}` } });
    expect(list.status).to.equal(200);
    expect(list.headers.get('content-type')).to.equal('application/json; charset=utf-8');
    const text = await list.text();
    expect(list.headers.get('content-length')).to.equal(String(Buffer.byteLength(text)));
    expect(JSON.parse(text)).to.be.an('array');
    const missing = await get('/v1/no-such-thing');
    expect(missing.status).to.equal(404);
    expect(missing.type).to.match(/json/);
    const head = await fetch(`${node.url}/readyz`, { method: 'HEAD' });
    expect(head.status).to.equal(200);
    expect(Number(head.headers.get('content-length'))).to.be.greaterThan(0);
    expect(await head.text()).to.equal('');

    const before = await loaded();
    expect(before.builtins.filter((m) => m.includes('undici'))).to.deep.equal([]);
    expect(before.files.filter((f) => f.includes('/node_modules/piscina/'))).to.deep.equal([]);
    expect(before.files.filter((f) => f.includes('/node_modules/prom-client/'))).to.deep.equal([]);
  });

  it('serves the operator console and its assets', async () => {
    const page = await get('/dashboard');
    expect(page.status).to.equal(200);
    expect(page.type).to.match(/^text\/html/);
    expect(page.text).to.include('/dashboard/console.js');
    for (const asset of ['/dashboard/console.js', '/dashboard/console.css', '/dashboard/icon.svg']) {
      const res = await get(asset);
      expect(res.status, asset).to.equal(200);
      expect(res.text.length, asset).to.be.greaterThan(100);
    }
  });

  it('serves the API docs with Swagger UI from its own origin', async () => {
    const page = await get('/docs');
    expect(page.status).to.equal(200);
    expect(page.text).to.include('/docs/swagger-ui-bundle.js');
    const bundle = await get('/docs/swagger-ui-bundle.js');
    expect(bundle.status).to.equal(200);
    expect(bundle.text.length).to.be.greaterThan(100_000);
  });

  it('prices in its worker threads', async () => {
    const res = await fetch(`${node.url}/v1/tariffs/price`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${KEY}` },
      body: JSON.stringify({
        tariff: {
          country_code: 'NL',
          party_id: 'EVP',
          id: 'T1',
          currency: 'EUR',
          elements: [{ price_components: [{ type: 'ENERGY', price: 0.25, step_size: 1 }] }],
          last_updated: '2026-01-01T00:00:00Z',
        },
        cdr: {
          start_date_time: '2026-01-01T10:00:00Z',
          end_date_time: '2026-01-01T11:00:00Z',
          charging_periods: [{ start_date_time: '2026-01-01T10:00:00Z', dimensions: [{ type: 'ENERGY', volume: 10 }] }],
        },
        time_zone: 'Europe/Amsterdam',
      }),
    });
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { total_cost: unknown }).total_cost).to.deep.equal({ excl_vat: 2.5, incl_vat: 2.5 });
    const after = await loaded();
    expect(after.files.filter((f) => f.includes('/node_modules/piscina/'))).to.not.deep.equal([]);
    expect(after.builtins.filter((m) => m.includes('undici'))).to.deep.equal([]);
  });

  it('loads prom-client with the first scrape of /metrics, which counts what came before it', async () => {
    const metrics = await get('/metrics');
    expect(metrics.status).to.equal(200);
    expect(metrics.type).to.match(/^text\/plain/);
    // the requests of the tests above, counted before prom-client was loaded
    expect(metrics.text).to.match(
      /^http_request_duration_seconds_count\{method="GET",route="\/readyz",status="200"\} [1-9]/m,
    );
    expect(metrics.text).to.match(/^process_cpu_user_seconds_total [0-9]/m);
    expect(metrics.text).to.match(/^ocpp_connected_chargers\{protocol="ocpp1.6"\} 0$/m);
    const after = await loaded();
    expect(after.files.filter((f) => f.includes('/node_modules/prom-client/'))).to.not.deep.equal([]);
  });
});
