import { expect } from 'chai';
import { chargingPeriodsOf, type ChargerState, type MeterSample } from '../../src/tariffs/periods.js';
import { priceCdr } from '../../src/tariffs/engine.js';
import { aTariff, anElement, energy, parking, time } from './builders.js';

/** Charging periods from a charger's readings (docs/TARIFFS.md "CDRs from transactions"). */

const T0 = Date.parse('2024-10-26T22:00:00Z');
const min = (m: number): number => T0 + m * 60_000;
const iso = (m: number): string => new Date(min(m)).toISOString();
const readings = (pairs: [number, number][]): MeterSample[] => pairs.map(([m, wh]) => ({ at: min(m), wh }));
const summary = (periods: ReturnType<typeof chargingPeriodsOf>) =>
  periods.map((p) => [p.start_date_time, ...p.dimensions.map((d) => `${d.type}:${d.volume}`)]);

describe('charging periods from meter readings', function () {
  it('energy flowing is charging, none is parking; a tariff without restrictions cuts nowhere else', function () {
    const tariff = aTariff([anElement([energy(0.3), parking(1)])]);
    const periods = chargingPeriodsOf({
      start: min(0),
      end: min(60),
      samples: readings([
        [0, 1000],
        [20, 6000],
        [30, 6000],
        [40, 6000],
      ]),
      tariff,
      timeZone: 'UTC',
    });
    expect(summary(periods)).to.deep.equal([
      // OCPI numbers have 4 decimals: hours as differences of running totals, TIME and PARKING_TIME each
      [iso(0), 'ENERGY:5', 'TIME:0.3333', 'MAX_POWER:15'],
      [iso(20), 'PARKING_TIME:0.6667'],
    ]);
  });

  it('every volume has at most 4 decimals (OCPI numbers), and the periods add up to the session', function () {
    // 22:00 local in Amsterdam is 20:00Z (summer time): cut at 20:00Z, 3 minutes into 7 of
    // charging, gives 3/7 of the energy and of the time before it
    const tariff = aTariff([anElement([energy(0.5)], { start_time: '22:00' }), anElement([energy(0.3)])]);
    const start = Date.parse('2024-07-01T19:57:00Z');
    const periods = chargingPeriodsOf({
      start,
      end: start + 7 * 60_000 + 1_234,
      samples: [
        { at: start, wh: 100 },
        { at: start + 7 * 60_000 + 1_234, wh: 1_101.3 },
      ],
      tariff,
      timeZone: 'Europe/Amsterdam',
    });
    expect(periods).to.have.length(2);
    const volumes = periods.flatMap((p) => p.dimensions.map((d) => d.volume));
    for (const v of volumes) expect(Math.round(v * 1e4) / 1e4, String(v)).to.equal(v);
    const sum = (type: string) =>
      periods.reduce((n, p) => n + p.dimensions.filter((d) => d.type === type).reduce((m, d) => m + d.volume, 0), 0);
    expect(Math.round(sum('ENERGY') * 1e4) / 1e4).to.equal(1.0013);
    // 7 min 1.234 s is 0.11700944 h
    expect(Math.round(sum('TIME') * 1e4) / 1e4).to.equal(0.117);
  });

  it("a reading stamped after the session's end is its last, at the end", function () {
    const periods = chargingPeriodsOf({
      start: min(0),
      end: min(30),
      // the End reading stamped a second after the Ended: the CDR billed 0 kWh of the session's 2
      samples: readings([
        [0, 0],
        [30 + 1 / 60, 2000],
      ]),
      tariff: aTariff([anElement([energy(0.3)])]),
      timeZone: 'UTC',
    });
    expect(summary(periods)).to.deep.equal([[iso(0), 'ENERGY:2', 'TIME:0.5', 'MAX_POWER:4']]);
  });

  it('a kWh bound starts a period with exactly that energy charged; the periods add up to the total', function () {
    const tariff = aTariff([anElement([energy(0.2)], { max_kwh: 3 }), anElement([energy(0.4)])]);
    const periods = chargingPeriodsOf({
      start: min(0),
      end: min(70),
      samples: readings([
        [0, 0],
        [70, 7777],
      ]),
      tariff,
      timeZone: 'UTC',
    });
    const kwh = periods.map((p) => p.dimensions.find((d) => d.type === 'ENERGY')?.volume);
    expect(kwh).to.deep.equal([3, 4.777]);
    expect(periods[1]?.start_date_time).to.equal(
      new Date(min(0) + Math.round((3000 / 7777) * 70 * 60_000)).toISOString(),
    );
  });

  it('time-of-day boundaries are local, across the end of summer time (Amsterdam, 27 October 2024)', function () {
    // 22:00Z on the 26th is 00:00 CEST; 03:00 CEST becomes 02:00 CET at 01:00Z
    const tariff = aTariff([
      anElement([energy(0.1)], { start_time: '02:30', end_time: '05:00' }),
      anElement([energy(0.3)]),
    ]);
    const periods = chargingPeriodsOf({
      start: min(0),
      end: min(420),
      samples: readings([
        [0, 0],
        [420, 42000],
      ]),
      tariff,
      timeZone: 'Europe/Amsterdam',
    });
    // 02:30 CEST (00:30Z: the window opens), 03:00 CEST becomes 02:00 CET (01:00Z: it closes), 02:30
    // CET (01:30Z: it opens again) and 05:00 CET (04:00Z: it closes)
    expect(periods.map((p) => p.start_date_time)).to.deep.equal([iso(0), iso(150), iso(180), iso(210), iso(360)]);
    const prices = periods.map((p) => p.dimensions[0]?.volume);
    expect(prices.reduce((a, b) => (a ?? 0) + (b ?? 0), 0)).to.be.closeTo(42, 1e-9);
  });

  it('a time the clock skips (spring forward) is a boundary where the clock jumps past it', function () {
    // Amsterdam, 31 March 2024: 02:00 CET jumps to 03:00 CEST at 01:00Z; a window from 02:30
    const tariff = aTariff([
      anElement([energy(0.1)], { start_time: '02:30', end_time: '05:00' }),
      anElement([energy(0.3)]),
    ]);
    const start = Date.parse('2024-03-30T23:00:00Z');
    const periods = chargingPeriodsOf({
      start,
      end: start + 4 * 3_600_000,
      samples: [
        { at: start, wh: 0 },
        { at: start + 4 * 3_600_000, wh: 40000 },
      ],
      tariff,
      timeZone: 'Europe/Amsterdam',
    });
    expect(periods.map((p) => p.start_date_time)).to.deep.equal([
      '2024-03-30T23:00:00.000Z',
      '2024-03-31T01:00:00.000Z',
    ]);
  });

  it("the charger's charging states cut the periods: suspended time is parking, and the energy flows while it charges", function () {
    // 2.0.1 chargingState (probe S1b): EVConnected at 0, Charging at 5, SuspendedEV at 65,
    // Charging at 95, EVConnected at 110; readings only at 0, 35, 95 and 140
    const tariff = aTariff([anElement([energy(0.3), time(2), parking(3)])]);
    const states: ChargerState[] = [
      { at: min(0), charging: false },
      { at: min(5), charging: true },
      { at: min(65), charging: false },
      { at: min(95), charging: true },
      { at: min(110), charging: false },
      { at: min(140), charging: false },
    ];
    const periods = chargingPeriodsOf({
      start: min(0),
      end: min(140),
      samples: readings([
        [0, 1000],
        [35, 6000],
        [95, 11000],
        [140, 13500],
      ]),
      states,
      tariff,
      timeZone: 'UTC',
    });
    expect(summary(periods)).to.deep.equal([
      [iso(0), 'PARKING_TIME:0.0833'],
      [iso(5), 'ENERGY:10', 'TIME:1', 'MAX_POWER:10'],
      [iso(65), 'PARKING_TIME:0.5'],
      [iso(95), 'ENERGY:2.5', 'TIME:0.25', 'MAX_POWER:10'],
      [iso(110), 'PARKING_TIME:0.5'],
    ]);
    const priced = priceCdr(
      tariff,
      { start_date_time: iso(0), end_date_time: iso(140), currency: 'EUR', charging_periods: periods },
      'UTC',
    );
    // 12.5 kWh x 0.30 + 1.25 h x 2.00 + 65 min x 3.00/h
    expect(priced.ok && priced.priced.total_cost.excl_vat).to.equal(9.5);
  });

  it('a charger that said Charging and sent no readings charged (TIME), and energy beats a state that says otherwise', function () {
    const tariff = aTariff([anElement([time(1), parking(2)])]);
    const quiet = chargingPeriodsOf({
      start: min(0),
      end: min(60),
      samples: [],
      states: [
        { at: min(0), charging: true },
        { at: min(60), charging: false },
      ],
      tariff,
      timeZone: 'UTC',
    });
    expect(summary(quiet)).to.deep.equal([[iso(0), 'ENERGY:0', 'TIME:1', 'MAX_POWER:0']]);
    const contrary = chargingPeriodsOf({
      start: min(0),
      end: min(60),
      samples: readings([
        [0, 0],
        [60, 6000],
      ]),
      states: [{ at: min(0), charging: false }],
      tariff,
      timeZone: 'UTC',
    });
    expect(summary(contrary)).to.deep.equal([[iso(0), 'ENERGY:6', 'TIME:1', 'MAX_POWER:6']]);
  });

  it('the current the charger reports is carried (MAX_CURRENT) and a max_current element applies (probe S4c)', function () {
    const tariff = aTariff([anElement([energy(0.25)], { max_current: 20 }), anElement([energy(0.4)])]);
    const periods = chargingPeriodsOf({
      start: min(0),
      end: min(60),
      samples: readings([
        [0, 100000],
        [30, 102070],
        [60, 104140],
      ]),
      states: [
        { at: min(15), current_a: 18 },
        { at: min(45), current_a: 24 },
      ],
      tariff,
      timeZone: 'UTC',
    });
    // a current tells the time up to it: 18 A to minute 15, 24 A from there (the last holds to the end)
    expect(summary(periods)).to.deep.equal([
      [iso(0), 'ENERGY:1.035', 'TIME:0.25', 'MAX_POWER:4.14', 'MAX_CURRENT:18'],
      [iso(15), 'ENERGY:3.105', 'TIME:0.75', 'MAX_POWER:4.14', 'MAX_CURRENT:24'],
    ]);
    const priced = priceCdr(
      tariff,
      { start_date_time: iso(0), end_date_time: iso(60), currency: 'EUR', charging_periods: periods },
      'UTC',
    );
    // 1.035 kWh below 20 A at 0.25, 3.105 kWh above at 0.40: 0.25875 + 1.242
    expect(priced.ok && priced.priced.total_cost.excl_vat).to.equal(1.5008);
  });

  it("the power the charger reports is the period's MAX_POWER and decides a power restriction, not the energy over time", function () {
    // 8 kW below 11 kW, 0.50 above; readings a second apart, one rounded up and one down, made 1.8 MW
    const tariff = aTariff([anElement([energy(0.3)], { max_power: 11 }), anElement([energy(0.5)])]);
    const second = 1 / 60;
    const samples = readings([
      [0, 0],
      [30 - second, 3500],
      [30, 4000],
      [60, 10000],
    ]);
    const periods = chargingPeriodsOf({
      start: min(0),
      end: min(60),
      samples,
      states: [
        { at: min(30), power_kw: 7.4 },
        { at: min(60), power_kw: 11.5 },
      ],
      tariff,
      timeZone: 'UTC',
    });
    // a power tells the time up to it, as a current does: 7.4 kW to minute 30, 11.5 kW from there
    expect(summary(periods)).to.deep.equal([
      [iso(0), 'ENERGY:4', 'TIME:0.5', 'MAX_POWER:7.4'],
      [iso(30), 'ENERGY:6', 'TIME:0.5', 'MAX_POWER:11.5'],
    ]);
    const priced = priceCdr(
      tariff,
      { start_date_time: iso(0), end_date_time: iso(60), currency: 'EUR', charging_periods: periods },
      'UTC',
    );
    // 4 kWh at 0.30 below 11 kW, 6 kWh at 0.50 above: 1.20 + 3.00
    expect(priced.ok && priced.priced.total_cost.excl_vat).to.equal(4.2);

    // without the charger's word, the energy over time sets the power: one second of 500 Wh is 1.8 MW
    const measured = chargingPeriodsOf({
      start: min(0),
      end: min(60),
      samples,
      tariff: aTariff([anElement([energy(0.3)])]),
      timeZone: 'UTC',
    });
    expect(summary(measured)).to.deep.equal([[iso(0), 'ENERGY:10', 'TIME:1', 'MAX_POWER:1800']]);
  });

  it('a session that lasted no time bills its readings of that instant, the highest less the first', function () {
    // a 2.0.1 Ended with no Started: its Begin and End readings (and an earlier one) all at its one instant
    const periods = chargingPeriodsOf({
      start: min(10),
      end: min(10),
      samples: readings([
        [10, 6000],
        [5, 4000],
        [10, 2000],
        [11, 6000],
      ]),
      tariff: undefined,
      timeZone: 'UTC',
    });
    // was ENERGY:0: the readings merged into their highest lost the first
    expect(summary(periods)).to.deep.equal([[iso(10), 'ENERGY:4', 'TIME:0']]);
  });

  it('a charger that reports only its start and stop gives one charging period; a register that went back adds nothing', function () {
    const single = chargingPeriodsOf({
      start: min(0),
      end: min(30),
      samples: readings([
        [0, 500],
        [30, 2500],
      ]),
      tariff: undefined,
      timeZone: 'UTC',
    });
    expect(summary(single)).to.deep.equal([[iso(0), 'ENERGY:2', 'TIME:0.5', 'MAX_POWER:4']]);
    const reset = chargingPeriodsOf({
      start: min(0),
      end: min(30),
      samples: readings([
        [0, 9000],
        [10, 10000],
        [20, 200],
        [30, 1200],
      ]),
      tariff: undefined,
      timeZone: 'UTC',
    });
    const energyOf = (periods: typeof reset) =>
      periods.reduce((n, p) => n + (p.dimensions.find((d) => d.type === 'ENERGY')?.volume ?? 0), 0);
    // 9000 to 10000, then nothing until the register passes 10000 again, which it never does
    expect(energyOf(reset)).to.equal(1);
    const dip = chargingPeriodsOf({
      start: min(0),
      end: min(30),
      samples: readings([
        [0, 1000],
        [10, 5000],
        [20, 3000],
        [30, 6000],
      ]),
      tariff: undefined,
      timeZone: 'UTC',
    });
    // the highest reading less the first, as the session's energy in /v1: 5 kWh, not 4 + 3
    expect(energyOf(dip)).to.equal(5);
    expect(summary(dip)).to.deep.equal([
      [iso(0), 'ENERGY:4', 'TIME:0.1667', 'MAX_POWER:24'],
      [iso(10), 'PARKING_TIME:0.1667'],
      [iso(20), 'ENERGY:1', 'TIME:0.1666', 'MAX_POWER:6'],
    ]);
  });
});
