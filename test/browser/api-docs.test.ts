import { expect } from 'chai';
import { chromium, type Browser } from 'playwright-core';
import { platformModules } from '../../src/modules.js';
import {
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../support/platforms.js';

/** Debian's chromium (apt-get install chromium); the test never downloads a browser. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * /docs in a real browser (docs/ARCHITECTURE.md "API documentation"): Swagger UI, served by the
 * platform, renders /openapi.json under the page's Content-Security-Policy, and nothing is
 * refused by it or loaded from another origin.
 */
describe('/docs: the API reference page in a browser', function () {
  this.timeout(60_000);
  let env: TestEnvironment;
  let p: StartedPlatform;
  let browser: Browser;
  before(async () => {
    env = await embeddedEnvironment({ CSMS_API_KEY: 'k'.repeat(32) });
    p = await startPlatform(env, platformModules());
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });
  after(async () => {
    await browser?.close();
    await p?.stop();
    await env?.cleanup();
  });

  it('renders the operations of /openapi.json with no CSP violation and no request to another origin', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    const origins = new Set<string>();
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('request', (r) => origins.add(new URL(r.url()).origin));
    page.on('response', (r) => {
      if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
    });
    // Swagger UI renders the operations in view only: a deep link scrolls to one and opens it
    const res = await page.goto(`${p.platform.url}/docs#/csms-v1/getChargePoint`);
    expect(res?.headers()['content-security-policy']).to.contain("script-src 'self'");
    const opened = page.locator('[id$="-getChargePoint"] .responses-table').first();
    await opened.waitFor({ timeout: 30_000 }).catch((err: unknown) => {
      throw new Error(`${String(err)}; page problems: ${problems.join(' | ')}`);
    });
    // its documented statuses, and the operationIds Swagger UI shows beside the operations
    expect(await opened.innerText()).to.contain('404');
    await page.getByText('getChargePoint', { exact: true }).first().waitFor();
    // a new load: a change of the hash alone is not followed
    await page.goto('about:blank');
    await page.goto(`${p.platform.url}/docs#/csms-v1/listChargePoints`);
    await page.getByText('listChargePoints', { exact: true }).first().waitFor({ timeout: 30_000 });
    await page.goto('about:blank');
    await page.goto(`${p.platform.url}/docs#/ocpi-cpo-2.2.1/cpo221ListLocations`);
    await page.getByText('cpo221ListLocations', { exact: true }).first().waitFor({ timeout: 30_000 });
    await page.waitForTimeout(300);
    expect(problems).to.deep.equal([]);
    expect([...origins].filter((o) => o !== p.platform.url && o !== 'null')).to.deep.equal([]);
    await page.close();
  });
});
