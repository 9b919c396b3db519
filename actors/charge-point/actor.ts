import type { ChargerEvent, ChargerEventOutcome, ProtocolName } from '../../src/ocpp/domain.js';
import { parseAddress, type Address } from '../../src/runtime/address.js';
import { defineActor, type DeactivationReason } from '../../src/runtime/types.js';
import { onAnswer, onCommand, onConnected } from './outbound-queue.js';
import type { ChargePointActorDeps } from './ports.js';
import { chargePointProtocol, ChargePointState } from './protocol.js';
import {
  initialChargePointState,
  onBooted,
  onReservationUpdated,
  onStatusChanged,
  type ChargePointCtx,
} from './state.js';
import { lateToken, linkOf, reloadLinks, restoreStatuses, roamingOf } from './roaming.js';
import { epochMs, onMeterSampled, onTransactionProgress, onTransactionStarted } from './transactions.js';

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
      // every token is accepted here; token checks belong to the eMSP side (OCPI real-time authorization)
      return { id_tag_status: 'Accepted' };
    case 'transaction-started':
      if (!deps.roaming || !linkOf(s, event.evse_id)) return onTransactionStarted(deps, ctx, s, event, protocol);
      return roamingOf(deps, s, { ...event, started_at: epochMs(event.timestamp) }).then((roamed) =>
        onTransactionStarted(deps, ctx, ctx.state, event, protocol, roamed),
      );
    case 'transaction-updated':
    case 'transaction-ended': {
      const open = s.transactions.find((t) => t.transaction_id === event.transaction_id);
      if (!open || open.ocpi !== undefined || event.id_tag === null || !linkOf(s, open.evse_id))
        return onTransactionProgress(deps, ctx, s, event);
      return lateToken(deps, ctx, open.transaction_id, event.id_tag).then(() =>
        onTransactionProgress(deps, ctx, ctx.state, event),
      );
    }
    case 'meter-sampled':
      return onMeterSampled(deps, ctx, s, event);
    case 'reservation-updated':
      return onReservationUpdated(deps, ctx, s, event);
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
          if (ctx.state.evse_links === undefined && deps.roaming)
            return reloadLinks(deps, ctx).then(() => onConnected(deps, ctx, msg));
          restoreStatuses(deps, ctx);
          return onConnected(deps, ctx, msg);
        case 'links-changed':
          return reloadLinks(deps, ctx).then(() => null);
        case 'event':
          return onEvent(deps, ctx, msg.event, msg.protocol);
        case 'command':
          return onCommand(deps, ctx, msg);
        case 'answer':
          onAnswer(deps, ctx, msg);
          return null;
        case 'get':
          return ctx.state;
      }
    },
    onDeactivate(address: Address, reason: DeactivationReason) {
      if (reason === 'pin-released' || reason === 'idle') return;
      deps.closeSocket(parseAddress(address).key, reason);
    },
  });
}

export type ChargePointActorDefinition = ReturnType<typeof chargePointActor>;
