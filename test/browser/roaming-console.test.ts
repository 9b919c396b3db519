import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { eventually } from '../support/eventually.js';
import { aCdr221, aConnector, aLocation, anEvse, aTariff221, aToken221 } from '../support/ocpi-builders.js';
import { API_KEY } from '../support/ocpi-harness.js';
import { RoamingWorld, type Emsp } from '../support/roaming-world.js';
import { launchChromium, signIn } from '../support/fleet.js';

type Json = Record<string, unknown>;

const TARIFF = {
  country_code: 'NL',
  party_id: 'EVP',
  id: 'T-1',
  currency: 'EUR',
  elements: [{ price_components: [{ type: 'ENERGY', price: 0.25, vat: 20, step_size: 1 }] }],
  last_updated: '2024-01-01T00:00:00Z',
};

/** Nights cost more, and parking is billed per started 5 minutes. */
const NIGHT_TARIFF = {
  country_code: 'NL',
  party_id: 'EVP',
  id: 'T-NIGHT',
  currency: 'EUR',
  min_price: { excl_vat: 1, incl_vat: 1.21 },
  elements: [
    {
      price_components: [
        { type: 'ENERGY', price: 0.35, vat: 21, step_size: 1000 },
        { type: 'PARKING_TIME', price: 2, vat: 21, step_size: 300 },
      ],
      restrictions: { start_time: '22:00', end_time: '06:00', day_of_week: ['SATURDAY', 'SUNDAY'] },
    },
    { price_components: [{ type: 'FLAT', price: 0.5, vat: 21, step_size: 0 }] },
  ],
  last_updated: '2024-01-01T00:00:00Z',
};

/**
 * The console's roaming screens against a real platform, partners that are OCPI simulators on
 * loopback and an ocpp-rpc charger: the outbox's dead letters sent again or dropped, a command
 * sent to a partner CPO and its result, our tariffs and a price preview, our CDRs.
 */
describe('console: roaming, tariffs and CDRs', function () {
  this.timeout(90_000);
  let world: RoamingWorld;
  let browser: Browser;
  let context: BrowserContext;
  const cspViolations: string[] = [];

  before(async () => {
    world = await RoamingWorld.start({ ROAMING_SESSION_PUSH_MS: '0', PRICING_THREADS: '1' });
    for (const tariff of [TARIFF, NIGHT_TARIFF]) {
      const put = await world.api.request('PUT', `/v1/ocpi/tariffs/${tariff.id}`, { body: tariff });
      expect(put.status, JSON.stringify(put.body)).to.equal(200);
    }
    browser = await launchChromium();
    context = await browser.newContext();
    context.on('console', (m) => {
      if (/Content.Security.Policy/i.test(m.text())) cspViolations.push(m.text());
    });
  });
  after(async () => {
    await browser?.close();
    await world?.stop();
  });

  async function openPage(hash: string): Promise<Page> {
    const page = await context.newPage();
    await signIn(page, world.platform.platform.url, API_KEY, hash);
    return page;
  }

  const outboxOf = async (partnerId: string, status: string): Promise<Json[]> => {
    const res = await world.api.request('GET', `/v1/outbox?status=${status}&partner_id=${partnerId}`);
    return res.body.value as Json[];
  };

  /** A tariff PUT that `e` refuses (OCPI 2001): its row waits as a dead letter; answers the row. */
  async function deadLetter(e: Emsp, tariffId: string): Promise<Json> {
    await eventually(async () => ((await outboxOf(e.id, 'pending')).length === 0 ? true : undefined), {
      what: 'nothing pending for the partner',
    });
    e.sim.failNext(1, 400, 2001);
    const put = await world.api.request('PUT', `/v1/ocpi/tariffs/${tariffId}`, { body: { ...TARIFF, id: tariffId } });
    expect(put.status).to.equal(200);
    return eventually(async () => (await outboxOf(e.id, 'dead')).find((r) => String(r.object).includes(tariffId)), {
      what: `the dead letter of ${tariffId}`,
    });
  }

  const tariffPuts = (e: Emsp, tariffId: string) =>
    e.sim.received.filter((r) => r.method === 'PUT' && r.path.endsWith(`/${tariffId}`) && r.status === 200);

  it('sends a dead letter again from the console: the partner gets it and it leaves the list; a discard asks first', async () => {
    const e = await world.emsp('2.2.1');
    const first = await deadLetter(e, 'T-DEAD-1');
    const page = await openPage(`#/roaming?partner=${e.id}&status=dead`);
    const row = page.getByTestId(`outbox-${String(first.id)}`);
    await row.waitFor();
    expect(await row.textContent()).to.contain('400');
    await page.getByTestId(`partner-${e.id}`).getByTestId('show-dead').filter({ hasText: '1' }).waitFor();
    await page.screenshot({ path: '/tmp/console-roaming-dead.png', fullPage: true });
    expect(tariffPuts(e, 'T-DEAD-1')).to.have.length(0);

    await row.getByTestId('retry').click();
    const notice = page.getByTestId('outbox').getByTestId('notice');
    await notice.filter({ hasText: 'queued again' }).waitFor();
    expect(await notice.getAttribute('class')).to.contain('ok');
    await row.waitFor({ state: 'detached' });
    await eventually(async () => tariffPuts(e, 'T-DEAD-1')[0], { what: 'the tariff at the partner' });
    // and it is not waiting either: it was sent
    const second = await deadLetter(e, 'T-DEAD-2');
    await page.getByTestId('outbox-status').selectOption('pending');
    await page.getByText('Nothing waits to be sent.').waitFor();
    // the page re-reads itself every 3 s: what was chosen, not what it opened with
    await page.waitForTimeout(3500);
    expect(await page.getByTestId(`outbox-${String(second.id)}`).count()).to.equal(0);
    await page.getByText('Nothing waits to be sent.').waitFor();

    // a dead letter gone meanwhile (dropped through the API): the retry is refused, in red, with the API's reason
    await page.getByTestId('outbox-status').selectOption('dead');
    const row2 = page.getByTestId(`outbox-${String(second.id)}`);
    await row2.waitFor();
    expect((await world.api.request('DELETE', `/v1/outbox/${String(second.id)}`)).status).to.equal(200);
    await row2.getByTestId('retry').click();
    await notice.filter({ hasText: `no dead letter ${String(second.id)}` }).waitFor();
    expect(await notice.getAttribute('class')).to.contain('err');

    // a discard is asked for twice; "Keep" keeps it
    const third = await deadLetter(e, 'T-DEAD-3');
    const row3 = page.getByTestId(`outbox-${String(third.id)}`);
    await row3.waitFor({ timeout: 10_000 });
    await row3.getByTestId('discard').click();
    await row3.getByRole('button', { name: 'Keep' }).click();
    await row3.getByTestId('retry').waitFor();
    await row3.getByTestId('discard').click();
    await page.screenshot({ path: '/tmp/console-roaming-discard.png', fullPage: true });
    await row3.getByTestId('confirm-discard').click();
    await notice.filter({ hasText: 'discarded' }).waitFor();
    await row3.waitFor({ state: 'detached' });
    expect(await outboxOf(e.id, 'dead')).to.deep.equal([]);
    expect(tariffPuts(e, 'T-DEAD-3')).to.have.length(0);
    await page.close();
  });

  it('sends START_SESSION to a partner CPO from the console; the result the CPO posts shows', async () => {
    const cpo = await world.partner('2.2.1', 'CPO', {
      commandResponse: () => ({ result: 'ACCEPTED', timeout: 30 }),
    });
    const cpo211 = await world.partner('2.1.1', 'CPO', { commandResponse: () => ({ result: 'ACCEPTED' }) });
    const uid = `OUR-${randomUUID().slice(0, 6)}`.toUpperCase();
    const token = aToken221({ uid });
    expect((await world.api.request('PUT', `/v1/ocpi/tokens/NL/EVP/${uid}`, { body: token })).status).to.equal(200);

    // the CPO has pushed us its location: the form offers its ids
    const pushedBy = cpo.sim.link;
    if (!pushedBy) throw new Error('the CPO is not registered');
    const ourLocations = pushedBy.endpoints.find((x) => x.identifier === 'locations')?.url ?? '';
    const { country_code: cc, party_id: pid } = cpo.sim.party;
    const theirs = aLocation({
      country_code: cc,
      party_id: pid,
      id: 'THEIR-LOC-1',
      name: 'Their station',
      evses: [anEvse({ uid: 'THEIR-EVSE-1', connectors: [aConnector({ id: 'C7' })] })],
    });
    const routing = {
      'OCPI-from-country-code': cc,
      'OCPI-from-party-id': pid,
      'OCPI-to-country-code': 'NL',
      'OCPI-to-party-id': 'EVP',
    };
    const put = await cpo.sim.request(
      'PUT',
      `${ourLocations}/${cc}/${pid}/THEIR-LOC-1`,
      pushedBy.tokenToThem,
      '2.2.1',
      theirs,
      routing,
    );
    expect([put.status, put.statusCode]).to.deep.equal([200, 1000]);

    const page = await openPage('#/roaming');
    const form = page.getByTestId('command-form');
    await form.getByTestId('command-partner').selectOption(cpo.id);
    await form.getByTestId('command-name').selectOption('START_SESSION');
    await form.getByTestId('command-token_uid').fill(uid);
    const offered = async (field: string) =>
      form
        .getByTestId(`their-${field}`)
        .locator('option')
        .evaluateAll((options) => options.map((o) => o.getAttribute('value') ?? ''));
    // was: free text only; the operator had to know the CPO's ids from elsewhere
    await eventually(async () => ((await offered('location_id')).includes('THEIR-LOC-1') ? true : undefined));
    // a location the CPO pushes while the page is open is offered once a place field takes the focus
    const second = await cpo.sim.request(
      'PUT',
      `${ourLocations}/${cc}/${pid}/THEIR-LOC-2`,
      pushedBy.tokenToThem,
      '2.2.1',
      { ...theirs, id: 'THEIR-LOC-2' },
      routing,
    );
    expect([second.status, second.statusCode]).to.deep.equal([200, 1000]);
    await new Promise((r) => setTimeout(r, 3100));
    await form.getByTestId('command-location_id').focus();
    // was read once per partner chosen: THEIR-LOC-2 showed only after a reload
    await eventually(async () => ((await offered('location_id')).includes('THEIR-LOC-2') ? true : undefined));
    await form.getByTestId('command-location_id').fill('THEIR-LOC-1');
    expect(await offered('evse_uid')).to.deep.equal(['THEIR-EVSE-1']);
    await form.getByTestId('command-evse_uid').fill('THEIR-EVSE-1');
    expect(await offered('connector_id')).to.deep.equal(['C7']);
    await form.getByTestId('command-send').click();
    const notice = form.getByTestId('notice');
    await notice.filter({ hasText: 'the CPO answered ACCEPTED' }).waitFor();
    expect(await notice.getAttribute('class')).to.contain('ok');

    // what the CPO got: our token, its location, our response_url
    const received = cpo.sim.received.find((r) => r.method === 'POST' && r.path.endsWith('/commands/START_SESSION'));
    const body = received?.body as { token: Json; location_id: string; response_url: string };
    expect(body.token).to.include({ uid });
    expect(body.location_id).to.equal('THEIR-LOC-1');
    const commandUid = body.response_url.split('/').at(-1) ?? '';
    const row = page.getByTestId(`command-${commandUid}`);
    await row.getByTestId('result').filter({ hasText: 'waiting for the result' }).waitFor();

    // the CPO posts the result to our response_url, with the token we gave it
    const link = cpo.sim.link;
    if (!link) throw new Error('the CPO is not registered');
    const posted = await cpo.sim.request(
      'POST',
      body.response_url,
      link.tokenToThem,
      '2.2.1',
      { result: 'ACCEPTED' },
      {
        'OCPI-from-country-code': cpo.sim.party.country_code,
        'OCPI-from-party-id': cpo.sim.party.party_id,
        'OCPI-to-country-code': 'NL',
        'OCPI-to-party-id': 'EVP',
      },
    );
    expect([posted.status, posted.statusCode]).to.deep.equal([200, 1000]);
    await row.getByTestId('result').filter({ hasText: 'ACCEPTED' }).waitFor({ timeout: 10_000 });
    expect(await row.getByTestId('result').textContent()).not.to.contain('waiting');

    // a command the CPO's version cannot take: refused before any call, in red, with the API's reason
    const calls = cpo.sim.received.length;
    await form.getByTestId('command-name').selectOption('STOP_SESSION');
    await form.getByTestId('command-session_id').fill('S'.repeat(40));
    await form.getByTestId('command-send').click();
    await notice.filter({ hasText: 'refused' }).waitFor();
    expect(await notice.getAttribute('class')).to.contain('err');
    expect(cpo.sim.received.length).to.equal(calls);

    // a 2.1.1 CPO: the form asks only what its version has (no CANCEL_RESERVATION, no connector
    // in START_SESSION); it offered both, and the API refused them
    await form.getByTestId('command-partner').selectOption(cpo211.id);
    const names = await form
      .getByTestId('command-name')
      .locator('option')
      .evaluateAll((options) => options.map((o) => o.textContent ?? ''));
    expect(names).to.include('START_SESSION');
    expect(names).to.not.include('CANCEL_RESERVATION');
    await form.getByTestId('command-name').selectOption('START_SESSION');
    await form.getByTestId('command-location_id').waitFor();
    expect(await form.getByTestId('command-connector_id').count()).to.equal(0);
    await form.getByTestId('command-partner').selectOption(cpo.id);
    await form.getByTestId('command-connector_id').waitFor();
    await page.screenshot({ path: '/tmp/console-roaming-commands.png', fullPage: true });
    await page.close();
  });

  it('shows our tariffs in words and prices a session with one', async () => {
    const page = await openPage('#/tariffs');
    const night = page.getByTestId('tariff-T-NIGHT');
    await night.waitFor();
    const first = night.getByTestId('element-1');
    expect(await first.textContent())
      .to.contain('22:00–06:00')
      .and.contain('sat sun');
    expect(await first.getByTestId('component').allTextContents()).to.deep.equal([
      'ENERGY: EUR 0.35 per kWh + 21% VAT, billed per 1000 Wh',
      'PARKING_TIME: EUR 2.00 per hour + 21% VAT, billed per 5 min',
    ]);
    expect(await night.getByTestId('element-2').textContent())
      .to.contain('always')
      .and.contain('FLAT: EUR 0.50 per session + 21% VAT');
    expect(await night.textContent()).to.contain('at least EUR 1.00 excl. VAT');
    expect(await page.getByTestId('tariff-T-1').getByTestId('component').allTextContents()).to.deep.equal([
      'ENERGY: EUR 0.25 per kWh + 20% VAT, billed per 1 Wh',
    ]);

    // 12.5 kWh at 0.25 + 20%: 3.75
    const form = page.getByTestId('price-form');
    await form.getByTestId('price-tariff').selectOption('T-1');
    await form.getByTestId('price-start').fill('2024-03-01T10:00');
    await form.getByTestId('price-minutes').fill('90');
    await form.getByTestId('price-kwh').fill('12.5');
    await form.getByTestId('price-zone').fill('Europe/Amsterdam');
    await form.getByTestId('price-submit').click();
    await form.getByTestId('price-total').filter({ hasText: 'EUR 3.75' }).waitFor();
    expect(await form.getByTestId('price-result').textContent()).to.contain('(EUR 3.13 excl.)');

    // an unknown time zone: the API's reason, in red
    await form.getByTestId('price-zone').fill('Mars/Olympus');
    await form.getByTestId('price-submit').click();
    const notice = form.getByTestId('notice');
    await notice.filter({ hasText: 'Could not price' }).waitFor();
    expect(await notice.getAttribute('class')).to.contain('err');
    await form.getByTestId('price-zone').fill('Europe/Amsterdam');
    await form.getByTestId('price-submit').click();
    await form.getByTestId('price-total').waitFor();
    // a weekday: the night's energy does not apply, the FLAT 0.50 + 21% does (0.605), the total is
    // the minimum price; the cent is rounded half away from zero (was EUR 0.60, the binary double)
    await form.getByTestId('price-tariff').selectOption('T-NIGHT');
    await form.getByTestId('price-start').fill('2024-03-04T10:00');
    await form.getByTestId('price-submit').click();
    await form.getByTestId('price-total').filter({ hasText: 'EUR 1.21' }).waitFor();
    expect(await form.getByTestId('price-result').textContent()).to.contain('EUR 0.61 (EUR 0.50 excl.)');
    await page.screenshot({ path: '/tmp/console-tariffs.png', fullPage: true });
    await page.close();
  });

  it('deletes a tariff from the console once no connector names it; the eMSP is sent its DELETE', async () => {
    const e = await world.emsp('2.2.1');
    const gone = { ...TARIFF, id: 'T-GONE' };
    expect((await world.api.request('PUT', '/v1/ocpi/tariffs/T-GONE', { body: gone })).status).to.equal(200);
    const named = (ids: string[]) =>
      aLocation({ id: 'LOC-GONE', evses: [anEvse({ uid: 'E-GONE', connectors: [aConnector({ tariff_ids: ids })] })] });
    const put = (ids: string[]) => world.api.request('PUT', '/v1/ocpi/locations/LOC-GONE', { body: named(ids) });
    expect((await put(['T-GONE'])).status).to.equal(200);

    const page = await openPage('#/tariffs');
    const card = page.getByTestId('tariff-T-GONE');
    await card.getByTestId('delete').click();
    await card.getByTestId('confirm-delete').click();
    // refused while the connector names it: the API's reason, in red, and the tariff stays
    const notice = page.getByTestId('notice');
    await notice.filter({ hasText: 'connector 1 of EVSE E-GONE at location LOC-GONE' }).waitFor();
    expect(await notice.getAttribute('class')).to.contain('err');
    expect(await card.count()).to.equal(1);

    expect((await put([])).status).to.equal(200);
    await card.getByTestId('delete').click();
    await card.getByTestId('confirm-delete').click();
    await notice.filter({ hasText: 'Tariff T-GONE deleted' }).waitFor();
    await card.waitFor({ state: 'detached' });
    expect((await world.api.request('GET', '/v1/ocpi/tariffs/T-GONE')).status).to.equal(404);
    await eventually(async () =>
      e.sim.received.find(
        (r) => r.method === 'DELETE' && r.path.endsWith('/tariffs/NL/EVP/T-GONE') && r.status === 200,
      ),
    );
    await page.close();
  });

  /** A 30-minute charge of 10 kWh by a token of `e` on a real charger: its CDR's id, once `e` has the CDR. */
  async function chargedCdr(e: Emsp): Promise<string> {
    const { cp, charger } = await world.linkedCharger('ocpp1.6');
    const uid = `D${randomUUID().slice(0, 8)}`.toUpperCase();
    await world.pushToken(e, uid, { whitelist: 'ALWAYS' });
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
    await charger.call('StopTransaction', { transactionId, meterStop: 10000, timestamp: at(30) });
    const cdrId = await eventually(
      async () => {
        const s = await world.api.request('GET', `/v1/sessions?charge_point_id=${cp.id}`);
        const cdr = (s.body.value as Json[])[0]?.cdr_id;
        return typeof cdr === 'string' ? cdr : undefined;
      },
      { what: 'the CDR of the session' },
    );
    // delivered to the eMSP before the page is opened (the list is read once)
    await eventually(
      async () =>
        e.sim.received.find((r) => r.method === 'POST' && /\/cdrs$/.test(r.path) && (r.body as Json).id === cdrId),
      { what: 'the CDR at the eMSP' },
    );
    return cdrId;
  }

  it('says of a credit whose eMSP speaks 2.1.1 only that it is not sent, not that it waits', async () => {
    const e = await world.emsp('2.1.1');
    const cdrId = await chargedCdr(e);
    const answer = await world.api.request('POST', `/v1/cdrs/${encodeURIComponent(cdrId)}/credit`, { body: {} });
    expect(answer.status, JSON.stringify(answer.body)).to.equal(201);
    const page = await openPage('#/cdrs');
    const credit = page.getByTestId(`cdr-${cdrId}-C`);
    await credit.waitFor();
    // was "not yet (2.2.1 links only)", as for a credit on its way to a 2.2.1 eMSP
    expect((await credit.getByTestId('delivered').textContent())?.trim()).to.equal(
      'not sent: its eMSP speaks 2.1.1, which has no credit CDRs',
    );
    await page.close();
  });

  it("lists the CDR of a real charger's roamed session with its total and its eMSP, and credits it", async () => {
    const e = await world.emsp('2.2.1');
    const cdrId = await chargedCdr(e);
    const page = await openPage('#/cdrs');
    const row = page.getByTestId(`cdr-${cdrId}`);
    await row.waitFor();
    // 10 kWh at 0.25 + 20%: 3.00
    expect((await row.getByTestId('cost').textContent())?.trim()).to.equal('EUR 3.00');
    // the amount is the one with VAT, as the column says
    await page.getByRole('columnheader', { name: 'Cost (incl. VAT)' }).waitFor();
    expect((await row.getByTestId('energy').textContent())?.trim()).to.equal('10');
    expect((await row.getByTestId('emsp').textContent())?.trim()).to.equal(
      `${e.sim.party.country_code}-${e.sim.party.party_id}`,
    );
    expect((await row.getByTestId('delivered').textContent())?.trim()).not.to.equal('not yet');

    // the operator credits it: asked twice, with a remark the eMSP is shown
    await row.getByTestId('credit').click();
    // a remark of spaces only is refused, as the API refuses it, not sent as no remark
    await row.getByTestId('credit-remark').fill('   ');
    await row.getByTestId('confirm-credit').click();
    await page.getByTestId('notice').filter({ hasText: 'A remark of spaces only is none' }).waitFor();
    expect(await page.getByTestId(`cdr-${cdrId}-C`).count()).to.equal(0);
    await row.getByTestId('credit-remark').fill('charged on a faulty meter');
    await row.getByTestId('confirm-credit').click();
    await page
      .getByTestId('notice')
      .filter({
        hasText: `CDR ${cdrId} credited by ${cdrId}-C: sent to ${e.sim.party.country_code}-${e.sim.party.party_id}`,
      })
      .waitFor();
    const creditRow = page.getByTestId(`cdr-${cdrId}-C`);
    await creditRow.waitFor();
    expect((await creditRow.getByTestId('cost').textContent())?.trim()).to.equal('EUR -3.00');
    expect((await creditRow.textContent()) ?? '').to.contain(`credits ${cdrId}`);
    const creditPost = await eventually(
      async () =>
        e.sim.received.find((r) => r.method === 'POST' && /\/cdrs$/.test(r.path) && (r.body as Json).credit === true),
      { what: 'the credit CDR at the eMSP' },
    );
    expect((creditPost.body as Json).remark).to.equal('charged on a faulty meter');
    // credited once: the CDR names its credit instead of offering another
    expect((await row.getByTestId('credited-by').textContent())?.trim()).to.equal(`credited by ${cdrId}-C`);
    expect(await row.getByTestId('credit').count()).to.equal(0);

    // a partner CPO posts us a CDR 0.50 above its own tariff: its check is listed as a disagreement
    const cpo = await world.partner('2.2.1', 'CPO');
    const theirs = { country_code: cpo.sim.party.country_code, party_id: cpo.sim.party.party_id };
    const cdr = aCdr221({
      ...theirs,
      id: `CHK${randomUUID().slice(0, 8)}`.toUpperCase(),
      start_date_time: '2026-01-05T10:00:00Z',
      end_date_time: '2026-01-05T11:00:00Z',
      charging_periods: [{ start_date_time: '2026-01-05T10:00:00Z', dimensions: [{ type: 'ENERGY', volume: 10 }] }],
      tariffs: [
        aTariff221({
          ...theirs,
          id: 'TAR-CHK',
          elements: [{ price_components: [{ type: 'ENERGY', price: 0.3, vat: 20, step_size: 1 }] }],
        }),
      ],
      total_energy: 10,
      total_time: 1,
      total_cost: { excl_vat: 3.5, incl_vat: 4.1 },
      last_updated: '2026-01-05T11:00:00Z',
    });
    const posted = await cpo.sim.call('POST', 'cdrs', '', cdr, { role: 'RECEIVER' });
    expect(posted.statusCode, JSON.stringify(posted.body)).to.equal(1000);
    await eventually(
      async () => {
        const res = await world.api.request(
          'GET',
          `/v1/cdr-checks/${theirs.country_code}/${theirs.party_id}/${String(cdr.id)}`,
        );
        return res.status === 200 ? true : undefined;
      },
      { what: 'the check of the posted CDR', timeoutMs: 15_000 },
    );
    await page.reload();
    const check = page.getByTestId(`check-${theirs.country_code}-${theirs.party_id}-${String(cdr.id)}`);
    await check.waitFor();
    expect(await check.locator('[data-status="disagrees"]').count()).to.equal(1);
    expect(await check.textContent()).to.contain('0.50');
    await page.screenshot({ path: '/tmp/console-cdrs.png', fullPage: true });
    await page.close();
  });

  it('is usable at 390 px (no horizontal overflow) and breaks no CSP rule', async () => {
    // a dead letter for the outbox's rows to show
    const e = await world.emsp('2.2.1');
    const dead = await deadLetter(e, 'T-DEAD-4');
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await signIn(phone, world.platform.platform.url, API_KEY);
    const widths: Record<string, number> = {};
    for (const [name, hash, ready] of [
      ['roaming', '#/roaming', 'sent-commands'],
      ['roaming-dead', `#/roaming?status=dead&partner=${e.id}`, `outbox-${String(dead.id)}`],
      ['tariffs', '#/tariffs', 'tariff-T-NIGHT'],
      ['cdrs', '#/cdrs?check=all', 'cdrs'],
    ] as const) {
      await phone.goto(`${world.platform.platform.url}/dashboard${hash}`);
      await phone.getByTestId(ready).first().waitFor();
      if (name === 'tariffs') {
        await phone.getByTestId('price-submit').click();
        await phone.getByTestId('price-total').waitFor();
      }
      await phone.waitForTimeout(300);
      widths[name] = await phone.evaluate('document.documentElement.scrollWidth');
      await phone.screenshot({ path: `/tmp/console-390-${name}.png`, fullPage: true });
    }
    for (const [name, w] of Object.entries(widths)) expect(w, name).to.be.at.most(390);
    expect(cspViolations).to.deep.equal([]);
    await phone.close();
  });
});
