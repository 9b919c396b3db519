import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { priceCdr } from '../../src/tariffs/engine.js';
import { PricingPool } from '../../src/tariffs/pool.js';
import { decodeBatch, encodeBatch, plainPriced } from '../../src/tariffs/wire.js';
import { aCdr, aTariff, anElement, energy, flat, parking, time } from './builders.js';

/** The pricing threads' transport (wire.ts) and the pool: what comes back is what the engine answers. */

const tariff = aTariff([
  anElement([flat(0.5, 21), energy(0.3, 100, 21)], { start_time: '07:00', end_time: '23:00' }),
  anElement([energy(0.2, 100, 21), time(1, 60, 21)]),
  anElement([parking(6, 300, 21)]),
]);
const cdr = {
  ...aCdr('2024-05-02T20:30:00Z', '2024-05-02T23:00:00.500Z', [
    ['2024-05-02T20:30:00Z', { ENERGY: 11.5, TIME: 1, MAX_POWER: 11 }],
    ['2024-05-02T21:30:00.250Z', { ENERGY: 7.25, TIME: 0.5 }],
    ['2024-05-02T22:00:00+00:00', { PARKING_TIME: 1 }],
  ]),
  currency: 'EUR',
};

describe('pricing threads: transport and pool', function () {
  this.timeout(20_000);

  it('a batch decodes to the same CDRs, their instants as numbers; one with a breakdown goes whole', function () {
    const [task, whole] = decodeBatch(
      encodeBatch([
        { tariff, cdr, time_zone: 'Europe/Amsterdam', breakdown: false },
        { tariff, cdr, time_zone: 'Europe/Amsterdam', breakdown: true },
      ]),
    );
    expect(task?.times?.periods).to.deep.equal(cdr.charging_periods.map((p) => Date.parse(p.start_date_time)));
    expect(task?.times?.end).to.equal(Date.parse(cdr.end_date_time));
    expect(task?.cdr.charging_periods.map((p) => p.dimensions)).to.deep.equal(
      cdr.charging_periods.map((p) => p.dimensions),
    );
    expect(whole?.cdr).to.deep.equal(cdr);
  });

  it('a CDR with a period date that does not parse goes whole, and the tasks after it keep their own instants', function () {
    const periods = cdr.charging_periods.map((p, i) =>
      i === 1 ? { ...p, start_date_time: '2025-13-01T00:00:00Z' } : p,
    );
    const odd = { ...cdr, charging_periods: periods };
    const later = { ...cdr, start_date_time: '2024-02-29T23:59:59.999Z' };
    const [first, sent, third] = decodeBatch(
      encodeBatch([
        { tariff, cdr, time_zone: 'Europe/Amsterdam' },
        { tariff, cdr: odd, time_zone: 'Europe/Amsterdam' },
        { tariff, cdr: later, time_zone: 'Europe/Amsterdam' },
      ]),
    );
    expect(first?.times?.start).to.equal(Date.parse(cdr.start_date_time));
    expect(sent?.times).to.equal(undefined);
    expect(sent?.cdr).to.deep.equal(odd);
    expect(third?.times?.start).to.equal(Date.parse('2024-02-29T23:59:59.999Z'));
    expect(third?.times?.periods).to.deep.equal(cdr.charging_periods.map((p) => Date.parse(p.start_date_time)));
  });

  it('the pool answers what the engine answers: totals, breakdowns and refusals', async function () {
    const pool = new PricingPool({ threads: 1, idleTimeoutMs: 5000, maxQueue: 2, batchSize: 7 });
    try {
      const bad = { ...cdr, end_date_time: 'not a date' };
      const tasks = [
        ...Array.from({ length: 20 }, () => ({ tariff, cdr, time_zone: 'Europe/Amsterdam' })),
        { tariff, cdr, time_zone: 'Europe/Amsterdam', breakdown: true },
        { tariff, cdr: { ...cdr, currency: 'USD' }, time_zone: 'Europe/Amsterdam' },
        { tariff, cdr: bad, time_zone: 'Europe/Amsterdam' },
      ];
      const outcomes = await pool.price(tasks);
      const direct = priceCdr(tariff, cdr, 'Europe/Amsterdam');
      if (!direct.ok) throw new Error(direct.message);
      const { breakdown: _b, ...totals } = direct.priced;
      for (const o of outcomes.slice(0, 20)) {
        if (!o.ok) throw new Error(o.message);
        // a totals-only outcome is a view over its batch's numbers: its JSON is a plain PricedCdr's
        const { breakdown: _x, ...got } = JSON.parse(JSON.stringify(o.priced)) as typeof direct.priced;
        expect(got).to.deep.equal(totals);
        expect(plainPriced(o.priced)).to.deep.equal(JSON.parse(JSON.stringify(o.priced)));
        expect(o.priced.total_cost).to.deep.equal(totals.total_cost);
        expect(o.priced.breakdown.periods).to.deep.equal([]);
      }
      expect(outcomes[20]).to.deep.equal(direct);
      expect(outcomes[21]).to.deep.include({ ok: false, code: 'invalid_cdr' });
      expect(outcomes[22]?.ok).to.equal(false);
      expect(outcomes).to.have.length(23);
    } finally {
      await pool.close();
    }
  });

  it('a tariff object changed for another of the same id is priced by its own prices, batch after batch', async function () {
    // the same id and shape, the energy price raised: a thread that kept tariffs by id would price
    // the second job with the first one's prices
    const dearer = aTariff([anElement([energy(0.6, 100, 21)])]);
    const cheaper = aTariff([anElement([energy(0.3, 100, 21)])]);
    expect(dearer.id).to.equal(cheaper.id);
    const pool = new PricingPool({ threads: 1, idleTimeoutMs: 5000, maxQueue: 2, batchSize: 3 });
    try {
      for (const t of [cheaper, dearer, cheaper]) {
        const outcomes = await pool.price(Array.from({ length: 7 }, () => ({ tariff: t, cdr, time_zone: 'UTC' })));
        const direct = priceCdr(t, cdr, 'UTC');
        if (!direct.ok) throw new Error(direct.message);
        for (const o of outcomes) expect(o.ok && o.priced.total_cost).to.deep.equal(direct.priced.total_cost);
      }
    } finally {
      await pool.close();
    }
  });

  it('each() hands the outcomes over batch by batch, in order, with their offsets; a handler that throws stops it', async function () {
    const pool = new PricingPool({ threads: 2, idleTimeoutMs: 5000, maxQueue: 1, batchSize: 5 });
    try {
      // 53 tasks of which every seventh is in the wrong currency: its refusal shows where it landed
      const tasks = Array.from({ length: 53 }, (_, i) => ({
        tariff,
        cdr: i % 7 === 0 ? { ...cdr, currency: 'USD' } : cdr,
        time_zone: 'Europe/Amsterdam',
      }));
      const seen: { offset: number; refused: number[] }[] = [];
      await pool.each(tasks, (outcomes, offset) => {
        seen.push({ offset, refused: outcomes.flatMap((o, k) => (o.ok ? [] : [offset + k])) });
      });
      expect(seen.map((b) => b.offset)).to.deep.equal([0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50]);
      expect(seen.flatMap((b) => b.refused)).to.deep.equal([0, 7, 14, 21, 28, 35, 42, 49]);

      let calls = 0;
      const failing = pool.each(tasks, () => {
        calls++;
        if (calls === 2) throw new Error('the store is down');
      });
      const why = await failing.then(
        () => 'resolved',
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
      expect(why).to.equal('the store is down');
      expect(calls).to.equal(2);
      // the pool still prices afterwards; the batches already handed to threads finish and free their room
      expect(await pool.price(tasks.slice(1, 3))).to.have.length(2);
      for (let i = 0; i < 100 && pool.stats().in_flight > 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(pool.stats()).to.deep.include({ in_flight: 0, waiting: 0 });
    } finally {
      await pool.close();
    }
  });

  it('on Linux the pricing threads run at nice 10, and under SCHED_IDLE with PRICING_THREAD_POLICY=idle; the event loop keeps its own', async function () {
    if (process.platform !== 'linux') this.skip();
    this.timeout(30_000);
    /** policy and nice value of each thread of this process: fields 41 and 19 of /proc/self/task/<tid>/stat */
    const threads = (): Map<number, { policy: number; nice: number }> =>
      new Map(
        readdirSync('/proc/self/task').map((tid) => {
          const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
          // fields after the command name, which is in parentheses and may hold spaces: state is field 3
          const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          return [Number(tid), { policy: Number(fields[41 - 3]), nice: Number(fields[19 - 3]) }];
        }),
      );
    /** the threads a pool of one thread started, once one of them is `wanted` */
    const started = async (
      threadPolicy: 'nice' | 'idle',
      wanted: (t: { policy: number; nice: number }) => boolean,
    ): Promise<{ policy: number; nice: number }[]> => {
      const before = new Set(threads().keys());
      const mine = threads().get(process.pid);
      const pool = new PricingPool({ threads: 1, idleTimeoutMs: 5000, maxQueue: 1, threadPolicy });
      try {
        await pool.priceOne({ tariff, cdr, time_zone: 'Europe/Amsterdam' });
        let found: { policy: number; nice: number }[] = [];
        for (let i = 0; i < 250 && !found.some(wanted); i++) {
          found = [...threads()].filter(([tid]) => !before.has(tid)).map(([, t]) => t);
          if (!found.some(wanted)) await new Promise((r) => setTimeout(r, 20));
        }
        expect(threads().get(process.pid), 'the event loop thread').to.deep.equal(mine);
        return found;
      } finally {
        await pool.close();
      }
    };
    const SCHED_OTHER = 0;
    const SCHED_IDLE = 5;
    const niced = await started('nice', (t) => t.nice === 10);
    expect(
      niced.filter((t) => t.nice === 10 && t.policy === SCHED_OTHER),
      'a new thread at nice 10',
    ).to.have.length(1);
    // where chrt may set SCHED_IDLE here (it is installed, and this sandbox allows it)
    if (spawnSync('chrt', ['-i', '0', 'true']).status !== 0) return;
    const idle = await started('idle', (t) => t.policy === SCHED_IDLE);
    expect(
      idle.filter((t) => t.policy === SCHED_IDLE),
      'a new thread under SCHED_IDLE',
    ).to.have.length(1);
  });
});
