import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { API_KEY } from '../support/ocpi-harness.js';
import { RoamingWorld } from '../support/roaming-world.js';
import { launchChromium, signIn } from '../support/fleet.js';

/**
 * The operator sees what a roamed session costs in the console's sessions view: its running cost while it
 * runs (marked ~), its CDR's total once it ended (docs/TARIFFS.md "CDRs from transactions").
 */
describe('console: the cost of a roamed session', function () {
  this.timeout(60_000);
  let world: RoamingWorld;
  let browser: Browser;

  before(async () => {
    world = await RoamingWorld.start({ ROAMING_SESSION_PUSH_MS: '0', PRICING_THREADS: '1' });
    const tariff = {
      country_code: 'NL',
      party_id: 'EVP',
      id: 'T-1',
      currency: 'EUR',
      elements: [{ price_components: [{ type: 'ENERGY', price: 0.25, vat: 20, step_size: 1 }] }],
      last_updated: '2024-01-01T00:00:00Z',
    };
    expect((await world.api.request('PUT', '/v1/ocpi/tariffs/T-1', { body: tariff })).status).to.equal(200);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await world?.stop();
  });

  it('shows the running cost, then the final one', async () => {
    const e = await world.emsp('2.2.1');
    const { cp, charger } = await world.linkedCharger('ocpp1.6');
    const uid = `D${randomUUID().slice(0, 8)}`.toUpperCase();
    await world.pushToken(e, uid, { whitelist: 'ALWAYS' });
    const page = await browser.newPage();
    await signIn(page, world.platform.platform.url, API_KEY, `#/sessions?charge_point_id=${cp.id}`);

    const t0 = Date.now() - 3_600_000;
    const at = (m: number) => new Date(t0 + m * 60_000).toISOString();
    const { transactionId } = (await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: uid,
      meterStart: 0,
      timestamp: at(0),
    })) as { transactionId: number };
    await charger.call('MeterValues', {
      connectorId: 1,
      transactionId,
      meterValue: [{ timestamp: at(10), sampledValue: [{ value: '4000', unit: 'Wh' }] }],
    });
    // 4 kWh at 0.25 + 20%: 1.20 so far
    const cost = page.locator(`[data-testid="session-${cp.id}"] [data-testid="cost"]`);
    await cost.filter({ hasText: '~EUR 1.20' }).waitFor({ timeout: 15_000 });
    await charger.call('StopTransaction', { transactionId, meterStop: 10000, timestamp: at(30) });
    // 10 kWh: 3.00
    await cost.filter({ hasText: /^EUR 3\.00$/ }).waitFor({ timeout: 15_000 });

    // in a Dutch browser, numbers are written as its dates are: 10,000 kWh and EUR 3,00 (they
    // kept the point, and "10.000" kWh read as ten thousand)
    const context = await browser.newContext({ locale: 'nl-NL' });
    const dutch = await context.newPage();
    await signIn(dutch, world.platform.platform.url, API_KEY, `#/sessions?charge_point_id=${cp.id}`);
    const row = dutch.locator(`[data-testid="session-${cp.id}"]`);
    await row
      .locator('[data-testid="cost"]')
      .filter({ hasText: /^EUR 3,00$/ })
      .waitFor({ timeout: 15_000 });
    expect(await row.locator('[data-testid="energy"]').textContent()).to.equal('10,000');
    await context.close();
  });
});
