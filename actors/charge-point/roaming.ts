import type { ProtocolName } from '../../src/ocpp/domain.js';
import type { ChargePointActorDeps, EvseLink, OcpiEvseStatus, RoamingPort } from './ports.js';
import type { ActorContext } from '../../src/runtime/types.js';
import type { ChargePointState } from './protocol.js';

type ChargePointCtx = ActorContext<ChargePointState>;

/**
 * The charger's side of the roaming bridge (docs/ROAMING.md): the status of a linked EVSE, in
 * OCPI's words, goes into our location and out to the partners, in the turn that took the
 * charger's StatusNotification.
 */

/** OCPP connector status -> OCPI EvseStatus (docs/ROAMING.md "Status"); unknown words: UNKNOWN. */
const STATUS: Record<ProtocolName, Record<string, OcpiEvseStatus>> = {
  'ocpp1.6': {
    Available: 'AVAILABLE',
    Preparing: 'CHARGING',
    Charging: 'CHARGING',
    SuspendedEV: 'CHARGING',
    SuspendedEVSE: 'CHARGING',
    Finishing: 'CHARGING',
    Reserved: 'RESERVED',
    Unavailable: 'INOPERATIVE',
    Faulted: 'OUTOFORDER',
  },
  'ocpp2.0.1': {
    Available: 'AVAILABLE',
    Occupied: 'CHARGING',
    Reserved: 'RESERVED',
    Unavailable: 'INOPERATIVE',
    Faulted: 'OUTOFORDER',
  },
};

/** Of an EVSE's connectors, the status that says most about the EVSE, first to last. */
const PRECEDENCE: OcpiEvseStatus[] = ['CHARGING', 'RESERVED', 'AVAILABLE', 'BLOCKED', 'INOPERATIVE', 'OUTOFORDER'];

export function ocpiStatusOf(protocol: ProtocolName, ocppStatus: string): OcpiEvseStatus {
  return STATUS[protocol][ocppStatus] ?? 'UNKNOWN';
}

/**
 * The OCPI status of EVSE `evse` from its connectors' reports: a 1.6 connector is an EVSE of its
 * own; a 2.0.1 EVSE with connectors of different states is in use when one is, and so on in the
 * order of PRECEDENCE. Undefined when the charger reported none.
 */
export function evseStatusOf(s: ChargePointState, evse: number): OcpiEvseStatus | undefined {
  const protocol = s.protocol ?? 'ocpp1.6';
  // a 1.6 connector is reported with evse_id = its connectorId (the adapter), so one filter serves both
  const statuses = s.connectors.filter((c) => c.evse_id === evse).map((c) => ocpiStatusOf(protocol, c.status));
  if (statuses.length === 0) return undefined;
  return PRECEDENCE.find((p) => statuses.includes(p)) ?? 'UNKNOWN';
}

/** The link of OCPP EVSE `evse`, if the operator made one. */
function linkOf(s: ChargePointState, evse: number): EvseLink | undefined {
  return s.evse_links?.find((l) => l.evse_number === evse);
}

/** Writes the status of each of `links` the charger has reported, in this turn. */
function writeStatuses(port: RoamingPort, ctx: ChargePointCtx, s: ChargePointState, links: EvseLink[]): void {
  let wrote = false;
  for (const link of links) {
    const status = evseStatusOf(s, link.evse_number);
    if (status === undefined) continue;
    ctx.write(port.evseStatus(link, status));
    wrote = true;
  }
  if (wrote) ctx.afterCommit(() => port.queued());
}

/** After a status report of EVSE `evse` (s: the state with it): its OCPI EVSE, if linked, follows. */
export function statusToLocation(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  evse: number,
): void {
  const link = linkOf(s, evse);
  if (deps.roaming && link) writeStatuses(deps.roaming, ctx, s, [link]);
}

/**
 * A new connection: the linked EVSEs get the statuses the charger last reported again (they went
 * UNKNOWN while it was away, docs/ROAMING.md Decision 6). Writes only what differs.
 */
export function restoreStatuses(deps: ChargePointActorDeps, ctx: ChargePointCtx): void {
  const links = ctx.state.evse_links;
  if (deps.roaming && links && links.length > 0) writeStatuses(deps.roaming, ctx, ctx.state, links);
}

/**
 * Reads the links again (the operator changed them, or they were never read) and gives each
 * linked EVSE the status the charger last reported.
 */
export async function reloadLinks(deps: ChargePointActorDeps, ctx: ChargePointCtx): Promise<void> {
  const port = deps.roaming;
  if (!port) return;
  const links = await port.links(ctx.key);
  const s = { ...ctx.state, evse_links: links };
  ctx.setState(s);
  writeStatuses(port, ctx, s, links);
}
