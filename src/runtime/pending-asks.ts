import type { Logger } from 'pino';
import { rebuildError } from './errors.js';
import type { Reply } from './transport.js';

interface PendingAsk {
  resolve(value: unknown): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout;
  /** the process the ask was sent to: if its membership lapses, the ask is re-sent elsewhere */
  owner: string;
}

/**
 * The asks this process sent to other processes and still waits on, by ask id: settled by the
 * reply envelope, by their timeout, or as "moved" when the process asked left the cluster.
 */
export class PendingAsks {
  private readonly pending = new Map<string, PendingAsk>();
  private reroutedCount = 0;

  constructor(private readonly log: Logger) {}

  get size(): number {
    return this.pending.size;
  }

  /** asks settled as "moved" because the process asked left the cluster, since start */
  get rerouted(): number {
    return this.reroutedCount;
  }

  /**
   * Waits for the reply to ask `id`, sent (or about to be sent) to `owner`; after `ms` it is
   * forgotten and the promise rejects with `timeout()`.
   */
  wait(id: string, owner: string, ms: number, timeout: () => Error): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(timeout());
      }, ms);
      this.pending.set(id, { resolve, reject, timer, owner });
    });
  }

  settle(id: string, reply: Reply): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (reply.ok) p.resolve(reply.value);
    else p.reject(rebuildError(reply.error));
  }

  /**
   * Processes whose membership lapsed will not answer: what we asked them is settled as "moved",
   * so the asker re-sends it to the new owner now instead of waiting out its timeout (see
   * "Asks to a process that dies" in docs/ARCHITECTURE.md). Their leases lapsed before their
   * membership did, so they cannot commit any more; the re-send carries the same ask id.
   */
  rerouteFrom(processIds: string[]): void {
    const gone = new Set(processIds);
    for (const [id, p] of this.pending) {
      if (!gone.has(p.owner)) continue;
      this.reroutedCount++;
      this.settle(id, { ok: false, error: { name: 'ActorLostError', message: `${p.owner} left the cluster` } });
    }
    if (gone.size > 0) this.log.info({ processes: [...gone] }, 'members left; asks to them re-sent');
  }

  /** Shutdown: every ask still waiting fails (each with its own error). */
  rejectAll(error: () => Error): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(error());
      this.pending.delete(id);
    }
  }
}
