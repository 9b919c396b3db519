import type { ChargerEvent, ChargerEventOutcome, ProtocolName } from '../../src/ocpp/domain.js';
import { parseAddress, type Address } from '../../src/runtime/address.js';
import { defineActor, type DeactivationReason } from '../../src/runtime/types.js';
import { onAnswer, onBootPolicyChanged, onCommand, onConnected } from './outbound-queue.js';
import { onBooted } from './registration.js';
import type { ChargePointActorDeps } from './ports.js';
import { chargePointProtocol, ChargePointState } from './protocol.js';
import {
  initialChargePointState,
  retiredChargePointState,
  onDeviceModelReported,
  onReported,
  onReservationUpdated,
  onStatusChanged,
  type ChargePointCtx,
} from './state.js';
import { authorizeTag, type AuthDecision } from './authorization.js';
import { followedStart, lateToken, linkOf, reloadLinks, restoreStatuses, roamingOf, type Roamed } from './roaming.js';
import {
  authorizesLate,
  endSuperseded,
  chargerTime,
  onMeterSampled,
  onSessionPushDue,
  onTransactionProgress,
  onTransactionStarted,
  plainRetryOf,
  recallFinished,
  supersededBy,
} from './transactions.js';

/**
 * A start with the roaming bridge: its token is checked (authorization.ts) and, on a linked EVSE
 * with a partner's accepted token, the transaction is roamed (roaming.ts). A refused token's
 * transaction is kept all the same (the charger may go on; its energy must not be lost), and
 * answered with the refusal, which makes a charger that stops on an invalid id end it.
 */
async function started(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  event: Extract<ChargerEvent, { type: 'transaction-started' }>,
  protocol: ProtocolName,
): Promise<ChargerEventOutcome> {
  // a start delivered again (its answer lost) is answered as its first delivery was, from what the
  // state kept, without asking the eMSP again: before, a NEVER token's retry was one more request
  const retry = plainRetryOf(ctx.state, event);
  if (retry) {
    const outcome = onTransactionStarted(deps, ctx, ctx.state, event, protocol);
    // the same answer, unless its token has been made not valid since (`answeredAgain`)
    const again =
      event.id_tag === null || outcome.id_tag_status === undefined
        ? undefined
        : await answeredAgain(
            deps,
            event.id_tag,
            outcome.id_tag_status,
            retry.id_tag_answer,
            undefined,
            event.id_tag_type,
          );
    if (again && again.status !== outcome.id_tag_status) {
      const { cache_expiry: _dropped, ...refused } = outcome;
      return { ...refused, id_tag_status: again.status };
    }
    const answer = retry.id_tag_answer;
    return answer
      ? withGroup(outcome, { status: outcome.id_tag_status ?? 'Accepted', reason: 'retry', ...answer })
      : outcome;
  }
  const decision =
    event.id_tag === null
      ? undefined
      : await authorizeTag(deps, ctx, event.id_tag, event.evse_id, protocol, 'start', {
          startKey: event.dedupe_key,
          remoteStartId: event.remote_start_id,
          idTagType: event.id_tag_type,
          reservationId: event.reservation_id ?? null,
        });
  const accepted = decision === undefined || decision.status === 'Accepted';
  const roamed =
    accepted && linkOf(ctx.state, event.evse_id)
      ? await roamingOf(deps, ctx.state, { ...event, started_at: chargerTime(event.timestamp) }, decision)
      : null;
  const outcome = onTransactionStarted(deps, ctx, ctx.state, event, protocol, roamed, decision?.status);
  if (event.id_tag !== null) keepAnswer(ctx, outcome.transaction_id, event.id_tag, decision);
  return withGroup(outcome, decision);
}

/**
 * Keeps with the open transaction of `transactionId`, when `idTag` is its token, what the answer
 * said beyond its status (`id_tag_answer`): a stop or update naming the token again is answered
 * the same, its cache expiry and group included, without asking anyone again (`tokenNamed`).
 */
function keepAnswer(
  ctx: ChargePointCtx,
  transactionId: string | undefined,
  idTag: string,
  decision: AuthDecision | undefined,
): void {
  if (!decision || (decision.each_use !== true && decision.group_id === undefined)) return;
  const s = ctx.state;
  const tx = s.transactions.find((t) => t.transaction_id === transactionId && t.id_tag === idTag);
  if (!tx) return;
  const answer = {
    ...(decision.each_use === true ? { each_use: true as const } : {}),
    ...(decision.group_id === undefined ? {} : { group_id: decision.group_id }),
  };
  ctx.setState({ ...s, transactions: s.transactions.map((t) => (t === tx ? { ...t, id_tag_answer: answer } : t)) });
}

/**
 * The outcome with the group of the token it answers for, when the token has one; for a token
 * the eMSP authorizes at each use, an entry of the charger's cache that expires at once, so that
 * the charger does not accept a later use from it (mod_tokens WhitelistType NEVER).
 */
function withGroup(outcome: ChargerEventOutcome, decision: AuthDecision | undefined): ChargerEventOutcome {
  const grouped = decision?.group_id === undefined ? outcome : { ...outcome, group_id: decision.group_id };
  return decision?.each_use === true && grouped.id_tag_status === 'Accepted'
    ? { ...grouped, cache_expiry: new Date().toISOString() }
    : grouped;
}

/**
 * A start on an EVSE whose transaction is still open here: the earlier one ends at its last
 * reading, read from its session row first (transactions.ts `endSuperseded`), then the start.
 */
async function supersede(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  event: Extract<ChargerEvent, { type: 'transaction-started' }>,
  superseded: ReadonlyArray<{ session_id: string }>,
  protocol: ProtocolName,
): Promise<ChargerEventOutcome> {
  endSuperseded(deps, ctx, event, await deps.lastReadings(superseded.map((t) => t.session_id)));
  return begin(deps, ctx, event, protocol);
}

/** A start applied to the actor's state: its token checked and the session roamed when the bridge is there. */
function begin(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  event: Extract<ChargerEvent, { type: 'transaction-started' }>,
  protocol: ProtocolName,
): ChargerEventOutcome | Promise<ChargerEventOutcome> {
  return deps.roaming
    ? started(deps, ctx, event, protocol)
    : onTransactionStarted(deps, ctx, ctx.state, event, protocol);
}

/**
 * An update or end that names a token (2.0.1 may start a transaction at plug-in and name the
 * token in an update; an end, or a StopAuthorized update, names the token that stopped it, which
 * the session keeps apart as `stop_id_tag`). The token is authorized as an
 * Authorize's is (authorization.ts: tokens, OCPP_UNKNOWN_ID_TAGS, the eMSP) and the event is
 * answered with that decision (idTokenInfo is required with an idToken, E01), unless it is the
 * token this transaction was last answered for: that answer is repeated, without asking anyone
 * again. An accepted token on a linked EVSE makes a transaction that had none roamed from here
 * on. The event is applied whatever the decision: a refusal tells the charger (which may stop,
 * StopTxOnInvalidId), the energy is kept all the same.
 */
async function tokenNamed(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  event: Extract<ChargerEvent, { type: 'transaction-updated' | 'transaction-ended' }>,
  idTag: string,
  protocol: ProtocolName,
  /** false: the event repeats one applied (`repeatOfRoamed`): only its token is answered */
  apply = true,
): Promise<ChargerEventOutcome> {
  const open = ctx.state.transactions.find((t) => t.transaction_id === event.transaction_id);
  const known = open?.id_tag === idTag ? open.id_tag_status : undefined;
  const ended = known === undefined ? endAnsweredBefore(ctx.state, event, idTag, open) : undefined;
  const again =
    known !== undefined
      ? await answeredAgain(deps, idTag, known, open?.id_tag_answer, open?.ocpi?.auth_method, event.id_tag_type)
      : ended && (await endAnsweredAgain(deps, idTag, ended, event.id_tag_type));
  const decision: AuthDecision =
    again ??
    (await authorizeTag(deps, ctx, idTag, open && open.evse_id > 0 ? open.evse_id : null, protocol, 'other', {
      startKey: open?.dedupe_key,
      remoteStartId: event.type === 'transaction-updated' ? event.remote_start_id : null,
      idTagType: event.id_tag_type,
    }));
  if (!apply) return cached(deps, withGroup({ id_tag_status: decision.status }, decision));
  // a token named after the transaction's own stopped it: it roams nothing, unless it authorized
  // the transaction after its own was refused (transactions.ts `authorizesLate`)
  const late = open !== undefined && authorizesLate(open, event, decision.status);
  if (deps.roaming && open && ((open.ocpi === undefined && open.id_tag === undefined) || (late && !open.ocpi)))
    await lateToken(deps, ctx, open.transaction_id, idTag, decision, {
      remote_start_id: event.type === 'transaction-updated' ? (event.remote_start_id ?? null) : null,
      id_tag_type: event.id_tag_type,
      late,
    });
  else if (open && open.id_tag === undefined) followsStart(deps, ctx, open, idTag, event);
  const roamed = open ? undefined : await adoptedRoaming(deps, ctx, event, idTag, decision);
  const outcome = onTransactionProgress(deps, ctx, ctx.state, event, decision.status, roamed);
  if (again === undefined) keepAnswer(ctx, event.transaction_id, idTag, decision);
  if (open && event.type === 'transaction-ended') keepEndAnswer(ctx, event.transaction_id, idTag, decision);
  return cached(deps, withGroup(outcome, decision));
}

/**
 * The answer the end of a finished transaction got for `idTag`, for the end delivered again (its
 * answer lost): "a repeated StopTransaction changes nothing". It was decided anew, and a tag a
 * remote start had let in (no token: the start is used up) was answered Invalid, which the
 * charger's cache then kept (1.6 section 3.5.1, 2.0.1 C10). Repeated as a start's retry is
 * (`answeredAgain`): an Accepted of a card made not valid since is Blocked, so that the retry does
 * not put a blocked card back in the charger's cache.
 */
function endAnsweredBefore(
  s: ChargePointState,
  event: Extract<ChargerEvent, { type: 'transaction-updated' | 'transaction-ended' }>,
  idTag: string,
  open: ChargePointState['transactions'][number] | undefined,
): EndedBy | undefined {
  if (open || event.type !== 'transaction-ended') return undefined;
  // the newest of that id (an id reused later is another transaction's)
  const ended = s.finished.filter((f) => f.transaction_id === event.transaction_id).at(-1)?.ended_by;
  return ended?.id_tag === idTag ? ended : undefined;
}

type EndedBy = NonNullable<ChargePointState['finished'][number]['ended_by']>;

/** The end's first answer again: an Accepted as a start's retry has it, any other as it was. */
async function endAnsweredAgain(
  deps: ChargePointActorDeps,
  idTag: string,
  ended: EndedBy,
  idTagType: string | undefined,
): Promise<AuthDecision> {
  const first = { status: ended.status, reason: 'answered before for the end of this transaction', ...ended.answer };
  return ended.status === 'Accepted'
    ? ((await answeredAgain(deps, idTag, 'Accepted', ended.answer, undefined, idTagType)) ?? first)
    : first;
}

/** Keeps with the transaction just finished how its end's token was answered (`endAnsweredBefore`). */
function keepEndAnswer(ctx: ChargePointCtx, transactionId: string, idTag: string, decision: AuthDecision): void {
  const s = ctx.state;
  const answer = {
    ...(decision.each_use === true ? { each_use: true as const } : {}),
    ...(decision.group_id === undefined ? {} : { group_id: decision.group_id }),
  };
  const ended_by = { id_tag: idTag, status: decision.status, ...(Object.keys(answer).length > 0 ? { answer } : {}) };
  const newest = s.finished.map((f) => f.transaction_id).lastIndexOf(transactionId);
  if (newest < 0) return;
  ctx.setState({ ...s, finished: s.finished.map((f, i) => (i === newest ? { ...f, ended_by } : f)) });
}

/**
 * The first token of a transaction that roams nothing (started at plug-in on an EVSE no location
 * links): the remote start it follows, if any, is its command, as `lateToken` has it for one that
 * may roam; this one said null, "a start nobody asked for", when the operator had asked.
 */
function followsStart(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  open: ChargePointState['transactions'][number],
  idTag: string,
  event: Extract<ChargerEvent, { type: 'transaction-updated' | 'transaction-ended' }>,
): void {
  const s = ctx.state;
  const remoteStartId = event.type === 'transaction-updated' ? (event.remote_start_id ?? null) : null;
  const recent_starts = followedStart(deps, ctx, s, open, idTag, remoteStartId, event.id_tag_type);
  if (recent_starts !== s.recent_starts) ctx.setState({ ...s, recent_starts });
}

/**
 * The answer for the token a transaction was last answered for, named again: that answer, without
 * asking the eMSP again, unless the token has been made not valid since (its eMSP's token update,
 * or the operator's, is the later word): then Blocked, so that a charger that stops on an invalid
 * id stops, and its cache is not told to keep the card for another `OCPP_AUTH_CACHE_S`. A token
 * that was refused is decided anew (undefined): one made valid again since is let in, as at any
 * other use (it stayed Blocked for the rest of its transaction).
 */
async function answeredAgain(
  deps: ChargePointActorDeps,
  idTag: string,
  known: string,
  answer: ChargePointState['transactions'][number]['id_tag_answer'],
  /**
   * how the transaction roams, when it does: one an eMSP's token authorized (not its command)
   * whose token we hold no more (the link with that eMSP ended) is decided anew, as no token
   * (docs/ROAMING.md); it was Accepted, for the charger to cache another hour
   */
  roamedBy?: NonNullable<ChargePointState['transactions'][number]['ocpi']>['auth_method'],
  /** 2.0.1 idToken type of the message that names it */
  idTagType?: string,
): Promise<AuthDecision | undefined> {
  if (known !== 'Accepted') return undefined;
  if (deps.roaming) {
    const token = await deps.roaming.tokenOf(idTag, idTagType);
    if (token === undefined && roamedBy !== undefined && roamedBy !== 'COMMAND') return undefined;
    // as decideFor: a whitelist that asks the eMSP at each use is not decided by validity
    const eachUse = token?.whitelist === 'NEVER' || token?.whitelist === 'ALLOWED_OFFLINE';
    if (token !== undefined && !token.valid && (token.own || !eachUse))
      return { status: 'Blocked', reason: 'the token was made not valid since this transaction was answered' };
  }
  return { status: known, reason: 'answered before for this transaction', ...answer };
}

/**
 * The roamed session of a transaction an update or end may open here (its start never arrived: an
 * Ended alone, queued offline), when it names a partner's accepted token on a linked EVSE: roamed
 * as its start would have been, so that its eMSP gets the session and the CDR of the energy it
 * reports. Whether the event opens one is `onTransactionProgress`'s to decide.
 */
async function adoptedRoaming(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  event: Extract<ChargerEvent, { type: 'transaction-updated' | 'transaction-ended' }>,
  idTag: string,
  decision: AuthDecision,
): Promise<Roamed | undefined> {
  const s = ctx.state;
  if (!deps.roaming || decision.status !== 'Accepted' || event.evse_id === undefined || !linkOf(s, event.evse_id))
    return undefined;
  const where = { evse_id: event.evse_id, connector_id: event.connector_id ?? 1, remote_start_id: null };
  return (
    (await roamingOf(deps, s, { ...where, id_tag: idTag, started_at: chargerTime(event.timestamp) }, decision)) ??
    undefined
  );
}

/**
 * An outcome that accepts an id tag, with the time the charger's authorization cache drops it
 * (docs/CSMS.md "Authorization"): a token withdrawn later is refused from the cache after that.
 */
function cached(deps: ChargePointActorDeps, outcome: ChargerEventOutcome): ChargerEventOutcome {
  if (outcome.id_tag_status !== 'Accepted' || deps.authCacheS <= 0 || outcome.cache_expiry !== undefined)
    return outcome;
  return { ...outcome, cache_expiry: new Date(Date.now() + deps.authCacheS * 1000).toISOString() };
}

/**
 * Whether a 2.0.1 update of a roamed transaction, or one that names a token, repeats a seqNo its
 * session row has applied (a charger that numbers two different messages alike, or repeats one
 * it had no answer to): then it changes nothing, as the row refuses it; its readings reach
 * neither the eMSP's session nor the CDR, and its token neither roams the transaction nor
 * becomes its own. Undefined (no read) for every other event: the row alone refuses a repeat of
 * a meter value of a transaction that roams nothing.
 */
function repeatOfRoamed(
  deps: ChargePointActorDeps,
  s: ChargePointState,
  event: Extract<ChargerEvent, { type: 'transaction-updated' }>,
): Promise<boolean> | undefined {
  const seq = event.seq_no;
  if (seq === null || !deps.roaming) return undefined;
  const tx = s.transactions.find((t) => t.transaction_id === event.transaction_id);
  // a token named may make the transaction roamed (or its token another): checked as well
  if (!tx || (!tx.ocpi && event.id_tag === null)) return undefined;
  return deps.roaming.appliedSeq(tx.session_id).then((applied) => applied !== null && seq <= applied);
}

/** An update or the end of a transaction, applied; a token it names is decided first (`tokenNamed`). */
function progressed(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  event: Extract<ChargerEvent, { type: 'transaction-updated' | 'transaction-ended' }>,
  protocol: ProtocolName,
): ChargerEventOutcome | Promise<ChargerEventOutcome> {
  if (event.id_tag === null) return onTransactionProgress(deps, ctx, ctx.state, event);
  return tokenNamed(deps, ctx, event, event.id_tag, protocol);
}

/** The answer to a repeated update, which changes nothing: a token it names is answered as the update's would be. */
function answerRepeat(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  event: Extract<ChargerEvent, { type: 'transaction-updated' }>,
  protocol: ProtocolName,
): ChargerEventOutcome | Promise<ChargerEventOutcome> {
  // a retry of a message the charger had no answer to is the usual repeat: not a warning
  ctx.log.info(
    { transaction_id: event.transaction_id, seq_no: event.seq_no },
    'a repeated seqNo: the update changes nothing',
  );
  return event.id_tag === null
    ? { id_tag_status: 'Accepted' }
    : tokenNamed(deps, ctx, event, event.id_tag, protocol, false);
}

/** A start, update or end of a transaction, applied (transactions.ts). */
function onTransactionEvent(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  event: Extract<ChargerEvent, { type: 'transaction-started' | 'transaction-updated' | 'transaction-ended' }>,
  protocol: ProtocolName,
): ChargerEventOutcome | Promise<ChargerEventOutcome> {
  const s = ctx.state;
  switch (event.type) {
    case 'transaction-started': {
      // a start that names no token (2.0.1 at plug-in, or NoAuthorization) gives the charger's cache nothing to keep
      const answer = (o: ChargerEventOutcome) => (event.id_tag === null ? o : cached(deps, o));
      const superseded = supersededBy(s, event);
      if (superseded.length > 0) return supersede(deps, ctx, event, superseded, protocol).then(answer);
      const outcome = begin(deps, ctx, event, protocol);
      return outcome instanceof Promise ? outcome.then(answer) : answer(outcome);
    }
    case 'transaction-updated': {
      const repeat = repeatOfRoamed(deps, s, event);
      if (!repeat) return progressed(deps, ctx, event, protocol);
      return repeat.then((repeated) =>
        repeated ? answerRepeat(deps, ctx, event, protocol) : progressed(deps, ctx, event, protocol),
      );
    }
    case 'transaction-ended':
      return progressed(deps, ctx, event, protocol);
  }
}

/** A charger's event, handed to the part of the actor that keeps what it is about. */
function onEvent(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  event: ChargerEvent,
  protocol: ProtocolName,
): ChargerEventOutcome | Promise<ChargerEventOutcome> {
  // the protocol a charger speaks is recorded here once, whatever the event does with the state
  if (ctx.state.protocol !== protocol) ctx.setState({ ...ctx.state, protocol });
  const s = ctx.state;
  switch (event.type) {
    case 'booted':
      return onBooted(deps, ctx, s, event);
    case 'status-changed':
      return onStatusChanged(deps, ctx, s, event);
    case 'authorize-requested':
      return authorizeTag(deps, ctx, event.id_tag, null, protocol, 'authorize', { idTagType: event.id_tag_type }).then(
        (d) => cached(deps, withGroup({ id_tag_status: d.status }, d)),
      );
    case 'transaction-started':
    case 'transaction-updated':
    case 'transaction-ended': {
      // a finished transaction the state no longer remembers is read from its session first
      const recalled = recallFinished(deps, ctx, event, protocol);
      return recalled
        ? recalled.then(() => onTransactionEvent(deps, ctx, event, protocol))
        : onTransactionEvent(deps, ctx, event, protocol);
    }
    case 'meter-sampled':
      return onMeterSampled(deps, ctx, s, event);
    case 'reservation-updated':
      return onReservationUpdated(deps, ctx, s, event);
    case 'reported':
      return onReported(deps, ctx, s, event);
    case 'device-model-reported':
      return onDeviceModelReported(deps, ctx, event);
  }
}

/**
 * The charge-point actor: one per charger, pinned to the process that holds its WebSocket
 * (docs/CSMS.md, "The charge-point actor"). It keeps what the charger reported (state.ts),
 * builds charging sessions from its transactions (transactions.ts), and queues CSMS-to-charger
 * calls so that at most one is outstanding (outbound-queue.ts). The socket, the session table
 * and the change feed are the ports in `deps` (ports.ts).
 */
export function chargePointActor(deps: ChargePointActorDeps) {
  return defineActor(chargePointProtocol, {
    placement: 'pinned',
    state: ChargePointState,
    idleMs: null,
    initialState: initialChargePointState,
    handle(ctx, msg) {
      switch (msg.type) {
        case 'connected':
          // links never read (a charger that connected before roaming existed): read them once
          if (ctx.state.evse_links === undefined && deps.roaming?.mayHaveUnreadLinks(ctx.key))
            return reloadLinks(deps, ctx).then(() => onConnected(deps, ctx, msg));
          restoreStatuses(deps, ctx);
          return onConnected(deps, ctx, msg);
        case 'links-changed':
          return reloadLinks(deps, ctx).then(() => null);
        case 'session-push-due':
          return onSessionPushDue(deps, ctx, msg.session_id);
        case 'boot-policy-changed':
          return onBootPolicyChanged(deps, ctx, msg);
        case 'event':
          return onEvent(deps, ctx, msg.event, msg.protocol);
        case 'command':
          return onCommand(deps, ctx, msg);
        case 'answer':
          onAnswer(deps, ctx, msg);
          return null;
        case 'get':
          return ctx.state;
        case 'retire':
          // a charge point registered again under this id starts from nothing
          ctx.setState(retiredChargePointState(ctx.state));
          ctx.afterCommit(() => deps.closeSocket(ctx.key, 'removed'));
          ctx.passivate();
          return null;
      }
    },
    onDeactivate(address: Address, reason: DeactivationReason) {
      if (reason === 'pin-released' || reason === 'idle') return;
      deps.closeSocket(parseAddress(address).key, reason);
    },
  });
}

export type ChargePointActorDefinition = ReturnType<typeof chargePointActor>;
