import { randomUUID } from 'node:crypto';
import {
  COMMAND_OUTCOME_KEEP_MS,
  COMMAND_OUTCOMES_MAX,
  COMMANDS_WITH_DATA,
  type ChargerCommand,
  type ConnectedReply,
  type RegistrationStatus,
} from '../../src/ocpp/domain.js';
import type { ChargePointActorDeps } from './ports.js';
import {
  chargePointProtocol,
  COMMAND_EXPIRY_MS,
  CONNECTION_CLOSED_DETAIL,
  NOT_SENT_DETAIL,
  type ChargePointCommandResult,
  type ChargePointMessage,
  type ChargePointState,
  type CommandAccepted,
} from './protocol.js';
import { BOOT_TRIGGER, needsBootTrigger, policyOf, refusalOf, servedAs } from './registration.js';
import { publishChange, reservationsAfterAnswer, tellReservationCanceled, type ChargePointCtx } from './state.js';

/**
 * CSMS-to-charger calls: queued in the state, sent one at a time (OCPP-J allows one outstanding
 * call per direction), settled by the charger's answer, a timeout, a closed connection or expiry.
 * The recent outcomes are kept in `commands` for GET /v1/charge-points/{id}.
 */

type OutboundCall = ChargePointState['outbound'][number];
type MessageOf<T extends ChargePointMessage['type']> = Extract<ChargePointMessage, { type: T }>;

const MAX_COMMAND_RECORDS = 20;
/**
 * The longest detail a command record keeps: a charger's CALLERROR description has no bound in
 * 1.6 (2.0.1 says 255 characters), and 20 records of 250 KB made every turn of the charger
 * rewrite 5 MB of state.
 */
export const MAX_COMMAND_DETAIL = 500;

/** `detail` cut to MAX_COMMAND_DETAIL characters, an ellipsis marking the cut. */
function boundedDetail(detail: string | null): string | null {
  return detail === null || detail.length <= MAX_COMMAND_DETAIL
    ? detail
    : `${detail.slice(0, MAX_COMMAND_DETAIL - 1)}…`;
}
/** Why a password change expired unsent: the process that held the new password does not hold the charger now. */
const PASSWORD_NOT_HERE =
  'the new password was kept only by the process the charger was connected to, which stopped or no longer holds the charger; set it again';

/**
 * The most calls that wait for one charger, and the most characters they hold together: the queue
 * is part of the charger's state, which every turn of the charger writes, and a charger answers
 * one call at a time. A command past either is refused at once (docs/CSMS.md "Operations").
 */
export const MAX_QUEUED_CALLS = 100;
export const MAX_QUEUED_CHARS = 256 * 1024;

/** Why `command` is not queued behind the calls already waiting, or undefined when it is. */
function queueFull(s: ChargePointState, command: OutboundCall['command']): string | undefined {
  if (s.outbound.length >= MAX_QUEUED_CALLS)
    return `${s.outbound.length} calls already wait for this charger (at most ${MAX_QUEUED_CALLS}); try again when it has answered them`;
  let chars = JSON.stringify(command).length;
  for (const call of s.outbound) chars += JSON.stringify(call.command).length;
  return chars > MAX_QUEUED_CHARS
    ? `the calls waiting for this charger would hold ${chars} characters (at most ${MAX_QUEUED_CHARS}); try again when it has answered them`
    : undefined;
}

function record(
  s: ChargePointState,
  command_id: string,
  kind: string,
  status: string,
  detail: string | null,
  hasReply = false,
): ChargePointState['commands'] {
  const rest = s.commands.filter((c) => c.command_id !== command_id);
  const entry = { command_id, kind, status, detail, updated_at: new Date().toISOString() };
  return trimmedRecords([...rest, hasReply ? { ...entry, has_reply: true } : entry]);
}

/**
 * The newest MAX_COMMAND_RECORDS records, and older ones still queued or sent or changed within
 * COMMAND_OUTCOME_KEEP_MS (a route may be waiting for them), at most COMMAND_OUTCOMES_MAX in all.
 * Cut to the newest 20 alone, 60 operations sent at once pushed out the outcomes of the first 40
 * before their routes read them: those answered "queued" though the charger had answered.
 */
function trimmedRecords(records: ChargePointState['commands']): ChargePointState['commands'] {
  if (records.length <= MAX_COMMAND_RECORDS) return records;
  const now = Date.now();
  const newest = records.length - MAX_COMMAND_RECORDS;
  return records
    .filter(
      (r, i) =>
        i >= newest ||
        r.status === 'queued' ||
        r.status === 'sent' ||
        now - Date.parse(r.updated_at) < COMMAND_OUTCOME_KEEP_MS,
    )
    .slice(-COMMAND_OUTCOMES_MAX);
}

/**
 * The detail of a call on the charger's socket without an answer yet, naming the OCPP action it
 * went as. The bare action name read as an error to an operator (`"detail":"SetVariables"`).
 */
function sentDetail(action: string): string {
  return `sent as ${action}, not answered yet`;
}

/** Records a command's final outcome and, after the turn commits, tells whoever asked for it. */
function settle(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  call: OutboundCall,
  status: string,
  detail: string | null,
  reply?: unknown,
  errorCode?: string,
): ChargePointState['commands'] {
  const shown = boundedDetail(detail);
  const notify = call.notify;
  if (notify) {
    const result: ChargePointCommandResult = {
      type: 'charge-point-command-result',
      charge_point_id: ctx.key,
      command_id: call.command_id,
      kind: call.command.kind,
      status,
      detail: shown,
      ...(errorCode === undefined ? {} : { error_code: errorCode }),
    };
    ctx.afterCommit(async () => {
      await ctx.actors
        .inbox<ChargePointCommandResult>(notify)
        .sendDurable(result, { dedupeKey: `charge-point-command:${call.command_id}` })
        .catch((err: unknown) => {
          ctx.log.warn({ err, notify, command_id: call.command_id }, 'command result not delivered');
        });
    });
  }
  if (reply !== undefined) ctx.write(deps.reports.reply(ctx.key, call.command_id, reply));
  if (call.command.kind === 'send-local-list') {
    const step = deps.localLists.answered(ctx.key, call.command, status);
    if (step) ctx.write(step);
  }
  if (call.command.kind === 'set-password') passwordSettled(deps, ctx, call, call.command.password_hash, status);
  return record(s, call.command_id, call.command.kind, status, shown, reply !== undefined);
}

/**
 * Outcomes after which nobody knows whether the charger took a new password: no answer, the
 * connection closed first (some chargers reconnect with the new password at once), or it takes
 * it at its next reboot. The new password then stays valid beside the old one, and becomes the
 * only one when the charger logs in with it (docs/CSMS.md "Passwords").
 */
const PASSWORD_UNDECIDED = new Set(['timeout', 'failed', 'RebootRequired']);

/** A new password's command is settled: the charger's answer decides which password it keeps. */
function passwordSettled(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  call: OutboundCall,
  passwordHash: string,
  status: string,
): void {
  deps.passwords.forget(call.command_id);
  if (status === 'Accepted') ctx.write(deps.passwords.accepted(ctx.key, passwordHash));
  else if (!PASSWORD_UNDECIDED.has(status)) ctx.write(deps.passwords.refused(ctx.key, passwordHash));
}

/** The command as the charger is sent it: a new password from memory; undefined when it is no longer held. */
function sendable(deps: ChargePointActorDeps, call: OutboundCall): ChargerCommand | undefined {
  const c = call.command;
  if (c.kind !== 'set-password') return c;
  const password = deps.passwords.get(call.command_id);
  return password === undefined ? undefined : { kind: 'set-password', password };
}

/** The charger's answer (or the failure to get one) comes back as an `answer` message to itself. */
function awaitAnswer(
  ctx: ChargePointCtx,
  call: OutboundCall,
  answer: Promise<{ status: string; reply: unknown }>,
): void {
  const self = ctx.actors.ref(chargePointProtocol, ctx.key);
  const commandId = call.command_id;
  const keepsReply = COMMANDS_WITH_DATA.has(call.command.kind);
  answer.then(
    ({ status, reply }) =>
      self.tell({
        type: 'answer',
        command_id: commandId,
        status,
        detail: null,
        ...(keepsReply ? { reply } : {}),
      }),
    (err: unknown) =>
      self.tell({
        type: 'answer',
        command_id: commandId,
        status: err instanceof Error && err.name === 'ChargerCallTimeoutError' ? 'timeout' : 'failed',
        detail: failureDetail(err),
        ...callErrorCode(err),
      }),
  );
}

/** The error code of a charger's CALLERROR (connection.ts ChargerCallError), if `err` is one. */
function callErrorCode(err: unknown): { error_code?: string } {
  if (!(err instanceof Error) || err.name !== 'ChargerCallError' || !('errorCode' in err)) return {};
  return typeof err.errorCode === 'string' ? { error_code: err.errorCode } : {};
}

/**
 * Why a sent call has no answer. A connection that closed under it (the charger gone, or ours
 * closed on a restart) says so first, as a read while the charger is offline does: the call was
 * sent and the charger may have acted on it; only its answer is lost. A restart's answer said
 * `service restart` alone, and an operator took the `failed` for "not done" and sent it again.
 */
function failureDetail(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.name === 'ChargerDisconnectedError' ? `${CONNECTION_CLOSED_DETAIL} (${err.message})` : err.message;
}

/**
 * A call sent on a connection the charger connected again after (`onConnected`): a second
 * connection of it, or a reconnect after the process holding the first one died (kill -9), whose
 * close nobody settled. "replaced by a newer connection" sent the operator looking for a duplicate
 * charger identity after a crash.
 */
const REPLACED_DETAIL = `${CONNECTION_CLOSED_DETAIL} (the charger connected again before it answered)`;

/** The most of a partner's timeout kept for the charger's answer (`sendBy`). */
const ANSWER_MARGIN_MS = 5000;

/**
 * Until when a queued call with a deadline (`expires_at`: a partner's command, told TIMEOUT then)
 * is sent: early enough that the charger's answer can still count, a quarter of the time it was
 * given and at most ANSWER_MARGIN_MS before the deadline. A call sent 13 ms before it had the
 * charger act on it (a connector unlocked) while the partner was told TIMEOUT, which says nothing
 * was done; not sent, the partner's result is FAILED (2.1.1 REJECTED) before the deadline.
 */
function sendBy(call: OutboundCall): number {
  if (call.expires_at === undefined) return Number.POSITIVE_INFINITY;
  return call.expires_at - Math.min(ANSWER_MARGIN_MS, Math.max(0, call.expires_at - call.queued_at) / 4);
}

/** how long a sent start is remembered for the transaction that follows it */
const RECENT_START_MS = 15 * 60_000;
const MAX_RECENT_STARTS = 10;

/**
 * The recent starts with the start command `call` added (a start names its token and EVSE: a 1.6
 * connector is an EVSE, so a 1.6 start naming its connector only names that EVSE).
 */
function startsWith(s: ChargePointState, call: OutboundCall, now: number): ChargePointState['recent_starts'] {
  const c = call.command;
  if (c.kind !== 'start') return s.recent_starts;
  const kept = (s.recent_starts ?? []).filter((r) => now - r.at < RECENT_START_MS);
  const entry = {
    id_tag: c.id_tag,
    evse_id: c.evse_id ?? (s.protocol === 'ocpp1.6' ? c.connector_id : null),
    remote_start_id: s.next_remote_start_id,
    at: now,
    roaming: call.notify !== undefined,
    command_id: call.command_id,
    ...(call.authorization ? { authorization: call.authorization } : {}),
  };
  return [...kept, entry].slice(-MAX_RECENT_STARTS);
}

/** Sends the head of the queue when nothing is outstanding. */
function pump(deps: ChargePointActorDeps, ctx: ChargePointCtx, s: ChargePointState): ChargePointState {
  let state = s;
  const now = Date.now();
  for (let head = state.outbound[0]; head !== undefined; head = state.outbound[0]) {
    if (head.sent_at !== null) {
      // an answer comes (or times out) within the call timeout, or by a partner's deadline; one
      // whose turn could not commit would hold the queue until the charger reconnects: it is let
      // go after COMMAND_EXPIRY_MS, or that long after its deadline
      if (now - Math.max(head.sent_at, head.expires_at ?? 0) <= COMMAND_EXPIRY_MS) return state;
      state = {
        ...state,
        outbound: state.outbound.slice(1),
        commands: settle(deps, ctx, state, head, 'failed', 'its answer was never recorded'),
      };
      continue;
    }
    const refusal = refusalOf(state, head.command);
    const aged = now - head.queued_at > COMMAND_EXPIRY_MS;
    if (aged || now >= sendBy(head) || refusal !== undefined) {
      const status = refusal === undefined ? 'expired' : 'refused';
      const commands = settle(deps, ctx, state, head, status, refusal ?? (aged ? NOT_SENT_DETAIL : null));
      // expired when its time was over, as a read showed it before (recordAsSeen), not when the
      // queue moved: its updated_at changed again up to 30 s later, its status the same
      const at = new Date(head.queued_at + COMMAND_EXPIRY_MS).toISOString();
      const dated =
        refusal === undefined && aged
          ? commands.map((c) => (c.command_id === head.command_id ? { ...c, updated_at: at } : c))
          : commands;
      state = { ...state, outbound: state.outbound.slice(1), commands: dated };
      continue;
    }
    const command = sendable(deps, head);
    if (command === undefined) {
      // the new password is held in memory by the process that took it (never stored in clear):
      // that process stopped, or the charger connected to another one, before it was sent
      state = {
        ...state,
        outbound: state.outbound.slice(1),
        commands: settle(deps, ctx, state, head, 'expired', PASSWORD_NOT_HERE),
      };
      continue;
    }
    const sent = deps.sendCommand(ctx.key, command, state.next_remote_start_id);
    if (!sent) return state;
    // on the socket once the turn that records it committed: a turn that cannot commit (the
    // database out) sends nothing, where the charger got a command the operator was told failed
    ctx.afterCommit(() => {
      if (command.kind === 'set-password') deps.passwords.forget(head.command_id);
      // a partner's command waits for the charger's answer until the partner is told TIMEOUT
      awaitAnswer(ctx, head, sent.send(head.expires_at));
    });
    return {
      ...state,
      recent_starts: head.command.kind === 'start' ? startsWith(state, head, now) : state.recent_starts,
      next_remote_start_id: head.command.kind === 'start' ? state.next_remote_start_id + 1 : state.next_remote_start_id,
      outbound: [{ ...head, sent_at: now, connection: sent.connection }, ...state.outbound.slice(1)],
      commands: record(state, head.command_id, head.command.kind, 'sent', sentDetail(sent.action)),
    };
  }
  return state;
}

type CallFrom = Pick<MessageOf<'command'>, 'notify' | 'expires_at' | 'authorization'>;

/** The call of `command`, not sent yet, with what its message said of its outcome's recipient and deadline. */
function callOf(command: OutboundCall['command'], commandId: string, from: CallFrom): OutboundCall {
  return {
    command_id: commandId,
    command,
    queued_at: Date.now(),
    sent_at: null,
    connection: null,
    ...(from.notify ? { notify: from.notify } : {}),
    ...(from.expires_at === undefined ? {} : { expires_at: from.expires_at }),
    ...(from.authorization ? { authorization: from.authorization } : {}),
  };
}

/** `s` with `command` at the end of the queue (not sent yet: `pump` sends it). */
function queued(
  s: ChargePointState,
  command: OutboundCall['command'],
  commandId = randomUUID(),
  from: CallFrom = {},
): ChargePointState {
  const call = callOf(command, commandId, from);
  return {
    ...s,
    outbound: [...s.outbound, call],
    commands: record(s, call.command_id, command.kind, 'queued', null),
  };
}

/**
 * `s` under the boot policy `policy`; when the charger should learn a status other than the one
 * it was told, a TriggerMessage BootNotification is queued (registration.ts).
 */
function underPolicy(s: ChargePointState, policy: RegistrationStatus): ChargePointState {
  const next = policyOf(s) === policy ? s : { ...s, boot_policy: policy };
  return needsBootTrigger(next) ? queued(next, BOOT_TRIGGER) : next;
}

/** A (new) connection of the charger: calls sent on an earlier one fail, the queue moves on. */
export function onConnected(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  msg: MessageOf<'connected'>,
): ConnectedReply {
  const booted = ctx.state.boot !== null;
  const s = ctx.state;
  // calls sent on an earlier connection will never be answered: report them and move on. That
  // connection's own close has not settled them (it would have): this newer one replaces it, and
  // the detail says so, as a close says its reason (the bare detail left an operator unable to
  // tell a second connection of the charger from a drop)
  const stale = s.outbound.filter((o) => o.sent_at !== null && o.connection !== msg.connection);
  let commands = s.commands;
  for (const o of stale) commands = settle(deps, ctx, { ...s, commands }, o, 'failed', REPLACED_DETAIL);
  // a plain (re)connect writes nothing (a first one: its first event records the protocol); a
  // charger that now speaks another version than it spoke, or than it is registered with (a
  // firmware upgrade), is recorded at once: the operator's operations are those of the version
  // it speaks
  const known = s.protocol ?? msg.registered ?? msg.protocol;
  const base =
    stale.length > 0 || known !== msg.protocol
      ? { ...s, protocol: msg.protocol, commands, outbound: s.outbound.filter((o) => !stale.includes(o)) }
      : s;
  const next = pump(deps, ctx, underPolicy(base, msg.policy));
  if (next !== s) ctx.setState(next);
  const registration = servedAs(next);
  return registration === undefined ? { booted } : { booted, registration };
}

/**
 * The operator changed the charger's boot policy while it is connected: a charger that must learn
 * its new status is asked to boot again, and nothing that charges is sent to it under a lower
 * one. Its own calls are held to the new status from the boot that tells it (`servedAs`), except
 * those of a charger that never booted, held to its policy at once.
 */
export function onBootPolicyChanged(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  msg: MessageOf<'boot-policy-changed'>,
): null {
  const s = ctx.state;
  const next = pump(deps, ctx, underPolicy(s, msg.policy));
  if (next === s) return null;
  ctx.setState(next);
  const held = servedAs(next);
  if (held !== undefined && held !== servedAs(s)) deps.holdConnection(ctx.key, held);
  publishChange(deps, ctx, { type: 'charge-point' });
  return null;
}

/** Queues a command, and sends it at once when nothing is outstanding. */
export function onCommand(deps: ChargePointActorDeps, ctx: ChargePointCtx, msg: MessageOf<'command'>): CommandAccepted {
  const commandId = randomUUID();
  const c = msg.command;
  // the state is a database row: a new password goes into it as its hash only
  const command =
    c.kind === 'set-password' ? { kind: c.kind, password_hash: deps.passwords.hold(commandId, c.password) } : c;
  const full = queueFull(ctx.state, command);
  if (full !== undefined) {
    // refused as it comes: recorded, and told to whoever waits for its outcome
    const call = callOf(command, commandId, msg);
    ctx.setState({ ...ctx.state, commands: settle(deps, ctx, ctx.state, call, 'refused', full) });
    ctx.log.warn(
      { command_id: commandId, kind: c.kind, queued: ctx.state.outbound.length },
      'command refused: queue full',
    );
    return { command_id: commandId, status: 'refused', detail: full };
  }
  const next = pump(deps, ctx, queued(ctx.state, command, commandId, msg));
  ctx.setState(next);
  const status = next.commands.find((c) => c.command_id === commandId)?.status ?? 'queued';
  return { command_id: commandId, status };
}

/**
 * The operator cancelled reservation `reservationId` (its charger accepted): a partner's
 * RESERVE_NOW that made it is told (`tellReservationCanceled`). A partner's own
 * CANCEL_RESERVATION tells nothing more: it has its result.
 */
function tellCanceled(ctx: ChargePointCtx, s: ChargePointState, reservationId: number, commandId: string): void {
  const reservation = s.reservations.find((r) => r.reservation_id === reservationId);
  if (reservation) tellReservationCanceled(ctx, reservation, `reservation-canceled:${commandId}`);
}

/** The charger answered the outstanding call (or it timed out or failed). */
export function onAnswer(deps: ChargePointActorDeps, ctx: ChargePointCtx, msg: MessageOf<'answer'>): void {
  const s = ctx.state;
  const head = s.outbound[0];
  if (!head || head.command_id !== msg.command_id) return;
  if (head.command.kind === 'cancel-reservation' && msg.status === 'Accepted' && head.notify === undefined)
    tellCanceled(ctx, s, head.command.reservation_id, head.command_id);
  const next = {
    ...s,
    reservations: reservationsAfterAnswer(s.reservations, head, msg.status),
    // a start the charger refused is followed by no transaction: its token is no longer let in
    // as ours (authorization.ts startFor); one that timed out or failed may still have started
    recent_starts:
      head.command.kind === 'start' && msg.status === 'Rejected'
        ? s.recent_starts?.filter((r) => r.command_id !== head.command_id)
        : s.recent_starts,
    outbound: s.outbound.slice(1),
    commands: settle(deps, ctx, s, head, msg.status, msg.detail, msg.reply, msg.error_code),
  };
  // the outstanding call is settled: the next queued one may go
  ctx.setState(pump(deps, ctx, next));
  publishChange(deps, ctx, { type: 'charge-point' });
}
