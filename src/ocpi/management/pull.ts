import type { TSchema } from '#typebox';
import { compileLazily } from '../../lazy-compile.js';
import { HttpError } from '../../gateway/errors.js';
import type { PartnerRole, PartyIdentity, PartyRole } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import type { PartnerRow } from '../core/partners.js';
import { normalizeDateTimes, type DateTimePath } from '../core/datetime.js';
import * as C211 from '../cdrs/schemas-2.1.1.js';
import * as C221 from '../cdrs/schemas-2.2.1.js';
import { locationFrom211 } from '../locations/mappers.js';
import * as L211 from '../locations/schemas-2.1.1.js';
import * as L221 from '../locations/schemas-2.2.1.js';
import * as S211 from '../sessions/schemas-2.1.1.js';
import * as S221 from '../sessions/schemas-2.2.1.js';
import type { StoredSession } from '../sessions/stored.js';
import { tariffStored } from '../tariffs/emsp-receiver.js';
import { tariffFrom211 } from '../tariffs/mappers.js';
import * as T211 from '../tariffs/schemas-2.1.1.js';
import * as T221 from '../tariffs/schemas-2.2.1.js';
import { tokenFrom211 } from '../tokens/mappers.js';
import * as K211 from '../tokens/schemas-2.1.1.js';
import * as K221 from '../tokens/schemas-2.2.1.js';
import { endpointOf } from '../client/partner-client.js';
import { badGateway, registeredLink } from './handshake.js';
import type { ExchangeModule } from './exchange-module.js';

/**
 * Pulling a registered partner's objects from its Sender interfaces (docs/OCPI.md "Pull and
 * push"): every page (Link rel="next") is read, each object checked against its version's
 * schema and stored as the matching Receiver of ours would store it. A 2.2.1 object must name a
 * party the partner speaks for; a 2.1.1 one is the partner's own.
 */

export type Pullable = ExchangeModule;

interface PullModule {
  /** the role of the partner whose Sender serves the module */
  sender: PartnerRole;
  /** each version's object schema, and its check */
  schemas: Record<OcpiVersion, Checked>;
  /**
   * Stores a checked object of `party`: its id, or KEPT when what we hold stays (a newer version
   * by `last_updated`, as our Receivers keep it, or a CDR we have already)
   */
  store(ctx: OcpiContext, o: unknown, version: OcpiVersion, party: PartyIdentity): Promise<string | typeof KEPT>;
}

interface Checked {
  schema: TSchema;
  check: ReturnType<typeof compileLazily>;
}

function both(v211: TSchema, v221: TSchema): Record<OcpiVersion, Checked> {
  return {
    '2.1.1': { schema: v211, check: compileLazily(v211) },
    '2.2.1': { schema: v221, check: compileLazily(v221) },
  };
}

/** what `PullModule.store` answers for an object whose held version stays */
const KEPT = Symbol('kept');

const MODULES: Record<Pullable, PullModule> = {
  locations: {
    sender: 'CPO',
    schemas: both(L211.Location, L221.Location),
    async store(ctx, o, version, party) {
      const l = version === '2.1.1' ? locationFrom211(o as L211.Location, party) : (o as L221.StoredLocation);
      // a list read before the partner's last push must not undo it (an EVSE's status, a removal)
      const held = await ctx.stores.locations.putUnlessOlder({ ...party, id: l.id }, { ...l, ...party });
      return held.applied ? l.id : KEPT;
    },
  },
  tariffs: {
    sender: 'CPO',
    schemas: both(T211.Tariff, T221.Tariff),
    async store(ctx, o, version, party) {
      const t = version === '2.1.1' ? tariffFrom211(o as T211.Tariff, party) : (o as T221.Tariff);
      // as our Receiver takes a push: not over a tariff held that was updated later (Decisions 38)
      const held = await ctx.stores.tariffs.putUnlessOlder({ ...party, id: t.id }, t);
      if (!held.applied) return KEPT;
      // its version kept, the CDRs left unpriced for want of it checked again, as after a push
      await tariffStored(ctx, party, held.object);
      return t.id;
    },
  },
  sessions: {
    sender: 'CPO',
    schemas: both(S211.SessionCreate, S221.Session),
    async store(ctx, o, version, party) {
      // as our sessions Receivers store them: in the shape they came in (Decisions 23)
      const stored: StoredSession =
        version === '2.1.1'
          ? { ...(o as S211.SessionCreate), authorization_id: (o as S211.SessionCreate).auth_id }
          : (o as S221.Session);
      // not over a later state of the session pushed since (COMPLETED back to ACTIVE)
      const held = await ctx.stores.sessions.putUnlessOlder({ ...party, id: stored.id }, stored);
      return held.applied ? stored.id : KEPT;
    },
  },
  cdrs: {
    sender: 'CPO',
    // as our cdrs Receiver takes them (a negative total_energy: energy fed back)
    schemas: both(C211.Cdr, C221.ReceivedCdr),
    async store(ctx, o, _version, party) {
      // a CDR never changes (Decisions 25): one we hold already stays as it is
      const c = o as C211.Cdr | C221.Cdr;
      const key = { ...party, id: c.id };
      if (await ctx.stores.cdrs.get(key)) return KEPT;
      await ctx.stores.cdrs.put(key, c);
      // re-priced as a CDR posted to us is (docs/TARIFFS.md "Re-pricing received CDRs")
      ctx.cdrChecks?.pulled(key, c);
      return c.id;
    },
  },
  tokens: {
    sender: 'EMSP',
    schemas: both(K211.Token, K221.Token),
    async store(ctx, o, version, party) {
      const t = version === '2.1.1' ? tokenFrom211(o as K211.Token, party) : (o as K221.Token);
      // as our tokens Receivers keep a push: a stale copy in the eMSP's list must not lift a block
      // it pushed since
      const held = await ctx.stores.tokens.putUnlessOlder({ ...party, id: t.uid }, t);
      return held.applied ? t.uid : KEPT;
    },
  },
};

/** The party a pulled object is kept under: the partner's (2.1.1), or one of its parties the object names (2.2.1). */
function partyOf(o: unknown, version: OcpiVersion, parties: PartyRole[], role: PartnerRole): PartyIdentity | undefined {
  const own = parties[0];
  // a 2.1.1 link has one party: the objects are its own
  if (version === '2.1.1' || !own) return own && { country_code: own.country_code, party_id: own.party_id };
  const named = o as { country_code?: unknown; party_id?: unknown };
  const match = parties.find(
    (p) => p.role === role && p.country_code === named.country_code && p.party_id === named.party_id,
  );
  return match && { country_code: match.country_code, party_id: match.party_id };
}

/** The role whose Sender serves `module`: a CPO's locations, an eMSP's tokens. */
export function senderOf(module: Pullable): PartnerRole {
  return MODULES[module].sender;
}

/**
 * The partner's parties, its own and those its link speaks for, when one of them plays the role
 * whose Sender serves `module` (a CPO's locations, an eMSP's tokens); else 409: the other side
 * of a module is a Receiver interface, with nothing of it to pull from the partner or to hold.
 */
export function sendingParties(partner: PartnerRow, module: Pullable): PartyRole[] {
  const sender = senderOf(module);
  const parties: PartyRole[] = [
    { country_code: partner.country_code, party_id: partner.party_id, role: partner.role },
    ...partner.parties,
  ];
  if (!parties.some((p) => p.role === sender))
    throw new HttpError(
      409,
      sender === 'CPO' ? 'not_a_cpo' : 'not_an_emsp',
      `partner ${partner.id} is ${partner.role === 'CPO' ? 'a CPO' : 'an eMSP'}: only ${sender === 'CPO' ? 'a CPO' : 'an eMSP'} sends ${module}`,
    );
  return parties;
}

/** A pulled object checked against its version's schema, its timestamps in UTC; undefined when it fails. */
function checked(o: unknown, { schema, check }: Checked): boolean {
  if (!check.Check(o)) return false;
  const invalid: DateTimePath[] = [];
  normalizeDateTimes(schema, o, invalid);
  return invalid.length === 0;
}

export interface PullResult {
  module: Pullable;
  version: OcpiVersion;
  url: string;
  pages: number;
  stored: number;
  /** objects left as we hold them: a newer version by `last_updated`, or a CDR we have */
  kept: number;
  rejected: number;
  ids: string[];
}

/** GETs every page of the partner's `module` Sender and stores what passes the checks. */
export async function pull(
  ctx: OcpiContext,
  partner: PartnerRow,
  module: Pullable,
  limit: number | undefined,
): Promise<PullResult> {
  const spec = MODULES[module];
  const parties = sendingParties(partner, module);
  const link = await registeredLink(ctx, partner);
  const chosen = endpointOf(link.partner.endpoints, module, 'SENDER');
  if (!chosen) throw new HttpError(409, `no_${module}_endpoint`, `the partner lists no ${module} Sender endpoint`);
  const { version } = chosen;
  const url = limit ? `${chosen.url}${chosen.url.includes('?') ? '&' : '?'}limit=${limit}` : chosen.url;
  const rules = spec.schemas[version];
  const ids: string[] = [];
  let rejected = 0;
  let kept = 0;
  let pages = 0;
  // OCPI 2.2.1 addresses a request (OCPI-to-*) to the party that answers it: the Sender's party,
  // each of them in turn on a platform with several (a platform that routes by the header lists
  // each party's own objects); a 2.1.1 link has one party and no routing headers
  const senders = version === '2.2.1' ? parties.filter((p) => p.role === spec.sender) : parties.slice(0, 1);
  /** the objects stored, by party and id (two parties may each have an object of one id) */
  const seen = new Set<string>();
  try {
    for (const sender of senders) {
      const to = { country_code: sender.country_code, party_id: sender.party_id };
      // each page is stored before the next one is read (one page in memory at a time); a failure
      // part-way answers 502 and keeps the pages stored so far (a pull again overwrites them)
      for await (const page of ctx.client.pages(url, link.theirToken, version, { route: { from: ctx.own, to } })) {
        pages++;
        for (const o of page) {
          const party = checked(o, rules) ? partyOf(o, version, parties, spec.sender) : undefined;
          const id = party && (await spec.store(ctx, o, version, party));
          if (!party || id === undefined) rejected++;
          else if (id === KEPT) kept++;
          else {
            // a platform that answers every party's objects to each: counted in the first pass only
            const key = `${party.country_code}/${party.party_id}/${id}`;
            if (!seen.has(key)) ids.push(id);
            seen.add(key);
          }
        }
      }
    }
  } catch (err) {
    return badGateway(ctx, err);
  }
  return { module, version, url: chosen.url, pages, stored: ids.length, kept, rejected, ids };
}
