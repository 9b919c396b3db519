import type { Logger } from 'pino';
import { repeatedErrorLog } from '../../log-limit.js';
import { partnerOutboxProtocol } from '../../../actors/partner-outbox/protocol.js';
import type { ActorMessenger } from '../../runtime/types.js';
import type { OutboxStore } from './outbox-store.js';

/**
 * Wakes the partner-outbox actors of partners with rows due (docs/ROAMING.md "The outbox"):
 * every OUTBOX_SWEEP_MS, and at once when a change has just queued rows (`kick`). A wake is a
 * plain tell, routed to whichever process holds the partner's actor; a lost one is made up by
 * the next sweep, since the rows themselves are in the database.
 */
export class OutboxSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;

  /** a sweep that fails every few seconds while the database is away: a line a minute per error */
  private readonly sweepFailed: (err: unknown) => void;

  constructor(
    private readonly rows: OutboxStore,
    private readonly actors: ActorMessenger,
    log: Logger,
    private readonly intervalMs: number,
  ) {
    this.sweepFailed = repeatedErrorLog(log, 'outbox sweep failed');
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.kick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Looks for due rows now (one look at a time; a kick meanwhile looks once more after it). */
  kick(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.sweep().finally(() => {
      this.running = false;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async sweep(): Promise<void> {
    try {
      for (const key of await this.rows.duePartners(Date.now()))
        this.actors.ref(partnerOutboxProtocol, key).tell({ op: 'flush' });
    } catch (err) {
      this.sweepFailed(err);
    }
  }
}
