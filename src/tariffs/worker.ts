import { execFile } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';
import type { Config } from '../../config/index.js';
import { priceCdr } from './engine.js';
import type { PriceOutcome } from './types.js';
import { decodeBatch, encodeResults, type WireBatch, type WireResults } from './wire.js';

/**
 * A Piscina pricing thread (pool.ts): one batch in, its outcomes out (wire.ts). Never throws: a
 * task that fails is a failed outcome.
 */

/** How a pricing thread yields the CPU on Linux: the setting's values, docs/CONFIGURATION.md. */
export type ThreadPolicy = Config['PRICING_THREAD_POLICY'];

/**
 * On Linux a thread has a nice value and a scheduling policy of its own: this one yields the CPU
 * to the event loop that serves chargers (a pricing batch waits a little; an OCPP answer does not).
 * `nice`: nice 10. `idle`: nice 10 at once, then the SCHED_IDLE policy through util-linux's
 * `chrt`: the kernel gives the core to a woken thread of normal policy at once, where it may
 * let a niced thread run on first. The cost: a SCHED_IDLE thread gets a tiny share of a host that
 * other processes keep busy, so there a CDR (or `POST /v1/tariffs/price`) waits far longer than at
 * nice 10 (docs/TARIFFS.md "Where pricing runs"). Elsewhere, or where either is refused, the
 * thread keeps what it has; nothing here can stop the thread from pricing.
 */
function yieldToEventLoop(policy: ThreadPolicy): void {
  let tid: number;
  try {
    tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return;
    setPriority(tid, 10);
  } catch {
    // not Linux, or not allowed: same priority as the event loop
    return;
  }
  if (policy !== 'idle') return;
  try {
    // this thread only; a failure (no chrt, not allowed) leaves nice 10
    execFile('chrt', ['-i', '-p', '0', String(tid)], { timeout: 5000 }, () => undefined);
  } catch {
    // a spawn refused at once (no permission to start processes): nice 10 it is
  }
}

yieldToEventLoop((workerData as { threadPolicy?: ThreadPolicy } | null)?.threadPolicy === 'idle' ? 'idle' : 'nice');

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
