import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { API_KEY, startCsms, type CsmsUnderTest } from '../ocpp/support/csms.js';
import { v16 } from '../ocpp/support/messages.js';
import { connectedCharger } from '../ocpp/support/scenario.js';
import { launchChromium, signIn } from '../support/fleet.js';

/**
 * The sessions CSV of the console (docs/CSMS.md "Dashboard"): every session the filters select, read
 * 1,000 at a time, with a line saying how many it holds; days that select nothing said so.
 */
describe('console: the sessions CSV past 1,000 sessions', function () {
  this.timeout(90_000);
  let csms: CsmsUnderTest;
  let browser: Browser;
  let page: Page;
  const SESSIONS = 1_010;
  /** the day the sessions started on: yesterday (UTC) */
  const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  /** the chargers, 101 sessions each */
  const ids: string[] = [];

  before(async () => {
    csms = await startCsms();
    // 1,010 finished sessions of yesterday, on 10 chargers, one call at a time each
    await Promise.all(
      Array.from({ length: 10 }, async (_, c) => {
        const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
        ids.push(cp.id);
        await charger.call('BootNotification', v16.boot());
        for (let k = 0; k < SESSIONS / 10; k++) {
          const at = new Date(Date.parse(`${day}T12:00:00Z`) + (c * 1000 + k) * 1000).toISOString();
          const { transactionId } = (await charger.call(
            'StartTransaction',
            v16.start({ idTag: `T${c}`, meterStart: 0, timestamp: at }),
          )) as { transactionId: number };
          await charger.call('StopTransaction', v16.stop(transactionId, 10, { timestamp: at }));
        }
        await charger.close();
      }),
    );
    // one more, at 23:30 UTC the day before: 00:30 of `day` in Amsterdam
    const { charger } = await connectedCharger(csms, 'ocpp1.6');
    await charger.call('BootNotification', v16.boot());
    const lateAt = new Date(Date.parse(`${day}T00:00:00Z`) - 30 * 60_000).toISOString();
    const late = (await charger.call(
      'StartTransaction',
      v16.start({ idTag: 'LATE', meterStart: 0, timestamp: lateAt }),
    )) as {
      transactionId: number;
    };
    await charger.call('StopTransaction', v16.stop(late.transactionId, 10, { timestamp: lateAt }));
    await charger.close();
    browser = await launchChromium();
    page = await browser.newPage();
    await signIn(page, csms.url, API_KEY, `#/sessions?from=${day}`);
  });
  after(async () => {
    await browser?.close();
    await csms?.stop();
  });

  it('holds every session of the days chosen, and says how many; days that cannot select anything say why', async () => {
    await page
      .getByTestId('range')
      .filter({ hasText: `of ${SESSIONS}` })
      .waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('csv').click()]);
    expect(download.suggestedFilename()).to.equal(`sessions-from-${day}.csv`);
    const rows = (await readFile((await download.path()) ?? '', 'utf8')).trim().split('\n').slice(1);
    expect(rows).to.have.length(SESSIONS);
    // one row per session: the session ids (column 16) are all different
    expect(new Set(rows.map((r) => r.split(',')[15])).size).to.equal(SESSIONS);
    await page
      .getByTestId('notice')
      .filter({ hasText: `Exported ${SESSIONS} sessions.` })
      .waitFor();

    // "before" the same day as "from": nothing could match, and the console says why
    await page.getByTestId('started-before').fill(day);
    await page.getByTestId('notice').filter({ hasText: '"before" must be a later day than "started from"' }).waitFor();
    expect(await page.getByTestId('csv').isDisabled()).to.equal(true);
    // a day the calendar does not have, in a link: named in the pickers' words, not the API's
    await page.goto(`${csms.url}/dashboard#/sessions?from=2026-11-31`);
    await page
      .getByTestId('notice')
      .filter({ hasText: '"started from" 2026-11-31 is no day of the calendar.' })
      .waitFor();
  });

  it("takes the pickers' days in the browser's time zone, as the times it shows", async () => {
    const context = await browser.newContext({ timezoneId: 'Europe/Amsterdam' });
    const amsterdam = await context.newPage();
    try {
      const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
      await signIn(amsterdam, csms.url, API_KEY, `#/sessions?from=${day}&before=${next}`);
      // was 1,010 of them: the day was UTC's, and the session of 00:30 local time was left out
      await amsterdam
        .getByTestId('range')
        .filter({ hasText: `of ${SESSIONS + 1}` })
        .waitFor();
      expect(await amsterdam.getByText('started from (Europe/Amsterdam)').count()).to.equal(1);
    } finally {
      await context.close();
    }
  });

  it('a link with a day no Date can hold says so, and the console goes on', async () => {
    await page.goto(`${csms.url}/dashboard#/sessions?from=2026-13-45`);
    // was "Invalid time value" thrown: a blank page, "connecting" for ever, no screen reachable
    await page
      .getByTestId('notice')
      .filter({ hasText: '"started from" 2026-13-45 is no day of the calendar.' })
      .waitFor();
    await page.getByTestId('nav-chargers').click();
    await page.getByRole('heading', { name: 'Chargers' }).waitFor();
    // the screen is named in the title, and its heading has the focus (it stayed on the link followed)
    await page.locator('h1:focus').waitFor();
    expect(await page.title()).to.equal('Chargers · Operator console');
  });

  it('a double click on Export downloads one file', async () => {
    await page.goto(`${csms.url}/dashboard#/sessions?from=${day}`);
    await page
      .getByTestId('range')
      .filter({ hasText: `of ${SESSIONS}` })
      .waitFor();
    let downloads = 0;
    page.on('download', () => (downloads += 1));
    await page.getByTestId('csv').dblclick();
    await page
      .getByTestId('notice')
      .filter({ hasText: `Exported ${SESSIONS} sessions.` })
      .waitFor();
    await page.waitForTimeout(1_000);
    // was two: the second click read every page again while the first still did
    expect(downloads).to.equal(1);
    expect(await page.getByTestId('csv').textContent()).to.equal('Export CSV');
  });

  it("a charger's page shows its newest 20 sessions and links to all of them", async () => {
    const id = ids[0] ?? '';
    await page.goto(`${csms.url}/dashboard#/chargers/${id}`);
    await page.getByTestId('charger-sessions').waitFor();
    expect(await page.getByTestId('charger-sessions').locator('li').count()).to.equal(20);
    const more = page.getByTestId('all-sessions');
    expect(await more.textContent()).to.contain(`The newest 20 of ${SESSIONS / 10}.`);
    await more.getByRole('link').click();
    await page
      .getByTestId('range')
      .filter({ hasText: `of ${SESSIONS / 10}` })
      .waitFor();
    expect(page.url()).to.contain(`charge_point_id=${id}`);
  });
});
