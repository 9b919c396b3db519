import { expect } from 'chai';
import { chromium, type Browser } from 'playwright-core';
import { API_KEY, startCsms, type CsmsUnderTest } from '../ocpp/support/csms.js';
import { v201 } from '../ocpp/support/messages.js';
import { strictCharger } from '../support/rpc-client.js';

/** Debian's chromium (apt-get install chromium); the test never downloads a browser. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * An operator opens a charger in the dashboard, presses an operation and reads the charger's
 * answer, its status and its event log (docs/CSMS.md "Operations", "Event log").
 */
describe("dashboard: a charger's operations and event log", function () {
  this.timeout(60_000);
  let csms: CsmsUnderTest;
  let browser: Browser;
  before(async () => {
    csms = await startCsms();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  });
  after(async () => {
    await browser?.close();
    await csms?.stop();
  });

  it('runs GetVariables and a reset on a 2.0.1 charger and shows its answer and its events', async () => {
    const cp = await csms.registerChargePoint('ocpp2.0.1');
    const charger = strictCharger(csms.url, cp, 'ocpp2.0.1');
    const resets: unknown[] = [];
    charger.handle('Reset', ({ params }) => {
      resets.push(params);
      return Promise.resolve({ status: 'Accepted' });
    });
    charger.handle('GetVariables', () =>
      Promise.resolve({
        getVariableResult: [
          {
            attributeStatus: 'Accepted',
            attributeValue: '120',
            component: { name: 'OCPPCommCtrlr' },
            variable: { name: 'HeartbeatInterval' },
          },
        ],
      }),
    );
    await charger.connect();
    await charger.call('BootNotification', v201.boot());
    const at = new Date().toISOString();
    await charger.call('SecurityEventNotification', { type: 'TamperDetectionActivated', timestamp: at });
    await charger.call('FirmwareStatusNotification', { status: 'Downloading', requestId: 8 });

    const page = await browser.newPage();
    await page.goto(`${csms.url}/dashboard`);
    await page.locator('#api-key').fill(API_KEY);
    await page.locator('#key-form button').click();
    await page.getByTestId(`cp-${cp.id}`).getByTestId('open').click();
    const panel = page.getByTestId('charger');
    await panel.getByText('security event TamperDetectionActivated').waitFor();
    expect(await page.getByTestId('charger-status').textContent()).to.contain('firmware: Downloading');

    // the 2.0.1 operations are offered, the 1.6 ones are not
    const options = await page.locator('#op-select option').allTextContents();
    expect(options).to.include('get-variables');
    expect(options).to.not.include('get-configuration');

    await page.locator('#op-select').selectOption('get-variables');
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-result').getByText('"attributeValue": "120"').waitFor();

    await page.locator('#op-select').selectOption('reset');
    await page.locator('#op-body').fill('{"type": "hard"}');
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-result').getByText('reset: Accepted').waitFor();
    expect(resets).to.deep.equal([{ type: 'Immediate' }]);
    await page.getByTestId('charger-commands').getByText('reset: Accepted').waitFor();
    await charger.close();
  });
});
