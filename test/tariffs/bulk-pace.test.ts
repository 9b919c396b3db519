import { expect } from 'chai';
import { priceCdr } from '../../src/tariffs/engine.js';
import { PricingPool, type PricingTask } from '../../src/tariffs/pool.js';
import { aCdr, aTariff, anElement, energy, flat, time } from './builders.js';

/**
 * A bulk job yields to a process that serves (docs/TARIFFS.md "Bulk jobs yield to chargers"): its
 * work on the event loop is kept to PRICING_BULK_SHARE_PERCENT of the time by pauses between
 * batches while frames or requests are being handled, and it goes at full speed otherwise.
 */

const tariff = aTariff([anElement([flat(0.5, 21), energy(0.3, 100, 21), time(1, 60, 21)])]);
const cdr = {
  ...aCdr('2024-05-02T20:30:00Z', '2024-05-02T22:00:00Z', [
    ['2024-05-02T20:30:00Z', { ENERGY: 11.5, TIME: 1 }],
    ['2024-05-02T21:30:00Z', { ENERGY: 4, TIME: 0.5 }],
  ]),
  currency: 'EUR',
};
const expected = (() => {
  const o = priceCdr(tariff, cdr, 'Europe/Amsterdam', { breakdown: false });
  if (!o.ok) throw new Error(o.message);
  return o.priced.total_cost;
})();

/** 20 batches of 4; each batch's handler holds the event loop `busyMs`, work the pace counts as pricing's own. */
async function bulkJob(pool: PricingPool, busyMs: number): Promise<{ ms: number; priced: number }> {
  const tasks: PricingTask[] = Array.from({ length: 80 }, () => ({ tariff, cdr, time_zone: 'Europe/Amsterdam' }));
  let priced = 0;
  const t0 = performance.now();
  await pool.each(tasks, (outcomes) => {
    for (const o of outcomes) {
      if (!o.ok) throw new Error(o.message);
      expect(o.priced.total_cost).to.deep.equal(expected);
      priced++;
    }
    const until = performance.now() + busyMs;
    while (performance.now() < until);
  });
  return { ms: performance.now() - t0, priced };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A pool whose thread is started and warm, so that a job's time is its own. */
async function warmPool(bulkShare: number, served: () => number, batchSize = 4): Promise<PricingPool> {
  const pool = new PricingPool({ threads: 1, idleTimeoutMs: 5000, maxQueue: 1, batchSize, bulkShare, served });
  await pool.price([{ tariff, cdr, time_zone: 'Europe/Amsterdam' }]);
  return pool;
}

describe('pricing threads: bulk jobs yield to a process that serves', function () {
  this.timeout(30_000);
  let handled = 0;
  const served = (): number => handled;
  let serving: NodeJS.Timeout | undefined;
  const pools: PricingPool[] = [];

  afterEach(async function () {
    clearInterval(serving);
    for (const pool of pools.splice(0)) await pool.close();
  });

  it('pauses between batches while frames are handled, keeping its event-loop work near its share; at full speed when none are', async function () {
    const quiet = await warmPool(0.1, served);
    const busy = await warmPool(0.1, served);
    pools.push(quiet, busy);
    await sleep(150);
    const alone = await bulkJob(quiet, 4);
    // a process that handles a frame every 2 ms
    serving = setInterval(() => handled++, 2);
    await sleep(150);
    const paced = await bulkJob(busy, 4);
    expect(alone.priced).to.equal(80);
    expect(paced.priced).to.equal(80);
    // 20 batches, each holding the event loop at least 4 ms, at a 10% share: about 700 ms (the last
    // two are handed over after the job's last pause, and each 100 ms window starts with no pause)
    expect(paced.ms, `paced ${paced.ms.toFixed(0)} ms`).to.be.at.least(450);
    expect(alone.ms, `alone ${alone.ms.toFixed(0)} ms, paced ${paced.ms.toFixed(0)} ms`).to.be.below(paced.ms / 2);
  });

  it('hands a thread smaller batches while frames are handled (shorter stretches on the event loop), full ones when none are', async function () {
    const pool = await warmPool(0.1, served, 64);
    pools.push(pool);
    const sizes = async (): Promise<number[]> => {
      const tasks: PricingTask[] = Array.from({ length: 200 }, () => ({ tariff, cdr, time_zone: 'Europe/Amsterdam' }));
      const out: number[] = [];
      await pool.each(tasks, (outcomes) => {
        expect(outcomes.every((o) => o.ok)).to.equal(true);
        out.push(outcomes.length);
      });
      return out;
    };
    await sleep(150);
    expect(await sizes()).to.deep.equal([64, 64, 64, 8]);
    serving = setInterval(() => handled++, 2);
    await sleep(150);
    const busy = await sizes();
    expect(busy.reduce((a, b) => a + b, 0)).to.equal(200);
    expect(Math.max(...busy), busy.join(' ')).to.equal(16);
  });
});
