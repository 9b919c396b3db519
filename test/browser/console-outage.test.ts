import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, signIn } from '../support/fleet.js';
import { clusterEnvironment, type TestEnvironment } from '../support/platforms.js';
import { PrivateRedis } from '../support/private-redis.js';
import { startNode, type NodeProcess } from '../support/processes.js';

const KEY = 'console-outage-key-0123456789';

/**
 * The console while the process that serves it cannot reach Redis (docs/ARCHITECTURE.md
 * "Degraded mode"): its event stream's `health` event makes every view read again, so the note
 * that only this process's chargers show online comes and goes within seconds, not at the next
 * timed read (every 30 s).
 */
describe('operator console while Redis stops answering (cluster mode)', function () {
  this.timeout(90_000);
  let redis: PrivateRedis;
  let env: TestEnvironment;
  let node: NodeProcess;
  let browser: Browser;

  before(async () => {
    redis = await PrivateRedis.start();
    env = await clusterEnvironment({ CSMS_API_KEY: KEY, PROCESS_ROLE: 'web', REDIS_URL: redis.url });
    node = await startNode(env.env);
    browser = await launchChromium();
  });
  after(async () => {
    redis?.thaw();
    await browser?.close();
    await node?.stop();
    await redis?.kill();
    await env?.cleanup();
  });

  it('says so on the overview, the list and a charger page within seconds, and stops saying so once it is back', async () => {
    // a charger not connected here: whether it is connected elsewhere is what the outage hides
    const created = await fetch(`${node.url}/v1/charge-points`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: 'OUTAGE-1', protocol: 'ocpp1.6' }),
    });
    expect(created.status).to.equal(201);
    const pages: Page[] = [];
    for (const [hash, shown] of [
      ['#/', 'count-total'],
      ['#/chargers', 'cp-OUTAGE-1'],
      ['#/chargers/OUTAGE-1', 'online'],
    ] as const) {
      const page = await browser.newPage();
      await signIn(page, node.url, KEY, hash);
      await page.getByTestId(shown).waitFor();
      pages.push(page);
    }
    for (const page of pages) expect(await page.getByTestId('online-scope').count()).to.equal(0);

    redis.freeze();
    const frozenAt = Date.now();
    // was: at the views' next timed read, up to 30 s later
    for (const page of pages) await page.getByTestId('online-scope').waitFor({ timeout: 10_000 });
    const shownMs = Date.now() - frozenAt;
    await pages[1]!.getByTestId('cp-OUTAGE-1').getByTestId('online').filter({ hasText: 'offline' }).waitFor();

    redis.thaw();
    const thawedAt = Date.now();
    for (const page of pages) await page.getByTestId('online-scope').waitFor({ state: 'detached', timeout: 10_000 });
    console.log(
      `      the note on all three views ${shownMs} ms after the freeze, gone ${Date.now() - thawedAt} ms after the thaw`,
    );
  });
});
