import { DependencyDegradedError, isDependencyOutage } from '../platform/dependency-health.js';

/**
 * Whose connections an answer's `online` counts: every process's (`cluster`; embedded, the one
 * process), or, while Redis cannot be reached, only those of the process that answered
 * (docs/ARCHITECTURE.md "Degraded mode").
 */
export type OnlineScope = 'cluster' | 'this_process';

/** Where "connected" is read: the pins in Redis, this process's own pins, and Redis's health. */
export interface OnlineSource {
  /** which of these actors are pinned (their charger connected), anywhere in the cluster */
  pinnedAmong(addresses: readonly string[]): Promise<Set<string>>;
  /** which of these actors this process holds pinned (known without Redis) */
  pinnedHere(addresses: readonly string[]): Set<string>;
  /** the health probe finds Redis away (cluster mode): nothing is asked of it */
  redisAway(): boolean;
}

/** How long an operator's read waits for the pins in Redis before it answers with this process's. */
const PIN_READ_MS = 1000;

function within<T>(read: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DependencyDegradedError(`Redis did not answer the read of the pins within ${ms} ms`)),
      ms,
    );
  });
  // a read that fails after the timer won is no one's to handle
  read.catch(() => undefined);
  return Promise.race([read, late]).finally(() => clearTimeout(timer));
}

/**
 * Which of these chargers' actors are connected, for an operator's read: from the pins in Redis,
 * or, while Redis is away (refused, closed, or not answering within PIN_READ_MS), from this
 * process's own pins, and the answer says which. Only a read that shows may fall back so: a
 * decision (the roaming offline watch, a command) keeps the failing read.
 */
export async function onlineAmong(
  source: OnlineSource,
  addresses: readonly string[],
): Promise<{ pinned: Set<string>; scope: OnlineScope }> {
  const here = source.pinnedHere(addresses);
  if (here.size === addresses.length) return { pinned: here, scope: 'cluster' };
  if (!source.redisAway()) {
    try {
      return { pinned: await within(source.pinnedAmong(addresses), PIN_READ_MS), scope: 'cluster' };
    } catch (err) {
      if (!isDependencyOutage(err)) throw err;
    }
  }
  return { pinned: here, scope: 'this_process' };
}
