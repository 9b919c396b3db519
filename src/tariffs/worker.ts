import { execFile } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { priceCdr } from './engine.js';
import type { PriceOutcome } from './types.js';
import { decodeBatch, encodeResults, type WireBatch, type WireResults } from './wire.js';

/**
 * A Piscina pricing thread (pool.ts): one batch in, its outcomes out (wire.ts). Never throws: a
 * task that fails is a failed outcome.
 */

/**
 * On Linux a thread has a scheduling policy and a nice value of its own: this one yields the CPU
 * to the event loop that serves chargers (a pricing batch waits a little; an OCPP answer does not).
 * First its nice value, at once; then, where util-linux's `chrt` is installed, the SCHED_IDLE
 * policy. The kernel's scheduler may let a niced thread run to the end of its time slice before
 * a woken thread gets the core, but takes the core from a SCHED_IDLE thread at once; such a
 * thread still gets a small share of a saturated machine, so a CDR is priced late, never not at
 * all (docs/TARIFFS.md "Where pricing runs"). Elsewhere, or where either is refused, the thread
 * keeps what it has.
 */
function yieldToEventLoop(): void {
  let tid: number;
  try {
    tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return;
    setPriority(tid, 10);
  } catch {
    // not Linux, or not allowed: same priority as the event loop
    return;
  }
  // its own thread only; a failure (no chrt, not allowed) leaves the nice value
  execFile('chrt', ['--idle', '--pid', '0', String(tid)], { timeout: 5000 }, () => undefined);
}

yieldToEventLoop();

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
