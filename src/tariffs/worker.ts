import { priceCdr } from './engine.js';
import type { PriceOutcome } from './types.js';
import type { PricingBatch } from './pool.js';

/**
 * A Piscina pricing thread (pool.ts): one batch in, as a JSON string, and its outcomes out, as a
 * JSON string (strings cross the thread boundary cheaply; objects would be cloned field by field).
 * The tariffs of a batch are listed once and read once, however many CDRs use them. Never throws:
 * a task that fails is a failed outcome.
 */
export default function priceBatch(input: string): string {
  const batch = JSON.parse(input) as PricingBatch;
  const outcomes: PriceOutcome[] = batch.tasks.map((task) => {
    const tariff = batch.tariffs[task.tariff];
    if (!tariff) return { ok: false, code: 'invalid_tariff', message: `no tariff ${task.tariff} in the batch` };
    try {
      return priceCdr(tariff, task.cdr, task.time_zone, { breakdown: task.breakdown });
    } catch (err) {
      return { ok: false, code: 'invalid_cdr', message: err instanceof Error ? err.message : String(err) };
    }
  });
  return JSON.stringify(outcomes);
}
