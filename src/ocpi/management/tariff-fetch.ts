import type { Logger } from 'pino';
import { HttpError } from '../../gateway/errors.js';
import type { PartyIdentity } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import { pull } from './pull.js';

/** How often at most, per party and process, a CPO's tariffs are pulled for the CDRs naming one we do not hold. */
export const TARIFF_FETCH_INTERVAL_MS = 10 * 60_000;
/** Parties whose last pull is remembered; past this many the oldest is forgotten. */
const MAX_REMEMBERED = 10_000;

/**
 * The tariffs of a partner CPO that posted a CDR naming a tariff it never pushed us
 * (docs/TARIFFS.md "Re-pricing received CDRs"): every page of its tariffs Sender is pulled, as
 * the operator's `POST /v1/partners/{id}/pull/tariffs` does, and each tariff stored checks again
 * the CDRs left unpriced for want of it. A CPO that pushes nothing (OCPI allows an eMSP to pull
 * instead) then has its CDRs checked all the same. One pull per party at most every
 * TARIFF_FETCH_INTERVAL_MS, whatever number of its CDRs wait: a tariff its Sender does not list
 * either leaves them unpriced until it is pushed or pulled.
 */
export class MissingTariffFetcher {
  private readonly lastPull = new Map<string, number>();

  constructor(
    private readonly ctx: OcpiContext,
    private readonly log: Logger,
  ) {}

  /** A CDR of `party` waits for a tariff: its CPO's tariffs are pulled, unless they were lately. */
  missing(party: PartyIdentity): void {
    const key = `${party.country_code}-${party.party_id}`;
    const at = Date.now();
    const last = this.lastPull.get(key);
    if (last !== undefined && at - last < TARIFF_FETCH_INTERVAL_MS) return;
    // re-inserted: the Map's order stays oldest pull first
    this.lastPull.delete(key);
    this.lastPull.set(key, at);
    if (this.lastPull.size > MAX_REMEMBERED) {
      const [oldest] = this.lastPull.keys();
      if (oldest !== undefined) this.lastPull.delete(oldest);
    }
    void this.fetch(party).catch((err: unknown) =>
      this.log.warn({ err, party }, 'pulling the tariffs a CDR names failed'),
    );
  }

  private async fetch(party: PartyIdentity): Promise<void> {
    const partner = await this.ctx.partners.speakingFor({ ...party, role: 'CPO' });
    if (!partner) return;
    try {
      const { stored, rejected, pages } = await pull(this.ctx, partner, 'tariffs', undefined);
      this.log.info(
        { party, partner: partner.id, pages, stored, rejected },
        "a CDR names a tariff we do not hold: the partner's tariffs pulled",
      );
    } catch (err) {
      // no tariffs Sender, not registered any more, or its answer failed (502, logged by the pull)
      if (!(err instanceof HttpError)) throw err;
      this.log.info(
        { party, partner: partner.id, reason: err.message },
        "a CDR names a tariff we do not hold: the partner's tariffs could not be pulled",
      );
    }
  }
}
