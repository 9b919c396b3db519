import type { ProtocolName } from '../../src/ocpp/domain.js';
import { parseInstant } from '../../src/rfc3339.js';
import type { ActorContext } from '../../src/runtime/types.js';
import type { ChargePointActorDeps, RoamingPort, RoamingToken } from './ports.js';
import type { ChargePointState } from './protocol.js';

/**
 * Whether an id tag may charge (docs/ROAMING.md "Tokens"): OCPI tokens pushed by eMSP partners,
 * and our own, answer the charger's Authorize and the token of a transaction. The decision and
 * its reason are logged; an answer is remembered for a few minutes, so the StartTransaction that
 * follows an Authorize does not ask the eMSP again, and carries its authorization_reference; a
 * decision from the tokens we hold is made again each time.
 */

type Ctx = ActorContext<ChargePointState>;
type Recent = NonNullable<ChargePointState['recent_auths']>[number];

export interface AuthDecision {
  /** the word of the charger's version (1.6 idTagInfo / 2.0.1 idTokenInfo status) */
  status: string;
  reason: string;
  /** real-time authorization's reference, for the session and CDR */
  authorization_reference?: string;
  /** decided by the eMSP in real time (the session's auth_method AUTH_REQUEST) */
  real_time?: boolean;
  /** the token's group (OCPI group_id), told to the charger with the answer */
  group_id?: string;
  /**
   * The token's whitelist asks the eMSP at every use (OCPI WhitelistType NEVER, and
   * ALLOWED_OFFLINE while the eMSP answers): the answer counts for the start that follows its
   * Authorize only, and the charger's cache may not keep it for a later use. Also set on an
   * answer that lets the token in at some of the charger's EVSEs only (`atWhere`): its cache is
   * the whole charger's.
   */
  each_use?: boolean;
  /**
   * The eMSP allowed the token at this location and these EVSEs only (AuthorizationInfo.location;
   * no EVSE named: all of the location). Held against the EVSE of each use (`atWhere`).
   */
  allowed_at?: { location_id: string; evse_uids: string[] };
}

const REMEMBER_MS = 5 * 60_000;
/**
 * a start we sent counts for the transaction that follows it this long (outbound-queue.ts keeps
 * it as long): OCPI mod_commands StartSession, "the CPO SHALL NOT do a realtime authorization at
 * the eMSP for this Token at the given EVSE/Charge Point within 15 minutes after having received
 * this StartSession"
 */
const REMOTE_START_MS = 15 * 60_000;

/**
 * The start command we sent lately that a transaction of `idTag` at `evse` follows (2.0.1: by its
 * remoteStartId, with the token it sent), if any: within REMOTE_START_MS, at the EVSE it named
 * (or any EVSE when it named none, or when the charger does not say where: a 1.6 Authorize), and
 * not used by a transaction yet (`used_by`, transactions.ts). A command starts one transaction:
 * the start `startKey` names (its dedupe key) may be the one that used it, sent again.
 */
export function startFor(
  s: ChargePointState,
  idTag: string,
  evse: number | null,
  remoteStartId: number | null,
  startKey?: string,
  /** 2.0.1 idToken type: our RequestStartTransaction names Central, a card never follows it without its remoteStartId */
  idTagType?: string,
): NonNullable<ChargePointState['recent_starts']>[number] | undefined {
  if (remoteStartId === null && idTagType !== undefined && idTagType !== 'Central') return undefined;
  const now = Date.now();
  const starts = (s.recent_starts ?? []).filter(
    (r) => now - r.at < REMOTE_START_MS && (r.used_by === undefined || r.used_by === startKey),
  );
  // the command's remoteStartId with another token (a card the charger took instead) is not the
  // command's start: that token decides, and is billed. Exactly the token sent: one that differs
  // in case only may be another eMSP's card (a uid of the same case counts first, bridge.ts tokenOf)
  if (remoteStartId !== null) return starts.find((r) => r.remote_start_id === remoteStartId && r.id_tag === idTag);
  const here = [...starts].reverse().filter((r) => evse === null || r.evse_id === null || r.evse_id === evse);
  // an idTag is case-insensitive (1.6 CiString20, 2.0.1 IdToken): a charger whose reader or
  // firmware changes the case of the tag it was sent still follows the start, the tag of the same
  // case first
  const folded = idTag.toLowerCase();
  return here.find((r) => r.id_tag === idTag) ?? here.find((r) => r.id_tag.toLowerCase() === folded);
}

/**
 * The recent starts once the remote start `used` (if any) opened the transaction of start
 * `dedupeKey`: a command starts one transaction, and a later one with the same token is not the
 * command's (`startFor`). An earlier start of the same token at the same EVSE that nothing used
 * is used up with it: the EVSE runs one transaction, which both asked for (two START_SESSIONs
 * before the driver plugged in); left waiting, it would let a later start of that token in as
 * its own, unasked.
 */
export function usedUp(
  s: ChargePointState,
  used: NonNullable<ChargePointState['recent_starts']>[number] | undefined,
  dedupeKey: string,
): ChargePointState['recent_starts'] {
  if (!used) return s.recent_starts;
  const alsoUsed = (r: NonNullable<ChargePointState['recent_starts']>[number]): boolean =>
    r.used_by === undefined && r.id_tag === used.id_tag && r.evse_id === used.evse_id && r.at <= used.at;
  return s.recent_starts?.map((r) => (r === used || alsoUsed(r) ? { ...r, used_by: dedupeKey } : r));
}

const MAX_REMEMBERED = 20;

type HeldReservation = ChargePointState['reservations'][number];

/**
 * A partner's reservation (a RESERVE_NOW: it carries the token the eMSP authorized) that lets
 * `idTag` in at `evse` without asking the eMSP, if any (OCPI mod_commands ReserveNow): a token of
 * type APP_USER or AD_HOC_USER while the reservation holds (on 2.0.1 only as an idToken of type
 * Central: a card of the same uid is another's), any other (an RFID card) within REMOTE_START_MS
 * of the charger's accepting it; the one a start names, else one at the EVSE it
 * reserved (any, when it reserved the charger, or when the charger does not say where). The
 * start that uses it is that eMSP's (roaming.ts `roamingOf`).
 */
export function reservationFor(
  s: ChargePointState,
  idTag: string,
  evse: number | null,
  /** the reservation the start names (1.6 StartTransaction, 2.0.1 TransactionEvent reservationId) */
  reservationId: number | null = null,
  /** 2.0.1 idToken type: an app user is never a card (our ReserveNow names it Central) */
  idTagType?: string,
): HeldReservation | undefined {
  const now = Date.now();
  return s.reservations.find((r) => {
    const type = r.authorization?.token.type;
    if (type === undefined || r.id_tag !== idTag || !(parseInstant(r.expiry_date) > now)) return false;
    const app = type === 'APP_USER' || type === 'AD_HOC_USER';
    if (app && idTagType !== undefined && idTagType !== 'Central') return false;
    const elsewhere = evse !== null && r.evse_id !== null && r.evse_id !== 0 && r.evse_id !== evse;
    if (reservationId !== null ? r.reservation_id !== reservationId : elsewhere) return false;
    return app || now - (r.reserved_at ?? 0) < REMOTE_START_MS;
  });
}

/**
 * A token its eMSP has made not valid: a reservation made for it earlier lets it in no more (the
 * eMSP authorized it when it reserved; its token update since is its later word), and it is
 * decided as any token (`decideFor`). A remote start is sent at once, and its command is the word.
 */
function withdrawn(token: RoamingToken | undefined): boolean {
  return token !== undefined && !token.valid;
}

/**
 * A token its eMSP has made not valid after we sent a remote start of it: the start lets it in no
 * more (a token not valid when the command came is the command's word: an app user's, which the
 * eMSP never pushes valid). A START_SESSION that timed out and a block that followed let the card
 * charge on the command's EVSE for 15 minutes.
 */
function withdrawnSince(token: RoamingToken | undefined, sentAt: number): boolean {
  return withdrawn(token) && token?.updated_at !== undefined && token.updated_at > sentAt;
}

/** OCPI AllowedType -> the charger's status word. */
function statusOfAllowed(allowed: string, protocol: ProtocolName): string {
  switch (allowed) {
    case 'ALLOWED':
      return 'Accepted';
    case 'BLOCKED':
      return 'Blocked';
    case 'EXPIRED':
      return 'Expired';
    case 'NO_CREDIT':
      return protocol === 'ocpp2.0.1' ? 'NoCredit' : 'Invalid';
    default:
      return protocol === 'ocpp2.0.1' ? 'NotAtThisLocation' : 'Invalid';
  }
}

/**
 * An answer that allows the token at some EVSEs only (`allowed_at`), held against where it is
 * used: the EVSE of a start, or, when the charger does not say (a 1.6 Authorize), any linked EVSE
 * of the charger. Elsewhere it is refused as the eMSP's NOT_ALLOWED is (mod_tokens
 * AuthorizationInfo.location: "Only the EVSEs/Connectors the EV driver is allowed to charge at
 * are returned"). Before, an eMSP that allowed EVSE-1 only had its token start and billed on
 * EVSE-2 of the same charger.
 */
function atWhere(d: AuthDecision, s: ChargePointState, evse: number | null, protocol: ProtocolName): AuthDecision {
  const at = d.allowed_at;
  if (!at || d.status !== 'Accepted') return d;
  const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
  const links = s.evse_links ?? [];
  const places = evse === null ? links : links.filter((l) => l.evse_number === evse);
  // an EVSE with no link is in no OCPI location: only an answer for a whole location lets it in,
  // as it did before (the eMSP was asked for the charger's location)
  if (places.length === 0) return at.evse_uids.length === 0 ? d : refusedThere(d, at, protocol);
  const allows = (l: { location_id: string; evse_uid: string }): boolean =>
    same(l.location_id, at.location_id) &&
    (at.evse_uids.length === 0 || at.evse_uids.some((uid) => same(uid, l.evse_uid)));
  if (!places.some(allows)) return refusedThere(d, at, protocol);
  // the charger's authorization cache is the whole charger's: an answer for some of its EVSEs
  // only is not for it to keep, or a start from the cache would go ahead on the others
  return links.every(allows) ? d : { ...d, each_use: true };
}

/** An answer that allows the token elsewhere only, as the charger's refusal. */
function refusedThere(
  d: AuthDecision,
  at: { location_id: string; evse_uids: string[] },
  protocol: ProtocolName,
): AuthDecision {
  const named =
    at.evse_uids.length === 0 ? `location ${at.location_id}` : `${at.evse_uids.join(', ')} of ${at.location_id}`;
  return { ...d, status: statusOfAllowed('NOT_ALLOWED', protocol), reason: `${d.reason} at ${named} only` };
}

/** The location and EVSEs of the charger's linked EVSE `evse`, or of its only linked location. */
function whereOf(s: ChargePointState, evse: number | null): { location_id: string; evse_uids: string[] } | undefined {
  const links = s.evse_links ?? [];
  const link = evse === null ? undefined : links.find((l) => l.evse_number === evse);
  if (link) return { location_id: link.location_id, evse_uids: [link.evse_uid] };
  const locations = new Set(links.map((l) => l.location_id));
  const [only] = [...locations];
  if (locations.size !== 1 || only === undefined) return undefined;
  return { location_id: only, evse_uids: links.filter((l) => l.location_id === only).map((l) => l.evse_uid) };
}

/**
 * The decision for the token `idTag` names (undefined: none), which follows a command of ours (a
 * remote start we sent, a partner's reservation: `command` is the reason) or not.
 */
async function decide(
  port: RoamingPort,
  ctx: Ctx,
  token: RoamingToken | undefined,
  command: string | undefined,
  evse: number | null,
  protocol: ProtocolName,
): Promise<AuthDecision> {
  if (command !== undefined) {
    // let in for this start only, unless the token itself charges without asking (ours, or a
    // partner's valid token of whitelist ALWAYS or ALLOWED): the charger's cache must not keep a
    // card its eMSP blocked, asks at each use, or no token at all (withGroup answers an expiry of now)
    const cacheable =
      token !== undefined &&
      token.valid &&
      (token.own || token.whitelist === 'ALWAYS' || token.whitelist === 'ALLOWED');
    return {
      status: 'Accepted',
      reason: command,
      ...(cacheable ? {} : { each_use: true }),
      // the token's group goes with every answer about it (a card of its group may stop the charge)
      ...(token?.group_id === undefined ? {} : { group_id: token.group_id }),
    };
  }
  if (!token) {
    return port.unknownIdTags === 'accept'
      ? { status: 'Accepted', reason: 'no such token; OCPP_UNKNOWN_ID_TAGS=accept' }
      : { status: 'Invalid', reason: 'no such token' };
  }
  const decision = await decideFor(port, ctx, token, evse, protocol);
  return token.group_id === undefined ? decision : { ...decision, group_id: token.group_id };
}

/** The decision for a token we hold. */
async function decideFor(
  port: RoamingPort,
  ctx: Ctx,
  token: RoamingToken,
  evse: number | null,
  protocol: ProtocolName,
): Promise<AuthDecision> {
  const s = ctx.state;
  if (token.own)
    return token.valid
      ? { status: 'Accepted', reason: 'our own valid token' }
      : { status: 'Blocked', reason: 'the token is not valid' };
  // mod_tokens WhitelistType: "The validity of a Token has no influence on this": a whitelist
  // that requires real-time authorization asks the eMSP even of a token marked not valid
  const eachUse = token.whitelist === 'NEVER' || token.whitelist === 'ALLOWED_OFFLINE';
  if (!token.valid && !eachUse) return { status: 'Blocked', reason: 'the token is not valid' };
  if (token.whitelist === 'ALWAYS') return { status: 'Accepted', reason: 'whitelist ALWAYS' };
  const answer = await port.authorize(token, whereOf(s, evse), ctx.actors);
  if ('allowed' in answer) {
    return {
      status: statusOfAllowed(answer.allowed, protocol),
      reason: `the eMSP answered ${answer.allowed}`,
      real_time: true,
      ...(answer.authorization_reference ? { authorization_reference: answer.authorization_reference } : {}),
      ...(eachUse ? { each_use: true } : {}),
      ...(answer.allowed === 'ALLOWED' && answer.location ? { allowed_at: answer.location } : {}),
    };
  }
  // an eMSP that does not know the token (2004) is asked again at the next use of a token it
  // authorizes at each use: remembered for 5 minutes, it kept refusing a card the eMSP had
  // activated meanwhile, without asking (mod_tokens NEVER: "CPO shall always send a realtime
  // authorization for any use of this Token")
  if ('refused' in answer)
    return { status: 'Invalid', reason: answer.refused, real_time: true, ...(eachUse ? { each_use: true } : {}) };
  if (!token.valid)
    return { status: 'Blocked', reason: `the token is not valid and the eMSP did not answer (${answer.unanswered})` };
  if (token.whitelist === 'NEVER')
    return { status: 'Invalid', reason: `whitelist NEVER and the eMSP did not answer (${answer.unanswered})` };
  // ALLOWED_OFFLINE lets this use in while the eMSP does not answer, not the charger's cache: a
  // charger that authorizes from its cache would start later uses without asking for an hour
  return {
    status: 'Accepted',
    reason: `whitelist ${token.whitelist}: the eMSP did not answer (${answer.unanswered})`,
    ...(eachUse ? { each_use: true } : {}),
  };
}

/**
 * What of a token an eMSP's remembered answer rests on: whose it is, its validity and its
 * whitelist, and the link it came by ('' for no token: a link that ended takes its tokens with
 * it; a link ended and made again within the answer's minutes is another link, whose eMSP was
 * not asked).
 */
function tokenState(token: RoamingToken | undefined): string {
  return token
    ? `${token.country_code}*${token.party_id}|${token.valid}|${token.whitelist}|${token.link_at ?? ''}`
    : '';
}

/**
 * A remembered answer, while its token is as it was when the eMSP gave it: one the eMSP has
 * since made not valid, moved to another whitelist, or whose link ended is decided again. Before,
 * such an answer let a card the eMSP had just blocked start for 5 minutes.
 */
function stillHolds(remembered: Recent | undefined, token: RoamingToken | undefined): Recent | undefined {
  return remembered && tokenState(token) === remembered.token ? remembered : undefined;
}

/**
 * What the event says of a remote start it may follow (`startFor`): a transaction start's dedupe
 * key (a remote start it used counts for it again, a retry), the 2.0.1 remoteStartId it names, and
 * its 2.0.1 idToken type.
 */
export interface StartHow {
  startKey?: string | undefined;
  remoteStartId?: number | null | undefined;
  idTagType?: string | undefined;
  /** the reservation a start names (`reservationFor`) */
  reservationId?: number | null | undefined;
}

/**
 * What an authorization is for: a charger's Authorize, the start of a transaction (which may
 * follow an Authorize), or a token named in a transaction after its start.
 */
export type AuthUse = 'authorize' | 'start' | 'other';

/**
 * The decision for `idTag` at EVSE `evse` (null: the charger did not say): remembered from a
 * recent one, or made now. Without the roaming bridge every tag is accepted. A token the eMSP
 * authorizes at each use (`each_use`) is asked at every Authorize; its answer is remembered for
 * the one start that follows, which takes it.
 */
export async function authorizeTag(
  deps: ChargePointActorDeps,
  ctx: Ctx,
  idTag: string,
  evse: number | null,
  protocol: ProtocolName,
  use: AuthUse,
  how: StartHow = {},
): Promise<AuthDecision> {
  const port = deps.roaming;
  if (!port) return { status: 'Accepted', reason: 'no token checks without the roaming bridge' };
  const now = Date.now();
  // the token, read once: a remembered answer holds on it, a decision is made from it
  const token = await port.tokenOf(idTag, how.idTagType);
  // the start a remote start of ours is followed by is its, whatever the eMSP said of the card
  // before; so is the start that uses a partner's reservation
  const remote = startFor(ctx.state, idTag, evse, how.remoteStartId ?? null, how.startKey, how.idTagType);
  const command =
    remote && !withdrawnSince(token, remote.at)
      ? 'a remote start we sent'
      : reservationFor(ctx.state, idTag, evse, how.reservationId ?? null, how.idTagType) && !withdrawn(token)
        ? "a partner's reservation"
        : undefined;
  const found =
    command !== undefined
      ? undefined
      : (ctx.state.recent_auths ?? []).find((r) => r.id_tag === idTag && now - r.at < REMEMBER_MS);
  const remembered = stillHolds(found, token);
  // an answer that no longer holds is forgotten, whatever is decided now
  const kept = (ctx.state.recent_auths ?? []).filter((r) => now - r.at < REMEMBER_MS && r !== found);
  if (remembered) kept.push(remembered);
  // every decision is logged with its reason, a remembered one too (docs/ROAMING.md "Tokens")
  const logged = (decision: AuthDecision): AuthDecision => {
    ctx.log.info({ id_tag: idTag, evse, status: decision.status, reason: decision.reason }, 'id tag authorization');
    return decision;
  };
  const here = (d: AuthDecision): AuthDecision => atWhere(d, ctx.state, evse, protocol);
  if (remembered && !remembered.decision.each_use)
    return logged(here({ ...remembered.decision, reason: `${remembered.decision.reason} (remembered)` }));
  // the Authorize's answer serves its start when it let the token in; a refusal (the eMSP did not
  // know the card, 2004) is asked again: the start took it without asking, after the eMSP had
  // activated the card
  if (remembered && use === 'start' && remembered.decision.status === 'Accepted') {
    ctx.setState({ ...ctx.state, recent_auths: kept.filter((r) => r !== remembered) });
    return logged(
      here({ ...remembered.decision, reason: `${remembered.decision.reason} (the Authorize of this start)` }),
    );
  }
  // what is remembered is the eMSP's answer; where it lets the token in is held against each use
  const answered = await decide(port, ctx, token, command, evse, protocol);
  const decision = logged(here(answered));
  const others = kept.filter((r) => r.id_tag !== idTag);
  // only the eMSP's real-time answer is remembered (asking again costs a partner call): a decision
  // from the tokens we hold is made again, so that a token blocked or issued since counts at once.
  // Remembered or not, it replaces the one remembered: a start takes the last answer, never one
  // that a later check (an eMSP that did not answer) overruled
  if (decision.real_time !== true || (decision.each_use === true && use !== 'authorize')) {
    if (found) ctx.setState({ ...ctx.state, recent_auths: others });
    return decision;
  }
  const entry: Recent = { id_tag: idTag, at: now, token: tokenState(token), decision: answered };
  ctx.setState({ ...ctx.state, recent_auths: [...others, entry].slice(-MAX_REMEMBERED) });
  return decision;
}
