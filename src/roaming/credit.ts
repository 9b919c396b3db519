import type { Database } from '../db/database.js';
import type { SqlRunner } from '../db/sql.js';
import { HttpError } from '../gateway/errors.js';
import { CREDIT_SUFFIX, type Cdr as Cdr221 } from '../ocpi/cdrs/schemas-2.2.1.js';
import type { PartyIdentity } from '../ocpi/core/auth.js';
import { SPEAKS_FOR, speaksForParams } from '../ocpi/core/partners.js';
import { enqueue } from '../ocpi/outbox/outbox-store.js';
import { isCdr221, type StoredCdr } from '../ocpi/sessions/stored.js';
import { ObjectStore } from '../ocpi/store/object-store.js';
import { CDR_AMOUNTS } from '../tariffs/types.js';

/**
 * Credit CDRs of ours (2.2.1 mod_cdrs "Credit CDRs"; docs/TARIFFS.md "Crediting a CDR"). A CDR
 * is an invoice: once sent it never changes. What was billed wrong is taken back by a credit CDR,
 * its own id, `credit: true`, `credit_reference_id` naming the CDR it credits, and otherwise the
 * data of that CDR with its amounts negated. It goes to the eMSP of the token as the CDR did.
 */

type Price = Cdr221['total_cost'];

function negated(p: Price): Price {
  // 0 stays 0: JSON writes -0 as 0 anyway, and a reader comparing signs sees none
  const neg = (n: number) => (n === 0 ? 0 : -n);
  return p.incl_vat === undefined
    ? { excl_vat: neg(p.excl_vat) }
    : { excl_vat: neg(p.excl_vat), incl_vat: neg(p.incl_vat) };
}

/**
 * The credit CDR of `cdr`. mod_cdrs says the values in `total_cost` are negated; the costs of each
 * dimension are negated with it, so that the credit's parts still add up to its total, as the
 * CDR's did. Energy and times stay as they were: they say what the credit is for.
 */
export function creditOf(cdr: Cdr221, remark: string | undefined, now: Date): Cdr221 {
  const credit: Cdr221 = {
    ...cdr,
    id: `${cdr.id}${CREDIT_SUFFIX}`,
    credit: true,
    credit_reference_id: cdr.id,
    last_updated: now.toISOString(),
  };
  for (const field of CDR_AMOUNTS) {
    const cost = cdr[field];
    if (cost !== undefined) credit[field] = negated(cost);
  }
  if (remark !== undefined) credit.remark = remark;
  return credit;
}

/** What the eMSP of the CDR's token is, as our outbox addresses it. */
export function emspOf(cdr: Cdr221): PartyIdentity {
  return { country_code: cdr.cdr_token.country_code, party_id: cdr.cdr_token.party_id };
}

/** A link that speaks for the eMSP of a credited CDR, and whether the credit is sent to it. */
export interface CreditRecipient {
  partner_key: string;
  version: string;
  /** false on a 2.1.1 link: 2.1.1 has no credit CDR */
  sent: boolean;
}

/**
 * Stores the credit CDR of our CDR `id` and queues it for the eMSP of its token, in one
 * transaction. Refused (HttpError) when there is no such CDR, and when it is a credit itself or
 * was credited before. A CDR still on its way may be credited: its credit is sent after it
 * (outbox/courier.ts `creditWaits`). Answers the credit and the links that speak for its eMSP.
 */
export async function creditCdr(
  db: Database,
  own: PartyIdentity,
  id: string,
  remark: string | undefined,
): Promise<{ credit: Cdr221; recipients: CreditRecipient[] }> {
  return db.group.run(async (tx) => {
    const cdrs = new ObjectStore<StoredCdr>(tx, 'cdrs');
    const cdr = await cdrs.get({ ...own, id });
    if (!cdr || !isCdr221(cdr)) throw new HttpError(404, 'cdr_not_found', `no CDR ${id} of ours`);
    if (cdr.credit === true)
      throw new HttpError(
        409,
        'cdr_is_credit',
        `CDR ${id} is a credit CDR (of ${cdr.credit_reference_id ?? '?'}): it is not credited again`,
      );
    const credit = creditOf(cdr, remark, new Date());
    const emsp = emspOf(cdr);
    if (!(await cdrs.putNew({ ...own, id: credit.id }, credit, { audience: emsp })))
      throw new HttpError(409, 'cdr_credited', `CDR ${id} was credited before, by ${credit.id}`);
    await enqueue(tx, { party: { ...emsp, role: 'EMSP' } }, { kind: 'cdr', cdr_id: credit.id, to: emsp });
    return { credit, recipients: await creditRecipients(tx, emsp) };
  });
}

/** The registered links that speak for the eMSP `emsp`, and whether a credit CDR is sent to each. */
export async function creditRecipients(q: SqlRunner, emsp: PartyIdentity): Promise<CreditRecipient[]> {
  const links = await q.query(
    `SELECT p.country_code, p.party_id, p.version FROM ocpi_partner p WHERE ${SPEAKS_FOR} ORDER BY p.country_code, p.party_id`,
    speaksForParams({ ...emsp, role: 'EMSP' }),
  );
  return links.map((r) => ({
    partner_key: `${String(r.country_code)}-${String(r.party_id)}`,
    version: String(r.version),
    sent: r.version !== '2.1.1',
  }));
}
