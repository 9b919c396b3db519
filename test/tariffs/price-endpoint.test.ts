import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { pricingModule } from '../../src/tariffs/module.js';
import {
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../support/platforms.js';
import { aCdr, aTariff, anElement, energy } from './builders.js';
import { TOTALS, VECTORS_DIR, tandemdriveVectors } from './vectors.js';

/** `POST /v1/tariffs/price` as an operator calls it: a real server on port 0, pricing in its threads. */

const KEY = 'price-endpoint-key-0123456789';

describe('POST /v1/tariffs/price', function () {
  this.timeout(30_000);
  let env: TestEnvironment;
  let p: StartedPlatform;

  before(async () => {
    env = await embeddedEnvironment({ CSMS_API_KEY: KEY, PRICING_THREADS: '1' });
    p = await startPlatform(env, [pricingModule()]);
  });
  after(async () => {
    await p?.stop();
    await env?.cleanup();
  });

  const post = async (body: unknown, key = KEY) => {
    const res = await fetch(`${p.platform.url}/v1/tariffs/price`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('prices every public vector as the engine does, with every CDR total and the breakdown', async function () {
    if (!existsSync(VECTORS_DIR)) return this.skip();
    for (const v of tandemdriveVectors()) {
      const { tariffs: _t, ...cdr } = v.cdr as Record<string, unknown>;
      const { status, body } = await post({
        tariff: v.tariff,
        cdr: {
          start_date_time: cdr.start_date_time,
          end_date_time: cdr.end_date_time,
          currency: cdr.currency,
          charging_periods: cdr.charging_periods,
        },
        time_zone: 'UTC',
      });
      expect(status, v.name).to.equal(200);
      for (const k of TOTALS) expect(body, `${v.name} ${k}`).to.have.property(k);
      if (!v.name.startsWith('025kwh_min_price/cdr2'))
        expect(body.total_cost, v.name).to.deep.equal({
          excl_vat: (v.cdr.total_cost as { excl_vat: number }).excl_vat,
          incl_vat: (v.cdr.total_cost as { incl_vat: number }).incl_vat,
        });
      const breakdown = body.breakdown as { periods: unknown[] };
      expect(breakdown.periods, v.name).to.have.length(v.cdr.charging_periods.length);
    }
  });

  it("prices mod_tariffs' expired reservation with its expire fee: 6.00 / 7.20, the fee in the breakdown", async () => {
    const { status, body } = await post({
      tariff: {
        country_code: 'DE',
        party_id: 'ALL',
        id: '20',
        currency: 'EUR',
        elements: [
          {
            price_components: [{ type: 'FLAT', price: 4, vat: 20, step_size: 1 }],
            restrictions: { reservation: 'RESERVATION_EXPIRES' },
          },
          {
            price_components: [{ type: 'TIME', price: 2, vat: 20, step_size: 600 }],
            restrictions: { reservation: 'RESERVATION' },
          },
          {
            price_components: [
              { type: 'FLAT', price: 0.5, vat: 20, step_size: 1 },
              { type: 'ENERGY', price: 0.25, vat: 10, step_size: 1 },
            ],
          },
        ],
        last_updated: '2024-01-01T00:00:00Z',
      },
      cdr: {
        start_date_time: '2024-05-02T09:00:00Z',
        end_date_time: '2024-05-02T10:00:00Z',
        charging_periods: [
          { start_date_time: '2024-05-02T09:00:00Z', dimensions: [{ type: 'RESERVATION_TIME', volume: 1 }] },
        ],
      },
      time_zone: 'Europe/Berlin',
    });
    expect(status, JSON.stringify(body)).to.equal(200);
    expect(body.total_cost).to.deep.equal({ excl_vat: 6, incl_vat: 7.2 });
    expect((body.breakdown as Record<string, unknown>).reservation_expiry_fee).to.deep.equal({
      element: 1,
      cost: { excl_vat: 4, incl_vat: 4.8 },
    });
  });

  it('answers 422 with detail for a CDR that cannot be priced, and for a tariff that fails its schema', async () => {
    const tariff = aTariff([anElement([energy(0.3)])]);
    const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [['2024-05-02T10:00:00Z', { ENERGY: 1 }]]);
    const wrongCurrency = await post({ tariff, cdr: { ...cdr, currency: 'USD' }, time_zone: 'UTC' });
    expect(wrongCurrency.status).to.equal(422);
    expect(wrongCurrency.body.detail).to.deep.include({
      loc: ['body', 'cdr'],
      msg: 'the CDR is in USD, the tariff in EUR',
      type: 'invalid_cdr',
      input: null,
      ctx: {},
    });
    const noZone = await post({ tariff, cdr, time_zone: 'Nowhere/Atlantis' });
    expect(noZone.status).to.equal(422);
    // at its own field
    expect((noZone.body.detail as { loc: string[] }[])[0]).to.deep.include({
      loc: ['body', 'time_zone'],
      msg: 'time_zone Nowhere/Atlantis is not an IANA time zone',
    });
    const notYet = await post({
      tariff: { ...tariff, start_date_time: '2030-01-01T00:00:00Z' },
      cdr,
      time_zone: 'UTC',
    });
    expect(notYet.status).to.equal(422);
    expect((notYet.body.detail as { loc: string[] }[])[0]?.loc).to.deep.equal(['body', 'tariff']);
    const badTariff = await post({ tariff: { ...tariff, elements: [] }, cdr, time_zone: 'UTC' });
    expect(badTariff.status).to.equal(422);
    expect(badTariff.body).to.have.property('detail');
  });

  it('refuses a restriction date the calendar does not have, naming the field', async () => {
    const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [['2024-05-02T10:00:00Z', { ENERGY: 1 }]]);
    for (const day of ['2024-02-30', '2023-02-29', '2024-04-31']) {
      const tariff = aTariff([anElement([energy(0.3)], { start_date: day })]);
      const res = await post({ tariff, cdr, time_zone: 'UTC' });
      expect(res.status, day).to.equal(422);
      expect((res.body.detail as { loc: unknown[]; msg: string }[])[0], day).to.deep.include({
        loc: ['body', 'tariff', 'elements', 0, 'restrictions', 'start_date'],
        msg: 'must be a day of the calendar, YYYY-MM-DD',
      });
    }
    const leap = aTariff([anElement([energy(0.3)], { start_date: '2024-02-29' })]);
    expect((await post({ tariff: leap, cdr, time_zone: 'UTC' })).status).to.equal(200);
  });

  it('refuses a CDR or tariff instant the calendar does not have, or before the year 0001', async () => {
    const tariff = aTariff([anElement([energy(0.3)])]);
    const cdr = (start: string, end: string) => aCdr(start, end, [[start, { ENERGY: 1 }]]);
    const cases: [string, unknown][] = [
      // was 200, priced until 3 March
      ['a CDR ending on 31 February', { tariff, cdr: cdr('2023-02-28T23:00:00Z', '2023-02-31T00:00:00Z') }],
      ['a CDR starting on 30 February', { tariff, cdr: cdr('2024-02-30T08:00:00Z', '2024-03-01T09:00:00Z') }],
      ['a CDR with an offset on 31 April', { tariff, cdr: cdr('2024-04-30T08:00:00Z', '2024-04-31T09:00:00+02:00') }],
      ['a CDR in the year 0000', { tariff, cdr: cdr('0000-01-03T08:10:00Z', '0000-01-03T08:40:00Z') }],
      // was 200: the first day of 0001 at +01:00 begins in the year 0000
      [
        'a CDR starting before 0001 by its offset',
        { tariff, cdr: cdr('0001-01-01T00:30:00+01:00', '0001-01-01T01:00:00Z') },
      ],
      [
        'a tariff ending on 31 April',
        {
          tariff: { ...tariff, end_date_time: '2024-04-31T00:00:00Z' },
          cdr: cdr('2024-04-30T08:00:00Z', '2024-04-30T09:00:00Z'),
        },
      ],
    ];
    for (const [what, body] of cases) {
      const res = await post({ ...(body as object), time_zone: 'UTC' });
      expect(res.status, what).to.equal(422);
      expect((res.body.detail as { msg: string }[])[0]?.msg, what).to.match(/no real instant/);
    }
    const leap = await post({ tariff, cdr: cdr('2024-02-29T08:00:00Z', '2024-02-29T09:00:00Z'), time_zone: 'UTC' });
    expect(leap.status).to.equal(200);
    // written in the year 0000 at -01:00, the instant is in 0001 (was 422)
    const first = cdr('0000-12-31T23:30:00-01:00', '0001-01-01T01:00:00Z');
    expect((await post({ tariff, cdr: first, time_zone: 'UTC' })).status).to.equal(200);
  });

  it('refuses a negative min_price or max_price: the session would be a credit', async () => {
    const cdr = aCdr('2024-05-06T08:00:00Z', '2024-05-06T09:00:00Z', [['2024-05-06T08:00:00Z', { ENERGY: 10 }]]);
    for (const field of ['max_price', 'min_price'] as const) {
      const tariff = { ...aTariff([anElement([energy(0.3)])]), [field]: { excl_vat: -5, incl_vat: -6 } };
      // was 200 with total_cost -5 / -6 for the maximum
      const res = await post({ tariff, cdr, time_zone: 'UTC' });
      expect(res.status, field).to.equal(422);
      expect(JSON.stringify(res.body.detail), field).to.include(field);
    }
  });

  it('is for operators only', async () => {
    const { status } = await post({}, 'wrong-key-wrong-key-wrong');
    expect(status).to.equal(401);
  });
});
