import type {
  EvseLink,
  OcpiEvseStatus,
  RoamingPort,
  RoamingSession,
  RoamingToken,
} from '../../actors/charge-point/ports.js';
import type { Database } from '../db/database.js';
import type { Session } from '../ocpi/sessions/schemas-2.2.1.js';
import type { StoredSession } from '../ocpi/sessions/stored.js';
import type { Token } from '../ocpi/tokens/schemas-2.2.1.js';
import type { SqlRunner } from '../db/sql.js';
import { lockingStep } from '../db/merged-write.js';
import type { StoredLocation } from '../ocpi/locations/schemas-2.2.1.js';
import { enqueue } from '../ocpi/outbox/outbox-store.js';
import { ObjectStore } from '../ocpi/store/object-store.js';
import type { OutboxHandle } from '../ocpi/module.js';
import type { ActorHost } from '../platform/services.js';
import { RealTimeAuthorizer } from './authorize.js';
import { backfillSamples, snapshotTerms, writeSample, writeSigned, writeState, type CdrBuilder } from './cdrs.js';
import { EvseLinkStore } from './evse-links.js';
import { TOKEN_COUNTS, TOKEN_LINK_AT } from '../ocpi/tokens/counting.js';
import { contractKey, tokenMatchOf } from './token-types.js';

/**
 * The roaming bridge as the charge-point actor's port (docs/ROAMING.md): its EVSE links, and the
 * status of a linked EVSE written into our OCPI location and queued for every registered eMSP,
 * both on the connection of the charger's turn, so they commit with it.
 */
export function roamingPort(host: ActorHost, outbox: OutboxHandle, cdrs: CdrBuilder): RoamingPort {
  const links = new EvseLinkStore(host.db);
  const authorizer = new RealTimeAuthorizer(host.config, host.db);
  const own = { country_code: host.config.OCPI_COUNTRY_CODE, party_id: host.config.OCPI_PARTY_ID };
  // the chargers linked when this process started: only they may have links their actor never
  // read (a connect of any other skips the query; links made later reach the actor as a message)
  let linkedAtStart: Set<string> | undefined;
  const loading = links.all().then(
    (all) => {
      linkedAtStart = new Set(all.keys());
    },
    (err: unknown) => host.log.warn({ err }, 'could not read the EVSE links; every connect reads its own'),
  );
  void loading;
  return {
    mayHaveUnreadLinks: (chargePointId) => linkedAtStart?.has(chargePointId) ?? true,
    links: async (chargePointId): Promise<EvseLink[]> =>
      (await links.forChargePoint(chargePointId)).map(({ evse_number, location_id, evse_uid }) => ({
        evse_number,
        location_id,
        evse_uid,
      })),
    // it locks the location's row, which every charger of the location writes (`lockingStep`)
    evseStatus: (link: EvseLink, status: OcpiEvseStatus) =>
      lockingStep(`locations/${own.country_code}/${own.party_id}/${link.location_id}`, async (tx: SqlRunner) => {
        await writeEvseStatus(tx, own, link, status);
      }),
    tokenOf: (idTag, idTagType) => tokenOf(host.db, own, idTag, idTagType),
    session: (session: RoamingSession) => (tx: SqlRunner) => writeSession(tx, own, host.config.OCPI_CURRENCY, session),
    sample: (sessionId, at, wh, kind) => (tx: SqlRunner) => writeSample(tx, sessionId, at, wh, kind),
    state: (sessionId, at, state) => (tx: SqlRunner) => writeState(tx, sessionId, at, state),
    signed: (sessionId, reading) => (tx: SqlRunner) => writeSigned(tx, sessionId, reading),
    appliedSeq: async (sessionId) => {
      const [row] = await host.db.sql.query('SELECT seq_max FROM csms_session WHERE id = ?', [sessionId]);
      return row?.seq_max === null || row?.seq_max === undefined ? null : Number(row.seq_max);
    },
    backfill: (sessionId) => (tx: SqlRunner) => backfillSamples(tx, sessionId),
    sessionWritten: (sessionId, priced) => {
      // what the pricing queued (the session with its cost, the CDR) is sent now
      void cdrs.refresh(sessionId).then(() => {
        outbox.kick();
        priced();
      });
    },
    authorize: (token, where, actors) => authorizer.authorize(token, where, actors),
    unknownIdTags: host.config.OCPP_UNKNOWN_ID_TAGS,
    sessionPushMs: host.config.ROAMING_SESSION_PUSH_MS,
    queued: () => outbox.kick(),
  };
}

/**
 * The token rows that count (ours, or an eMSP's whose link holds), as `tokenOf` reads them: our
 * party's country code and party id are its first two parameters.
 */
const TOKEN_ROWS = `SELECT data, updated_at, ${TOKEN_LINK_AT} AS link_at FROM ocpi_object o WHERE o.module = 'tokens'
  AND ${TOKEN_COUNTS}`;

/** At most this many tokens of one uid are weighed (eMSPs holding the same uid are few). */
const TOKENS_OF_A_UID = 16;

/**
 * The OCPI token of an id tag: found by uid alone (a charger names no party), whatever the case of
 * its letters: the id tag and the uid are both CiStrings (OCPP 1.6 IdToken, 2.0.1 IdTokenType,
 * OCPI Token.uid), and one reader writes `04a2...` where the eMSP issued `04A2...`. When several
 * are held (docs/ROAMING.md, Decisions 12): a valid token before one that is not, then the one
 * stored first, then the one of the tag's exact case. Before, the token updated last counted, and
 * the one of the tag's exact case before all: any eMSP that pushed a token of another eMSP's
 * card's uid (or of its uid in lower case, which readers send) took that card's sessions and CDRs.
 * The tokens of an eMSP whose link ended do not count. The index is m0022's.
 */
async function tokenOf(
  db: Database,
  own: { country_code: string; party_id: string },
  idTag: string,
  idTagType?: string,
): Promise<RoamingToken | undefined> {
  const match = tokenMatchOf(idTagType);
  // an eMAID is a contract id: by uid only when no token has it (an eMSP that made it the uid)
  const ofContract = match.contract ? await tokensOfContract(db, own, idTag) : [];
  const rows =
    ofContract.length > 0
      ? ofContract
      : await db.sql.query(
          `${TOKEN_ROWS} AND lower(o.object_id) = lower(?)
           ORDER BY o.created_ms, CASE WHEN o.object_id = ? THEN 0 ELSE 1 END, o.country_code, o.party_id
           LIMIT ${TOKENS_OF_A_UID}`,
          [own.country_code, own.party_id, idTag, idTag],
        );
  // written by the tokens store from a checked 2.2.1 Token (m0006 moved older rows to that shape);
  // a card is an RFID token, a PIN an OTHER one (token-types.ts); a contract id is any token's
  const types = ofContract.length > 0 ? undefined : match.types;
  const held = rows
    .map((row) => ({ row, token: JSON.parse(String(row.data)) as Token }))
    .filter((h) => types === undefined || types.has(h.token.type));
  // in the query's order: the first stored of the valid ones, else the first stored
  const chosen = held.find((h) => h.token.valid) ?? held[0];
  if (!chosen) return undefined;
  const t = chosen.token;
  return {
    country_code: t.country_code,
    party_id: t.party_id,
    uid: t.uid,
    type: t.type,
    contract_id: t.contract_id,
    valid: t.valid,
    whitelist: t.whitelist,
    ...(t.group_id === undefined ? {} : { group_id: t.group_id }),
    own: t.country_code === own.country_code && t.party_id === own.party_id,
    updated_at: Number(chosen.row.updated_at),
    ...(chosen.row.link_at === null || chosen.row.link_at === undefined ? {} : { link_at: Number(chosen.row.link_at) }),
  };
}

/**
 * The tokens whose `contract_id` is the eMAID `emaid` (separators and letter case aside), in the
 * order `tokenOf` weighs them. Not indexed: a Plug & Charge authorization reads the tokens once.
 */
async function tokensOfContract(
  db: Database,
  own: { country_code: string; party_id: string },
  emaid: string,
): ReturnType<Database['sql']['query']> {
  const contract =
    db.sql.dialect === 'postgresql' ? "(o.data::jsonb ->> 'contract_id')" : "json_extract(o.data, '$.contract_id')";
  return db.sql.query(
    `${TOKEN_ROWS} AND upper(replace(replace(${contract}, '-', ''), '*', '')) = ?
     ORDER BY o.created_ms, o.country_code, o.party_id
     LIMIT ${TOKENS_OF_A_UID}`,
    [own.country_code, own.party_id, contractKey(emaid)],
  );
}

const TOKEN_TYPES = ['AD_HOC_USER', 'APP_USER', 'OTHER', 'RFID'] as const;

/**
 * The energy a write of a roamed session says. A running session its pricing gave a cost keeps the
 * energy of that cost: the pricing after this write (cdrs.ts `runningCost`) moves both together.
 * Written here with the cost of the reading before, a session PUT sent between the two carried
 * the energy of one reading and the cost of another. Never lower than what the session said (its
 * pricing may have seen a later reading); without a cost (not priced yet, or not priceable), the
 * meter's energy.
 */
function kwhOf(priced: Session | undefined, status: string, meterKwh: number): number {
  if (!priced || status !== 'ACTIVE') return meterKwh;
  return priced.total_cost ? priced.kwh : Math.max(meterKwh, priced.kwh);
}

/**
 * Our OCPI session of a roamed transaction, stored for the token's eMSP, and its PUT queued. Its
 * cost and charging periods (written by the pricing, src/roaming/cdrs.ts) are kept. The first
 * write keeps the tariff and the place its CDR will be built from (`snapshotTerms`): once per
 * session, never on the pushes that follow. An ended one queues its CDR too: built when it is
 * sent, if nothing built it before.
 */
async function writeSession(
  tx: SqlRunner,
  own: { country_code: string; party_id: string },
  currency: string,
  s: RoamingSession,
): Promise<void> {
  const store = new ObjectStore<StoredSession>(tx, 'sessions');
  const emsp = { country_code: s.token.country_code, party_id: s.token.party_id };
  const before = await store.get({ ...own, id: s.id });
  const priced = before && 'start_date_time' in before ? before : undefined;
  // the tariff and place its CDR will be built from, kept with the session's first write
  const terms = before ? undefined : await snapshotTerms(tx, own, s);
  const kwh = s.kwh ?? (await energyKwhOf(tx, s.id));
  const endedAt = s.ended_at === null ? null : await stoppedAtOf(tx, s.id, s.ended_at);
  const session: Session = {
    ...own,
    id: s.id,
    start_date_time: new Date(s.started_at).toISOString(),
    ...(endedAt === null ? {} : { end_date_time: new Date(endedAt).toISOString() }),
    kwh: kwhOf(priced, s.status, Math.round(kwh * 1000) / 1000),
    cdr_token: { ...s.token, type: TOKEN_TYPES.find((t) => t === s.token.type) ?? 'OTHER' },
    auth_method: s.auth_method,
    ...(s.authorization_reference ? { authorization_reference: s.authorization_reference } : {}),
    location_id: s.location_id,
    evse_uid: s.evse_uid,
    connector_id: s.connector_id,
    // the currency of its tariff, which its costs are in (OCPI_CURRENCY for a session without one);
    // kept once the session has one (the pricing sets it, ensure and runningCost in cdrs.ts)
    currency: priced?.currency ?? terms?.tariff?.currency ?? currency,
    ...(priced?.charging_periods ? { charging_periods: priced.charging_periods } : {}),
    ...(priced?.total_cost ? { total_cost: priced.total_cost } : {}),
    status: s.status,
    last_updated: new Date().toISOString(),
  };
  await store.put({ ...own, id: s.id }, session, { audience: emsp });
  await enqueue(tx, { party: { ...emsp, role: 'EMSP' } }, { kind: 'session', session_id: s.id, to: emsp });
  if (s.status === 'COMPLETED')
    await enqueue(tx, { party: { ...emsp, role: 'EMSP' } }, { kind: 'cdr', cdr_id: s.id, to: emsp });
}

/**
 * When a roamed session ended: when its CSMS session stopped, written in the same turn, when that
 * is later (its end's reading came after a reading stamped ahead of the end: the CSMS session
 * stops at that reading's time, and the partner's session and CDR ended 9 s before it, lasting 0 s).
 */
async function stoppedAtOf(tx: SqlRunner, sessionId: string, endedAt: number): Promise<number> {
  const [row] = await tx.query('SELECT stopped_at FROM csms_session WHERE id = ?', [sessionId]);
  const stopped = Number(row?.stopped_at ?? 0);
  return Number.isFinite(stopped) && stopped > endedAt ? stopped : endedAt;
}

/** The energy of a CSMS session as its row holds it, in kWh (0 when it has none). */
async function energyKwhOf(tx: SqlRunner, sessionId: string): Promise<number> {
  const [row] = await tx.query('SELECT energy_wh FROM csms_session WHERE id = ?', [sessionId]);
  const wh = Number(row?.energy_wh ?? 0);
  return Number.isFinite(wh) ? Math.max(0, wh) / 1000 : 0;
}

/**
 * Sets the status of a linked EVSE in our location, and queues its push when it changed (true
 * then). The EVSE's and the location's `last_updated` move to now (a location's is the latest of
 * its parts).
 */
export async function writeEvseStatus(
  tx: SqlRunner,
  own: { country_code: string; party_id: string },
  link: Pick<EvseLink, 'location_id' | 'evse_uid'>,
  status: OcpiEvseStatus,
): Promise<boolean> {
  const store = new ObjectStore<StoredLocation>(tx, 'locations');
  const key = { ...own, id: link.location_id };
  const current = await store.get(key);
  const evse = current?.evses?.find((e) => e.uid === link.evse_uid);
  // the link outlived its location or EVSE (the operator replaced the location without it)
  if (!current || !evse || evse.status === status) return false;
  const now = new Date().toISOString();
  await store.update(key, (l) => ({
    ...l,
    last_updated: now,
    evses: (l.evses ?? []).map((e) => (e.uid === link.evse_uid ? { ...e, status, last_updated: now } : e)),
  }));
  await enqueue(tx, { role: 'EMSP' }, { kind: 'evse', location_id: link.location_id, evse_uid: link.evse_uid });
  return true;
}
