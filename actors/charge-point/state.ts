import type { ChargerEvent, ChargerEventOutcome, QueuedCommand } from '../../src/ocpp/domain.js';
import type { ActorContext } from '../../src/runtime/types.js';
import type { ChargePointActorDeps, CsmsEvent } from './ports.js';
import type { ChargePointState, CommandAuthorization } from './protocol.js';
import { inUtc, parseInstant } from '../../src/rfc3339.js';
import { statusOfRoamed, statusToLocation } from './roaming.js';

/**
 * What the charger reported about itself: its boot, the status of its connectors and the
 * reservations it holds. The open transactions are state too, kept by transactions.ts; the
 * outbound calls by outbound-queue.ts.
 */

export type ChargePointCtx = ActorContext<ChargePointState>;
type EventOf<T extends ChargerEvent['type']> = Extract<ChargerEvent, { type: T }>;
type Reservations = ChargePointState['reservations'];

export function initialChargePointState(): ChargePointState {
  return {
    protocol: null,
    boot: null,
    connectors: [],
    reservations: [],
    transactions: [],
    finished: [],
    next_transaction_id: 1,
    next_remote_start_id: 1,
    outbound: [],
    commands: [],
  };
}

/**
 * The state of a charge point the operator removed: nothing of what its charger reported, but
 * its counters, so that a charger registered again under its id never reuses a transaction id
 * the kept sessions hold.
 */
export function retiredChargePointState(s: ChargePointState | undefined): ChargePointState {
  if (!s) return initialChargePointState();
  return {
    ...initialChargePointState(),
    next_transaction_id: s.next_transaction_id,
    next_remote_start_id: s.next_remote_start_id,
    // the transactions its removal closed are finished: the charger registered again may still
    // deliver their ends (queued while it was away), which then change nothing, as an end of a
    // finished transaction does; unknown, each would open a second session of the same charge
    finished: [
      ...s.finished,
      ...s.transactions.map(({ dedupe_key, transaction_id, started_at }) =>
        started_at === undefined ? { dedupe_key, transaction_id } : { dedupe_key, transaction_id, started_at },
      ),
    ].slice(-MAX_FINISHED),
  };
}

/**
 * Tells the live views, once the turn has committed, that this charge point changed; nothing
 * when no view could receive it (every meter value comes through here).
 */
export function publishChange(
  deps: Pick<ChargePointActorDeps, 'publish' | 'publishing'>,
  ctx: ChargePointCtx,
  event: Omit<CsmsEvent, 'charge_point_id'>,
): void {
  if (!deps.publishing()) return;
  ctx.afterCommit(() => deps.publish({ ...event, charge_point_id: ctx.key }));
}

/** How many finished transactions the state remembers (`finished`). */
export const MAX_FINISHED = 20;

/**
 * The most connectors a charger is tracked with: far above any real charger's, so that one
 * reporting ever new EVSE and connector numbers cannot grow its state (and every turn's write)
 * and the fleet's alerts without end.
 */
export const MAX_CONNECTORS = 128;

/** How far ahead of our clock a held status may be stamped and still outrank a later report. */
const FUTURE_TOLERANCE_MS = 10_000;

/**
 * Whether a status report stamped `at` is older than the one held: a report queued while offline
 * and delivered after a newer one, which must not replace it. Only a status received since the
 * charger's last boot outranks a report: a charger without a clock of its own may count again
 * from the same date at every start, and its reports after a reboot would otherwise lose to those
 * before it. A held time beyond FUTURE_TOLERANCE_MS ahead of now (a charger clock that was wrong)
 * outranks nothing, or the connector would keep that status until the clock caught up.
 */
function isOlderReport(
  at: string,
  held: ChargePointState['connectors'][number],
  boot: ChargePointState['boot'],
): boolean {
  // received before the last boot, or either time unknown: it outranks nothing
  if (!(boot !== null && (held.received_at ?? -Infinity) >= parseInstant(boot.booted_at))) return false;
  const heldMs = parseInstant(held.updated_at);
  return heldMs <= Date.now() + FUTURE_TOLERANCE_MS && parseInstant(at) < heldMs;
}

export function onStatusChanged(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  event: EventOf<'status-changed'>,
): ChargerEventOutcome {
  const isThis = (c: ChargePointState['connectors'][number]): boolean =>
    c.evse_id === event.evse_id && c.connector_id === event.connector_id;
  // a repeated report of the same status (periodic, or after a reconnect) changes nothing
  const same = s.connectors.find(isThis);
  if (
    same &&
    same.status === event.status &&
    same.error_code === event.error_code &&
    same.info === event.info &&
    same.vendor_id === event.vendor_id &&
    same.vendor_error_code === event.vendor_error_code
  )
    return {};
  if (same && isOlderReport(event.timestamp, same, s.boot)) {
    ctx.log.info(
      {
        charge_point: ctx.key,
        evse_id: event.evse_id,
        status: event.status,
        at: event.timestamp,
        held: same.updated_at,
      },
      'status report older than the one held: answered, not kept',
    );
    return {};
  }
  if (!same && s.connectors.length >= MAX_CONNECTORS) {
    ctx.log.warn(
      { charge_point: ctx.key, evse_id: event.evse_id, connector_id: event.connector_id, max: MAX_CONNECTORS },
      'status of a connector past the most a charger is tracked with: answered, not kept',
    );
    return {};
  }
  const connectors = [
    ...s.connectors.filter((c) => !isThis(c)),
    {
      evse_id: event.evse_id,
      connector_id: event.connector_id,
      status: event.status,
      error_code: event.error_code,
      ...(event.info === undefined ? {} : { info: event.info }),
      ...(event.vendor_id === undefined ? {} : { vendor_id: event.vendor_id }),
      ...(event.vendor_error_code === undefined ? {} : { vendor_error_code: event.vendor_error_code }),
      // in UTC as every other time the views show (a charger may send its local offset)
      updated_at: inUtc(event.timestamp),
      received_at: Date.now(),
    },
  ].sort((a, b) => a.evse_id - b.evse_id || a.connector_id - b.connector_id);
  const next = { ...s, connectors };
  ctx.setState(next);
  statusToLocation(deps, ctx, next, event.evse_id);
  statusOfRoamed(deps, ctx, next, event.evse_id, event.status, Math.min(parseInstant(event.timestamp), Date.now()));
  publishChange(deps, ctx, { type: 'charge-point' });
  return {};
}

/** 2.0.1 ReservationStatusUpdate: Expired or Removed, the reservation is over either way. */
export function onReservationUpdated(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  event: EventOf<'reservation-updated'>,
): ChargerEventOutcome {
  // Removed: ended otherwise than by its expiry or a start (the charger's own operator): a
  // partner's is told as when our operator cancels it
  const ended = s.reservations.find((r) => r.reservation_id === event.reservation_id);
  // one past its expiry ran out, whatever the charger calls its end: OCPI has no result for that
  if (ended && event.status === 'Removed' && parseInstant(ended.expiry_date) > Date.now())
    tellReservationCanceled(ctx, ended, `reservation-removed:${ended.reservation_id}:${ended.reserved_at ?? ''}`);
  ctx.setState({ ...s, reservations: s.reservations.filter((r) => r.reservation_id !== event.reservation_id) });
  publishChange(deps, ctx, { type: 'charge-point' });
  return {};
}

/**
 * A partner's reservation ended by the CPO's side (our operator's cancel, the charger's
 * ReservationStatusUpdate Removed): its RESERVE_NOW's command actor is told durably, once per
 * `dedupeKey`, and tells the partner CANCELED_RESERVATION (actors/ocpi-command). Nothing for a
 * reservation no partner made.
 */
export function tellReservationCanceled(
  ctx: ChargePointCtx,
  reservation: ChargePointState['reservations'][number],
  dedupeKey: string,
): void {
  const notify = reservation.notify;
  if (!notify) return;
  ctx.afterCommit(async () => {
    await ctx.actors
      .inbox<{ op: 'reservation-canceled' }>(notify)
      .sendDurable({ op: 'reservation-canceled' }, { dedupeKey })
      .catch((err: unknown) => {
        ctx.log.warn(
          { err, notify, reservation_id: reservation.reservation_id },
          'reservation cancel not told to its command',
        );
      });
  });
}

/** The reservations once the charger answered `call` (a partner's carries its authorization) with `status`. */
export function reservationsAfterAnswer(
  held: Reservations,
  call: { command: QueuedCommand; authorization?: CommandAuthorization | undefined; notify?: string | undefined },
  status: string,
): Reservations {
  const c = call.command;
  // a reservation past its expiry is over: the charger lets it go by itself
  const now = Date.now();
  const reservations = held.filter((r) => !(Date.parse(r.expiry_date) <= now));
  if (status !== 'Accepted') return reservations;
  if (c.kind === 'reserve') {
    return [
      ...reservations.filter((r) => r.reservation_id !== c.reservation_id),
      {
        reservation_id: c.reservation_id,
        evse_id: c.evse_id ?? c.connector_id,
        id_tag: c.id_tag,
        expiry_date: c.expiry_date,
        status: 'Accepted',
        reserved_at: now,
        ...(call.authorization ? { authorization: call.authorization } : {}),
        ...(call.notify ? { notify: call.notify } : {}),
      },
    ];
  }
  if (c.kind === 'cancel-reservation') return reservations.filter((r) => r.reservation_id !== c.reservation_id);
  return reservations;
}

/**
 * A charger's report (src/ocpp/reports.ts): its entries go to the event log in this turn; the
 * status of a long operation is kept on the charge point; a DataTransfer is answered by its
 * vendor's handler.
 */
export async function onReported(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  event: EventOf<'reported'>,
): Promise<ChargerEventOutcome> {
  ctx.write(deps.reports.append(ctx.key, event.action, event.entries));
  if (event.progress && !idleAfterOutcome(s, event.progress)) {
    const { operation, status, request_id } = event.progress;
    ctx.setState({
      ...s,
      operations: { ...s.operations, [operation]: { status, request_id, updated_at: new Date().toISOString() } },
    });
  }
  publishChange(deps, ctx, { type: 'charge-point' });
  if (!event.data_transfer) return {};
  return { data_transfer: await deps.dataTransfer(ctx.key, event.data_transfer) };
}

/** The statuses that end a firmware update or an upload (OCPP 1.6 and 2.0.1): its outcome. */
const OUTCOMES = new Set([
  'Installed',
  'InstallationFailed',
  'DownloadFailed',
  'InvalidSignature',
  'InstallVerificationFailed',
  'Uploaded',
  'UploadFailed',
  'UploadFailure',
  'BadMessage',
  'NotSupportedOperation',
  'PermissionDenied',
  'AcceptedCanceled',
]);

/**
 * An `Idle` (the answer to a TriggerMessage when nothing is under way, 2.0.1 FirmwareStatusEnumType)
 * after the outcome of the operation's last request says nothing new: the outcome stays shown (a
 * failed update read Idle after a trigger, its failure left to the event log).
 */
function idleAfterOutcome(s: ChargePointState, progress: NonNullable<EventOf<'reported'>['progress']>): boolean {
  const held = s.operations?.[progress.operation];
  return progress.status === 'Idle' && held !== undefined && OUTCOMES.has(held.status);
}

/** A part of a 2.0.1 charger's device model (NotifyReport). */
export function onDeviceModelReported(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  event: EventOf<'device-model-reported'>,
): ChargerEventOutcome {
  if (event.variables.length > 0) ctx.write(deps.reports.deviceModel(ctx.key, event.request_id, event.variables));
  publishChange(deps, ctx, { type: 'charge-point' });
  return {};
}
