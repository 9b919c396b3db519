import type { ChargerEvent, ChargerEventOutcome, QueuedCommand, RegistrationStatus } from '../../src/ocpp/domain.js';
import type { ChargePointActorDeps } from './ports.js';
import type { ChargePointState } from './protocol.js';
import { publishChange, type ChargePointCtx } from './state.js';

/**
 * The charger's registration (docs/CSMS.md "Boot and registration policy"): the status its
 * BootNotification is answered with comes from its boot policy (the operator's, else
 * OCPP_BOOT_POLICY); the status it was last told and the policy decide what it may send and
 * what may be sent to it. The policy reaches the actor with each connection and, while it is
 * connected, when the operator changes it.
 */

const RANK: Readonly<Record<RegistrationStatus, number>> = { Rejected: 0, Pending: 1, Accepted: 2 };

/** The status the charger was told in its last BootNotification reply (states from before: Accepted once booted). */
export function toldStatus(s: ChargePointState): RegistrationStatus | undefined {
  return s.registration ?? (s.boot ? 'Accepted' : undefined);
}

/** The boot policy as the actor last heard it (absent: Accepted, as before policies existed). */
export function policyOf(s: ChargePointState): RegistrationStatus {
  return s.boot_policy ?? 'Accepted';
}

/**
 * The status the CSMS sends under: the lower of what the charger was told and its policy (an
 * operator's Accepted takes effect at its next boot, a Pending or Rejected at once: nothing that
 * charges is sent to a charger the operator lowered). A charger that never booted is held to its
 * policy unless that is Accepted. What the charger itself may send is `servedAs`.
 */
export function heldTo(s: ChargePointState): RegistrationStatus | undefined {
  const told = toldStatus(s);
  const policy = policyOf(s);
  if (told === undefined) return policy === 'Accepted' ? undefined : policy;
  return RANK[told] <= RANK[policy] ? told : policy;
}

/**
 * The status the charger's own calls are held to: the one it was last told, whatever the policy
 * says since (docs/CSMS.md "When a new status holds"). A charger that never booted is held to its
 * policy unless that is Accepted. A lower policy holds from the BootNotification that tells it:
 * a 2.0.1 charger whose last boot was Accepted refuses a TriggerMessage BootNotification (F06.FR.17)
 * and goes on as Accepted, and refusing its transaction messages lost their energy.
 */
export function servedAs(s: ChargePointState): RegistrationStatus | undefined {
  const told = toldStatus(s);
  if (told !== undefined) return told;
  const policy = policyOf(s);
  return policy === 'Accepted' ? undefined : policy;
}

/** Calls that start, stop or hold a charging session: not sent while Pending (1.6 section 4.2, 2.0.1 B02). */
const CHARGING: ReadonlySet<QueuedCommand['kind']> = new Set([
  'start',
  'stop',
  'reserve',
  'cancel-reservation',
  'unlock',
]);

const isBootTrigger = (c: QueuedCommand): boolean => c.kind === 'trigger' && c.message === 'BootNotification';

/**
 * Why `command` may not be sent to the charger now, or undefined when it may. To a charger told
 * Rejected (or never booted, with a Rejected policy) the CSMS sends nothing (1.6 section 4.2,
 * 2.0.1 B03). To one told Pending, or one whose policy the operator lowered and which was not
 * told yet, nothing that charges; such a charger still told Accepted may be stopped, and reset
 * (the boot after it tells it its status), whatever the policy: one that refuses the
 * TriggerMessage BootNotification (2.0.1 F06.FR.17) could otherwise be neither stopped nor told.
 */
export function refusalOf(s: ChargePointState, command: QueuedCommand): string | undefined {
  const held = heldTo(s);
  if (held === undefined || held === 'Accepted') return undefined;
  const told = toldStatus(s);
  if (isBootTrigger(command) && told !== 'Rejected') return undefined;
  if (told === 'Rejected' || (told === undefined && held === 'Rejected'))
    return 'the charger is Rejected: the CSMS sends it nothing';
  if (CHARGING.has(command.kind) && !(command.kind === 'stop' && told === 'Accepted'))
    return `the charger is ${held}: ${command.kind} is not sent before it is Accepted (send it again then)`;
  return undefined;
}

/**
 * Whether the charger should be asked to boot again (TriggerMessage BootNotification) to learn a
 * status other than the one it was told: never while it was told Rejected (it boots again by
 * itself after the retry interval, and the CSMS should not call it), nor when one is queued.
 */
export function needsBootTrigger(s: ChargePointState): boolean {
  const told = toldStatus(s);
  if (told === undefined || told === 'Rejected' || told === policyOf(s)) return false;
  return !s.outbound.some((o) => isBootTrigger(o.command));
}

export const BOOT_TRIGGER: QueuedCommand = { kind: 'trigger', message: 'BootNotification', evse_id: null };

/** A BootNotification: answered with the policy's status and its interval; the boot information is kept whatever the status. */
export function onBooted(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  event: Extract<ChargerEvent, { type: 'booted' }>,
): ChargerEventOutcome {
  const status = policyOf(s);
  ctx.setState({
    ...s,
    // a status received before this boot outranks no report after it (state.ts isOlderReport):
    // told by its missing receipt, not by comparing times, which a status and the boot handled in
    // the same millisecond left equal
    connectors: s.connectors.map(({ received_at: _before, ...c }) => c),
    registration: status,
    boot: {
      vendor: event.vendor,
      model: event.model,
      serial_number: event.serial_number,
      firmware_version: event.firmware_version,
      booted_at: new Date().toISOString(),
      ...(event.hardware ? { hardware: event.hardware } : {}),
    },
  });
  publishChange(deps, ctx, { type: 'charge-point' });
  return { boot: { status, interval_s: status === 'Accepted' ? deps.heartbeatIntervalS : deps.bootRetryIntervalS } };
}
