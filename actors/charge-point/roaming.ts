import type { ProtocolName, SignedMeterReading } from '../../src/ocpp/domain.js';
import type { ChargePointActorDeps, EvseLink, OcpiEvseStatus, RoamingPort, SampleKind } from './ports.js';
import type { ActorContext } from '../../src/runtime/types.js';
import { reservationFor, startFor, usedUp, type AuthDecision } from './authorization.js';
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
export function linkOf(s: ChargePointState, evse: number): EvseLink | undefined {
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

type OpenTransaction = ChargePointState['transactions'][number];
/** The OCPI session part of an open transaction (protocol.ts RoamedTransaction). */
export type Roamed = NonNullable<OpenTransaction['ocpi']>;

/**
 * Whether a transaction is roamed (docs/ROAMING.md "Sessions"): on a linked EVSE with a token an
 * eMSP partner issued, it is, and the answer is its OCPI session's parts; `null` when it is not;
 * `undefined` when it cannot be told yet (no token yet: 2.0.1 may start a transaction at plug-in).
 */
export async function roamingOf(
  deps: ChargePointActorDeps,
  s: ChargePointState,
  t: {
    evse_id: number;
    connector_id: number;
    id_tag: string | null;
    remote_start_id: number | null;
    started_at: number;
    /** the start's dedupe key (a retry of the start that used a remote start is still its) */
    dedupe_key?: string;
    /** 2.0.1 idToken type (authorization.ts `startFor`) */
    id_tag_type?: string;
    /** the reservation the start names (authorization.ts `reservationFor`) */
    reservation_id?: number | null | undefined;
  },
  decision?: AuthDecision,
): Promise<Roamed | null | undefined> {
  const link = linkOf(s, t.evse_id);
  if (!deps.roaming || !link) return null;
  if (t.id_tag === null) return undefined;
  const remote = startFor(s, t.id_tag, t.evse_id, t.remote_start_id, t.dedupe_key, t.id_tag_type);
  // a partner's START_SESSION or RESERVE_NOW names the token it authorized, and its reference
  // (mod_commands: "this reference will be provided in the relevant Session and/or CDR")
  const command =
    remote?.authorization ??
    (decision?.real_time
      ? undefined
      : reservationFor(s, t.id_tag, t.evse_id, t.reservation_id ?? null, t.id_tag_type)?.authorization);
  const parts = command
    ? { ...command, auth_method: 'COMMAND' as const }
    : await byToken(deps.roaming, t.id_tag, t.id_tag_type, remote === undefined ? undefined : remote.roaming, decision);
  if (!parts) return null;
  return {
    ...parts,
    location_id: link.location_id,
    evse_uid: link.evse_uid,
    // a 1.6 connector is an EVSE with one connector; a 2.0.1 connector N is OCPI connector "N"
    connector_id: s.protocol === 'ocpp2.0.1' ? String(t.connector_id || 1) : '1',
    started_at: t.started_at,
    kwh: 0,
    pushed_at: 0,
  };
}

/**
 * The session's token and how it was authorized, from the OCPI token of the id tag (null when we
 * hold none, or it is our own). A partner's START_SESSION names its token itself (`roamingOf`).
 */
async function byToken(
  port: RoamingPort,
  idTag: string,
  /** 2.0.1 idToken type */
  idTagType: string | undefined,
  /** the transaction follows a remote start: a partner's (true) or the operator's (false) */
  remoteStart: boolean | undefined,
  decision: AuthDecision | undefined,
): Promise<Pick<Roamed, 'token' | 'auth_method' | 'authorization_reference'> | null> {
  const token = await port.tokenOf(idTag, idTagType);
  if (!token || token.own) return null;
  // the operator's start lets the tag in without asking the eMSP: the eMSP is billed only for a
  // token it lets charge without asking (valid, whitelist other than NEVER); before, a card it had
  // blocked was billed to it as WHITELIST
  if (remoteStart === false && (!token.valid || token.whitelist === 'NEVER')) return null;
  const { country_code, party_id, uid, type, contract_id } = token;
  return {
    token: { country_code, party_id, uid, type, contract_id },
    auth_method: remoteStart === true ? 'COMMAND' : decision?.real_time ? 'AUTH_REQUEST' : 'WHITELIST',
    ...(decision?.authorization_reference ? { authorization_reference: decision.authorization_reference } : {}),
  };
}

/** Writes the session for its eMSP in this turn and queues its push; answers it as pushed now. */
export function pushSession(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  sessionId: string,
  r: Roamed,
  /** null: what the session row holds (`RoamingSession.kwh`) */
  kwh: number | null,
  endedAt: number | null,
): Roamed {
  const port = deps.roaming;
  if (!port) return r;
  // what waited for the interval goes now
  ctx.cancelTimer(pushTimer(sessionId));
  ctx.write(
    port.session({
      id: sessionId,
      token: r.token,
      auth_method: r.auth_method,
      ...(r.authorization_reference ? { authorization_reference: r.authorization_reference } : {}),
      location_id: r.location_id,
      evse_uid: r.evse_uid,
      connector_id: r.connector_id,
      started_at: r.started_at,
      ended_at: endedAt,
      kwh,
      status: endedAt === null ? 'ACTIVE' : 'COMPLETED',
    }),
  );
  ctx.afterCommit(() => {
    port.queued();
    port.sessionWritten(sessionId, () =>
      deps.publish({ type: 'session', session_id: sessionId, charge_point_id: ctx.key }),
    );
  });
  return { ...r, kwh: kwh ?? r.kwh, pushed_at: Date.now() };
}

/** The name of the actor's timer that sends a roamed session's waiting energy (transactions.ts `onSessionPushDue`). */
export function pushTimer(sessionId: string): string {
  return `session-push:${sessionId}`;
}

/** Keeps a meter reading of a roamed transaction for its CDR, in this turn. */
export function sampleMeter(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  sessionId: string,
  at: number,
  wh: number | null,
  /** a corrected first reading replaces the one kept at its instant; the end's is the last (`RoamingPort.sample`) */
  kind: SampleKind = 'between',
): void {
  const port = deps.roaming;
  if (port && wh !== null && Number.isFinite(wh)) ctx.write(port.sample(sessionId, at, wh, kind));
}

/**
 * Keeps what the charger of a roamed transaction said of its charging, for its CDR's periods
 * (docs/TARIFFS.md "CDRs from transactions"), in this turn: whether it charges from `at` on, and
 * the currents and powers its meter values gave (epoch ms), and their signed readings.
 */
export function keepCharging(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  sessionId: string,
  said: {
    at: number;
    charging: boolean | undefined;
    currents: ReadonlyArray<{ at: number; a: number | undefined; kw: number | undefined }>;
    signed?: ReadonlyArray<SignedMeterReading & { at: number }>;
  },
): void {
  const port = deps.roaming;
  if (!port) return;
  if (said.charging !== undefined) ctx.write(port.state(sessionId, said.at, { charging: said.charging }));
  for (const c of said.currents) ctx.write(port.state(sessionId, c.at, { current_a: c.a, power_kw: c.kw }));
  for (const s of said.signed ?? []) ctx.write(port.signed(sessionId, s));
}

/**
 * A 1.6 StatusNotification of a connector with a roamed transaction open: Charging says it
 * charges from then on, any other status (SuspendedEV, SuspendedEVSE, Finishing, Faulted ...)
 * that it does not. 2.0.1 says this in its TransactionEvents' `chargingState` instead (its
 * connector status, Occupied, does not tell).
 */
export function statusOfRoamed(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  evse: number,
  status: string,
  at: number,
): void {
  if (s.protocol !== 'ocpp1.6' || !Number.isFinite(at)) return;
  const tx = s.transactions.find((t) => t.evse_id === evse && t.ocpi);
  if (tx) keepCharging(deps, ctx, tx.session_id, { at, charging: status === 'Charging', currents: [] });
}

/**
 * The remote start a token named late follows, if any (2.0.1: a RequestStartTransaction of the
 * running transaction, named by its remoteStartId): it becomes the session's command
 * (`remote_start_command_id`), and, having started this transaction, no other: the recent starts
 * with it used up, for the caller's state.
 */
export function followedStart(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  s: ChargePointState,
  tx: OpenTransaction,
  idTag: string,
  remoteStartId: number | null,
  idTagType: string | undefined,
): ChargePointState['recent_starts'] {
  const remote = startFor(s, idTag, tx.evse_id || null, remoteStartId, tx.dedupe_key, idTagType);
  if (remote?.command_id !== undefined) ctx.write(deps.sessions.followed(tx.session_id, remote.command_id));
  return usedUp(s, remote, tx.dedupe_key);
}

/**
 * A 2.0.1 transaction that started without a token (at plug-in), or whose token was refused, and
 * now names one that authorizes it: whether it is roamed is decided now, and a roamed one is
 * written for its eMSP from here on.
 */
export async function lateToken(
  deps: ChargePointActorDeps,
  ctx: ChargePointCtx,
  transactionId: string,
  idTag: string,
  decision: AuthDecision | undefined,
  /**
   * the 2.0.1 remoteStartId the event names (a RequestStartTransaction of a running transaction),
   * and its idToken type (authorization.ts `startFor`)
   */
  named: {
    remote_start_id: number | null;
    id_tag_type?: string | undefined;
    /** the token authorizes a transaction whose own was refused (not roamed: `ocpi` null) */
    late?: boolean;
  },
): Promise<void> {
  const s = ctx.state;
  const tx = s.transactions.find((t) => t.transaction_id === transactionId);
  if (!tx || (tx.ocpi !== undefined && !(named.late === true && tx.ocpi === null))) return;
  const accepted = decision === undefined || decision.status === 'Accepted';
  const where = {
    evse_id: tx.evse_id,
    connector_id: 0,
    id_tag: idTag,
    remote_start_id: named.remote_start_id,
    started_at: tx.started_at ?? Date.now(),
    dedupe_key: tx.dedupe_key,
    ...(named.id_tag_type === undefined ? {} : { id_tag_type: named.id_tag_type }),
  };
  const roamed = accepted ? await roamingOf(deps, s, where, decision) : null;
  if (roamed === undefined) return;
  const recent_starts = followedStart(deps, ctx, s, tx, idTag, named.remote_start_id, named.id_tag_type);
  const ocpi = roamed && pushSession(deps, ctx, tx.session_id, roamed, 0, null);
  if (ocpi && deps.roaming) {
    // the readings between the start and the token are the CDR's too
    ctx.write(deps.roaming.backfill(tx.session_id));
    sampleMeter(deps, ctx, tx.session_id, tx.started_at ?? Date.now(), tx.meter_start_wh);
  }
  ctx.setState({ ...s, recent_starts, transactions: s.transactions.map((t) => (t === tx ? { ...t, ocpi } : t)) });
}
