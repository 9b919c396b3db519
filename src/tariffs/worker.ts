import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { priceCdr } from './engine.js';
import type { PriceOutcome } from './types.js';
import { decodeBatch, encodeResults, type WireBatch, type WireResults } from './wire.js';

/**
 * A Piscina pricing thread (pool.ts): one batch in, its outcomes out (wire.ts). Never throws: a
 * task that fails is a failed outcome.
 */

// On Linux a thread has a nice value of its own: this one yields the CPU to the event loop that
// serves chargers (a pricing batch waits a little; an OCPP answer does not). Elsewhere it keeps
// the process's priority.
try {
  const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
} catch {
  // not Linux, or not allowed: same priority as the event loop
}

export default function priceBatch(batch: WireBatch): WireResults {
  const tasks = decodeBatch(batch);
  const outcomes: PriceOutcome[] = tasks.map((task) => {
    try {
      return priceCdr(task.tariff, task.cdr, task.time_zone, {
        breakdown: task.breakdown === true,
        ...(task.times ? { times: task.times } : {}),
      });
    } catch (err) {
      return { ok: false, code: 'invalid_cdr', message: err instanceof Error ? err.message : String(err) };
    }
  });
  return encodeResults(tasks, outcomes);
}
