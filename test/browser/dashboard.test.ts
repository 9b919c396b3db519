import { expect } from 'chai';
import { chromium, type Browser, type Page } from 'playwright-core';
import { connect } from '../ocpp/support/charger.js';
import { API_KEY, startCsms, type CsmsUnderTest } from '../ocpp/support/csms.js';
import { v16 } from '../ocpp/support/messages.js';
import { ocpiModule } from '../../src/ocpi/module.js';
import { roamingModule } from '../../src/roaming/module.js';
import { aLocation, anEvse } from '../support/ocpi-builders.js';

/** Debian's chromium (apt-get install chromium); the test never downloads a browser. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('operator dashboard in a real browser', function () {
  this.timeout(60_000);
  let csms: CsmsUnderTest;
  let browser: Browser;
  let page: Page;

  before(async () => {
    // the OCPI and roaming modules too: the EVSE links name our OCPI locations
    const ocpi = ocpiModule();
    csms = await startCsms({}, undefined, [ocpi, roamingModule(ocpi.outbox)]);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    const context = await browser.newContext();
    // the operator key the page would ask for; a string script because it runs in the page
    await context.addInitScript({ content: `localStorage.setItem('csms-api-key', ${JSON.stringify(API_KEY)});` });
    page = await context.newPage();
  });
  after(async () => {
    await browser?.close();
    await csms?.stop();
  });

  it('shows a charger going online, sends a remote start, and shows the session, all without a reload', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    await page.goto(`${csms.url}/dashboard`);
    const row = page.getByTestId(`cp-${cp.id}`);
    await row.waitFor();
    expect(await row.getAttribute('data-online')).to.equal('false');
    await page.getByTestId('live').filter({ hasText: 'live' }).waitFor();

    const charger = await connect({
      url: cp.ocpp_url,
      username: cp.username,
      password: cp.password,
      protocols: ['ocpp1.6'],
    });
    charger.answers = { RemoteStartTransaction: { status: 'Accepted' } };
    await charger.call('BootNotification', v16.boot());
    await charger.call('StatusNotification', v16.status(1, 'Available'));
    await page.locator(`[data-testid="cp-${cp.id}"][data-online="true"]`).waitFor();
    // the online event and the status event refresh the row separately and may arrive in either order
    await row.getByTestId('connectors').filter({ hasText: 'Available' }).waitFor({ timeout: 10_000 });
    expect(await row.getByTestId('connectors').textContent()).to.contain('Available');

    page.once('dialog', (dialog) => void dialog.accept('DRIVER-UI'));
    await row.getByTestId('remote-start').click();
    const call = await charger.csmsCall('RemoteStartTransaction', 10_000);
    expect(call.payload.idTag).to.equal('DRIVER-UI');
    const { transactionId } = await charger.call<{ transactionId: number }>(
      'StartTransaction',
      v16.start({ idTag: 'DRIVER-UI', meterStart: 0 }),
    );
    await charger.call('MeterValues', v16.meterValues(1, transactionId, 2500));

    const session = page.locator(`[data-testid="session-${cp.id}"][data-status="ACTIVE"]`);
    await session.waitFor();
    await page
      .locator(`[data-testid="session-${cp.id}"] [data-testid="energy"]`)
      .filter({ hasText: '2.500' })
      .waitFor();
    await charger.close();
    await page.locator(`[data-testid="cp-${cp.id}"][data-online="false"]`).waitFor();
  });

  it('runs under a CSP without inline scripts, refuses framing, and keeps the operator key in sessionStorage only', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    // a fresh browser context: no key anywhere, the operator types it
    const context = await browser.newContext();
    try {
      const fresh = await context.newPage();
      const violations: string[] = [];
      fresh.on('console', (m) => {
        if (/Content.Security.Policy/i.test(m.text())) violations.push(m.text());
      });
      const res = await fresh.goto(`${csms.url}/dashboard`);
      const headers = res?.headers() ?? {};
      expect(headers['content-security-policy'])
        .to.contain("script-src 'self'")
        .and.contain("frame-ancestors 'none'")
        .and.not.contain('unsafe-inline');
      expect(headers['x-frame-options']).to.equal('DENY');
      expect(headers['x-content-type-options']).to.equal('nosniff');
      expect(headers['referrer-policy']).to.equal('no-referrer');
      await fresh.locator('#api-key').fill(API_KEY);
      await fresh.locator('#key-form button').click();
      // the script (a file of its own, allowed by the CSP) ran and used the key
      await fresh.getByTestId(`cp-${cp.id}`).waitFor();
      expect(await fresh.evaluate("sessionStorage.getItem('csms-api-key')")).to.equal(API_KEY);
      expect(await fresh.evaluate("localStorage.getItem('csms-api-key')")).to.equal(null);
      expect(violations).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('links an EVSE of a charger to one of our OCPI locations and unlinks it; a refusal is shown', async () => {
    const cp = await csms.registerChargePoint('ocpp2.0.1');
    const location = aLocation({ id: 'UI-LOC', evses: [anEvse({ uid: 'UI-E1' })] });
    expect((await csms.api('PUT', '/v1/ocpi/locations/UI-LOC', location)).status).to.equal(200);
    await page.goto(`${csms.url}/dashboard`);
    const row = page.getByTestId(`cp-${cp.id}`);
    await row.waitFor();
    const links = row.getByTestId('evse-links');
    const form = page.getByTestId('link-form');
    await form.getByLabel('charge point id').fill(cp.id);
    await form.getByLabel('EVSE number').fill('1');
    await form.getByLabel('location id').fill('UI-LOC');
    await form.getByLabel('OCPI EVSE uid').fill('NOPE');
    await form.getByRole('button', { name: 'Link' }).click();
    await page.locator('#message').filter({ hasText: 'Link refused' }).waitFor();
    expect(await page.locator('#message').textContent()).to.contain('NOPE');

    await form.getByLabel('OCPI EVSE uid').fill('UI-E1');
    await form.getByRole('button', { name: 'Link' }).click();
    await links.getByTestId('evse-link-1').filter({ hasText: 'UI-LOC / UI-E1' }).waitFor();
    const view = await csms.api<{ evse_links: unknown[] }>('GET', `/v1/charge-points/${cp.id}`);
    expect(view.body.evse_links).to.deep.equal([{ evse_number: 1, location_id: 'UI-LOC', evse_uid: 'UI-E1' }]);

    await links.getByTestId('evse-link-1').getByTestId('unlink').click();
    await links.getByTestId('evse-link-1').waitFor({ state: 'detached' });
    expect(
      (await csms.api<{ evse_links: unknown[] }>('GET', `/v1/charge-points/${cp.id}`)).body.evse_links,
    ).to.deep.equal([]);
  });

  it('moves a key an older version left in localStorage into sessionStorage', async () => {
    // the first context's init script puts the key into localStorage before every page load
    await page.goto(`${csms.url}/dashboard`);
    await page.getByTestId('live').filter({ hasText: 'live' }).waitFor();
    expect(await page.evaluate("localStorage.getItem('csms-api-key')")).to.equal(null);
    expect(await page.evaluate("sessionStorage.getItem('csms-api-key')")).to.equal(API_KEY);
  });
});
