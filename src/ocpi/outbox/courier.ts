import type { Courier, DeliveryOutcome, OutboxEntry, PartnerOutboxDeps } from '../../../actors/partner-outbox/ports.js';
import { partnerProtocol, type PartnerView } from '../../../actors/partner/protocol.js';
import type { Config } from '../../../config/index.js';
import type { Database } from '../../db/database.js';
import type { ActorMessenger } from '../../runtime/types.js';
import {
  endpointOf,
  PartnerCallError,
  PartnerClient,
  partnerHttpOptions,
  type CallTrace,
} from '../client/partner-client.js';
import { CREDIT_SUFFIX } from '../cdrs/schemas-2.2.1.js';
import type { PartyIdentity } from '../core/auth.js';
import type { OcpiVersion } from '../core/envelope.js';
import { pushCall, type Pushable } from '../management/push.js';
import type { StoredLocation } from '../locations/schemas-2.2.1.js';
import { ObjectStore, visibilityOf } from '../store/object-store.js';
import { OutboxStore, precedingObject, settle, type OutboxIntent, type OutboxRow } from './outbox-store.js';
import type { Tariff } from '../tariffs/schemas-2.2.1.js';

/**
 * The courier of the outbox (docs/ROAMING.md "The outbox"): renders a row for the partner's link
 * as it is now (its version, its endpoints, our token for it) and sends it through the one
 * outbound client, with the 2.2.1 headers (X-Request-ID, X-Correlation-ID, OCPI-from/to). An
 * object's row is rendered from the object as it is when it is sent, so what arrives is always
 * its newest state. The answer is classified for the actor: sent, nothing to send, or failed
 * (retryable or not; the partner down or not).
 */

interface Call {
  method: 'PUT' | 'PATCH' | 'POST' | 'DELETE';
  url: string;
  version: OcpiVersion;
  body: unknown;
  /** a CDR's POST: waited for CDR_TIMEOUT_MS at least */
  cdr?: true;
  /** a DELETE: the partner's answer that it does not know the object means it is gone there too */
  removal?: true;
}

/**
 * The least time a CDR's POST is given (PARTNER_TIMEOUT_MS when longer). A POST with no answer
 * in time is sent again, and OCPI gives an eMSP no rule for a CDR it already took: an eMSP that
 * stores the bill slowly (6 s, its commit or a fraud check) was sent the same CDR five times in
 * 40 s within the 5 s of every other call. A CDR is sent once per session, so waiting longer for
 * it costs little.
 */
export const CDR_TIMEOUT_MS = 30_000;

interface Link {
  partner: PartnerView;
  token: string;
}

/**
 * Where our CDRs come from (src/roaming/cdrs.ts): a CDR's row may be sent before the CDR was
 * built (the process that ended the session stopped first), so sending one builds it if needed.
 */
export interface CdrSource {
  /**
   * the CDR of an ended session, built now if it was not; undefined if it cannot be yet. A
   * running session's cost so far is priced onto it (undefined then).
   */
  ensure(sessionId: string): Promise<{ last_updated: string } | undefined>;
  /** why the CDR of `sessionId` could not be built, when that is known (its row's error says it) */
  whyNotBuilt?(sessionId: string): string | undefined;
}

const enc = encodeURIComponent;

/** The most of a partner's `status_message` a row's error quotes. */
const MAX_QUOTED_MESSAGE = 200;

/**
 * A failed answer, classified: a 5xx or an OCPI 3xxx is the partner's trouble, a 4xx or 2xxx ours.
 * Its error quotes the partner's `status_message` (bounded): an operator saw "HTTP 200,
 * status_code 2001" and not the partner's "unknown location".
 */
function answered(httpStatus: number, statusCode: number | undefined, message?: unknown): DeliveryOutcome {
  const said =
    typeof message === 'string' && message.trim() !== ''
      ? `: ${message.length > MAX_QUOTED_MESSAGE ? `${message.slice(0, MAX_QUOTED_MESSAGE - 1)}…` : message}`
      : '';
  const error = `HTTP ${httpStatus}${statusCode === undefined ? '' : `, status_code ${statusCode}`}${said}`;
  if (httpStatus >= 200 && httpStatus < 300) {
    if (statusCode === undefined || (statusCode >= 1000 && statusCode < 2000)) return { outcome: 'sent' };
    // 2xxx: the partner refused the data; 3xxx/4xxx: its side (or a hub's) failed
    return { outcome: 'failed', error, retryable: statusCode >= 3000, partnerDown: false };
  }
  // 401: our token is refused, as while the partner rotates credentials: its link, not this row
  if (httpStatus >= 500 || httpStatus === 401) return { outcome: 'failed', error, retryable: true, partnerDown: true };
  return { outcome: 'failed', error, retryable: httpStatus === 408 || httpStatus === 429, partnerDown: false };
}

/** The object of ours an intent sends whole (a PUT to its module's Receiver), and its id. */
function objectOf(intent: Exclude<OutboxIntent, { kind: 'evse' | 'command-result' }>): {
  module: Pushable;
  id: string;
} {
  switch (intent.kind) {
    case 'location':
      return { module: 'locations', id: intent.location_id };
    case 'session':
      return { module: 'sessions', id: intent.session_id };
    case 'tariff':
      return { module: 'tariffs', id: intent.tariff_id };
    case 'cdr':
      return { module: 'cdrs', id: intent.cdr_id };
    case 'token':
      return { module: 'tokens', id: intent.uid };
  }
}

const SENT: DeliveryOutcome = { outcome: 'sent' };

/**
 * A DELETE answered "unknown object" (HTTP 404, or status_code 2003 as OCPI's client-owned
 * objects answer it): the partner never had the object or removed it already. What the DELETE
 * asks for holds, so it is not sent again.
 */
function unknownThere(httpStatus: number, statusCode: number | undefined): boolean {
  return httpStatus === 404 || statusCode === 2003;
}

const partyKey = (p: PartyIdentity) => `${p.country_code}-${p.party_id}`;

/**
 * Whether the link speaks for eMSP party `to` now: as its own party, or as one of the parties its
 * credentials list. A session or CDR row queued while it did, sent after its parties changed (an
 * operator's retry of a row held while it was unregistered), went to a partner that no longer
 * bills that party's drivers, beside the one that does: two bills for one session.
 */
function speaksFor(partner: PartnerView, to: PartyIdentity): boolean {
  const is = (p: { country_code: string; party_id: string; role: string }) =>
    p.role === 'EMSP' && p.country_code === to.country_code && p.party_id === to.party_id;
  return is(partner) || partner.parties.some(is);
}

/** A party's country_code and party_id alone (a link's party, without its role). */
const identityOf = (p: PartyIdentity): PartyIdentity => ({ country_code: p.country_code, party_id: p.party_id });

/** The link's parties of `role`, its own first; its own party alone when none has it. */
function partiesOf(partner: PartnerView, role: 'CPO' | 'EMSP'): PartyIdentity[] {
  const all = [partner, ...partner.parties].filter((p) => p.role === role);
  return (all.length > 0 ? all : [partner]).map(identityOf);
}

/** The CDR a built CDR credits, when it is a credit CDR (roaming/credit.ts). */
function creditsWhich(built: object | undefined): string | undefined {
  if (!built || !('credit' in built) || built.credit !== true || !('credit_reference_id' in built)) return undefined;
  return String(built.credit_reference_id);
}

/** Not served to partners of `version` (a location as the Sender of the version would serve it, Decisions 32). */
function unpublished(object: object, version: OcpiVersion): boolean {
  const visibility = visibilityOf(object);
  return visibility === 0 || (visibility === 2 && version === '2.1.1');
}

export class OutboxCourier {
  private readonly client: PartnerClient;
  private readonly cdrClient: PartnerClient;
  private readonly stores: Record<Pushable, ObjectStore<{ last_updated: string }>>;
  private readonly locations: ObjectStore<StoredLocation>;
  private readonly tariffs: ObjectStore<Tariff>;
  private readonly own: PartyIdentity;

  constructor(
    config: Config,
    private readonly db: Database,
    private readonly cdrSource?: CdrSource,
  ) {
    this.client = new PartnerClient(partnerHttpOptions(config));
    this.cdrClient = new PartnerClient({
      ...partnerHttpOptions(config),
      timeoutMs: Math.max(config.PARTNER_TIMEOUT_MS, CDR_TIMEOUT_MS),
    });
    this.locations = new ObjectStore<StoredLocation>(db.sql, 'locations');
    this.tariffs = new ObjectStore<Tariff>(db.sql, 'tariffs');
    this.stores = {
      locations: this.locations,
      sessions: new ObjectStore(db.sql, 'sessions'),
      tariffs: this.tariffs,
      tokens: new ObjectStore(db.sql, 'tokens'),
      cdrs: new ObjectStore(db.sql, 'cdrs'),
    };
    this.own = { country_code: config.OCPI_COUNTRY_CODE, party_id: config.OCPI_PARTY_ID };
  }

  /** The partner's link as its actor holds it, or why there is none. */
  async link(partnerKey: string, actors: ActorMessenger): Promise<Link | { unavailable: string }> {
    const reply = await actors.ref(partnerProtocol, partnerKey).ask({ op: 'get' });
    if (!reply.ok) return { unavailable: `no partner ${partnerKey}` };
    if (reply.partner.status !== 'registered' || !reply.their_token)
      return { unavailable: `partner ${partnerKey} is not registered` };
    return { partner: reply.partner, token: reply.their_token };
  }

  /**
   * The call a row makes on this link, or why it has nothing to send: a whole object as the
   * operator's push sends it (management/push.ts `pushCall`), an EVSE's status, a command result.
   */
  async render(
    link: Link,
    intent: OutboxIntent,
    built?: { last_updated: string },
  ): Promise<Call | { skip: string } | { retry: string }> {
    if (intent.kind === 'command-result')
      return { method: 'POST', url: intent.url, version: intent.version, body: intent.body };
    if (intent.kind === 'evse') return this.renderEvse(link, intent);
    const { module, id } = objectOf(intent);
    if (intent.kind === 'cdr' && this.cdrSource && !built) {
      const why = this.cdrSource.whyNotBuilt?.(id);
      return { retry: `CDR ${id} is not built yet${why ? `: ${why}` : ''}` };
    }
    const endpoint = endpointOf(link.partner.endpoints, module, 'RECEIVER');
    if (!endpoint) return { skip: `the partner lists no ${module} Receiver` };
    const object = built ?? (await this.stores[module].get({ ...this.own, id }));
    // a tariff of ours that is gone was deleted by the operator: mod_tariffs sends its DELETE
    if (!object && intent.kind === 'tariff') {
      const path = [this.own.country_code, this.own.party_id, id].map(enc).join('/');
      const url = `${endpoint.url.replace(/\/+$/, '')}/${path}`;
      return { method: 'DELETE', url, version: endpoint.version, body: undefined, removal: true };
    }
    if (!object) return { skip: `${module} ${id} is gone` };
    if (unpublished(object, endpoint.version))
      return {
        skip:
          module === 'cdrs'
            ? `CDR ${id} is a credit CDR, which ${endpoint.version} does not have`
            : `${module} ${id} is not published`,
      };
    const pc = { own: this.own, locations: this.locations, tariffs: this.tariffs };
    const call = await pushCall(module, pc, object, endpoint.version);
    const url = `${endpoint.url.replace(/\/+$/, '')}${call.path}`;
    return {
      method: call.method,
      url,
      version: endpoint.version,
      body: call.body,
      ...(intent.kind === 'cdr' ? { cdr: true as const } : {}),
    };
  }

  /**
   * What is made before a row is rendered: a CDR is built (once), whether or not the partner takes
   * it, and a session is priced so that it goes with the cost of its own energy: an ended one its
   * final cost (its CDR built), a running one its cost so far. Either may change the object and
   * queue it again (cdrs.ts `ensure`). Answers the CDR of a `cdr` row. Before, a running session
   * went with its new energy and the cost of the reading before, the cost following in a second PUT.
   */
  private async prepare(intent: OutboxIntent): Promise<{ last_updated: string } | undefined> {
    if (!this.cdrSource || (intent.kind !== 'cdr' && intent.kind !== 'session')) return undefined;
    const { id } = objectOf(intent);
    // a CDR of no session of ours (a credit CDR, roaming/credit.ts) is sent as it was stored
    if (intent.kind === 'cdr')
      return (await this.cdrSource.ensure(id)) ?? (await this.stores.cdrs.get({ ...this.own, id }));
    await this.cdrSource.ensure(id);
    return undefined;
  }

  /** PATCH of one EVSE's status to the eMSP's locations Receiver. */
  private async renderEvse(
    link: Link,
    intent: Extract<OutboxIntent, { kind: 'evse' }>,
  ): Promise<Call | { skip: string }> {
    const endpoint = endpointOf(link.partner.endpoints, 'locations', 'RECEIVER');
    if (!endpoint) return { skip: 'the partner lists no locations Receiver' };
    const location = await this.locations.get({ ...this.own, id: intent.location_id });
    if (!location) return { skip: `location ${intent.location_id} is gone` };
    if (unpublished(location, endpoint.version)) return { skip: `location ${location.id} is not published` };
    const evse = location.evses?.find((e) => e.uid === intent.evse_uid);
    if (!evse) return { skip: `location ${location.id} has no EVSE ${intent.evse_uid}` };
    const path = [this.own.country_code, this.own.party_id, intent.location_id, evse.uid].map(enc).join('/');
    return {
      method: 'PATCH',
      url: `${endpoint.url.replace(/\/+$/, '')}/${path}`,
      version: endpoint.version,
      body: { status: evse.status, last_updated: evse.last_updated },
    };
  }

  async send(
    link: Link,
    call: Call,
    to: PartyIdentity,
    sent?: (location: string | undefined) => Promise<void>,
  ): Promise<DeliveryOutcome> {
    const trace: CallTrace = { route: { from: this.own, to } };
    try {
      const client = call.cdr ? this.cdrClient : this.client;
      const { status, envelope, headers } = await client.call(
        call.method,
        call.url,
        link.token,
        call.version,
        call.body,
        trace,
      );
      const outcome =
        call.removal && unknownThere(status, envelope.status_code)
          ? SENT
          : answered(status, envelope.status_code, envelope.status_message);
      const location = headers.location;
      if (outcome.outcome === 'sent') await sent?.(typeof location === 'string' ? location.slice(0, 2048) : undefined);
      return outcome;
    } catch (err) {
      if (!(err instanceof PartnerCallError)) throw err;
      // an answer that is not an OCPI envelope: its HTTP status decides, but a 2xx without one
      // (a proxy's page, an empty or cut body) says nothing of the data: sent again, as after a 5xx
      if (err.httpStatus !== undefined) {
        if (call.removal && unknownThere(err.httpStatus, undefined)) return SENT;
        const outcome = answered(err.httpStatus >= 200 && err.httpStatus < 300 ? 502 : err.httpStatus, undefined);
        return outcome.outcome === 'failed' ? { ...outcome, error: `HTTP ${err.httpStatus}: ${err.reason}` } : outcome;
      }
      return { outcome: 'failed', error: err.reason, retryable: true, partnerDown: true };
    }
  }

  /**
   * A rendered row to its party: the eMSP of a session or CDR, the link's party of its role for a
   * command result, and every party of the module's role otherwise (a token to each CPO party of
   * a platform, a location or tariff to each eMSP party), each addressed to it (`OCPI-to-*`): a
   * platform that routes by the header hands each party only what was addressed to it. The row
   * is sent once all of them took it; a failure is retried for all (the PUTs and PATCHes are
   * idempotent).
   */
  private async sendRow(link: Link, partnerKey: string, intent: OutboxIntent, call: Call): Promise<DeliveryOutcome> {
    if (intent.kind === 'cdr')
      return this.send(link, call, intent.to, (at) => this.delivered(intent.cdr_id, partnerKey, at));
    if (intent.kind === 'session') return this.send(link, call, intent.to);
    if (intent.kind === 'command-result') return this.send(link, call, identityOf(link.partner));
    let outcome: DeliveryOutcome = SENT;
    const parties = partiesOf(link.partner, intent.kind === 'token' ? 'CPO' : 'EMSP');
    for (const to of parties) {
      outcome = await this.send(link, call, to);
      // the row's error names the party that failed when the link has several
      if (outcome.outcome === 'failed' && parties.length > 1)
        return { ...outcome, error: `${partyKey(to)}: ${outcome.error}` };
      if (outcome.outcome !== 'sent') return outcome;
    }
    return outcome;
  }

  /** Whether the partner took the CDR already (`delivered`). */
  private async wasDelivered(cdrId: string, partnerKey: string): Promise<boolean> {
    const rows = await this.db.sql.query(
      'SELECT 1 AS taken FROM roaming_cdr_delivery WHERE cdr_id = ? AND partner_key = ?',
      [cdrId, partnerKey],
    );
    return rows.length > 0;
  }

  /**
   * Why a credit CDR (roaming/credit.ts) is not sent yet: the CDR it credits has not reached the
   * partner and its row is still there, pending or a dead letter. The eMSP would get the credit
   * of a CDR it does not have, and that CDR after it, once sent again. The credit is tried again
   * after a back-off; it goes once that row is delivered, or alone once the operator discards it.
   */
  private async creditWaits(built: object | undefined, partnerKey: string): Promise<string | undefined> {
    const credited = creditsWhich(built);
    if (credited === undefined) return undefined;
    const [row] = await this.db.sql.query(
      `SELECT status FROM ocpi_outbox WHERE partner_key = ? AND object_key = ? ORDER BY status DESC LIMIT 1`,
      [partnerKey, `cdrs/${credited}`],
    );
    if (!row) return undefined;
    return row.status === 'dead'
      ? `the credit waits for CDR ${credited}, a dead letter: send it again, or discard it and the credit goes alone`
      : `the credit waits for CDR ${credited} to reach the partner first`;
  }

  /**
   * Why one of our CDRs is not sent: its credit reached the partner before it (the CDR was a dead
   * letter the operator discarded, then queued again by a registration's catch-up). The partner
   * holds the credit; the CDR after it would be a charge already taken back, in the wrong order.
   */
  private async creditedFirst(
    built: object | undefined,
    cdrId: string,
    partnerKey: string,
  ): Promise<string | undefined> {
    if (!built || creditsWhich(built) !== undefined) return undefined;
    const credit = `${cdrId}${CREDIT_SUFFIX}`;
    return (await this.wasDelivered(credit, partnerKey))
      ? `CDR ${cdrId} was credited (${credit}) before it reached the partner: not sent after its credit`
      : undefined;
  }

  /** Where the eMSP keeps a CDR we sent it (the Location of its answer), for the operator. */
  private async delivered(cdrId: string, partnerKey: string, location: string | undefined): Promise<void> {
    await this.db.sql.run(
      `INSERT INTO roaming_cdr_delivery (cdr_id, partner_key, location, delivered_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (cdr_id, partner_key) DO UPDATE SET location = excluded.location, delivered_at = excluded.delivered_at`,
      [cdrId, partnerKey, location ?? null, Date.now()],
    );
  }

  /** A courier for one partner's link (the actor's port), or why nothing can be sent. */
  async forPartner(
    partnerKey: string,
    actors: ActorMessenger,
    rows: OutboxStore,
  ): Promise<Courier | { unavailable: string }> {
    const link = await this.link(partnerKey, actors);
    if ('unavailable' in link) return link;
    return {
      deliver: async (entry: OutboxEntry): Promise<DeliveryOutcome> => {
        const first = await rows.get(entry.id);
        if (!first || first.status !== 'pending')
          return { outcome: 'skipped', reason: 'the row was settled meanwhile' };
        const built = await this.prepare(first.intent);
        // read again after `prepare` and before the object: what is sent then holds every change
        // up to this version (writers change an object and queue it in one transaction), and the
        // row is settled at it. Settled at the version first read, a session that pricing queued
        // again went twice with the same content.
        const row = await rows.get(entry.id);
        if (!row || row.status !== 'pending') return { outcome: 'skipped', reason: 'the row was settled meanwhile' };
        // a CDR is sent once (mod_cdrs: it cannot be changed or replaced once sent). Its delivery is
        // on record as soon as the partner took it; a row still pending then lost its settle (the
        // database went away between the two) and would POST it again: a second bill
        if (row.intent.kind === 'cdr' && (await this.wasDelivered(row.intent.cdr_id, partnerKey)))
          return { outcome: 'skipped', reason: `CDR ${row.intent.cdr_id} was taken by the partner before` };
        if ((row.intent.kind === 'cdr' || row.intent.kind === 'session') && !speaksFor(link.partner, row.intent.to))
          return { outcome: 'skipped', reason: `the link no longer speaks for ${partyKey(row.intent.to)}` };
        if (row.intent.kind === 'cdr') {
          const skip = await this.creditedFirst(built, row.intent.cdr_id, partnerKey);
          if (skip) return { outcome: 'skipped', reason: skip };
        }
        const call = await this.render(link, row.intent, built);
        if ('skip' in call) return { outcome: 'skipped', reason: call.skip };
        if ('retry' in call)
          return { outcome: 'failed', error: call.retry, retryable: true, partnerDown: false, called: false };
        // after the render: a credit a 2.1.1 link is not sent is settled at once, not held
        const waits = await this.creditWaits(built, partnerKey);
        if (waits) return { outcome: 'failed', error: waits, retryable: true, partnerDown: false, called: false };
        const sent = await this.sendRow(link, partnerKey, row.intent, call);
        return sent.outcome === 'sent' ? { outcome: 'sent', version: row.version } : sent;
      },
    };
  }
}

/** The partner-outbox actor's ports, on the outbox table and the courier. */
export function outboxPorts(config: Config, db: Database, cdrSource?: CdrSource): PartnerOutboxDeps {
  const rows = new OutboxStore(db);
  const courier = new OutboxCourier(config, db, cdrSource);
  const max = config.OUTBOX_RETRY_MAX_MS;
  return {
    due: async (partnerKey, now, limit) => (await rows.due(partnerKey, now, limit)).map(entryOf),
    courier: (partnerKey, actors) => courier.forPartner(partnerKey, actors, rows),
    // a row held by a change coalescing into it is passed over, not waited for (`sentRow`)
    delivered: (entry) => (tx) => settle.delivered(tx, entry.id, entry.version, entry.kind !== 'cdr'),
    failed: (entry, failure) => (tx) => settle.failed(tx, entry.id, entry.version, failure, entry.kind !== 'cdr'),
    policy: {
      batch: 20,
      concurrency: 4,
      maxAttempts: config.OUTBOX_MAX_ATTEMPTS,
      // doubled per attempt, +-20% so that rows failed together do not come back together
      backoffMs: (attempts) =>
        Math.round(Math.min(max, config.OUTBOX_RETRY_BASE_MS * 2 ** (attempts - 1)) * (0.8 + Math.random() * 0.4)),
      breakerThreshold: config.OUTBOX_BREAKER_FAILURES,
      breakerCooldownMs: config.OUTBOX_BREAKER_COOLDOWN_MS,
      breakerMaxCooldownMs: max,
    },
  };
}

function entryOf(row: OutboxRow): OutboxEntry {
  const follows = precedingObject(row.intent.kind, row.object_key);
  return {
    id: row.id,
    version: row.version,
    attempts: row.attempts,
    object_key: row.object_key,
    kind: row.intent.kind,
    ...(follows ? { follows } : {}),
  };
}
