import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { StoredCdr } from '../sessions/stored.js';
import type { ObjectKey } from '../store/object-store.js';
import { checkCdr, type CdrCheck, type CheckDeps } from './check.js';
import type { CdrCheckStore } from './check-store.js';

/** How long shutdown waits for the re-pricings under way. */
const DRAIN_MS = 5000;

/**
 * The re-pricing of received CDRs in the background (docs/TARIFFS.md "Re-pricing received CDRs"):
 * it starts when the POST's answer is out, so it never slows the partner down, and what fails is
 * logged, never thrown. A CDR checked before (the same CDR posted again) is not checked again.
 */
/** Checks run at once; more wait, up to MAX_WAITING (beyond, a CDR is left unchecked, logged). */
const MAX_RUNNING = 8;
const MAX_WAITING = 10_000;

export class CdrChecker {
  private readonly running = new Set<Promise<unknown>>();
  private readonly waiting: { key: ObjectKey; cdr: StoredCdr }[] = [];
  private stopped = false;

  constructor(
    private readonly deps: CheckDeps,
    private readonly store: CdrCheckStore,
    private readonly log: Logger,
  ) {}

  /** Re-prices `cdr` once the answer to the POST that brought it went out (the CDRs Receiver, emsp-receiver.ts). */
  afterAnswer(res: ServerResponse, key: ObjectKey, cdr: StoredCdr): void {
    // 'close': the response was sent, or the connection went; the CDR is stored either way
    res.once('close', () => this.start(key, cdr));
  }

  private start(key: ObjectKey, cdr: StoredCdr): void {
    if (this.stopped) {
      this.log.warn({ cdr: key }, 'CDR not re-priced: the process is stopping');
      return;
    }
    if (this.running.size >= MAX_RUNNING) {
      if (this.waiting.length < MAX_WAITING) this.waiting.push({ key, cdr });
      else this.log.warn({ cdr: key }, 'CDR not re-priced: too many waiting');
      return;
    }
    const run = this.run(key, cdr).catch((err: unknown) =>
      this.log.error({ err, cdr: key }, 're-pricing a received CDR failed'),
    );
    this.running.add(run);
    void run.finally(() => {
      this.running.delete(run);
      const next = this.waiting.shift();
      if (next) this.start(next.key, next.cdr);
    });
  }

  /** Re-prices one CDR and keeps the outcome; undefined when it was checked before. */
  async run(key: ObjectKey, cdr: StoredCdr): Promise<CdrCheck | undefined> {
    if (await this.store.has(key)) return undefined;
    const check = await checkCdr(this.deps, key, cdr);
    await this.store.save(check);
    const fields = { cdr: key, status: check.status, difference: check.difference, reason: check.reason };
    if (check.status === 'disagrees') this.log.warn(fields, "a partner's CDR disagrees with its tariff");
    else this.log.debug(fields, 'received CDR re-priced');
    return check;
  }

  /** Shutdown: no new re-pricing; those under way may finish (at most DRAIN_MS). */
  async stop(): Promise<void> {
    this.stopped = true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, DRAIN_MS);
    });
    await Promise.race([Promise.all(this.running), timeout]);
    clearTimeout(timer);
  }
}
