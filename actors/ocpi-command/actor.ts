import { chargePointProtocol } from '../charge-point/protocol.js';
import { defineActor, type ActorContext } from '../../src/runtime/types.js';
import type { OcpiCommandDeps } from './ports.js';
import { HAND_OVER_MS, ocpiCommandProtocol, type OcpiCommandMessage, type OcpiCommandReply } from './protocol.js';
import { initialOcpiCommandState, OcpiCommandState, result211Of, resultOf } from './state.js';

/**
 * The command actor (docs/ROAMING.md "Commands"): carries one OCPI command of a partner eMSP to
 * one of our chargers and its result back. `start` hands the mapped OCPP call to the charge
 * point's actor (which queues and sends it on the charger's socket) and answers whether it could;
 * the charge point's settlement, or the reminder at `timeout_s`, settles the command, and the
 * result is queued in the outbox for the partner's `response_url` in the same turn. Whatever
 * comes later (a late answer after TIMEOUT, a repeated settlement) changes nothing.
 */

type Ctx = ActorContext<OcpiCommandState>;
type StartMessage = Extract<OcpiCommandMessage, { op: 'start' }>;

async function start(ctx: Ctx, msg: StartMessage): Promise<OcpiCommandReply> {
  if (ctx.state.status !== 'new') return { accepted: true };
  let callId: string | null = null;
  const now = Date.now();
  const deadline = now + msg.timeout_s * 1000;
  try {
    // a call still queued behind others when the partner is told TIMEOUT is not sent at all
    const taken = await ctx.actors.ref(chargePointProtocol, msg.charge_point_id).ask(
      {
        type: 'command',
        command: msg.charger_command,
        notify: ctx.address,
        expires_at: deadline,
        ...(msg.authorization ? { authorization: msg.authorization } : {}),
      },
      { timeoutMs: HAND_OVER_MS },
    );
    // refused as it came (the charger's queue is full): the partner is told REJECTED now
    if (taken.status === 'refused') return { accepted: false, reason: taken.detail ?? 'the charge point refused it' };
    callId = taken.command_id;
  } catch (err) {
    // the charger has no connection: nothing was queued
    if (err instanceof Error && err.name === 'ActorUnavailableError') {
      ctx.log.info({ charge_point: msg.charge_point_id }, 'OCPI command not handed to the charge point');
      return { accepted: false, reason: `charge point ${msg.charge_point_id} is not connected` };
    }
    // no answer in time: the call may be queued at the charge point, so its settlement (to our
    // address) or our TIMEOUT follows as for a call we know was taken
    ctx.log.warn({ err, charge_point: msg.charge_point_id }, 'OCPI command hand-over unconfirmed');
  }
  ctx.setState({
    ...ctx.state,
    status: 'sent',
    partner_key: msg.partner_key,
    version: msg.version,
    command: msg.command,
    response_url: msg.response_url,
    charge_point_id: msg.charge_point_id,
    charger_command: msg.charger_command,
    call_id: callId,
    created_at: now,
  });
  ctx.setReminder('timeout', deadline, { op: 'timeout' });
  return { accepted: true };
}

/** Settles the command with the charger's status word: the result goes to the partner. */
function settle(deps: OcpiCommandDeps, ctx: Ctx, chargerStatus: string, errorCode?: string): void {
  const s = ctx.state;
  if (s.status !== 'sent') return;
  const result = resultOf(s.command, chargerStatus, errorCode);
  const body = s.version === '2.2.1' ? { result } : { result: result211Of(result) };
  ctx.write(deps.queueResult(s.partner_key, { url: s.response_url, version: s.version, body, command: ctx.key }));
  ctx.afterCommit(() => deps.queued());
  ctx.cancelReminder('timeout');
  ctx.setState({ ...s, status: 'settled', charger_status: chargerStatus, result, settled_at: Date.now() });
  ctx.log.info(
    { command: s.command, charge_point: s.charge_point_id, charger: chargerStatus, error_code: errorCode, result },
    'OCPI command settled',
  );
}

/**
 * An accepted RESERVE_NOW whose reservation the CPO's operator cancelled: the partner is told
 * CANCELED_RESERVATION at the command's `response_url` (OCPI 2.2.1 mod_commands, "Reservation
 * canceled by the CPO"), once. 2.1.1 has no such result: its partner is told nothing.
 */
function reservationCanceled(deps: OcpiCommandDeps, ctx: Ctx): void {
  const s = ctx.state;
  if (s.command !== 'RESERVE_NOW' || s.result !== 'ACCEPTED' || s.canceled_at !== undefined) return;
  if (s.version !== '2.2.1') {
    ctx.log.info({ charge_point: s.charge_point_id }, 'reservation cancelled by the CPO: 2.1.1 has no result to tell');
    return;
  }
  const body = { result: 'CANCELED_RESERVATION' };
  ctx.write(deps.queueResult(s.partner_key, { url: s.response_url, version: s.version, body, command: ctx.key }));
  ctx.afterCommit(() => deps.queued());
  ctx.setState({ ...s, canceled_at: Date.now() });
  ctx.log.info({ charge_point: s.charge_point_id }, 'reservation cancelled by the CPO: the partner is told');
}

/** The command actor, given the outbox (ports.ts). */
export function ocpiCommandActor(deps: OcpiCommandDeps) {
  return defineActor(ocpiCommandProtocol, {
    placement: 'sharded',
    state: OcpiCommandState,
    initialState: initialOcpiCommandState,
    async handle(ctx, msg): Promise<OcpiCommandReply> {
      if ('type' in msg) {
        // only our call is ever settled to this actor's address (it is this command's alone)
        settle(deps, ctx, msg.status, msg.error_code);
        return null;
      }
      if (msg.op === 'timeout') {
        settle(deps, ctx, 'timeout');
        return null;
      }
      if (msg.op === 'reservation-canceled') {
        reservationCanceled(deps, ctx);
        return null;
      }
      return start(ctx, msg);
    },
  });
}
