import { expect } from 'chai';
import { priceCdr, selectTariff } from '../../src/tariffs/engine.js';
import type { Tariff } from '../../src/ocpi/tariffs/schemas-2.2.1.js';
import type { PricedCdr, PricingCdr, PricingTariff } from '../../src/tariffs/types.js';
import { aCdr, aTariff, anElement, energy, flat, minutes, parking, time, type PeriodSpec } from './builders.js';

/** The tricky rules of docs/TARIFFS.md, one by one, through the public pricing function. */

function price(tariff: Tariff, cdr: PricingCdr, timeZone = 'UTC'): PricedCdr {
  const outcome = priceCdr(tariff, cdr, timeZone);
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.priced;
}

const excl = (p: PricedCdr): number => p.total_cost.excl_vat;

/** The step_size example tariff of mod_tariffs (tariff_14): 1.20/h before 17:00 in 30-minute steps, 2.40/h after in 15-minute steps, parking 1.00/h before 20:00. */
const stepTariff = aTariff([
  anElement([time(1.2, 1800), parking(1, 900)], { start_time: '00:00', end_time: '17:00' }),
  anElement([time(2.4, 900), parking(1, 900)], { start_time: '17:00', end_time: '20:00' }),
  anElement([time(2.4, 900)], { start_time: '20:00', end_time: '00:00' }),
]);

describe('pricing engine: rules', function () {
  describe('step_size', function () {
    it("time is rounded up once per session, the surplus at the last period's price (spec example #2: 1.30)", function () {
      const cdr = aCdr('2024-05-02T16:35:00Z', '2024-05-02T17:10:00Z', [
        ['2024-05-02T16:35:00Z', { TIME: minutes(25) }],
        ['2024-05-02T17:00:00Z', { TIME: minutes(10) }],
      ]);
      const priced = price(stepTariff, cdr);
      expect(excl(priced)).to.equal(1.3);
      expect(priced.breakdown.steps).to.deep.equal([
        { type: 'TIME', step_size: 900, surplus: 0.1667, element: 2, cost: { excl_vat: 0.4, incl_vat: 0.4 } },
      ]);
    });

    it('a dimension no element prices after a switch is rounded there, with the step it switched from; more use never bills less', function () {
      // energy at 0.40 in 1 kWh steps until 17:00, free 17:00-18:00 (no ENERGY), then 0.40 in Wh
      const tariff = aTariff([
        anElement([energy(0.4, 1000)], { end_time: '17:00' }),
        anElement([time(0, 1)], { start_time: '17:00', end_time: '18:00' }),
        anElement([energy(0.4, 1)], { start_time: '18:00' }),
      ]);
      const upTo18 = aCdr('2024-05-02T16:30:00Z', '2024-05-02T18:00:00Z', [
        ['2024-05-02T16:30:00Z', { ENERGY: 0.2 }],
        ['2024-05-02T17:00:00Z', { ENERGY: 3 }],
      ]);
      const on = aCdr('2024-05-02T16:30:00Z', '2024-05-02T18:10:00Z', [
        ['2024-05-02T16:30:00Z', { ENERGY: 0.2 }],
        ['2024-05-02T17:00:00Z', { ENERGY: 3 }],
        ['2024-05-02T18:00:00Z', { ENERGY: 0.5 }],
      ]);
      // 0.2 kWh billed as 1 kWh at the switch (0.40), then 0.5 kWh at 0.40: 0.60. It was 0.28
      // (no step at all), below the 0.40 of the same session ended at 18:00
      expect(excl(price(tariff, upTo18))).to.equal(0.4);
      const priced = price(tariff, on);
      expect(excl(priced)).to.equal(0.6);
      expect(priced.breakdown.steps).to.deep.equal([
        { type: 'ENERGY', step_size: 1000, surplus: 0.8, element: 1, cost: { excl_vat: 0.32, incl_vat: 0.32 } },
      ]);

      // time: 1.20/h in 15-minute steps until 17:00, energy only 17:00-18:00, 2.40/h by the minute after
      const timed = aTariff([
        anElement([time(1.2, 900)], { end_time: '17:00' }),
        anElement([energy(0.3, 1)], { start_time: '17:00', end_time: '18:00' }),
        anElement([time(2.4, 60)], { start_time: '18:00' }),
      ]);
      const cdr = aCdr('2024-05-02T16:50:00Z', '2024-05-02T18:05:00Z', [
        ['2024-05-02T16:50:00Z', { TIME: minutes(10) }],
        ['2024-05-02T17:00:00Z', { TIME: minutes(60), ENERGY: 5 }],
        ['2024-05-02T18:00:00Z', { TIME: minutes(5) }],
      ]);
      // 10 minutes billed as 15 (0.30), 5 kWh (1.50), 5 minutes at 2.40/h (0.20): 2.00; it was 1.90
      expect(excl(price(timed, cdr))).to.equal(2);
    });

    it('a period that lists a dimension with a volume of 0 neither takes the step nor switches', function () {
      // 0.30 a kWh in 1 kWh steps until 17:00, 0.50 in 5 kWh steps after; nothing flows after 17:00
      const tariff = aTariff([
        anElement([energy(0.3, 1000), time(0, 1)], { end_time: '17:00' }),
        anElement([energy(0.5, 5000), time(0, 1)], { start_time: '17:00' }),
      ]);
      const periods: PeriodSpec[] = [['2024-05-02T16:00:00Z', { ENERGY: 2.5, TIME: minutes(60) }]];
      const listed = aCdr('2024-05-02T16:00:00Z', '2024-05-02T17:30:00Z', [
        ...periods,
        ['2024-05-02T17:00:00Z', { ENERGY: 0, TIME: minutes(30) }],
      ]);
      const unlisted = aCdr('2024-05-02T16:00:00Z', '2024-05-02T17:30:00Z', [
        ...periods,
        ['2024-05-02T17:00:00Z', { TIME: minutes(30) }],
      ]);
      // 2.5 kWh stepped to 3 at 0.30: 0.90, whether the period after 17:00 says ENERGY 0 or nothing.
      // It billed 2.5 kWh more at 0.50 (2.00): the step of an element under which nothing flowed
      expect(excl(price(tariff, unlisted))).to.equal(0.9);
      const priced = price(tariff, listed);
      expect(excl(priced)).to.equal(0.9);
      expect(priced.breakdown.steps).to.deep.equal([
        { type: 'ENERGY', step_size: 1000, surplus: 0.5, element: 1, cost: { excl_vat: 0.15, incl_vat: 0.15 } },
      ]);
      // nor is a 0 under no element a switch: the step is taken once, at the end, on 3.5 kWh
      const gap = aTariff([
        anElement([energy(0.3, 1000)], { end_time: '17:00' }),
        anElement([time(0, 1)], { start_time: '17:00', end_time: '18:00' }),
        anElement([energy(0.3, 1000)], { start_time: '18:00' }),
      ]);
      const across = aCdr('2024-05-02T16:00:00Z', '2024-05-02T18:30:00Z', [
        ['2024-05-02T16:00:00Z', { ENERGY: 2.5 }],
        ['2024-05-02T17:00:00Z', { ENERGY: 0 }],
        ['2024-05-02T18:00:00Z', { ENERGY: 1 }],
      ]);
      expect(excl(price(gap, across))).to.equal(1.2);
    });

    it('a step surplus is priced exactly: 2.52 s stepped to 3 s at 0.18 an hour is 0.00015, reported 0.0002', function () {
      // the surplus, 0.48 s, is 0.000133... h: a quotient rounded before the price multiplies it
      // lands below the half and reports 0.0001
      const tariff = aTariff([anElement([time(0.18, 3)])]);
      const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T10:00:03Z', [['2024-05-02T10:00:00Z', { TIME: 0.0007 }]]);
      const priced = price(tariff, cdr);
      expect(priced.total_time_cost).to.deep.equal({ excl_vat: 0.0002, incl_vat: 0.0002 });
    });

    it('parking that is not priced leaves the step to charging time (spec example "free of charge": 0.60)', function () {
      const cdr = aCdr('2024-05-02T19:55:00Z', '2024-05-02T20:07:00Z', [
        ['2024-05-02T19:55:00Z', { TIME: minutes(5) }],
        ['2024-05-02T20:00:00Z', { TIME: minutes(5) }],
        ['2024-05-02T20:05:00Z', { PARKING_TIME: minutes(2) }],
      ]);
      expect(excl(price(stepTariff, cdr))).to.equal(0.6);
    });

    it('priced parking takes the step, charging time is billed as used (0.55, as the public vector; the spec prose says 0.50)', function () {
      const cdr = aCdr('2024-05-02T16:55:00Z', '2024-05-02T17:07:00Z', [
        ['2024-05-02T16:55:00Z', { TIME: minutes(5) }],
        ['2024-05-02T17:00:00Z', { TIME: minutes(5) }],
        ['2024-05-02T17:05:00Z', { PARKING_TIME: minutes(2) }],
      ]);
      const priced = price(stepTariff, cdr);
      expect(priced.total_time_cost.excl_vat).to.equal(0.3);
      expect(priced.total_parking_cost.excl_vat).to.equal(0.25);
      expect(excl(priced)).to.equal(0.55);
    });

    it('a parking dimension of no time leaves the step to charging time: 10 minutes at 2.40/h in 15-minute steps is 0.60', function () {
      const tariff = aTariff([anElement([time(2.4, 900), parking(1, 300)])]);
      const charging: PeriodSpec = ['2024-05-02T10:00:00Z', { TIME: minutes(10) }];
      const alone = aCdr('2024-05-02T10:00:00Z', '2024-05-02T10:10:00Z', [charging]);
      expect(excl(price(tariff, alone))).to.equal(0.6);
      // a CPO that reports every dimension, zeros too: was 0.40, no step on either dimension
      const zeroPeriod = aCdr('2024-05-02T10:00:00Z', '2024-05-02T10:10:00Z', [
        charging,
        ['2024-05-02T10:10:00Z', { PARKING_TIME: 0 }],
      ]);
      const zeroDimension = aCdr('2024-05-02T10:00:00Z', '2024-05-02T10:10:00Z', [
        ['2024-05-02T10:00:00Z', { TIME: minutes(10), PARKING_TIME: 0 }],
      ]);
      for (const cdr of [zeroPeriod, zeroDimension]) {
        const priced = price(tariff, cdr);
        expect(excl(priced)).to.equal(0.6);
        expect(priced.breakdown.steps.map((st) => st.type)).to.deep.equal(['TIME']);
      }
    });

    it('12 min charging and 8 min parking with 20% VAT: 0.73 / 0.88 with steps, 0.61 / 0.74 without', function () {
      const tariff = (step: number): Tariff =>
        aTariff([
          anElement([time(2.4, step, 20), parking(1, step, 20)], { end_time: '20:00' }),
          anElement([time(2.4, step, 20)]),
        ]);
      const cdr = aCdr('2024-05-02T19:40:00Z', '2024-05-02T20:00:00Z', [
        ['2024-05-02T19:40:00Z', { TIME: minutes(12) }],
        ['2024-05-02T19:52:00Z', { PARKING_TIME: minutes(8) }],
      ]);
      const cents = (p: PricedCdr) => [p.total_cost.excl_vat, p.total_cost.incl_vat].map((n) => Number(n.toFixed(2)));
      expect(cents(price(tariff(900), cdr))).to.deep.equal([0.73, 0.88]);
      expect(cents(price(tariff(0), cdr))).to.deep.equal([0.61, 0.74]);
    });

    it('energy is rounded up to whole steps of Wh over the session, at the last ENERGY price', function () {
      const tariff = aTariff([anElement([energy(0.3, 500)], { end_time: '12:00' }), anElement([energy(0.5, 1000)])]);
      const cdr = aCdr('2024-05-02T11:00:00Z', '2024-05-02T13:00:00Z', [
        ['2024-05-02T11:00:00Z', { ENERGY: 1.2 }],
        ['2024-05-02T12:00:00Z', { ENERGY: 1.1 }],
      ]);
      // 2.3 kWh -> 3 kWh in steps of 1,000 Wh: 0.7 kWh more at 0.50
      expect(excl(price(tariff, cdr))).to.equal(0.36 + 0.55 + 0.35);
    });
    it('time written with 4 or 6 decimals is counted to the second: 0.1667 h in 1-minute steps is 10 minutes', function () {
      const tariff = aTariff([anElement([time(6, 60)])]);
      for (const hours of [0.1667, 0.166667]) {
        const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T10:10:00Z', [['2024-05-02T10:00:00Z', { TIME: hours }]]);
        expect(excl(price(tariff, cdr)), String(hours)).to.equal(1);
      }
    });

    it('time used that rounds to no second still bills one step: 0.36 s at 60.00/h in 1-minute steps is 1.00', function () {
      for (const make of [time, parking]) {
        const tariff = aTariff([anElement([make(60, 60)])]);
        const dimension = make === time ? 'TIME' : 'PARKING_TIME';
        const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T10:00:01Z', [
          ['2024-05-02T10:00:00Z', { [dimension]: 0.0001 }],
        ]);
        expect(excl(price(tariff, cdr)), dimension).to.equal(1);
      }
    });

    it('only priced time is rounded up: parking free after 20:00 leaves 10 paid minutes, billed as 15 (0.25)', function () {
      const tariff = aTariff([anElement([parking(1, 900)], { end_time: '20:00' }), anElement([time(1)])]);
      const cdr = aCdr('2024-05-02T19:50:00Z', '2024-05-02T20:10:00Z', [
        ['2024-05-02T19:50:00Z', { PARKING_TIME: minutes(10) }],
        ['2024-05-02T20:00:00Z', { PARKING_TIME: minutes(10) }],
      ]);
      expect(excl(price(tariff, cdr))).to.equal(0.25);
    });
  });

  describe('restrictions', function () {
    it("a time window that ends before it starts wraps midnight, in the location's time zone; its end is exclusive", function () {
      const tariff = aTariff([
        anElement([energy(0.2)], { start_time: '22:00', end_time: '06:00' }),
        anElement([energy(0.4)]),
      ]);
      // Europe/Berlin in January is UTC+1
      const cdr = aCdr('2024-01-10T22:30:00Z', '2024-01-11T06:00:00Z', [
        ['2024-01-10T22:30:00Z', { ENERGY: 1 }], // 23:30
        ['2024-01-11T04:59:00Z', { ENERGY: 1 }], // 05:59
        ['2024-01-11T05:00:00Z', { ENERGY: 1 }], // 06:00
        ['2024-01-11T20:30:00Z', { ENERGY: 1 }], // 21:30
      ]);
      const cdr2 = { ...cdr, end_date_time: '2024-01-11T21:00:00Z' };
      const prices = price(tariff, cdr2, 'Europe/Berlin').breakdown.periods.map((p) => p.dimensions[0]?.price);
      expect(prices).to.deep.equal([0.2, 0.2, 0.4, 0.4]);
    });

    it('an end_time of 00:00 without a start_time is valid until midnight: the whole day', function () {
      const tariff = aTariff([anElement([energy(0.1)], { end_time: '00:00' }), anElement([energy(0.3)])]);
      for (const at of ['2024-05-06T00:00:00Z', '2024-05-06T20:00:00Z', '2024-05-06T23:59:00Z']) {
        const cdr = aCdr(at, `${at.slice(0, 11)}23:59:59Z`, [[at, { ENERGY: 10 }]]);
        // was 3.00: an end at second 0 of the day that no second is before
        expect(excl(price(tariff, cdr)), at).to.equal(1);
      }
    });

    it('day_of_week is the local day: Saturday 23:30 UTC is Sunday in Berlin', function () {
      const tariff = aTariff([anElement([energy(0.1)], { day_of_week: ['SUNDAY'] }), anElement([energy(0.3)])]);
      const cdr = aCdr('2024-03-09T23:30:00Z', '2024-03-10T00:30:00Z', [['2024-03-09T23:30:00Z', { ENERGY: 10 }]]);
      expect(excl(price(tariff, cdr, 'Europe/Berlin'))).to.equal(1);
      expect(excl(price(tariff, cdr, 'UTC'))).to.equal(3);
    });

    it('across a DST change the local clock moves with it (Amsterdam, 31 March 2024)', function () {
      const tariff = aTariff([
        anElement([energy(0.1)], { start_time: '03:00', end_time: '04:00' }),
        anElement([energy(0.3)]),
      ]);
      const cdr = aCdr('2024-03-31T00:30:00Z', '2024-03-31T02:00:00Z', [
        ['2024-03-31T00:30:00Z', { ENERGY: 1 }], // 01:30 CET
        ['2024-03-31T01:00:00Z', { ENERGY: 1 }], // 03:00 CEST (02:00-03:00 does not exist)
        ['2024-03-31T01:59:00Z', { ENERGY: 1 }], // 03:59 CEST
      ]);
      const periods = price(tariff, cdr, 'Europe/Amsterdam').breakdown.periods;
      expect(periods.map((p) => p.dimensions[0]?.price)).to.deep.equal([0.3, 0.1, 0.1]);
      expect(periods[1]?.local_time).to.equal('2024-03-31 03:00:00+02:00 SUNDAY');
    });

    it("kWh, duration and date bounds: lower inclusive, upper exclusive, read at each period's start", function () {
      const tariff = aTariff([
        anElement([energy(0.1)], { max_kwh: 10 }),
        anElement([energy(0.2)], { min_kwh: 10, max_duration: 3600 }),
        anElement([energy(0.3)], { min_duration: 3600, end_date: '2024-05-03' }),
        anElement([energy(0.4)]),
      ]);
      const cdr = aCdr('2024-05-02T22:00:00Z', '2024-05-03T02:00:00Z', [
        ['2024-05-02T22:00:00Z', { ENERGY: 10 }], // 0 kWh before: element 1
        ['2024-05-02T22:30:00Z', { ENERGY: 5 }], // 10 kWh before (not < 10), 1,800 s: element 2
        ['2024-05-02T23:00:00Z', { ENERGY: 5 }], // 3,600 s (not < 3,600), 2 May: element 3
        ['2024-05-03T00:00:00Z', { ENERGY: 5 }], // 3 May (not before the end date): element 4
      ]);
      const periods = price(tariff, cdr).breakdown.periods;
      expect(periods.map((p) => p.dimensions[0]?.element)).to.deep.equal([1, 2, 3, 4]);
      expect(periods[1]?.dimensions[0]?.reason).to.equal('element 2 (kWh >= 10, duration < 3600s)');
    });

    it('power bounds (spec max_power example: 20.30), from reported MAX_POWER or from energy over time', function () {
      const tariff = aTariff([
        anElement([energy(0.2)], { max_power: 16 }),
        anElement([energy(0.35)], { max_power: 32 }),
        anElement([energy(0.5)]),
      ]);
      const derived = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:07:30Z', [
        ['2024-05-02T10:00:00Z', { ENERGY: 1 }], // 10 min: 6 kW
        ['2024-05-02T10:10:00Z', { ENERGY: 40 }], // 50 min: 48 kW
        ['2024-05-02T11:00:00Z', { ENERGY: 0.5 }], // 7.5 min: 4 kW
      ]);
      expect(excl(price(tariff, derived))).to.equal(20.3);
      const reported = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:07:30Z', [
        ['2024-05-02T10:00:00Z', { ENERGY: 1, MAX_POWER: 6 }],
        ['2024-05-02T10:10:00Z', { ENERGY: 40, MAX_POWER: 48 }],
        ['2024-05-02T11:00:00Z', { ENERGY: 0.5, MAX_POWER: 4 }],
      ]);
      expect(excl(price(tariff, reported))).to.equal(20.3);
    });

    it('a current bound with no current reported does not hold: the fallback prices', function () {
      const tariff = aTariff([anElement([energy(0.1)], { max_current: 32 }), anElement([energy(0.3)])]);
      const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [['2024-05-02T10:00:00Z', { ENERGY: 10 }]]);
      expect(excl(price(tariff, cdr))).to.equal(3);
      const withCurrent = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [
        ['2024-05-02T10:00:00Z', { ENERGY: 10, MAX_CURRENT: 16 }],
      ]);
      expect(excl(price(tariff, withCurrent))).to.equal(1);
    });
  });

  describe('flat fees, reservations, VAT and bounds', function () {
    it('FLAT is charged once per session, however many periods', function () {
      const tariff = aTariff([anElement([flat(1.5, 20), energy(0.25)])]);
      const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T13:00:00Z', [
        ['2024-05-02T10:00:00Z', { ENERGY: 1 }],
        ['2024-05-02T11:00:00Z', { ENERGY: 1 }],
        ['2024-05-02T12:00:00Z', { ENERGY: 1 }],
      ]);
      const priced = price(tariff, cdr);
      expect(priced.total_fixed_cost).to.deep.equal({ excl_vat: 1.5, incl_vat: 1.8 });
      expect(priced.total_cost).to.deep.equal({ excl_vat: 2.25, incl_vat: 2.55 });
    });

    it('RESERVATION_TIME is priced by the reservation elements, with their FLAT, and never by the others', function () {
      const tariff = aTariff([
        anElement([flat(2), time(5, 60)], { reservation: 'RESERVATION' }),
        anElement([flat(1), energy(0.25), time(1)]),
      ]);
      const cdr = aCdr('2024-05-02T09:30:00Z', '2024-05-02T11:00:00Z', [
        ['2024-05-02T09:30:00Z', { RESERVATION_TIME: 0.5 }],
        ['2024-05-02T10:00:00Z', { ENERGY: 10, TIME: 1 }],
      ]);
      const priced = price(tariff, cdr);
      expect(priced.total_reservation_cost.excl_vat).to.equal(4.5);
      expect(priced.total_fixed_cost.excl_vat).to.equal(1);
      expect(priced.total_time_cost.excl_vat).to.equal(1);
      expect(excl(priced)).to.equal(4.5 + 1 + 2.5 + 1);
    });

    it('an expired reservation (no charging after it) is priced by the RESERVATION_EXPIRES element', function () {
      const tariff = aTariff([
        anElement([time(2)], { reservation: 'RESERVATION' }),
        anElement([flat(4), time(6)], { reservation: 'RESERVATION_EXPIRES' }),
        anElement([energy(0.25)]),
      ]);
      const cdr = aCdr('2024-05-02T09:00:00Z', '2024-05-02T10:30:00Z', [
        ['2024-05-02T09:00:00Z', { RESERVATION_TIME: 1.5 }],
      ]);
      expect(price(tariff, cdr).total_reservation_cost.excl_vat).to.equal(13);
    });

    it("an expired reservation pays its reserved time and the RESERVATION_EXPIRES element's fee (mod_tariffs' example)", function () {
      // the spec's tariff with a reservation price and an expire fee: 1 h reserved, not used
      const tariff = aTariff([
        anElement([flat(4, 20)], { reservation: 'RESERVATION_EXPIRES' }),
        anElement([time(2, 600, 20)], { reservation: 'RESERVATION' }),
        anElement([flat(0.5, 20), energy(0.25, 1, 10)]),
      ]);
      const expired = aCdr('2024-05-02T09:00:00Z', '2024-05-02T10:00:00Z', [
        ['2024-05-02T09:00:00Z', { RESERVATION_TIME: 1 }],
      ]);
      // 6.00 excl. VAT, 7.20 incl.: was 2.00 / 2.40, the fee lost
      const priced = price(tariff, expired);
      expect(priced.total_cost).to.deep.include({ excl_vat: 6, incl_vat: 7.2 });
      expect(priced.total_reservation_cost).to.deep.include({ excl_vat: 6, incl_vat: 7.2 });
      // used (charging follows): no expiration fee
      const used = aCdr('2024-05-02T09:00:00Z', '2024-05-02T11:00:00Z', [
        ['2024-05-02T09:00:00Z', { RESERVATION_TIME: 0.5 }],
        ['2024-05-02T09:30:00Z', { ENERGY: 20, TIME: 1.5 }],
      ]);
      expect(price(tariff, used).total_reservation_cost).to.deep.include({ excl_vat: 1, incl_vat: 1.2 });
    });

    it('VAT is per component; a component without VAT adds none', function () {
      const tariff = aTariff([anElement([flat(1, 21), energy(0.5), time(2, 1, 9)])]);
      const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [
        ['2024-05-02T10:00:00Z', { ENERGY: 10, TIME: 1 }],
      ]);
      expect(price(tariff, cdr).total_cost).to.deep.equal({ excl_vat: 8, incl_vat: 1.21 + 5 + 2.18 });
    });

    it('min_price and max_price bound excl. and incl. VAT each on its own; the parts are left as they are', function () {
      const tariff = aTariff([anElement([energy(0.5, 1, 25)])], {
        max_price: { excl_vat: 10, incl_vat: 12 },
      });
      const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [['2024-05-02T10:00:00Z', { ENERGY: 19 }]]);
      const priced = price(tariff, cdr);
      // 9.50 excl is under 10, 11.875 incl under 12: nothing clamped; 21 kWh: both are
      expect(priced.total_cost).to.deep.equal({ excl_vat: 9.5, incl_vat: 11.875 });
      const more = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [['2024-05-02T10:00:00Z', { ENERGY: 19.5 }]]);
      const clamped = price(tariff, more);
      expect(clamped.total_cost).to.deep.equal({ excl_vat: 9.75, incl_vat: 12 });
      expect(clamped.breakdown.clamped).to.deep.equal(['max_price incl_vat']);
      expect(clamped.total_energy_cost).to.deep.equal({ excl_vat: 9.75, incl_vat: 12.1875 });
    });

    it('a bound without incl_vat moves the amount incl. VAT in proportion: 20 kWh at 1.00 + 21% under max 10.00 is 10.00 / 12.10', function () {
      const tariff = aTariff([anElement([energy(1, 1, 21)])], { max_price: { excl_vat: 10 } });
      const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [['2024-05-02T10:00:00Z', { ENERGY: 20 }]]);
      const priced = price(tariff, cdr);
      expect(priced.total_cost).to.deep.equal({ excl_vat: 10, incl_vat: 12.1 });
      expect(priced.breakdown.clamped).to.deep.equal(['max_price excl_vat']);
    });

    it("a minimum without incl_vat on a session that cost nothing takes the tariff's VAT when all its components share one", function () {
      const bound = { min_price: { excl_vat: 2 } };
      const nothing = aCdr('2024-05-02T10:00:00Z', '2024-05-02T10:00:00Z', [['2024-05-02T10:00:00Z', { ENERGY: 0 }]]);
      // 21% everywhere: 2.00 / 2.42, as 0.1 Wh is (it was 2.00 / 2.00, under-collecting the VAT)
      const same = aTariff([anElement([energy(0.3, 1, 21), time(1, 1, 21)])], bound);
      expect(price(same, nothing).total_cost).to.deep.equal({ excl_vat: 2, incl_vat: 2.42 });
      // rates that differ, or a component without VAT: no rate to take, the same amount incl. VAT
      const mixed = aTariff([anElement([energy(0.3, 1, 21), time(1, 1, 9)])], bound);
      expect(price(mixed, nothing).total_cost).to.deep.equal({ excl_vat: 2, incl_vat: 2 });
      const none = aTariff([anElement([energy(0.3, 1, 21), time(1)])], bound);
      expect(price(none, nothing).total_cost).to.deep.equal({ excl_vat: 2, incl_vat: 2 });
    });

    it('prices beyond what a double holds are refused, not answered as null', function () {
      const tariff = aTariff([anElement([energy(1e308)])]);
      const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [['2024-05-02T10:00:00Z', { ENERGY: 20 }]]);
      expect(priceCdr(tariff, cdr, 'UTC')).to.deep.include({ ok: false, code: 'invalid_tariff' });
    });

    it('a total a JSON number cannot give to 4 decimals is refused: 2^60 Wh steps at 0.30 a kWh, not 345876451382054.06', function () {
      const tariff = aTariff([anElement([energy(0.3, 2 ** 60)])]);
      const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [['2024-05-02T10:00:00Z', { ENERGY: 10 }]]);
      const outcome = priceCdr(tariff, cdr, 'UTC');
      expect(outcome).to.deep.include({ ok: false, code: 'invalid_tariff' });
      expect(outcome.ok ? '' : outcome.message).to.match(/beyond 900000000000/);
      // a volume beyond it is the CDR's: 1.8e12 kWh at 0.0001 is within the bound, its volume is not
      const volume = priceCdr(
        aTariff([anElement([energy(0.0001)])]),
        aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [['2024-05-02T10:00:00Z', { ENERGY: 1.8e12 }]]),
        'UTC',
      );
      expect(volume).to.deep.include({ ok: false, code: 'invalid_cdr' });
      // the largest step a charger could meet stays priced: 1,000,000 kWh at 0.30 is 300,000
      const big = price(aTariff([anElement([energy(0.3, 1_000_000_000)])]), cdr);
      expect(big.total_cost.excl_vat).to.equal(300_000);
    });

    it('amounts are decimal: 0.00015 is reported as 0.0002 (half away from zero), where a float would give 0.0001', function () {
      expect((0.00015).toFixed(4)).to.equal('0.0001');
      const tariff = aTariff([anElement([energy(1, 0)])]);
      const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [['2024-05-02T10:00:00Z', { ENERGY: 0.00015 }]]);
      expect(excl(price(tariff, cdr))).to.equal(0.0002);
      const sum = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [
        ['2024-05-02T10:00:00Z', { ENERGY: 0.1 }],
        ['2024-05-02T10:20:00Z', { ENERGY: 0.2 }],
      ]);
      expect(0.1 + 0.2).to.not.equal(0.3);
      expect(price(tariff, sum).total_energy).to.equal(0.3);
    });
  });

  describe('totals and warnings', function () {
    it('total_time is the session from start_date_time, also when a period starts earlier (warned)', function () {
      // the first kWh is free for the first 600 s of the session: durations count from 08:00 too
      const tariff = aTariff([anElement([energy(0)], { max_duration: 600 }), anElement([energy(0.3)])]);
      const cdr = aCdr('2024-05-06T08:00:00Z', '2024-05-06T09:00:00Z', [
        ['2024-05-06T07:50:00Z', { ENERGY: 1 }],
        ['2024-05-06T08:00:00Z', { ENERGY: 1 }],
        ['2024-05-06T08:10:00Z', { ENERGY: 1 }],
      ]);
      const priced = price(tariff, cdr);
      expect(priced.total_time).to.equal(1);
      expect(excl(priced)).to.equal(0.3);
      expect(priced.breakdown.warnings).to.deep.equal([
        'a charging period starts before start_date_time: total_time counts from start_date_time, durations too',
      ]);
    });

    it('a dimension of a type OCPI does not define prices nothing and is warned about once per type', function () {
      const tariff = aTariff([anElement([energy(0.25)])]);
      const cdr = aCdr('2024-05-06T08:00:00Z', '2024-05-06T09:00:00Z', [
        ['2024-05-06T08:00:00Z', { energy: 10, FOO: 1, MAX_POWER: 11 }],
        ['2024-05-06T08:30:00Z', { energy: 10 }],
      ]);
      const priced = price(tariff, cdr);
      expect(excl(priced)).to.equal(0);
      expect(priced.breakdown.warnings).to.deep.equal([
        'a charging period from 2024-05-06T08:00:00Z has a dimension of type "energy", which OCPI does not define: not priced',
        'a charging period from 2024-05-06T08:00:00Z has a dimension of type "FOO", which OCPI does not define: not priced',
      ]);
    });

    it('the breakdown reads local time with its offset and one-sided bounds as such', function () {
      const tariff = aTariff([
        anElement([energy(0.1)], { start_time: '02:00', end_time: '03:00' }),
        anElement([energy(0.2)], { max_current: 32 }),
      ]);
      // 00:30Z and 01:30Z are both 02:30 in Amsterdam on the autumn night, in summer and in winter time
      const cdr = aCdr('2024-10-27T00:30:00Z', '2024-10-27T02:30:00Z', [
        ['2024-10-27T00:30:00Z', { ENERGY: 1 }],
        ['2024-10-27T01:30:00Z', { ENERGY: 1 }],
        ['2024-10-27T02:00:00Z', { ENERGY: 1, MAX_CURRENT: 16 }],
      ]);
      const periods = price(tariff, cdr, 'Europe/Amsterdam').breakdown.periods;
      expect(periods.map((p) => p.local_time)).to.deep.equal([
        '2024-10-27 02:30:00+02:00 SUNDAY',
        '2024-10-27 02:30:00+01:00 SUNDAY',
        '2024-10-27 03:00:00+01:00 SUNDAY',
      ]);
      expect(periods[2]?.dimensions[0]?.reason).to.equal('element 2 (current < 32A)');
    });
  });

  describe('tariff selection and bad input', function () {
    it('the tariff valid at the session start is chosen; one not yet valid is refused', function () {
      const old = aTariff([anElement([energy(0.3)])], { id: 'OLD', end_date_time: '2024-06-01T00:00:00Z' });
      const next = aTariff([anElement([energy(0.4)])], { id: 'NEW', start_date_time: '2024-06-01T00:00:00Z' });
      expect(selectTariff([old, next], Date.parse('2024-05-31T23:59:00Z'))?.id).to.equal('OLD');
      expect(selectTariff([old, next], Date.parse('2024-06-01T00:00:00Z'))?.id).to.equal('NEW');
      const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [['2024-05-02T10:00:00Z', { ENERGY: 1 }]]);
      expect(priceCdr(next, cdr, 'UTC')).to.deep.include({ ok: false, code: 'invalid_tariff' });
    });

    it("a roamed session's tariff is untyped or REGULAR: ad hoc payment and charging-preference tariffs are passed over", function () {
      const start = Date.parse('2024-05-02T10:00:00Z');
      const of = (id: string, type?: PricingTariff['type']) =>
        aTariff([anElement([energy(0.3)])], { id, ...(type === undefined ? {} : { type }) });
      const adHoc = of('ADHOC', 'AD_HOC_PAYMENT');
      const green = of('GREEN', 'PROFILE_GREEN');
      expect(selectTariff([adHoc, green, of('REG', 'REGULAR'), of('ANY')], start)?.id).to.equal('REG');
      expect(selectTariff([adHoc, of('ANY'), of('REG', 'REGULAR')], start)?.id).to.equal('ANY');
      expect(selectTariff([adHoc, green], start)).to.equal(undefined);
    });

    it('prices a CDR with more TIME in a period than the period lasts as sent, and warns of it', function () {
      const tariff = aTariff([anElement([time(1)])]);
      // 5 h of TIME in a session of 1 h
      const cdr = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [['2024-05-02T10:00:00Z', { TIME: 5 }]]);
      const priced = priceCdr(tariff, cdr, 'UTC', { breakdown: true });
      expect(priced.ok).to.equal(true);
      if (!priced.ok) return;
      expect(priced.priced.total_time_cost.excl_vat).to.equal(5);
      expect(priced.priced.breakdown.warnings).to.deep.equal([
        'a charging period from 2024-05-02T10:00:00Z has 5 h of TIME but lasts 1 h: priced as sent',
      ]);
    });

    it('refuses what cannot be priced, saying why', function () {
      const tariff = aTariff([anElement([energy(0.3)])]);
      const ok = aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [
        ['2024-05-02T10:00:00Z', { ENERGY: 1 }],
        ['2024-05-02T10:30:00Z', { ENERGY: 1 }],
      ]);
      const cases: [PricingCdr, string, string][] = [
        [{ ...ok, currency: 'USD' }, 'UTC', 'the CDR is in USD, the tariff in EUR'],
        [ok, 'Mars/Olympus', 'time_zone Mars/Olympus is not an IANA time zone'],
        [{ ...ok, end_date_time: '2024-05-02T09:00:00Z' }, 'UTC', 'end_date_time is before start_date_time'],
        [
          { ...ok, charging_periods: [...ok.charging_periods].reverse() },
          'UTC',
          'charging_periods[1] starts before charging_periods[0]',
        ],
        [
          aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [['2024-05-02T10:00:00Z', { ENERGY: -1 }]]),
          'UTC',
          'charging_periods[0] has a negative ENERGY volume (energy fed back to the grid): not priced, this engine prices charging only',
        ],
        // one period, after the end: it was said to start before a charging_periods[1] there is not
        [
          aCdr('2024-05-02T10:00:00Z', '2024-05-02T11:00:00Z', [['2024-05-02T12:00:00Z', { ENERGY: 1 }]]),
          'UTC',
          'charging_periods[0] starts after end_date_time',
        ],
      ];
      for (const [cdr, zone, message] of cases) {
        expect(priceCdr(tariff, cdr, zone)).to.deep.equal({ ok: false, code: 'invalid_cdr', message });
      }
    });
  });
});
