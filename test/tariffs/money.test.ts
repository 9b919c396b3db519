import { expect } from 'chai';
import { Decimal, compareQuantities, costOf, dec, quantityOf, reported } from '../../src/tariffs/money.js';
import { Prng } from '../../scripts/prng.js';
import { localTimeAt } from '../../src/tariffs/local-time.js';

/** The engine's exact decimals (src/tariffs/money.ts): what a JSON number says, sums exact, one rounding. */

describe('pricing engine: exact decimals', function () {
  it('reads a JSON number as the decimal it was written as', function () {
    for (const [n, text] of [
      [0.1, '1e-1'],
      [1e-7, '1e-7'],
      [-0.5, '-5e-1'],
      [123, '123'],
      [1.5e21, '1500000000000000000000'],
      [0.30000000000000004, '30000000000000004e-17'],
    ] as const)
      expect(Decimal.of(n).toString(), String(n)).to.equal(text);
    expect(dec(0.1).plus(dec(0.2)).equals(dec(0.3))).to.equal(true);
    expect(dec(1.21).times(dec(100)).toNumber()).to.equal(121);
  });

  it('rounds half away from zero when reporting, at the 4th decimal', function () {
    expect(reported(dec(0.00005))).to.equal(0.0001);
    expect(reported(dec(-0.00005))).to.equal(-0.0001);
    expect(reported(dec(2.00004999))).to.equal(2);
    expect(reported(dec(45.58795))).to.equal(45.588);
    expect(reported(dec(0.00015).times(dec(0.5)))).to.equal(0.0001);
    expect(reported(new Decimal(10n ** 40n + 5n * 10n ** 25n, 30))).to.equal(1e10 + 0.0001);
  });

  it('reports every amount as rounding its exact decimal would (the fast path and the exact one agree)', function () {
    const random = new Prng(7);
    for (let i = 0; i < 20_000; i++) {
      const scale = 5 + random.int(0, 20);
      let units = BigInt(random.int(0, 1e9)) * BigInt(random.int(1, 1e6)) + BigInt(random.int(0, 1000));
      // a tie at the 5th decimal, or one unit either side of it
      if (i % 3 === 0)
        units =
          (units / 10n ** BigInt(scale - 4)) * 10n ** BigInt(scale - 4) +
          5n * 10n ** BigInt(scale - 5) +
          BigInt(random.int(-1, 1));
      if (i % 2 === 0) units = -units;
      const d = new Decimal(units, scale);
      expect(reported(d), `${d}`).to.equal(d.rounded(4).toNumber());
    }
    // amounts kept to 30 decimals and more (priced per second): units beyond what a double holds
    for (let i = 0; i < 20_000; i++) {
      const scale = 26 + random.int(0, 37);
      const below = 10n ** BigInt(scale - 4);
      // up to 1e9 reported units, and digits below the 4th decimal: random, or a tie give or take one
      // near a half: exactly, a unit either side, or 5e-7 and 1.01e-6 of a reported unit either side
      // (the band where the double must give way to the exact rounding, and just outside it)
      const near = [0n, 1n, -1n, below / 2_000_000n, -below / 2_000_000n, (below * 101n) / 100_000_000n];
      const rest =
        i % 3 === 0
          ? below / 2n + (near[i % near.length] as bigint)
          : (below * BigInt(random.int(0, 1e9))) / 1_000_000_000n + BigInt(random.int(0, 1e6));
      let units = BigInt(random.int(0, 1e9)) * below + rest;
      if (i % 2 === 0) units = -units;
      const d = new Decimal(units, scale);
      expect(reported(d), `${d}`).to.equal(d.rounded(4).toNumber());
    }
  });

  it('divides last, so that an amount that is exact stays exact: 1 s at 0.18 an hour is 0.00005', function () {
    const cost = costOf(dec(1), dec(0.18), dec(1.5), dec(3600));
    expect(reported(cost.excl)).to.equal(0.0001);
    expect(cost.excl.equals(dec(0.00005))).to.equal(true);
    expect(cost.incl.equals(dec(0.000075))).to.equal(true);
    expect(reported(dec(1).dividedBy(dec(3)))).to.equal(0.3333);
    expect(reported(dec(-2).dividedBy(dec(3)))).to.equal(-0.6667);
  });

  it('compares kWh exactly, with 6 decimals or more', function () {
    expect(compareQuantities(quantityOf(0.1 + 0.2), quantityOf(0.3))).to.equal(1);
    expect(compareQuantities(quantityOf(29.999999), quantityOf(30))).to.equal(-1);
    expect(compareQuantities(quantityOf(30.0000001), quantityOf(30))).to.equal(1);
    expect(compareQuantities(quantityOf(30), quantityOf(30))).to.equal(0);
  });

  it('rounds up to whole steps', function () {
    expect(dec(3.96).ceilToMultiple(5).toNumber()).to.equal(5);
    expect(dec(10).ceilToMultiple(5).toNumber()).to.equal(10);
    expect(dec(0).ceilToMultiple(5).toNumber()).to.equal(0);
  });
});

/** The wall clock of `zone` at `ms` as Intl reads it, in localTimeAt's shape. */
function intlWall(zone: string): (ms: number) => { date_key: number; second_of_day: number; day_of_week: string } {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
    weekday: 'long',
  });
  return (ms) => {
    const parts = Object.fromEntries(format.formatToParts(ms).map((p) => [p.type, p.value]));
    return {
      date_key: Number(parts.year) * 10000 + Number(parts.month) * 100 + Number(parts.day),
      second_of_day: Number(parts.hour) * 3600 + Number(parts.minute) * 60 + Number(parts.second),
      day_of_week: String(parts.weekday).toUpperCase(),
    };
  };
}

describe('pricing engine: local time', function () {
  it('an offset change off the quarter hour is read to the second (America/St_Johns, 00:01 local in 2010)', function () {
    const wall = intlWall('America/St_Johns');
    // 14 March and 7 November 2010: was an hour off from 03:31 to 03:44 and from 02:31 to 02:44 UTC
    for (const from of [Date.UTC(2010, 2, 14, 3), Date.UTC(2010, 10, 7, 2)]) {
      for (let ms = from; ms < from + 3_600_000; ms += 1000)
        expect(localTimeAt('America/St_Johns', ms), new Date(ms).toISOString()).to.deep.equal(wall(ms));
    }
  });

  it('reads the wall clock of a zone as Intl does, across offset changes and years', function () {
    const random = new Prng(11);
    for (const zone of ['Europe/Amsterdam', 'America/Santiago', 'Australia/Lord_Howe', 'Asia/Kolkata']) {
      const wall = intlWall(zone);
      for (let i = 0; i < 400; i++) {
        // 2020-2027, and a few around a change of the clock on the same days
        const ms = Date.UTC(2020, 0, 1) + random.int(0, 8 * 365) * 86_400_000 + random.int(0, 86_399) * 1000;
        expect(localTimeAt(zone, ms), `${zone} ${new Date(ms).toISOString()}`).to.deep.equal(wall(ms));
      }
    }
    // the years 1-99 are not 1901-1999
    expect(localTimeAt('Europe/Amsterdam', Date.parse('0050-06-01T12:00:00Z')).date_key).to.equal(500601);
  });
});
