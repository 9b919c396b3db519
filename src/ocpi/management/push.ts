import { HttpError } from '../../gateway/errors.js';
import { endpointOf, PartnerCallError } from '../client/partner-client.js';
import type { PartnerRole, PartyIdentity, PartyRole } from '../core/auth.js';
import type { OcpiContext } from '../core/context.js';
import type { OcpiVersion } from '../core/envelope.js';
import type { PartnerRow } from '../core/partners.js';
import { cdr211Of } from '../cdrs/cpo-sender.js';
import { cdrTo221 } from '../cdrs/mappers.js';
import { locationTo211 } from '../locations/mappers.js';
import { ourTariffChoice } from '../locations/tariff-choice.js';
import type { Tariff } from '../tariffs/schemas-2.2.1.js';
import { session211Of } from '../sessions/emsp-receiver.js';
import { sessionFor211Partner, sessionTo221 } from '../sessions/mappers.js';
import { isCdr221, isSession221 } from '../sessions/stored.js';
import type { StoredLocation } from '../locations/schemas-2.2.1.js';
import type { ListOptions, ObjectStore } from '../store/object-store.js';
import { tariffTo211 } from '../tariffs/mappers.js';
import { tokenTo211 } from '../tokens/mappers.js';
import { badGateway, registeredLink } from './handshake.js';
import type { ExchangeModule } from './exchange-module.js';

/**
 * Pushing our objects to a registered partner's Receiver interfaces (docs/OCPI.md "Pull and
 * push"): what the CPO side has (our locations, tariffs, and the sessions and CDRs of the
 * partner's tokens) to an eMSP, what the eMSP side has (our tokens) to a CPO, each object with
 * the method and path its module's Receiver takes, in the shape of the partner's version. One
 * call per object, in order; the outbox of a later issue retries, this answers what happened.
 */

export type Pushable = ExchangeModule;

/** What rendering one of our objects for a partner's Receiver reads: our party, our locations and tariffs. */
export interface PushContext {
  own: PartyIdentity;
  locations: Pick<ObjectStore<StoredLocation>, 'get'>;
  /** a 2.1.1 connector names the tariff of its `tariff_ids` that prices a roamed session now */
  tariffs: Pick<ObjectStore<Tariff>, 'get'>;
}

export interface PushCall {
  id: string;
  method: 'PUT' | 'POST';
  /** below the Receiver's URL ('' for a POST to it) */
  path: string;
  body: unknown;
}

interface PushModule<T extends { last_updated: string }> {
  /** the role of the partner whose Receiver takes the module */
  receiver: PartnerRole;
  store(ctx: OcpiContext): ObjectStore<T>;
  /** which of our objects the partner may have */
  options(version: OcpiVersion, partner: PartyIdentity): ListOptions;
  call(pc: PushContext, o: T, version: OcpiVersion): Promise<PushCall>;
}

const ownPath = (o: { country_code: string; party_id: string }, id: string) =>
  `/${encodeURIComponent(o.country_code)}/${encodeURIComponent(o.party_id)}/${encodeURIComponent(id)}`;

/** A module's calls, its object type hidden: each is only ever given objects of its own store. */
type AnyPushModule = PushModule<{ last_updated: string }>;
function module<T extends { last_updated: string }>(m: PushModule<T>): AnyPushModule {
  return m as unknown as AnyPushModule;
}

const MODULES: Record<Pushable, AnyPushModule> = {
  locations: module({
    receiver: 'EMSP',
    store: (ctx) => ctx.stores.locations,
    // what the Sender of the version would serve (Decisions 32)
    options: (version) => ({ publishedOnly: version === '2.1.1' ? 'public' : 'allowed-to' }),
    call: async (pc, l, version) => ({
      id: l.id,
      method: 'PUT',
      path: ownPath(pc.own, l.id),
      body: version === '2.1.1' ? locationTo211(l, await ourTariffChoice(pc.tariffs, pc.own, [l])) : l,
    }),
  }),
  tariffs: module({
    receiver: 'EMSP',
    store: (ctx) => ctx.stores.tariffs,
    options: () => ({}),
    call: async (pc, t, version) => ({
      id: t.id,
      method: 'PUT',
      path: ownPath(pc.own, t.id),
      body: version === '2.1.1' ? tariffTo211(t) : t,
    }),
  }),
  sessions: module({
    receiver: 'EMSP',
    store: (ctx) => ctx.stores.sessions,
    options: (_v, partner) => ({ audience: partner }),
    call: async (pc, s, version) => {
      const { own } = pc;
      const body =
        version === '2.1.1'
          ? sessionFor211Partner(isSession221(s) ? await session211Of(pc, s) : s)
          : sessionTo221(s, own, own);
      return { id: s.id, method: 'PUT', path: ownPath(own, s.id), body };
    },
  }),
  cdrs: module({
    receiver: 'EMSP',
    store: (ctx) => ctx.stores.cdrs,
    // a credit CDR goes on 2.2.1 links only: 2.1.1 has none (visibilityOf)
    options: (version, partner) =>
      version === '2.1.1' ? { audience: partner, publishedOnly: 'public' } : { audience: partner },
    call: async (pc, c, version) => {
      const { own } = pc;
      const body = version === '2.1.1' ? await cdr211Of(pc.locations, c) : isCdr221(c) ? c : cdrTo221(c, own, own);
      return { id: c.id, method: 'POST', path: '', body };
    },
  }),
  tokens: module({
    receiver: 'CPO',
    store: (ctx) => ctx.stores.tokens,
    options: () => ({}),
    call: async (pc, t, version) => ({
      id: t.uid,
      method: 'PUT',
      path: `${ownPath(pc.own, t.uid)}${version === '2.2.1' ? `?type=${encodeURIComponent(t.type)}` : ''}`,
      body: version === '2.1.1' ? tokenTo211(t) : t,
    }),
  }),
};

/**
 * The call that sends one of our objects of `module` to a partner's Receiver in `version`: its
 * method, its path below the Receiver's URL and its body (the outbox's courier sends the same).
 */
export function pushCall(
  module: Pushable,
  pc: PushContext,
  o: { last_updated: string },
  version: OcpiVersion,
): Promise<PushCall> {
  return MODULES[module].call(pc, o, version);
}

export interface PushResult {
  module: Pushable;
  version: OcpiVersion;
  url: string;
  pushed: number;
  failed: Array<{ id: string; error: string; ocpi_status_code?: number; partner_status_code?: number }>;
}

/** At most this many failures are listed (the rest are counted in `failed_total`). */
const LISTED_FAILURES = 100;

/**
 * Sends every object of ours of `module` the partner may have to its Receiver, one call each, in
 * the order of a snapshot of their keys taken first (an object updated meanwhile is sent as it is
 * then; one created meanwhile waits for the next push). Sessions and CDRs go to the partner's
 * eMSP parties: each of them gets those of its tokens.
 */
export async function push(
  ctx: OcpiContext,
  partner: PartnerRow,
  module: Pushable,
): Promise<PushResult & { failed_total: number }> {
  const spec = MODULES[module];
  const parties: PartyRole[] = [
    { country_code: partner.country_code, party_id: partner.party_id, role: partner.role },
    ...partner.parties,
  ];
  const receivers = parties.filter((p) => p.role === spec.receiver);
  if (receivers.length === 0)
    throw new HttpError(
      409,
      spec.receiver === 'EMSP' ? 'not_an_emsp' : 'not_a_cpo',
      `partner ${partner.id} is ${partner.role === 'CPO' ? 'a CPO' : 'an eMSP'}: only ${spec.receiver === 'CPO' ? 'a CPO' : 'an eMSP'} takes ${module} we push`,
    );
  const link = await registeredLink(ctx, partner);
  const chosen = endpointOf(link.partner.endpoints, module, 'RECEIVER');
  if (!chosen) throw new HttpError(409, `no_${module}_endpoint`, `the partner lists no ${module} Receiver endpoint`);
  const { version } = chosen;
  const base = chosen.url.replace(/\/+$/, '');
  const result = { module, version, url: chosen.url, pushed: 0, failed: [] as PushResult['failed'], failed_total: 0 };
  const store = spec.store(ctx);
  const pushContext: PushContext = {
    own: ctx.ownParty(),
    locations: ctx.stores.locations,
    tariffs: ctx.stores.tariffs,
  };
  // one pass per receiving party, addressed to it: a platform that routes by OCPI-to hands each
  // party what was addressed to it (the sessions and CDRs of its drivers; every token, location
  // and tariff). The rest went to the first party only
  const passes = receivers;
  for (const to of passes) {
    const them = { country_code: to.country_code, party_id: to.party_id };
    for (const key of await store.keys([ctx.ownParty()], spec.options(version, them))) {
      const o = await store.get(key);
      if (!o) continue;
      const call = await spec.call(pushContext, o, version);
      try {
        await ctx.client.data(call.method, `${base}${call.path}`, link.theirToken, version, call.body, {
          route: { from: ctx.own, to: them },
        });
        result.pushed++;
      } catch (err) {
        // a partner that cannot be reached, or that refuses our token, fails every call alike
        if (!(err instanceof PartnerCallError) || err.httpStatus === undefined || err.httpStatus === 401)
          return badGateway(ctx, err);
        result.failed_total++;
        ctx.services.log.warn({ partnerCall: err.toLog(), id: call.id }, 'partner call failed');
        if (result.failed.length < LISTED_FAILURES)
          result.failed.push({
            id: call.id,
            error: err.operatorMessage(),
            ...(err.code ? { ocpi_status_code: err.code } : {}),
            ...(err.partnerStatusCode === undefined ? {} : { partner_status_code: err.partnerStatusCode }),
          });
      }
    }
  }
  return result;
}
