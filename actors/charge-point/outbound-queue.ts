import { randomUUID } from 'node:crypto';
import { COMMANDS_WITH_DATA, type ConnectedReply } from '../../src/ocpp/domain.js';
import type { ChargePointActorDeps } from './ports.js';
import {
  chargePointProtocol,
  type ChargePointCommandResult,
  type ChargePointMessage,
  type ChargePointState,
  type CommandAccepted,
} from './protocol.js';
import { publishChange, reservationsAfterAnswer, type ChargePointCtx } from './state.js';

/**
 * CSMS-to-charger calls: queued in the state, sent one at a time (OCPP-J allows one outstanding
 * call per direction), settled by the charger's answer, a timeout, a closed connection or expiry.
 * The recent outcomes are kept in `commands` for GET /v1/charge-points/{id}.
 */

type OutboundCall = ChargePointState['outbound'][number];
type MessageOf<T extends ChargePointMessage['type']> = Extract<ChargePointMessage, { type: T }>;

const MAX_COMMAND_RECORDS = 20;
/** a queued command that could not be sent for this long is dropped rather than sent late */
const COMMAND_EXPIRY_MS = 120_000;

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
  return [...rest, hasReply ? { ...entry, has_reply: true } : entry].slice(-MAX_COMMAND_RECORDS);
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
): ChargePointState['commands'] {
  const notify = call.notify;
  if (notify) {
    const result: ChargePointCommandResult = {
      type: 'charge-point-command-result',
      charge_point_id: ctx.key,
      command_id: call.command_id,
      kind: call.command.kind,
      status,
      detail,
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
  return record(s, call.command_id, call.command.kind, status, detail, reply !== undefined);
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
        detail: err instanceof Error ? err.message : String(err),
      }),
  );
}

/** how long a sent start is remembered for the transaction that follows it */
const RECENT_START_MS = 10 * 60_000;
const MAX_RECENT_STARTS = 10;

/** The recent starts with the start command `call` added (a start names its token and EVSE). */
function startsWith(s: ChargePointState, call: OutboundCall, now: number): ChargePointState['recent_starts'] {
  const c = call.command;
  if (c.kind !== 'start') return s.recent_starts;
  const kept = (s.recent_starts ?? []).filter((r) => now - r.at < RECENT_START_MS);
  const entry = {
    id_tag: c.id_tag,
    evse_id: c.evse_id,
    remote_start_id: s.next_remote_start_id,
    at: now,
    roaming: call.notify !== undefined,
    command_id: call.command_id,
  };
  return [...kept, entry].slice(-MAX_RECENT_STARTS);
}

/** Sends the head of the queue when nothing is outstanding. */
function pump(deps: ChargePointActorDeps, ctx: ChargePointCtx, s: ChargePointState): ChargePointState {
  let state = s;
  const now = Date.now();
  for (let head = state.outbound[0]; head !== undefined; head = state.outbound[0]) {
    if (head.sent_at !== null) return state;
    if (now - head.queued_at > COMMAND_EXPIRY_MS) {
      state = {
        ...state,
        outbound: state.outbound.slice(1),
        commands: settle(deps, ctx, state, head, 'expired', null),
      };
      continue;
    }
    const sent = deps.sendCommand(ctx.key, head.command, state.next_remote_start_id);
    if (!sent) return state;
    awaitAnswer(ctx, head, sent.answer);
    return {
      ...state,
      recent_starts: head.command.kind === 'start' ? startsWith(state, head, now) : state.recent_starts,
      next_remote_start_id: head.command.kind === 'start' ? state.next_remote_start_id + 1 : state.next_remote_start_id,
      outbound: [{ ...head, sent_at: now, connection: sent.connection }, ...state.outbound.slice(1)],
      commands: record(state, head.command_id, head.command.kind, 'sent', sent.action),
    };
  }
  return state;
}

/** A (new) connection of the charger: calls sent on an earlier one fail, the queue moves on. */
export function onConnected(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  msg: MessageOf<'connected'>,
): ConnectedReply {
  const booted = ctx.state.boot !== null;
  const s = ctx.state;
  // calls sent on an earlier connection will never be answered: report them and move on
  const stale = s.outbound.filter((o) => o.sent_at !== null && o.connection !== msg.connection);
  let commands = s.commands;
  for (const o of stale)
    commands = settle(deps, ctx, { ...s, commands }, o, 'failed', 'connection closed before the answer');
  // a plain (re)connect writes nothing: the protocol is recorded with the next change
  const base =
    stale.length > 0
      ? { ...s, protocol: msg.protocol, commands, outbound: s.outbound.filter((o) => !stale.includes(o)) }
      : s;
  const next = pump(deps, ctx, base);
  if (next !== s) ctx.setState(next);
  return { booted };
}

/** Queues a command, and sends it at once when nothing is outstanding. */
export function onCommand(deps: ChargePointActorDeps, ctx: ChargePointCtx, msg: MessageOf<'command'>): CommandAccepted {
  const commandId = randomUUID();
  const s = ctx.state;
  const call: OutboundCall = {
    command_id: commandId,
    command: msg.command,
    queued_at: Date.now(),
    sent_at: null,
    connection: null,
    ...(msg.notify ? { notify: msg.notify } : {}),
  };
  const queued: ChargePointState = {
    ...s,
    outbound: [...s.outbound, call],
    commands: record(s, commandId, msg.command.kind, 'queued', null),
  };
  const next = pump(deps, ctx, queued);
  ctx.setState(next);
  const status = next.commands.find((c) => c.command_id === commandId)?.status ?? 'queued';
  return { command_id: commandId, status };
}

/** The charger answered the outstanding call (or it timed out or failed). */
export function onAnswer(deps: ChargePointActorDeps, ctx: ChargePointCtx, msg: MessageOf<'answer'>): void {
  const s = ctx.state;
  const head = s.outbound[0];
  if (!head || head.command_id !== msg.command_id) return;
  const next = {
    ...s,
    reservations: reservationsAfterAnswer(s.reservations, head.command, msg.status),
    outbound: s.outbound.slice(1),
    commands: settle(deps, ctx, s, head, msg.status, msg.detail, msg.reply),
  };
  // the outstanding call is settled: the next queued one may go
  ctx.setState(pump(deps, ctx, next));
  publishChange(deps, ctx, { type: 'charge-point' });
}
