import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { PartyIdentity } from '../core/auth.js';
import { isCdr221, type StoredCdr } from '../sessions/stored.js';
import type { ObjectKey, ObjectStore } from '../store/object-store.js';
import { checkCdr, type CdrCheck, type CheckDeps } from './check.js';
import type { CdrCheckStore } from './check-store.js';

/** How long shutdown waits for the re-pricings under way. */
const DRAIN_MS = 5000;

/**
 * The re-pricing of received CDRs in the background (docs/TARIFFS.md "Re-pricing received CDRs"):
 * it starts when the POST's answer is out, so it never slows the partner down, and what fails is
 * logged, never thrown. A CDR checked before (the same CDR posted again) is checked again only
 * when it was left unpriced; one left unpriced for want of the tariff it names is checked again
 * when the partner pushes that tariff, and a credit CDR left unpriced for want of the CDR it
 * credits when that CDR comes.
 */
/** Checks run at once; more wait, up to MAX_WAITING (beyond, a CDR is left unchecked, logged). */
const MAX_RUNNING = 8;
const MAX_WAITING = 10_000;
/** The unpriced CDRs one tariff push checks again, at most (the oldest checks first). */
const RECHECK_PER_TARIFF = 1000;
/** The credits naming one CDR that its coming checks again, at most (one is the rule; more disagree). */
const RECHECK_PER_CDR = 20;

/** A CDR to check: as posted, or (undefined) read back from the CDRs store when its turn comes. */
interface Job {
  key: ObjectKey;
  cdr: StoredCdr | undefined;
}

export class CdrChecker {
  private readonly running = new Set<Promise<unknown>>();
  private readonly waiting: Job[] = [];
  private stopped = false;

  constructor(
    private readonly deps: CheckDeps,
    private readonly store: CdrCheckStore,
    private readonly cdrs: Pick<ObjectStore<StoredCdr>, 'get'>,
    private readonly log: Logger,
    /**
     * a CDR of `party` was left unpriced for want of a tariff it names: its CPO's tariffs may be
     * pulled (src/ocpi/management/tariff-fetch.ts), which checks it again
     */
    private readonly missingTariff: (party: PartyIdentity) => void = () => undefined,
  ) {}

  /** Re-prices `cdr` once the answer to the POST that brought it went out (the CDRs Receiver, emsp-receiver.ts). */
  afterAnswer(res: ServerResponse, key: ObjectKey, cdr: StoredCdr): void {
    // 'close': the response was sent, or the connection went; the CDR is stored either way
    res.once('close', () => this.start({ key, cdr }));
  }

  /** Re-prices a CDR we pulled from a partner's cdrs Sender (src/ocpi/management/pull.ts), in the background. */
  pulled(key: ObjectKey, cdr: StoredCdr): void {
    this.start({ key, cdr });
  }

  /**
   * A partner pushed tariff `id` (the tariffs Receiver, once it is stored): its CDRs left unpriced
   * naming it are checked again, in the background (at most RECHECK_PER_TARIFF).
   */
  tariffPushed(party: PartyIdentity, id: string): void {
    void this.store.unpricedNaming(party, id, RECHECK_PER_TARIFF).then(
      (keys) => {
        for (const key of keys) this.start({ key, cdr: undefined });
      },
      (err: unknown) => this.log.error({ err, party, tariff: id }, 'finding the CDRs a pushed tariff prices failed'),
    );
  }

  private start(job: Job): void {
    const { key } = job;
    if (this.stopped) {
      this.log.warn({ cdr: key }, 'CDR not re-priced: the process is stopping');
      return;
    }
    if (this.running.size >= MAX_RUNNING) {
      if (this.waiting.length < MAX_WAITING) this.waiting.push(job);
      else this.log.warn({ cdr: key }, 'CDR not re-priced: too many waiting');
      return;
    }
    const run = this.runJob(job).catch((err: unknown) =>
      this.log.error({ err, cdr: key }, 're-pricing a received CDR failed'),
    );
    this.running.add(run);
    void run.finally(() => {
      this.running.delete(run);
      const next = this.waiting.shift();
      if (next) this.start(next);
    });
  }

  private async runJob({ key, cdr }: Job): Promise<CdrCheck | undefined> {
    const received = cdr ?? (await this.cdrs.get(key));
    return received && this.run(key, received);
  }

  /** Re-prices one CDR and keeps the outcome; undefined when it has a check that is not `unpriced`. */
  async run(key: ObjectKey, cdr: StoredCdr): Promise<CdrCheck | undefined> {
    const before = await this.store.statusOf(key);
    if (before !== undefined && before !== 'unpriced') return undefined;
    let check = await checkCdr(this.deps, key, cdr);
    await this.store.save(check);
    if (check.waitsForTariff || check.waitsForCredited) check = await this.againOnceKept(key, cdr, check);
    if (!isCdr221(cdr) || cdr.credit !== true) this.creditsWaitingOn(key);
    const fields = { cdr: key, status: check.status, difference: check.difference, reason: check.reason };
    if (check.status === 'disagrees') this.log.warn(fields, "a partner's CDR disagrees with its tariff");
    else this.log.debug(fields, 'received CDR re-priced');
    return check;
  }

  /**
   * A check left unpriced for want of a tariff, or (a credit) of the CDR it credits, once it is
   * kept. What it wanted may have come (a tariff pushed or pulled by another CDR's check, the
   * credited CDR posted) after this check read it and before it was kept; whoever stored it then
   * looked for the unpriced checks naming it, found none, and this one would stay unpriced. The
   * writer stores, then looks; this check is kept, then reads again: one of the two sees the
   * other's write. A tariff still missing, its CPO's tariffs may be pulled.
   */
  private async againOnceKept(key: ObjectKey, cdr: StoredCdr, kept: CdrCheck): Promise<CdrCheck> {
    const again = await checkCdr(this.deps, key, cdr);
    if (again.waitsForTariff) {
      this.missingTariff({ country_code: key.country_code, party_id: key.party_id });
      return kept;
    }
    if (again.waitsForCredited) return kept;
    await this.store.save(again);
    return again;
  }

  /**
   * CDR `key` came: the party's credit CDRs naming it that came before it, left unpriced for want
   * of it, are checked again (a credit whose check agreed or disagreed is left as it is: `run`).
   */
  private creditsWaitingOn(key: ObjectKey): void {
    void this.deps.creditsOf(key, key.id).then(
      (ids) => {
        for (const id of ids.slice(0, RECHECK_PER_CDR)) this.start({ key: { ...key, id }, cdr: undefined });
      },
      (err: unknown) => this.log.error({ err, cdr: key }, 'finding the credits of a received CDR failed'),
    );
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
