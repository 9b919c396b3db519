import { expect } from 'chai';
import { createServer } from 'node:net';
import type { Browser } from 'playwright-core';
import type { RPCClient } from 'ocpp-rpc';
import { v16 } from '../ocpp/support/messages.js';
import { launchChromium, signIn } from '../support/fleet.js';
import { embeddedEnvironment, type TestEnvironment } from '../support/platforms.js';
import { startNode, type NodeProcess } from '../support/processes.js';
import { strictCharger } from '../support/rpc-client.js';

const KEY = 'console-restart-key-0123456789';

/** A port free now, so that the server comes back where the console's page looks for it. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * The console across a restart of the server (docs/CSMS.md "Dashboard"): its event stream is cut
 * and comes back, and what changed in between (a charger that went offline as the server stopped)
 * came as no event. Each view reads afresh when the stream is live again.
 */
describe('operator console across a restart of the server', function () {
  this.timeout(90_000);
  let env: TestEnvironment;
  let node: NodeProcess;
  let browser: Browser;
  let charger: RPCClient | undefined;

  before(async () => {
    env = await embeddedEnvironment({ CSMS_API_KEY: KEY, PORT: String(await freePort()) });
    node = await startNode(env.env);
    browser = await launchChromium();
  });
  after(async () => {
    await charger?.close({ force: true }).catch(() => undefined);
    await browser?.close();
    await node?.stop();
    await env?.cleanup();
  });

  it('shows a charger that went offline while the server restarted as offline once it is live again', async () => {
    const created = await fetch(`${node.url}/v1/charge-points`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ id: 'RESTART-1', protocol: 'ocpp1.6' }),
    });
    expect(created.status).to.equal(201);
    const { password } = (await created.json()) as { password: string };
    charger = strictCharger(node.url, { id: 'RESTART-1', password }, 'ocpp1.6');
    await charger.connect();
    await charger.call('BootNotification', v16.boot());
    await charger.call('StatusNotification', v16.status(1, 'Available'));

    const pages = await Promise.all(
      ['#/chargers/RESTART-1', '#/', '#/chargers?q=RESTART-1'].map(() => browser.newPage()),
    );
    const [chargerPage, overview, list] = pages as [(typeof pages)[0], (typeof pages)[0], (typeof pages)[0]];
    await signIn(chargerPage, node.url, KEY, '#/chargers/RESTART-1');
    await chargerPage.getByTestId('online').filter({ hasText: 'online' }).waitFor();
    await signIn(overview, node.url, KEY, '#/');
    await overview.getByTestId('count-online').getByTestId('value').filter({ hasText: '1' }).waitFor();
    await signIn(list, node.url, KEY, '#/chargers?q=RESTART-1');
    await list.getByTestId('cp-RESTART-1').getByTestId('online').filter({ hasText: 'online' }).waitFor();

    // the server stops (its chargers are closed, 1012), this one does not come back
    await node.stop();
    await chargerPage.getByTestId('live').filter({ hasNotText: 'live' }).waitFor();
    // the state in red while the stream is down (it was green in every state)
    type Styled = { getComputedStyle(e: unknown): { color: string } };
    const colour = () =>
      chargerPage.getByTestId('live').evaluate((el) => (globalThis as unknown as Styled).getComputedStyle(el).color);
    expect(await colour()).to.equal('rgb(180, 35, 24)');
    node = await startNode(env.env);
    // was "online" and "1 online" until a reload: the offline events were sent to no one
    await chargerPage.getByTestId('live').filter({ hasText: 'live' }).waitFor({ timeout: 20_000 });
    expect(await colour()).to.equal('rgb(15, 122, 58)');
    await chargerPage.getByTestId('online').filter({ hasText: 'offline' }).waitFor({ timeout: 10_000 });
    await overview.getByTestId('count-online').getByTestId('value').filter({ hasText: '0' }).waitFor();
    await list.getByTestId('cp-RESTART-1').getByTestId('online').filter({ hasText: 'offline' }).waitFor();
    for (const p of pages) await p.close();
  });

  it('a list whose load fails shows the error alone, not the range of the list before or "Loading…"', async () => {
    const page = await browser.newPage();
    await signIn(page, node.url, KEY, '#/chargers');
    // the list loaded ("1–1 of 1", or "No charger matches." when this test runs alone)
    await page
      .getByTestId('range')
      .filter({ hasText: /charger|of/ })
      .waitFor();
    await page.goto(`${node.url}/dashboard#/chargers?sort=nope`);
    await page.getByRole('alert').filter({ hasText: 'Could not load' }).waitFor();
    // was the range of the load before beside the error, and a pager
    expect((await page.getByTestId('range').textContent())?.trim()).to.equal('');
    expect(await page.locator('nav.pager').count()).to.equal(0);
    await page.goto(`${node.url}/dashboard#/sessions?status=FOO`);
    await page.getByRole('alert').filter({ hasText: 'Could not load' }).waitFor();
    // was "Loading…" for ever
    expect((await page.getByTestId('range').textContent())?.trim()).to.equal('');
    expect(await page.locator('nav.pager').count()).to.equal(0);
    await page.close();
  });
});
