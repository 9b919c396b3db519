import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { connect, type TestCharger } from '../ocpp/support/charger.js';
import { API_KEY, startCsms, type CsmsUnderTest } from '../ocpp/support/csms.js';
import { v16 } from '../ocpp/support/messages.js';
import { ocpiModule } from '../../src/ocpi/module.js';
import { roamingModule } from '../../src/roaming/module.js';
import { aLocation, anEvse } from '../support/ocpi-builders.js';
import { launchChromium, registerFleet, signIn } from '../support/fleet.js';

const FLEET = 10_000;
const PASSWORD = 'fleet-password-0123';
/** the connected ones: FL-1, FL-51, ... FL-9951 (all 1.6) */
const connectedIds = Array.from({ length: 200 }, (_, k) => `FL-${50 * k + 1}`);
/** of those, the first 10 report a fault, the next 20 charge (the first 2 with the EV paused) */
const faultedIds = connectedIds.slice(0, 10);
const chargingIds = connectedIds.slice(10, 30);
const suspendedIds = chargingIds.slice(0, 2);
/** Available with an error code (a warning): the overview counts it faulted */
const warnedId = connectedIds[30] ?? '';

/**
 * The operator console against a fleet: 10,000 chargers registered, 200 of them connected
 * (docs/CSMS.md "Dashboard"). Timings are printed; the bounds are generous.
 */
describe('operator console with 10,000 chargers', function () {
  this.timeout(120_000);
  let csms: CsmsUnderTest;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const chargers = new Map<string, TestCharger>();
  /** the session whose chart the 390 px check shows */
  let chartedSession = '';

  async function connectOne(id: string): Promise<TestCharger> {
    const charger = await connect({
      url: `${csms.url.replace(/^http/, 'ws')}/ocpp/${id}`,
      username: id,
      password: PASSWORD,
      protocols: ['ocpp1.6'],
    });
    charger.answers = { RemoteStartTransaction: { status: 'Accepted' } };
    await charger.call('BootNotification', v16.boot({ chargePointVendor: 'Fleetco', chargePointModel: `M-${id}` }));
    if (faultedIds.includes(id))
      await charger.call(
        'StatusNotification',
        v16.status(1, 'Faulted', {
          errorCode: 'GroundFailure',
          vendorId: 'ABB',
          vendorErrorCode: 'E-402',
          info: 'RCD tripped',
        }),
      );
    else if (chargingIds.includes(id)) {
      await charger.call('StatusNotification', v16.status(1, suspendedIds.includes(id) ? 'SuspendedEV' : 'Charging'));
      await charger.call('StartTransaction', v16.start({ idTag: 'FLEET', meterStart: 0 }));
    } else if (id === warnedId) {
      // a row as wide as rows get: the charger as a whole faulted, two connectors, one warning
      await charger.call(
        'StatusNotification',
        // the charger's own words without a space in them, as long as 1.6 lets them be
        v16.status(0, 'Faulted', {
          errorCode: 'PowerMeterFailure',
          vendorErrorCode: 'E'.repeat(50),
          info: 'I'.repeat(50),
        }),
      );
      await charger.call('StatusNotification', v16.status(1, 'Available', { errorCode: 'WeakSignal' }));
      await charger.call('StatusNotification', v16.status(2, 'Available', { errorCode: 'HighTemperature' }));
    } else await charger.call('StatusNotification', v16.status(1, 'Available'));
    chargers.set(id, charger);
    return charger;
  }

  before(async () => {
    const ocpi = ocpiModule();
    csms = await startCsms({}, undefined, [ocpi, roamingModule(ocpi.outbox)]);
    let t = Date.now();
    await registerFleet(csms, { prefix: 'FL', count: FLEET, password: PASSWORD });
    console.log(`      registered ${FLEET} chargers in ${Date.now() - t} ms`);
    t = Date.now();
    for (let i = 0; i < connectedIds.length; i += 50) await Promise.all(connectedIds.slice(i, i + 50).map(connectOne));
    console.log(`      connected and booted ${connectedIds.length} chargers in ${Date.now() - t} ms`);
    browser = await launchChromium();
    context = await browser.newContext();
    page = await context.newPage();
    await signIn(page, csms.url, API_KEY);
  });
  after(async () => {
    for (const c of chargers.values()) await c.close().catch(() => undefined);
    await browser?.close();
    await csms?.stop();
  });

  it('answers searches, filters, pages and the overview from the API at 10,000 chargers', async () => {
    const timed = async (path: string) => {
      const t = Date.now();
      const res = await csms.api<unknown[]>('GET', path);
      return { ms: Date.now() - t, res };
    };
    await timed('/v1/charge-points?limit=1'); // warm
    const search = await timed('/v1/charge-points?q=fl-7321');
    expect(search.res.body).to.have.length(1);
    const faulted = await timed('/v1/charge-points?status=faulted&sort=id');
    expect((faulted.res.body as Array<{ id: string }>).map((c) => c.id)).to.deep.equal([...faultedIds, warnedId]);
    const online = await timed('/v1/charge-points?online=true&limit=50&offset=150&sort=last_seen&order=desc');
    expect(online.res.headers.get('x-total-count')).to.equal('200');
    // the overview's counts, listed: a paused EV charges, an error code on an Available connector is a fault
    const charging = await csms.api<unknown[]>('GET', '/v1/charge-points?state=charging&limit=1');
    expect(charging.headers.get('x-total-count')).to.equal('20');
    expect((await csms.api('GET', '/v1/charge-points?status=charging')).headers.get('x-total-count')).to.equal('18');
    const warned = await csms.api<unknown[]>('GET', '/v1/charge-points?state=faulted');
    expect(warned.headers.get('x-total-count')).to.equal('11');
    expect((await csms.api('GET', '/v1/charge-points?state=paused')).status).to.equal(422);
    const fleet = await timed('/v1/fleet');
    console.log(
      `      API at ${FLEET}: search ${search.ms} ms, status filter ${faulted.ms} ms, online page ${online.ms} ms, fleet ${fleet.ms} ms`,
    );
    expect((fleet.res.body as unknown as { total: number }).total).to.equal(FLEET);
  });

  it('shows the overview counts and the alerts', async () => {
    await page.goto(`${csms.url}/dashboard#/`);
    const count = (name: string) => page.getByTestId(`count-${name}`).getByTestId('value');
    await count('total')
      .filter({ hasText: String(FLEET) })
      .waitFor();
    expect(await count('online').textContent()).to.equal('200');
    expect(await count('offline').textContent()).to.equal(String(FLEET - 200));
    expect(await count('charging').textContent()).to.equal('20');
    expect(await count('faulted').textContent()).to.equal('11');
    const alert = page.getByTestId(`alert-${faultedIds[0]}`);
    await alert.waitFor();
    expect(await alert.textContent()).to.contain('GroundFailure');
    // where, in words: it was "EVSE 1/1", with no legend
    expect(await alert.textContent()).to.contain('EVSE 1, connector 1');
    // the charger's own words for the fault (1.6 vendorId, vendorErrorCode, info) were dropped
    expect(await alert.getByTestId('fault-text').textContent()).to.equal(' ABB E-402: RCD tripped');
    await page.screenshot({ path: '/tmp/console-overview.png', fullPage: true });
    // each count opens the list of the chargers it counted: the 2 with the EV paused charge too,
    // the one Available with an error code is among the faulted
    await page.getByTestId('count-charging').click();
    await page.getByTestId('range').filter({ hasText: '1–20 of 20' }).waitFor();
    expect(await page.getByTestId(`cp-${suspendedIds[0] ?? ''}`).count()).to.equal(1);
    await page.goBack();
    await page.getByTestId('count-faulted').click();
    await page.getByTestId('range').filter({ hasText: '1–11 of 11' }).waitFor();
    expect(await page.getByTestId(`cp-${warnedId}`).count()).to.equal(1);
  });

  it('finds a charger by a search typed key by key, and by paging', async () => {
    await page.goto(`${csms.url}/dashboard#/chargers`);
    await page
      .getByTestId('range')
      .filter({ hasText: `of ${FLEET}` })
      .waitFor();
    // natural order: FL-1, FL-2, ... FL-10, not FL-1, FL-10, FL-100
    const first = await page.getByTestId('charge-points').locator('tr').nth(1).getAttribute('data-testid');
    expect(first).to.equal('cp-FL-2');

    // typed as a person types: the search that runs is the whole id, not its first letters
    await page.getByTestId('search').pressSequentially('FL-7321', { delay: 60 });
    let t = Date.now();
    // what matches the letters typed so far may show on the way (FL-732 matches 11)
    await page.getByTestId('range').filter({ hasText: '1–1 of 1' }).waitFor();
    await page.getByTestId('cp-FL-7321').waitFor();
    const searchMs = Date.now() - t;
    expect(await page.getByTestId('charge-points').locator('tr').count()).to.equal(1);
    expect(await page.getByTestId('search').inputValue()).to.equal('FL-7321');

    // a status in another case, from a link: it filters, and the picker shows it
    await page.goto(`${csms.url}/dashboard#/chargers?status=faulted`);
    await page.getByTestId('range').filter({ hasText: '1–11 of 11' }).waitFor();
    expect(await page.getByTestId('filter-status').inputValue()).to.equal('Faulted');

    await page.goto(`${csms.url}/dashboard#/chargers?online=true`);
    await page.getByTestId('range').filter({ hasText: '1–50 of 200' }).waitFor();
    t = Date.now();
    await page.getByTestId('next').click();
    await page.getByTestId('next').click();
    await page.getByTestId('next').click();
    // the 151st online charger in natural order
    await page.getByTestId(`cp-${connectedIds[150]}`).waitFor();
    const pagingMs = Date.now() - t;
    console.log(
      `      console: last key typed to the one row shown ${searchMs} ms (250 ms of it the typing pause); three pages ${pagingMs} ms`,
    );
    await page.screenshot({ path: '/tmp/console-list.png', fullPage: true });
  });

  it('shows a status change without a reload, re-reading only that charger', async () => {
    const id = connectedIds[40] ?? '';
    await page.goto(`${csms.url}/dashboard#/chargers?q=${id}`);
    const row = page.getByTestId(`cp-${id}`);
    await row.getByTestId('connectors').filter({ hasText: 'Available' }).waitFor();
    expect(await row.locator('.connector').first().getAttribute('title')).to.equal('EVSE 1, connector 1');
    const requests: string[] = [];
    const onRequest = (r: { url(): string }) => requests.push(new URL(r.url()).pathname + new URL(r.url()).search);
    page.on('request', onRequest);
    await chargers.get(id)?.call('StatusNotification', v16.status(1, 'Faulted', { errorCode: 'HighTemperature' }));
    await row.getByTestId('connectors').filter({ hasText: 'HighTemperature' }).waitFor();
    expect(await row.locator('[data-status="Faulted"]').count()).to.equal(1);
    page.off('request', onRequest);
    expect(requests.filter((r) => r.startsWith('/v1/charge-points?'))).to.deep.equal([]);
    expect(requests).to.include(`/v1/charge-points/${id}`);
    await chargers.get(id)?.call('StatusNotification', v16.status(1, 'Available'));
  });

  it("keeps a list of the charging chargers what its card says as transactions start and end, and a row's transaction", async () => {
    const id = connectedIds[41] ?? '';
    const charger = chargers.get(id);
    await page.goto(`${csms.url}/dashboard#/chargers?state=charging`);
    await page.getByTestId('range').filter({ hasText: '1–20 of 20' }).waitFor();
    // a start without a status report: the charger charges, the list takes it in without a reload
    const { transactionId } = (await charger?.call(
      'StartTransaction',
      v16.start({ idTag: 'LIVE', meterStart: 0 }),
    )) as {
      transactionId: number;
    };
    await page.getByTestId('range').filter({ hasText: '1–21 of 21' }).waitFor();
    const transactionOf = (row: ReturnType<Page['getByTestId']>) => row.locator('td[data-label="Transaction"]');
    await transactionOf(page.getByTestId(`cp-${id}`))
      .filter({ hasText: new RegExp(`^${transactionId}$`) })
      .waitFor();
    await charger?.call('StopTransaction', v16.stop(transactionId, 100));
    await page.getByTestId('range').filter({ hasText: '1–20 of 20' }).waitFor();
    // a list by search re-reads the row on the session's events: its transaction shows, then goes
    await page.goto(`${csms.url}/dashboard#/chargers?q=${id}`);
    const row = page.getByTestId(`cp-${id}`);
    await row.waitFor();
    const again = (await charger?.call('StartTransaction', v16.start({ idTag: 'LIVE', meterStart: 100 }))) as {
      transactionId: number;
    };
    await transactionOf(row)
      .filter({ hasText: new RegExp(`^${again.transactionId}$`) })
      .waitFor();
    // its meter values change nothing the row shows: no re-read for them
    const reads: string[] = [];
    const onRequest = (r: { url(): string }) => reads.push(new URL(r.url()).pathname);
    page.on('request', onRequest);
    await charger?.call('MeterValues', v16.meterValues(1, again.transactionId, 150));
    await page.waitForTimeout(1_500);
    page.off('request', onRequest);
    expect(reads.filter((r) => r.startsWith('/v1/'))).to.deep.equal([]);
    await charger?.call('StopTransaction', v16.stop(again.transactionId, 200));
    await transactionOf(row).filter({ hasText: /^$/ }).waitFor();
  });

  it('sends a remote start from the charger page to the charger, and refuses it on a faulted connector', async () => {
    const faulted = faultedIds[0] ?? '';
    await page.goto(`${csms.url}/dashboard#/chargers/${faulted}`);
    const faultedConnector = page.getByTestId('connector-1-1');
    await faultedConnector.getByText('GroundFailure').waitFor();
    expect(await faultedConnector.getByTestId('fault-text').textContent()).to.contain('ABB E-402: RCD tripped');
    expect(await faultedConnector.getByTestId('remote-start').isDisabled()).to.equal(true);
    // a charger faulted as a whole (1.6 connector 0) takes no start on a connector with a warning
    await page.goto(`${csms.url}/dashboard#/chargers/${warnedId}`);
    const warned = page.getByTestId('connector-1-1').getByTestId('remote-start');
    await page.getByTestId('connector-1-1').getByText('WeakSignal').waitFor();
    // why, written beside it (a tooltip only reached a mouse)
    expect([
      await warned.isDisabled(),
      await page.getByTestId('connector-1-1').getByTestId('start-why').textContent(),
    ]).to.deep.equal([true, ' the charger is faulted']);

    const id = connectedIds[60] ?? '';
    await page.goto(`${csms.url}/dashboard#/chargers/${id}`);
    await page.getByTestId('facts').getByText('Fleetco').waitFor();
    // no token: Start is disabled, and says why (it said nothing)
    await page.getByTestId('id-tag').fill('');
    const start = page.getByTestId('connector-1-1').getByTestId('remote-start');
    expect([
      await start.isDisabled(),
      await page.getByTestId('connector-1-1').getByTestId('start-why').textContent(),
    ]).to.deep.equal([true, ' enter the token to start with']);
    await page.getByTestId('id-tag').fill('DRIVER-UI');
    // an error code beside Available is a warning: the connector takes a start (it was disabled)
    await chargers.get(id)?.call('StatusNotification', v16.status(1, 'Available', { errorCode: 'WeakSignal' }));
    await page.getByTestId('connector-1-1').getByText('WeakSignal').waitFor();
    expect(await start.isDisabled()).to.equal(false);
    await page.getByTestId('connector-1-1').getByTestId('remote-start').click();
    const call = await chargers.get(id)?.csmsCall('RemoteStartTransaction', 10_000);
    expect(call?.payload.idTag).to.equal('DRIVER-UI');
    // the charger's own answer, in green
    await page.locator('.notice.ok').filter({ hasText: 'Remote start: Accepted' }).waitFor();
    await page.getByTestId('charger-commands').getByText('start: Accepted').waitFor();

    const charger = chargers.get(id);
    const { transactionId } = (await charger?.call<{ transactionId: number }>(
      'StartTransaction',
      v16.start({ idTag: 'DRIVER-UI', meterStart: 0 }),
    )) ?? { transactionId: 0 };
    await charger?.call('MeterValues', v16.meterValues(1, transactionId, 2500));
    await page.getByTestId(`session-${transactionId}`).getByTestId('energy').filter({ hasText: '2.500' }).waitFor();
    await page.getByTestId(`transaction-${transactionId}`).filter({ hasText: 'on EVSE 1' }).waitFor();
    // its EVSE runs a transaction, whatever status the connector last reported (was enabled
    // until a status of a transaction came: a 2.0.1 charger's Occupied never does)
    expect(await page.getByTestId('connector-1-1').getByTestId('remote-start').isDisabled()).to.equal(true);
    // a fault of the whole charger (1.6 connector 0) shows on its page and its row (it showed on
    // the overview only)
    await charger?.call('StatusNotification', v16.status(0, 'Faulted', { errorCode: 'PowerMeterFailure' }));
    await page
      .getByTestId('charger-level')
      .filter({ hasText: 'PowerMeterFailure' })
      .locator('[data-status="Faulted"]')
      .waitFor();
    await page.goto(`${csms.url}/dashboard#/chargers?q=${id}`);
    await page.getByTestId(`cp-${id}`).getByTestId('connectors').filter({ hasText: 'charger' }).waitFor();
    await charger?.call('StatusNotification', v16.status(0, 'Available'));
    await page.goto(`${csms.url}/dashboard#/chargers/${id}`);
    await page.getByTestId(`transaction-${transactionId}`).waitFor();
    // the connector in a transaction takes no second remote start
    await charger?.call('StatusNotification', v16.status(1, 'Charging'));
    await page.getByTestId('connector-1-1').locator('[data-status="Charging"]').waitFor();
    // the time shown is when the status began, and says so
    expect(await page.getByTestId('connector-1-1').textContent()).to.match(/Charging.* since /);
    expect(await page.getByTestId('connector-1-1').getByTestId('remote-start').isDisabled()).to.equal(true);
    // why, in words beside it (it was a tooltip only, which keyboards and phones never reach)
    expect(await page.getByTestId('connector-1-1').getByTestId('start-why').textContent()).to.contain(
      'a transaction runs on its EVSE',
    );
    // a stop is asked before it is sent: one click ended the driver's charge
    await page.getByTestId(`transaction-${transactionId}`).getByTestId('remote-stop').click();
    expect(await page.getByTestId('stop-confirm').textContent()).to.contain(
      `Stop transaction ${transactionId} on ${id} EVSE 1?`,
    );
    await page.getByTestId('stop-cancel').click();
    await page.getByTestId(`transaction-${transactionId}`).getByTestId('remote-stop').waitFor();
    await page.waitForTimeout(300);
    expect(charger?.csmsCalls.map((c) => c.action)).to.not.include('RemoteStopTransaction');
    // its parts apart (was "1 ·DRIVER-UI · ... ·2.500 kWh")
    expect(await page.getByTestId(`session-${transactionId}`).textContent()).to.match(
      new RegExp(`${transactionId} · DRIVER-UI · .* · 2\\.500 kWh`),
    );
    await page.screenshot({ path: '/tmp/console-charger.png', fullPage: true });

    // an id tag is the charger's text: in the CSV it must not be a spreadsheet formula
    await charger?.call('StartTransaction', v16.start({ connectorId: 2, idTag: '=HYPERLINK("x")', meterStart: 0 }));

    // a page past the last (a link kept from a longer list) says so (was "100001–100000 of ...")
    await page.goto(`${csms.url}/dashboard#/chargers?offset=100000`);
    await page.getByText(/^Nothing from 100001: \d+ in all\.$/).waitFor();

    await page.goto(`${csms.url}/dashboard#/sessions?status=ACTIVE`);
    await page
      .locator(`[data-testid="session-${id}"][data-status="ACTIVE"] [data-testid="energy"]`)
      .filter({ hasText: '2.500' })
      .waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('csv').click()]);
    const csv = await readFile((await download.path()) ?? '', 'utf8');
    expect(csv.split('\n')[0]).to.match(/^charge_point_id,transaction_id,id_tag,status,started_at,/);
    // the cost with and without VAT in columns of their own (one `cost` column held either)
    expect(csv.split('\n')[0]).to.include(',cost_excl_vat,cost_incl_vat,currency,');
    expect(csv).to.match(new RegExp(`^${id},${transactionId},DRIVER-UI,ACTIVE,.*,2\\.500,`, 'm'));
    expect(csv).to.include(`,"'=HYPERLINK(""x"")",ACTIVE,`);
    expect(csv).to.not.match(/,"?=HYPERLINK/);
    // each row names its session (a charger may use a transaction id again), EVSE and connector
    expect(csv.split('\n')[0]).to.match(/,stop_id_tag,session_id,evse_id,connector_id,protocol$/);
    const mine = (
      await csms.api<Array<{ id: string; id_tag: string }>>('GET', `/v1/sessions?charge_point_id=${id}&status=ACTIVE`)
    ).body.find((x) => x.id_tag === 'DRIVER-UI');
    expect(csv).to.match(
      new RegExp(`^${id},${transactionId},DRIVER-UI,.*,${mine?.id ?? 'none'},\\d+,\\d+,ocpp1\\.6$`, 'm'),
    );

    // sessions by the day they started (UTC): the CSV of a month, a page at a time
    await page.getByTestId('started-before').fill('2020-01-01');
    await page.getByText('No session.').waitFor();
    expect(page.url()).to.contain('before=2020-01-01');
    const today = new Date().toISOString().slice(0, 10);
    await page.getByTestId('started-before').fill('');
    await page.getByTestId('started-from').fill(today);
    await page.locator(`[data-testid="session-${id}"][data-status="ACTIVE"]`).first().waitFor();
    const since = await csms.api<unknown[]>(
      'GET',
      `/v1/sessions?started_from=${today}T00:00:00Z&started_before=2100-01-01T00:00:00Z`,
    );
    expect(Number(since.headers.get('x-total-count'))).to.be.greaterThan(0);
    expect(
      (await csms.api('GET', '/v1/sessions?started_from=2100-01-01T00:00:00Z')).headers.get('x-total-count'),
    ).to.equal('0');
    expect((await csms.api('GET', '/v1/sessions?started_from=yesterday')).status).to.equal(422);
  });

  it("draws a session's energy over time, and extends it as the charger reports", async () => {
    const id = connectedIds[80] ?? '';
    const charger = chargers.get(id);
    const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
    const reading = (wh: number, m: number) => [
      {
        timestamp: minutesAgo(m),
        sampledValue: [{ value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh' }],
      },
    ];
    const { transactionId } = (await charger?.call('StartTransaction', {
      ...v16.start({ idTag: 'CHART', meterStart: 10_000 }),
      timestamp: minutesAgo(10),
    })) as { transactionId: number };
    // 11 kW for five minutes, then 3.6 kW
    for (let m = 9; m >= 1; m--) {
      const wh = m >= 5 ? 10_000 + (10 - m) * 183 : 10_000 + 5 * 183 + (5 - m) * 60;
      await charger?.call('MeterValues', { connectorId: 1, transactionId, meterValue: reading(wh, m) });
    }
    const sessions = await csms.api<Array<{ id: string; transaction_id: string }>>(
      'GET',
      `/v1/sessions?charge_point_id=${id}`,
    );
    chartedSession = sessions.body.find((x) => x.transaction_id === String(transactionId))?.id ?? '';

    // from the charger page to the session's page
    await page.goto(`${csms.url}/dashboard#/chargers/${id}`);
    await page.getByTestId(`session-${transactionId}`).getByRole('link').click();
    const chart = page.getByTestId('energy-chart');
    await chart.waitFor();
    expect(await chart.getAttribute('data-points')).to.equal('10');
    const facts = page.getByTestId('session-facts');
    expect(await facts.getByTestId('energy').textContent()).to.equal('1.155 kWh');
    // the energy line climbs left to right; the power steps down from ~11 kW to ~3.6 kW
    const points = ((await page.getByTestId('energy-line').getAttribute('points')) ?? '')
      .split(' ')
      .map((p) => p.split(',').map(Number));
    expect(points).to.have.length(10);
    for (let i = 1; i < points.length; i++) expect(points[i]?.[1]).to.be.at.most(points[i - 1]?.[1] ?? 0);
    await page.screenshot({ path: '/tmp/console-session.png', fullPage: true });

    // a reading now: the chart grows without a reload
    await charger?.call('MeterValues', { connectorId: 1, transactionId, meterValue: reading(11_300, 0) });
    await page.locator('[data-testid="energy-chart"][data-points="11"]').waitFor();
    expect(await facts.getByTestId('energy').textContent()).to.equal('1.300 kWh');
    await charger?.call('StopTransaction', v16.stop(transactionId, 11_300));
  });

  it('shows a charger going offline without a reload', async () => {
    const id = connectedIds[199] ?? '';
    await page.goto(`${csms.url}/dashboard#/chargers/${id}`);
    await page.getByTestId('charger-title').getByText('online').waitFor();
    await chargers.get(id)?.close();
    chargers.delete(id);
    await page.getByTestId('charger-title').getByText('offline').waitFor();
  });

  it('drops a removed charger from the list without a reload', async () => {
    const { id } = await csms.registerChargePoint('ocpp1.6');
    await page.goto(`${csms.url}/dashboard#/chargers?q=${id}`);
    await page.getByTestId(`cp-${id}`).waitFor();
    expect((await csms.api('DELETE', `/v1/charge-points/${id}`)).status).to.equal(204);
    // it stayed, a link to a charger that is no more, until a reload
    await page.getByTestId(`cp-${id}`).waitFor({ state: 'detached' });
    await page.getByTestId('range').filter({ hasText: 'No charger matches.' }).waitFor();
  });

  it('links an EVSE to one of our OCPI locations and unlinks it; a refusal is shown in red', async () => {
    const id = connectedIds[70] ?? '';
    const location = aLocation({ id: 'UI-LOC', evses: [anEvse({ uid: 'UI-E1' })] });
    expect((await csms.api('PUT', '/v1/ocpi/locations/UI-LOC', location)).status).to.equal(200);
    await page.goto(`${csms.url}/dashboard#/chargers/${id}`);
    const links = page.getByTestId('evse-links');
    const form = page.getByTestId('link-form');
    await form.getByLabel('EVSE number').fill('1');
    await form.getByLabel('location id').fill('UI-LOC');
    await form.getByLabel('OCPI EVSE uid').fill('NOPE');
    await form.getByRole('button', { name: 'Link' }).click();
    await links.locator('.notice.err').filter({ hasText: 'Link refused' }).waitFor();
    expect(await links.locator('.notice.err').textContent()).to.contain('NOPE');

    await form.getByLabel('OCPI EVSE uid').fill('UI-E1');
    await form.getByRole('button', { name: 'Link' }).click();
    await links.getByTestId('evse-link-1').filter({ hasText: 'UI-LOC / UI-E1' }).waitFor();
    expect(await links.locator('.notice.ok').textContent()).to.contain('linked');
    const view = await csms.api<{ evse_links: unknown[] }>('GET', `/v1/charge-points/${id}`);
    expect(view.body.evse_links).to.deep.equal([{ evse_number: 1, location_id: 'UI-LOC', evse_uid: 'UI-E1' }]);

    // the list filtered by that location holds this charger alone, in the API and in the console
    const byLocation = await csms.api<Array<{ id: string }>>('GET', '/v1/charge-points?location=UI-LOC');
    expect(byLocation.body.map((c) => c.id)).to.deep.equal([id]);
    await page.goto(`${csms.url}/dashboard#/chargers`);
    await page.getByTestId('filter-location').fill('UI-LOC');
    await page.getByTestId('filter-location').press('Enter');
    await page.getByTestId(`cp-${id}`).waitFor();
    expect(await page.locator('[data-testid^="cp-"]').count()).to.equal(1);

    await page.goto(`${csms.url}/dashboard#/chargers/${id}`);
    await links.getByTestId('evse-link-1').getByTestId('unlink').click();
    await links.getByTestId('evse-link-1').waitFor({ state: 'detached' });
  });

  it('is usable at 390 px: no horizontal overflow on any screen', async () => {
    // a tab of its own: the key is per tab (sessionStorage), so it signs in too
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await signIn(phone, csms.url, API_KEY);
    await phone.screenshot({ path: '/tmp/console-390-signed-in.png' });
    const widths: Record<string, number> = {};
    for (const [name, hash, ready] of [
      ['overview', '#/', 'count-total'],
      ['list', '#/chargers?online=true', `cp-${connectedIds[0]}`],
      ['faulted', '#/chargers?state=faulted', `cp-${warnedId}`],
      ['warned charger', `#/chargers/${warnedId}`, 'charger-level'],
      ['charger', `#/chargers/${connectedIds[60]}`, 'facts'],
      ['sessions', '#/sessions', 'sessions'],
      ['session', `#/sessions/${chartedSession}`, 'energy-chart'],
    ] as const) {
      await phone.goto(`${csms.url}/dashboard${hash}`);
      await phone.getByTestId(ready).first().waitFor();
      await phone.waitForTimeout(200);
      widths[name] = await phone.evaluate('document.documentElement.scrollWidth');
      await phone.screenshot({ path: `/tmp/console-390-${name}.png`, fullPage: true });
    }
    for (const [name, w] of Object.entries(widths)) expect(w, name).to.be.at.most(390);
    await phone.close();
  });

  it("on a wide screen, a list's charger ids keep their line", async () => {
    // 1280 px wide; the faulted list holds the row with the charger's long words in it
    await page.goto(`${csms.url}/dashboard#/chargers?state=faulted`);
    await page.getByTestId(`cp-${warnedId}`).waitFor();
    const lines = (await page.evaluate(
      "[...document.querySelectorAll('table.list td a')].map((a) => [a.textContent, a.getClientRects().length])",
    )) as [string, number][];
    expect(lines.length).to.be.at.least(11);
    // was broken mid-word, to give the other columns room they did not need
    for (const [id, n] of lines) expect(n, String(id)).to.equal(1);
    // and so are the protocols ("ocpp2.0." over "1")
    const protocols = (await page.evaluate(
      "[...document.querySelectorAll('table.list .protocol')].map((p) => [p.textContent, p.getClientRects().length])",
    )) as [string, number][];
    expect(protocols.length).to.be.at.least(1);
    for (const [p, n] of protocols) expect(n, String(p)).to.equal(1);
    expect(await page.evaluate('document.documentElement.scrollWidth')).to.be.at.most(1280);
  });

  it('asks for the key, refuses a wrong one in red, keeps it in sessionStorage only, under the CSP', async () => {
    const fresh = await browser.newContext();
    try {
      const p = await fresh.newPage();
      const violations: string[] = [];
      p.on('console', (m) => {
        if (/Content.Security.Policy/i.test(m.text())) violations.push(m.text());
      });
      // nothing the page loads is missing
      const missing: string[] = [];
      p.on('response', (r) => {
        if (r.status() === 404) missing.push(r.url());
      });
      const res = await p.goto(`${csms.url}/dashboard`);
      const headers = res?.headers() ?? {};
      expect(headers['content-security-policy'])
        .to.contain("script-src 'self'")
        .and.contain("style-src 'self'")
        .and.contain("frame-ancestors 'none'")
        .and.not.contain('unsafe-inline');
      expect(headers['x-frame-options']).to.equal('DENY');
      expect(headers['x-content-type-options']).to.equal('nosniff');
      expect(headers['referrer-policy']).to.equal('no-referrer');
      await p.getByLabel('operator API key').fill('not-the-key-at-all');
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.locator('.notice.err').filter({ hasText: 'not valid' }).waitFor();
      expect(await p.evaluate("sessionStorage.getItem('csms-api-key')")).to.equal(null);
      await p.getByLabel('operator API key').fill(API_KEY);
      await p.getByRole('button', { name: 'Sign in' }).click();
      await p.getByTestId('count-total').getByText(String(FLEET)).waitFor();
      expect(await p.evaluate("sessionStorage.getItem('csms-api-key')")).to.equal(API_KEY);
      expect(await p.evaluate("localStorage.getItem('csms-api-key')")).to.equal(null);
      expect(violations).to.deep.equal([]);
      expect(missing).to.deep.equal([]);
      // its icon (a browser asks /favicon.ico, a 404, when the page names none)
      const icon = await p.locator('link[rel="icon"]').getAttribute('href');
      const iconRes = await fetch(`${csms.url}${icon ?? ''}`);
      expect([iconRes.status, iconRes.headers.get('content-type')]).to.deep.equal([200, 'image/svg+xml']);
    } finally {
      await fresh.close();
    }
  });

  it('moves a key an older dashboard left in localStorage into sessionStorage', async () => {
    const old = await browser.newContext();
    try {
      await old.addInitScript({
        content: `if (!sessionStorage.getItem('seen')) { sessionStorage.setItem('seen', '1'); localStorage.setItem('csms-api-key', ${JSON.stringify(API_KEY)}); }`,
      });
      const p = await old.newPage();
      await p.goto(`${csms.url}/dashboard`);
      await p.getByTestId('live').filter({ hasText: 'live' }).waitFor();
      expect(await p.evaluate("localStorage.getItem('csms-api-key')")).to.equal(null);
      expect(await p.evaluate("sessionStorage.getItem('csms-api-key')")).to.equal(API_KEY);
    } finally {
      await old.close();
    }
  });
});
