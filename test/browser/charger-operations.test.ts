import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { API_KEY, startCsms, type CsmsUnderTest } from '../ocpp/support/csms.js';
import { v16, v201 } from '../ocpp/support/messages.js';
import { strictCharger } from '../support/rpc-client.js';
import { launchChromium, signIn } from '../support/fleet.js';

/**
 * An operator opens a charger's page in the console, presses an operation and reads the charger's
 * answer, its status and its event log (docs/CSMS.md "Operations", "Event log").
 */
describe("console: a charger's operations and event log", function () {
  this.timeout(60_000);
  let csms: CsmsUnderTest;
  let browser: Browser;
  before(async () => {
    csms = await startCsms();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await csms?.stop();
  });

  it('runs GetVariables, a reset and GetBaseReport on a 2.0.1 charger and shows its answers and its events', async () => {
    const cp = await csms.registerChargePoint('ocpp2.0.1');
    const charger = strictCharger(csms.url, cp, 'ocpp2.0.1');
    const resets: unknown[] = [];
    const baseReports: string[] = [];
    charger.handle('GetBaseReport', ({ params }) => {
      baseReports.push((params as { reportBase: string }).reportBase);
      return Promise.resolve({ status: 'Accepted' });
    });
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
    await signIn(page, csms.url, API_KEY, `#/chargers?q=${cp.id}`);
    await page.getByTestId(`cp-${cp.id}`).getByTestId('open').click();
    const panel = page.getByTestId('charger');
    await panel.getByText('security event TamperDetectionActivated').waitFor();
    expect(await page.getByTestId('charger-status').textContent()).to.contain('firmware: Downloading');

    // the 2.0.1 operations are offered, the 1.6 ones are not
    const options = await page.getByTestId('op-select').locator('option').allTextContents();
    expect(options).to.include('get-variables');
    expect(options).to.not.include('get-configuration');

    // the form opens on an operation that only reads, sent at the first Run (it opened on
    // change-availability Inoperative, which one Run sent)
    expect(await page.getByTestId('op-select').inputValue()).to.equal('get-variables');
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-result').getByText('"attributeValue": "120"').waitFor();
    // one that changes the charger is asked twice, naming it and the charger; a cancel sends nothing
    await page.getByTestId('op-select').selectOption('reset');
    await page.getByTestId('op-run').click();
    expect(await page.getByTestId('op-confirm').textContent()).to.contain(`Send reset to ${cp.id}?`);
    await page.getByTestId('op-cancel').click();
    await page.getByTestId('op-run').waitFor();
    // a double click on Run asks, it does not send (its second click landed on Send)
    await page.getByTestId('op-run').dblclick();
    await page.getByTestId('op-confirm').waitFor();
    await page.waitForTimeout(700);
    await page.getByTestId('op-cancel').click();
    expect(resets).to.deep.equal([]);

    // a body that is not JSON is said before the question (it was asked, then refused)
    await page.getByTestId('op-select').selectOption('reset');
    await page.getByTestId('op-body').fill('{"type": "hard",}');
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-result').getByText('The body is not JSON').waitFor();
    expect(await page.getByTestId('op-confirm').count()).to.equal(0);
    // the question says which reset
    await page.getByTestId('op-body').fill('{"type": "hard"}');
    await page.getByTestId('op-run').click();
    expect(await page.getByTestId('op-confirm').textContent()).to.contain(`Send reset to ${cp.id}? (hard)`);
    await page.getByTestId('op-send').click();
    await page.getByTestId('op-result').getByText('reset: Accepted').waitFor();
    expect(resets).to.deep.equal([{ type: 'Immediate' }]);
    // a refused body names the field and what it takes (was "must be equal to constant")
    await page.getByTestId('op-body').fill('{"type": "medium"}');
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-send').click();
    await page.getByTestId('op-result').getByText('reset refused: type: must be one of "soft", "hard"').waitFor();
    await page.getByTestId('charger-commands').getByText('reset: Accepted').waitFor();

    // the device model, asked for: the charger answers, then sends it as NotifyReport
    await page.getByTestId('op-select').selectOption('get-base-report');
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-result').getByText('get-base-report: Accepted').waitFor();
    expect(baseReports).to.deep.equal(['FullInventory']);
    // no password waits for an outcome: dropping one says so
    await page.getByTestId('op-select').selectOption('password/pending');
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-send').click();
    await page.getByTestId('op-result').getByText('has no pending password').waitFor();
    await charger.close();
  });

  // on a slow network the buttons stayed enabled: a double click sent a reset, or a start, twice
  it('on a slow network, a double click on Run or Start sends one command; the button waits for the answer', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const charger = strictCharger(csms.url, cp, 'ocpp1.6');
    const resets: unknown[] = [];
    const starts: unknown[] = [];
    charger.handle('Reset', ({ params }) => (resets.push(params), Promise.resolve({ status: 'Accepted' })));
    charger.handle(
      'RemoteStartTransaction',
      ({ params }) => (starts.push(params), Promise.resolve({ status: 'Accepted' })),
    );
    await charger.connect();
    await charger.call('BootNotification', v16.boot());
    await charger.call('StatusNotification', { connectorId: 1, status: 'Available', errorCode: 'NoError' });
    const page = await browser.newPage();
    await signIn(page, csms.url, API_KEY, `#/chargers?q=${cp.id}`);
    await page.getByTestId(`cp-${cp.id}`).getByTestId('open').click();
    await page.getByTestId('connector-1-1').waitFor();
    // every command route answers 1 s late
    await page.route(/\/v1\/charge-points\/[^/]+\/(reset|remote-start)/, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await route.continue();
    });
    await page.getByTestId('op-select').selectOption('reset');
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-send').dblclick();
    expect(await page.getByTestId('op-run').isDisabled()).to.equal(true);
    await page.getByTestId('op-result').getByText('reset: Accepted').waitFor();
    expect(await page.getByTestId('op-run').isDisabled()).to.equal(false);
    await page.getByTestId('remote-start').dblclick();
    expect(await page.getByTestId('remote-start').isDisabled()).to.equal(true);
    await page.getByText('Remote start: Accepted').waitFor();
    expect(resets).to.have.length(1);
    expect(starts).to.have.length(1);
    // a newer operation: the start's outcome leaves the top of the page (it stayed there above
    // newer results, and read as the current state)
    await page.getByTestId('op-select').selectOption('get-configuration');
    await page.getByTestId('op-run').click();
    await page.getByText('Remote start: Accepted').waitFor({ state: 'detached' });
    await charger.close();
  });

  it('installs a charging profile and sends a local list to a 1.6 charger, and sets it Pending', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const charger = strictCharger(csms.url, cp, 'ocpp1.6');
    const got: Record<string, unknown[]> = {};
    for (const action of ['SetChargingProfile', 'SendLocalList', 'TriggerMessage'])
      charger.handle(action, ({ params }) => {
        (got[action] ??= []).push(params);
        return Promise.resolve({ status: 'Accepted' });
      });
    await charger.connect();
    await charger.call('BootNotification', v16.boot());

    const page = await browser.newPage();
    await signIn(page, csms.url, API_KEY, `#/chargers/${cp.id}`);
    await page.getByTestId('charger-title').getByText('online').waitFor();
    const facts = page.getByTestId('facts');
    expect(await facts.textContent())
      .to.contain('ocpp1.6')
      .and.contain('RegistrationAccepted');

    // the example body: a 16 A limit on the whole charger
    await page.getByTestId('op-select').selectOption('set-charging-profile');
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-send').click();
    await page.getByTestId('op-result').getByText('set-charging-profile: Accepted').waitFor();
    expect(got.SetChargingProfile).to.deep.equal([
      {
        connectorId: 0,
        csChargingProfiles: {
          chargingProfileId: 1,
          stackLevel: 0,
          chargingProfilePurpose: 'ChargePointMaxProfile',
          // was Relative, which a 2.0.1 charger may not take for its maximum (K01.FR.38)
          chargingProfileKind: 'Absolute',
          chargingSchedule: {
            startSchedule: '2025-01-01T00:00:00Z',
            chargingRateUnit: 'A',
            chargingSchedulePeriod: [{ startPeriod: 0, limit: 16 }],
          },
        },
      },
    ]);

    await page.getByTestId('op-select').selectOption('send-local-list');
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-send').click();
    await page.getByTestId('op-result').getByText('send-local-list: Accepted').waitFor();
    expect(got.SendLocalList).to.deep.equal([
      {
        listVersion: 1,
        updateType: 'Differential',
        localAuthorizationList: [{ idTag: 'CARD-1', idTagInfo: { status: 'Accepted' } }],
      },
    ]);

    // a setting of the charge point: the charger is asked to boot again and learns it is Pending
    await page.getByTestId('op-select').selectOption('boot-policy');
    await page.getByTestId('op-body').fill('{"policy": "Pending"}');
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-send').click();
    await page.getByTestId('op-result').getByText('"Pending"').first().waitFor();
    await charger.close();
  });
});

describe('console: what an operation adds to its answer, and a page per charger', function () {
  this.timeout(60_000);
  let csms: CsmsUnderTest;
  let browser: Browser;
  before(async () => {
    // the route waits 5 s (its default wait_ms), the charger's answer up to 15 s
    csms = await startCsms({ callTimeoutMs: 15_000 });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await csms?.stop();
  });

  it('a reply after the wait, a refused password, a reservation cancelled from its card, a local list synced', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const other = await csms.registerChargePoint('ocpp1.6');
    const charger = strictCharger(csms.url, cp, 'ocpp1.6');
    // the configuration comes after the route's 5 s wait
    charger.handle(
      'GetConfiguration',
      () =>
        new Promise((resolve) =>
          setTimeout(
            () => resolve({ configurationKey: [{ key: 'HeartbeatInterval', readonly: false, value: '300' }] }),
            6_000,
          ),
        ),
    );
    // the new password (AuthorizationKey) is refused
    charger.handle('ChangeConfiguration', () => Promise.resolve({ status: 'Rejected' }));
    for (const action of ['ReserveNow', 'CancelReservation', 'SendLocalList'])
      charger.handle(action, () => Promise.resolve({ status: 'Accepted' }));
    await charger.connect();
    await charger.call('BootNotification', v16.boot());
    await charger.call('StatusNotification', { connectorId: 1, status: 'Available', errorCode: 'NoError' });

    const page = await browser.newPage();
    await signIn(page, csms.url, API_KEY, `#/chargers/${cp.id}`);
    await page.getByTestId('charger-title').getByText('online').waitFor();
    const result = page.getByTestId('op-result');

    // was "Accepted (the reply is in the command list)", and no list or route held it
    await page.getByTestId('op-select').selectOption('get-configuration');
    await page.getByTestId('op-run').click();
    await result.getByText('get-configuration: sent (no answer yet)').waitFor();
    await result.getByText('"value": "300"').waitFor({ timeout: 15_000 });
    const commands = page.getByTestId('charger-commands');
    await commands.getByTestId('show-reply').first().click();
    await commands.getByTestId('reply').getByText('HeartbeatInterval').waitFor();

    // was "new password (shown once): ..." beside the refusal, a password the charger never took
    await page.getByTestId('op-select').selectOption('password');
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-send').click();
    await result.getByText('the new password was not taken: the old one stays').waitFor();
    expect(await result.textContent()).to.not.contain('shown once');

    // the reservation's id is shown, and the reservation can be cancelled where it is listed
    // from the keyboard: the question takes the focus on its Cancel, and Run has it back after the
    // answer (it went to the top of the page at each step)
    const focused = () => page.evaluate("document.activeElement?.getAttribute('data-testid') ?? null");
    await page.getByTestId('op-select').selectOption('reserve');
    await page.getByTestId('op-run').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('op-confirm').waitFor();
    expect(await focused()).to.equal('op-cancel');
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).to.equal('op-send');
    await page.keyboard.press('Enter');
    await result.getByText('reserve: Accepted').waitFor();
    expect(await focused()).to.equal('op-run');
    const id = /reservation id: (\d+)/.exec((await result.textContent()) ?? '')?.[1];
    expect(id, 'the reservation id shown').to.match(/^\d+$/);
    const reservation = page.getByTestId(`reservation-${id}`);
    await reservation.waitFor();
    // the EVSE says it too, though its connector still reports Available (was: the card only)
    const reserved = page.getByTestId('connector-1-1').getByTestId('reserved-for');
    expect(await reserved.textContent()).to.contain('reserved for CARD-1 until');
    await reservation.getByTestId('cancel-reservation').click();
    await page.getByText('Cancel reservation: Accepted').waitFor();
    await reservation.waitFor({ state: 'detached' });
    await reserved.waitFor({ state: 'detached' });

    // a reservation that expires leaves the open page then, not at its next read (up to 30 s on)
    const expiry = new Date(Date.now() + 3_000).toISOString();
    const held = await csms.api<{ command_status: string }>('POST', `/v1/charge-points/${cp.id}/reserve`, {
      id_tag: 'CARD-2',
      evse_id: 1,
      expiry_date: expiry,
    });
    expect(held.body.command_status).to.equal('Accepted');
    await reserved.filter({ hasText: 'reserved for CARD-2' }).waitFor();
    await reserved.waitFor({ state: 'detached', timeout: 8_000 });
    expect(await page.getByTestId('reservations').count()).to.equal(0);

    // was "sync-local-list: undefined (no answer yet)" whatever the charger said
    await page.getByTestId('op-select').selectOption('sync-local-list');
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-send').click();
    await result
      .getByText(/sync-local-list: (the charger holds the list already|a (full|differential) update)/)
      .waitFor();
    expect(await result.textContent()).to.not.contain('undefined');

    // another charger's page starts afresh: no result or notice of this one's
    // the address changed in place (a link, a typed address), not through the list
    const there = new URL(page.url());
    there.hash = `#/chargers/${other.id}`;
    await page.goto(there.toString());
    await page.getByTestId('charger-title').getByText(other.id).waitFor();
    expect(await page.getByTestId('op-result').count()).to.equal(0);
    expect(await page.getByText('Cancel reservation: Accepted').count()).to.equal(0);
    await charger.close();
  });
});

describe('console: an operation the charger does not answer', function () {
  this.timeout(60_000);
  let csms: CsmsUnderTest;
  let browser: Browser;
  before(async () => {
    // the route waits 5 s (its default wait_ms), the charger's answer 7 s: the page sees "sent" first
    csms = await startCsms({ callTimeoutMs: 7_000 });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await csms?.stop();
  });

  it('shows it sent, not green, then its timeout in red', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const charger = strictCharger(csms.url, cp, 'ocpp1.6');
    charger.handle('Reset', () => new Promise(() => undefined));
    await charger.connect();
    await charger.call('BootNotification', v16.boot());
    const page = await browser.newPage();
    await signIn(page, csms.url, API_KEY, `#/chargers/${cp.id}`);
    await page.getByTestId('op-select').selectOption('reset');
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-send').click();
    const result = page.getByTestId('op-result');
    await result.getByText('reset: sent (no answer yet)').waitFor();
    // was green ("ok") until the page was left, though the charger never answered
    expect(await result.getAttribute('class')).to.equal('notice pending');
    await result.getByText(/reset: timeout - .*did not answer Reset/).waitFor({ timeout: 15_000 });
    expect(await result.getAttribute('class')).to.equal('notice err');
    // the server out of reach: said so (was "reset refused: Failed to fetch")
    await page.route('**/v1/charge-points/*/reset**', (route) => route.abort('connectionrefused'));
    await page.getByTestId('op-run').click();
    await page.getByTestId('op-send').click();
    await result.getByText('reset not sent: the server could not be reached').waitFor();
    expect(await result.getAttribute('class')).to.equal('notice err');
    await page.unroute('**/v1/charge-points/*/reset**');
    // a remote start the charger does not answer either: blue, not green (docs/CSMS.md)
    charger.handle('RemoteStartTransaction', () => new Promise(() => undefined));
    await charger.call('StatusNotification', v16.status(1, 'Available'));
    await page.getByTestId('id-tag').fill('DRIVER-SILENT');
    const start = page.getByTestId('connector-1-1').getByTestId('remote-start');
    await start.and(page.locator(':enabled')).waitFor();
    await start.click();
    const notice = page.getByTestId('notice');
    await notice.getByText("Remote start: sent, waiting for the charger's answer…").waitFor();
    expect(await notice.getAttribute('class')).to.equal('notice pending');
    await charger.close({ force: true });
  });
});
