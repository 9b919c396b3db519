import { randomFillSync, randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { RawData, WebSocket } from 'ws';
import type {
  ChargerCommand,
  ChargerEvent,
  ChargerEventOutcome,
  ProtocolAdapter,
  ProtocolName,
  RegistrationStatus,
} from './domain.js';
import {
  ChargerCallError,
  ChargerCallTimeoutError,
  ChargerDisconnectedError,
  OcppCallError,
  errorCodeFor,
  type OcppErrorKind,
} from './errors.js';
import { callFrame, errorFrame, parseFrame, resultFrame, type InboundFrame } from './frames.js';
import type { OcppCall, OcppResponse } from './messages.js';
import { sentByChargers, type OcppSchemas } from './schemas.js';
import type { CallErrorCause, OcppSignals } from './signals.js';
import { stringWithNul } from './text-guard.js';
import { textFrame } from './text-frame.js';
import { ocpp16Adapter } from './v16/adapter.js';
import { ocpp201Adapter } from './v201/adapter.js';
import { isDependencyOutage } from '../platform/dependency-health.js';
import { ActorUnavailableError } from '../runtime/errors.js';
import { addressOf } from '../runtime/address.js';
import { chargePointProtocol } from '../../actors/charge-point/protocol.js';

/** What every connection of an endpoint shares (one object per endpoint, not per socket). */
export interface ConnectionSettings {
  schemas: OcppSchemas;
  log: Logger;
  /** hands a domain event of charger `chargePointId` to its actor and returns the outcome */
  handleEvent(chargePointId: string, protocol: ProtocolName, event: ChargerEvent): Promise<ChargerEventOutcome>;
  callTimeoutMs: number;
  /** the log lines and counters of the endpoint (signals.ts) */
  signals: OcppSignals;
  /** the unreachable dependency (database, Redis) while the process is degraded */
  degradedBy(): string | undefined;
}

/** A connection of either version (the class is typed by its version). */
export type AnyChargerConnection = ChargerConnection<'ocpp1.6'> | ChargerConnection<'ocpp2.0.1'>;

/** A charger's connection in the protocol it negotiated. */
export function chargerConnection(
  ws: WebSocket,
  socket: Duplex,
  protocol: ProtocolName,
  chargePointId: string,
  settings: ConnectionSettings,
): AnyChargerConnection {
  return protocol === 'ocpp1.6'
    ? new ChargerConnection(ws, socket, chargePointId, settings, ocpp16Adapter)
    : new ChargerConnection(ws, socket, chargePointId, settings, ocpp201Adapter);
}

/** Random bytes drawn 4 KiB at a time: one `randomFillSync` (~25 us here) per 256 connections. */
const idPool = { bytes: Buffer.alloc(4096), used: 4096 };

/**
 * 128 random bits as 32 hex characters, one flat string. Not `randomUUID()`: its string is built
 * from 16 pieces, a chain of 14 cons strings that a connection would hold for its lifetime (~450
 * bytes instead of 48).
 */
function newConnectionId(): string {
  if (idPool.used + 16 > idPool.bytes.length) {
    randomFillSync(idPool.bytes);
    idPool.used = 0;
  }
  const id = idPool.bytes.toString('hex', idPool.used, idPool.used + 16);
  idPool.used += 16;
  return id;
}

/**
 * The connection of each socket, for the socket's listeners: they are functions of this module,
 * called with the socket as `this`, instead of three closures (and their scope) per connection.
 */
const connectionOf = new WeakMap<
  WebSocket,
  {
    onMessage(data: RawData, isBinary: boolean): void;
    onPong(): void;
    onClose(code: number, reason: Buffer): void;
    onFrameError(err: Error & { code?: string }): void;
  }
>();

function onSocketMessage(this: WebSocket, data: RawData, isBinary: boolean): void {
  connectionOf.get(this)?.onMessage(data, isBinary);
}

function onSocketPong(this: WebSocket): void {
  connectionOf.get(this)?.onPong();
}

function onSocketClose(this: WebSocket, code: number, reason: Buffer): void {
  connectionOf.get(this)?.onClose(code, reason);
}

/**
 * ws read an invalid frame on `ws` and closes it: its connection learns the code for its
 * disconnect line. Called by the socket's one 'error' listener (endpoint.ts), not by a second
 * listener per socket.
 */
export function noteFrameError(ws: WebSocket, err: Error & { code?: string }): void {
  connectionOf.get(ws)?.onFrameError(err);
}

/**
 * The close code ws sends for an invalid frame it read (its receiver's status codes): 1007 bad
 * UTF-8, 1009 too large, 1008 too many fragments, 1002 any other breach of RFC 6455.
 */
export function frameErrorCloseCode(code: string | undefined): number {
  if (code === 'WS_ERR_INVALID_UTF8') return 1007;
  if (code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' || code === 'WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH') return 1009;
  if (code === 'WS_ERR_TOO_MANY_BUFFERED_PARTS') return 1008;
  return 1002;
}

/**
 * Bytes of frames to a charger that may wait unsent (beyond the kernel's socket buffer) before
 * the charger counts as not reading: its connection is then ended. A charger's answers are tens
 * or hundreds of bytes; one that sends and never reads made the process hold every answer
 * (8 MB a second for one charger sending 20 large frames a second).
 */
export const MAX_UNSENT_BYTES = 1024 * 1024;

/**
 * Calls from the charger being handled at once, held ones included. OCPP-J (1.6-J section 4.1.1,
 * 2.0.1 part 4 section 4.1.1) allows one outstanding CALL per direction; a charger that floods
 * gets GenericError for the calls past this many rather than an unbounded queue of actor asks.
 */
export const MAX_CALLS_IN_PROGRESS = 32;

interface PendingCall<V extends ProtocolName> {
  id: string;
  action: string;
  /** performance.now() when the CALL went out */
  sentAt: number;
  resolve(payload: OcppResponse<V>): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** How long after a TriggerMessage a Pending charger may send what it asked for (several: one per connector). */
const TRIGGERED_FOR_MS = 60_000;

/** The action of the message a TriggerMessage asks for (2.0.1 certificate requests come as SignCertificate). */
function triggeredAction(requested: string): string {
  return requested.startsWith('Sign') && requested.endsWith('Certificate') ? 'SignCertificate' : requested;
}

/**
 * What a TriggerMessage let a Pending charger send, and until when (ms): its message, of the EVSE
 * (1.6: connector) and connector it named, or of any when it named none.
 */
interface TriggerWindow {
  until: number;
  /** 2.0.1 `evse.id`, 1.6 `connectorId` */
  evse?: number;
  /** 2.0.1 `evse.connectorId` */
  connector?: number;
}

const intOf = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

/** The EVSE and connector a TriggerMessage names (2.0.1 `evse`, 1.6 `connectorId`), if any. */
function triggerScope(payload: Record<string, unknown>): Omit<TriggerWindow, 'until'> {
  const evse = payload.evse;
  if (typeof evse === 'object' && evse !== null) {
    const id = intOf((evse as Record<string, unknown>).id);
    const connector = intOf((evse as Record<string, unknown>).connectorId);
    return { ...(id === undefined ? {} : { evse: id }), ...(connector === undefined ? {} : { connector }) };
  }
  const connectorId = intOf(payload.connectorId);
  return connectorId === undefined ? {} : { evse: connectorId };
}

/**
 * Whether a message of a charger fits `window`: one that names an EVSE (2.0.1 `evseId`, 1.6
 * `connectorId`) and connector must name the window's, when the window has them. A message that
 * names none (a Heartbeat) fits any window of its action.
 */
function fitsWindow(window: TriggerWindow, payload: unknown): boolean {
  if (window.evse === undefined) return true;
  const p = typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>) : {};
  const evseId = intOf(p.evseId);
  const connectorId = intOf(p.connectorId);
  // 2.0.1 names its EVSE by evseId and the connector by connectorId, 1.6 its connector by connectorId
  const evse = evseId ?? connectorId;
  if (evse === undefined) return true;
  if (evse !== window.evse) return false;
  return window.connector === undefined || evseId === undefined || connectorId === window.connector;
}

/**
 * One charger's WebSocket: OCPP-J framing, schema checks in both directions, and the one place
 * where anything an inbound handler throws becomes a CALLERROR. The socket stays open whatever
 * the charger sends.
 */
export class ChargerConnection<V extends ProtocolName> {
  /** distinguishes this socket from earlier ones of the same charger (`newConnectionId`) */
  readonly connectionId = newConnectionId();
  /** set by pong and by any frame (a Heartbeat needs nothing else); cleared by each liveness round */
  alive = true;
  /**
   * When the last OCPP frame from the charger arrived (epoch ms; the upgrade counts as one). Kept
   * here, not written per frame: the endpoint persists it coalesced (docs/CSMS.md "Last seen").
   */
  lastSeenAt = Date.now();
  /** the `lastSeenAt` last handed to the store (the endpoint's flush) */
  persistedSeenAt = 0;
  /** when `open` was called (epoch ms; 0: never served, so no disconnect line) */
  private openedAt = 0;
  /** the close this CSMS asked for (its code and reason, for the disconnect line) */
  private closing: { code: number; reason: string } | undefined = undefined;
  private pending: PendingCall<V> | undefined;
  /** frames that arrive before the actor is pinned wait here */
  private held: string[] | undefined = [];
  private closed = false;
  /** frames received and not yet fully handled (held ones included) */
  private inProgress = 0;
  private bootTimer: NodeJS.Timeout | undefined;
  /**
   * The status the CSMS holds the charger's calls to (docs/CSMS.md "Boot and registration
   * policy"): the one it was last told, set at `open` and by each BootNotification reply; for a
   * charger that never booted, its policy (changed by the operator while it waits); undefined for
   * one that has not booted and whose policy is Accepted.
   */
  private registration: RegistrationStatus | undefined;
  /**
   * messages asked for with a TriggerMessage, and until when (ms) a Pending charger may send them:
   * TRIGGERED_FOR_MS after the TriggerMessage, unless the charger refused it; a boot or a lowered
   * status forgets them (made on the first TriggerMessage: a map per connection is memory every
   * charger would hold)
   */
  private triggered: Map<string, TriggerWindow[]> | undefined;

  /**
   * @param socket the upgraded socket under `ws`: a frame the CSMS sends is written to it whole
   *   (`textFrame`), one write instead of ws's header and payload corked together
   */
  constructor(
    private readonly ws: WebSocket,
    private readonly socket: Duplex,
    readonly chargePointId: string,
    private readonly opts: ConnectionSettings,
    private readonly adapter: ProtocolAdapter<V>,
  ) {
    connectionOf.set(ws, this);
    ws.on('message', onSocketMessage);
    ws.on('pong', onSocketPong);
    ws.on('close', onSocketClose);
  }

  /** a frame from the charger */
  onMessage(data: RawData, isBinary: boolean): void {
    this.alive = true;
    this.lastSeenAt = Date.now();
    // OCPP-J uses text frames only; a binary one reads as "not JSON" and gets its CALLERROR
    const text = isBinary ? '' : data.toString();
    if (this.inProgress >= MAX_CALLS_IN_PROGRESS) {
      void this.onFrame(text, true);
      return;
    }
    this.inProgress += 1;
    if (this.held) this.held.push(text);
    else void this.handle(text);
  }

  onPong(): void {
    this.alive = true;
  }

  /** ws read an invalid frame and closes the socket with its code: the CSMS's close, not the charger's */
  onFrameError(err: Error & { code?: string }): void {
    this.closing ??= { code: frameErrorCloseCode(err.code), reason: err.message };
  }

  onClose(code: number, reason: Buffer): void {
    if (this.openedAt > 0) {
      const close = this.closing
        ? { ...this.closing, by: 'csms' as const }
        : { code, reason: reason.toString(), by: 'charger' as const };
      this.opts.signals.disconnected(this.chargePointId, this.version, close, Date.now() - this.openedAt);
    }
    this.closed = true;
    this.stopBootTimer();
    this.failPending(new ChargerDisconnectedError(`${this.chargePointId} disconnected`));
  }

  get version(): V {
    return this.adapter.version;
  }

  get isOpen(): boolean {
    return !this.closed && this.ws.readyState === this.ws.OPEN;
  }

  /**
   * Starts handling frames (after the actor is pinned to this process). With a boot deadline the
   * charger must have its BootNotification accepted within it, or it is closed with 1008 (policy
   * violation): 1.6-J section 4.2 and 2.0.1 B01 make the boot the first thing a charger does.
   */
  open(
    opts: { bootDeadlineMs: number | null; registration?: RegistrationStatus | undefined } = { bootDeadlineMs: null },
  ): void {
    this.registration = opts.registration;
    this.openedAt = Date.now();
    if (opts.bootDeadlineMs !== null && !this.closed) {
      this.bootTimer = setTimeout(() => {
        this.opts.log.warn(
          { charge_point: this.chargePointId, deadline_ms: opts.bootDeadlineMs },
          'no BootNotification before the deadline: closing',
        );
        this.close(1008, 'BootNotification expected');
      }, opts.bootDeadlineMs);
      this.bootTimer.unref();
    }
    const held = this.held ?? [];
    this.held = undefined;
    for (const text of held) void this.handle(text);
  }

  /** The operator changed the policy of a charger that never booted: it holds from the next call. */
  hold(status: RegistrationStatus): void {
    this.registration = status;
    // what was triggered before is not what the operator allows now
    this.triggered = undefined;
  }

  /**
   * Whether a CALL of `action` is served under the charger's status. Not Accepted, the CSMS
   * answers anything but a BootNotification with SecurityError (2.0.1 B02.FR.09, B03.FR.07; 1.6
   * section 4.2 forbids these calls too), except, while Pending, the messages it asked for with
   * a TriggerMessage.
   */
  private admits(action: string, payload: unknown): boolean {
    const status = this.registration;
    if (status === undefined || status === 'Accepted' || action === 'BootNotification') return true;
    if (status !== 'Pending') return false;
    const now = Date.now();
    return this.triggered?.get(action)?.some((w) => now <= w.until && fitsWindow(w, payload)) ?? false;
  }

  /** Clears the boot deadline and lets its timer go (a booted charger keeps no timer). */
  private stopBootTimer(): void {
    clearTimeout(this.bootTimer);
    this.bootTimer = undefined;
  }

  /** Liveness round: a socket that did not answer the previous ping is dead. */
  probe(): void {
    if (!this.alive) {
      this.closing = { code: 1006, reason: 'no answer to ping' };
      this.ws.terminate();
      return;
    }
    this.alive = false;
    this.ws.ping();
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.closing = { code, reason };
    this.stopBootTimer();
    this.failPending(new ChargerDisconnectedError(reason));
    this.ws.close(code, reason);
  }

  /**
   * Resolves once the socket's `close` event has run (its `charger disconnected` line logged),
   * ending the socket after `ms` if the charger has not answered our close frame by then.
   */
  whenClosed(ms: number): Promise<void> {
    if (this.ws.readyState === this.ws.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.ws.terminate(), ms);
      // after onSocketClose, registered first: the line is out when this resolves
      this.ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * A domain command as a CALL in this socket's protocol, sent when `send` is called (after the
   * turn that records it committed); `send` resolves with the charger's status word. Its answer is
   * waited until `answerBy` (epoch ms) when given, else for `callTimeoutMs`.
   */
  command(
    command: ChargerCommand,
    remoteStartId: number,
  ): { action: string; send: (answerBy?: number) => Promise<{ status: string; reply: unknown }> } {
    const call = this.adapter.toCall(command, remoteStartId);
    if (!call)
      return {
        action: command.kind,
        send: () => Promise.reject(new Error(`${this.version} has no call for ${command.kind}`)),
      };
    return {
      action: call.action,
      send: (answerBy) =>
        this.call(call, answerBy === undefined ? undefined : answerBy - Date.now()).then((payload) => ({
          status: this.adapter.answerStatus(payload, command),
          reply: payload,
        })),
    };
  }

  /**
   * Sends a CSMS-to-charger CALL; resolves with the charger's (schema-checked) CALLRESULT payload.
   * The answer is waited for `waitMs` when given (a partner's command: until its deadline, later or
   * sooner than the call timeout), else `callTimeoutMs`.
   */
  call(call: OcppCall<V>, waitMs?: number): Promise<OcppResponse<V>> {
    const { action, payload } = call;
    if (this.pending) return Promise.reject(new Error(`a call (${this.pending.action}) is already outstanding`));
    if (!this.isOpen) return Promise.reject(new ChargerDisconnectedError(`${this.chargePointId} is not connected`));
    try {
      // the types say the payload fits; the check stays, as a guard against a bug in an adapter
      this.opts.schemas.checkRequest(this.version, call);
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    const timeoutMs = waitMs === undefined ? this.opts.callTimeoutMs : Math.max(0, waitMs);
    if (action === 'TriggerMessage' && 'requestedMessage' in payload) {
      // from the call on: a charger may send the message before its answer to the trigger
      const requested = triggeredAction(String(payload.requestedMessage));
      const now = Date.now();
      const window: TriggerWindow = { until: now + TRIGGERED_FOR_MS, ...triggerScope(payload) };
      const triggered = (this.triggered ??= new Map<string, TriggerWindow[]>());
      triggered.set(requested, [...(triggered.get(requested) ?? []).filter((w) => now <= w.until), window]);
      const forget = (): void => {
        const windows = this.triggered?.get(requested)?.filter((w) => w !== window);
        if (windows) this.triggered?.set(requested, windows);
      };
      return this.sent(call, timeoutMs).then(
        (reply) => {
          if ((reply as { status?: unknown }).status !== 'Accepted') forget();
          return reply;
        },
        (err: unknown) => {
          forget();
          throw err;
        },
      );
    }
    return this.sent(call, timeoutMs);
  }

  /** `call` on the socket, checked: its CALLRESULT payload, or why there is none. */
  private sent(call: OcppCall<V>, timeoutMs: number): Promise<OcppResponse<V>> {
    const { action, payload } = call;
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.pending?.id !== id) return;
        this.pending = undefined;
        this.opts.signals.called(this.chargePointId, action, 'timeout', undefined);
        reject(
          new ChargerCallTimeoutError(
            `${this.chargePointId} did not answer ${action} within ${Math.round(timeoutMs)} ms`,
          ),
        );
      }, timeoutMs);
      timer.unref();
      this.pending = { id, action, sentAt: performance.now(), resolve, reject, timer };
      this.send(callFrame(id, action, payload));
    });
  }

  private failPending(err: Error): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    clearTimeout(p.timer);
    this.opts.signals.called(this.chargePointId, p.action, 'closed', undefined);
    p.reject(err);
  }

  private async handle(text: string): Promise<void> {
    try {
      await this.onFrame(text, false);
    } finally {
      this.inProgress -= 1;
    }
  }

  /** `busy`: too many calls in progress; a CALL is refused, answers and errors are still read. */
  private async onFrame(text: string, busy: boolean): Promise<void> {
    const frame = parseFrame(text);
    switch (frame.t) {
      case 'call':
        if (busy) {
          this.sendError(
            frame.id,
            frame.action,
            this.opts.schemas.knows(this.version, frame.action),
            'GenericError',
            `more than ${MAX_CALLS_IN_PROGRESS} calls in progress; OCPP-J allows one outstanding call`,
            {},
          );
          return;
        }
        // JSON can carry U+0000 only as the escape \u0000: a frame without it needs no walk
        await this.onCall(frame, text.includes('\\u0000'));
        return;
      case 'result':
      case 'error':
        this.onAnswer(frame);
        return;
      case 'stray':
        this.opts.log.debug({ charge_point: this.chargePointId, why: frame.description }, 'unreadable answer dropped');
        return;
      case 'malformed':
        this.sendError(
          frame.id,
          undefined,
          false,
          frame.reason === 'unknown-type' ? 'MessageTypeNotSupported' : 'RpcFrameworkError',
          frame.description,
          {},
        );
    }
  }

  private async onCall(frame: Extract<InboundFrame, { t: 'call' }>, mayHoldNul: boolean): Promise<void> {
    const { adapter } = this;
    const { schemas } = this.opts;
    let reply: OcppResponse<V>;
    let booted: RegistrationStatus | undefined;
    // refusals before this point are the charger's message's fault (schema, NUL): a transaction's
    // end is then salvaged before its CALLERROR goes out
    let accepted = false;
    let admitted = false;
    const known = schemas.knows(this.version, frame.action);
    try {
      if (!known) throw new OcppCallError('NotImplemented', `${frame.action} is not an ${this.version} action`);
      if (!this.admits(frame.action, frame.payload))
        throw new OcppCallError(
          'SecurityError',
          `the charger's registration is ${this.registration}: only BootNotification${this.registration === 'Pending' ? ' and triggered messages are' : ' is'} served`,
        );
      // a CSMS-only action (RequestStartTransaction from a charger) is refused as such, its payload unread
      if (!sentByChargers(this.version, frame.action))
        throw new OcppCallError('NotSupported', `${frame.action} is sent by the CSMS, not by a charger`);
      admitted = true;
      const request = { action: frame.action, payload: frame.payload };
      // from here on the call is typed: its payload is its action's generated request type (an
      // assertion signature needs the declared this.opts.schemas, not the destructured alias)
      this.opts.schemas.checkRequest(this.version, request);
      const nul = mayHoldNul ? stringWithNul(request.payload) : undefined;
      // a field the schema allows but that no store can hold: refused here, never an InternalError
      if (nul !== undefined)
        throw new OcppCallError(
          'PropertyConstraintViolation',
          `${frame.action}: the string at ${nul} contains a NUL character`,
          { path: nul },
        );
      accepted = true;
      const event = adapter.toEvent(request);
      if (event === undefined) throw new OcppCallError('NotSupported', `${frame.action} is not supported by this CSMS`);
      const outcome = event === null ? undefined : await this.opts.handleEvent(this.chargePointId, this.version, event);
      reply = adapter.toReply(request, outcome, new Date());
      booted = event?.type === 'booted' ? outcome?.boot?.status : undefined;
      if (event?.type === 'booted' && booted !== undefined) this.opts.signals.booted(this.chargePointId, event, booted);
    } catch (err) {
      if (err instanceof OcppCallError) {
        // a charger held Pending or Rejected gets its refusal, nothing else
        if (admitted && !accepted) await this.salvageEnd(frame, err);
        this.sendError(frame.id, frame.action, known, err.kind, err.message, err.details);
      } else this.callFailed(frame, known, err);
      return;
    }
    try {
      this.opts.schemas.checkResponse(this.version, frame.action, reply);
    } catch (err) {
      // our own reply failing the official schema is a bug here, not the charger's fault
      this.opts.log.error(
        { err, action: frame.action, charge_point: this.chargePointId },
        'OCPP reply fails its schema',
      );
      this.sendError(frame.id, frame.action, known, 'InternalError', 'the CSMS produced an invalid reply', {});
      return;
    }
    if (booted !== undefined) this.booted(booted);
    this.opts.signals.answered(frame.action, true);
    this.send(resultFrame(frame.id, reply));
  }

  /**
   * A charger's call that failed here: InternalError. PostgreSQL or Redis away is no bug here:
   * the charger still gets InternalError (OCPP-J: the receiver could not process the call), but
   * the line and the metric say which (docs/OPERATIONS.md "InternalError during an outage").
   */
  private callFailed(frame: Extract<InboundFrame, { t: 'call' }>, known: boolean, err: unknown): void {
    // the connection ended while the call was handled (the charger left, or read nothing and was
    // cut off), or its charge point was pinned away from it (a newer connection of the charger,
    // here or in another process, whose claim is closing this one): nothing can be answered, and
    // it is no bug. Still open, it is closed as replaced: it was answered InternalError before
    const unpinned =
      err instanceof ActorUnavailableError && err.unpinned === addressOf(chargePointProtocol.kind, this.chargePointId);
    if (err instanceof ActorUnavailableError && (!this.isOpen || unpinned)) {
      this.opts.log.debug(
        { err, action: frame.action, charge_point: this.chargePointId },
        'OCPP call ended with its connection',
      );
      if (this.isOpen) this.close(4000, 'replaced by a newer connection');
      return;
    }
    const dependency = this.opts.degradedBy() ?? (isDependencyOutage(err) ? 'unreachable' : undefined);
    this.opts.signals.callFailed(this.chargePointId, frame.action, err, dependency);
    this.sendError(
      frame.id,
      frame.action,
      known,
      'InternalError',
      'the CSMS could not process this call',
      {},
      dependency === undefined ? 'internal' : 'dependency',
    );
  }

  /**
   * A BootNotification was answered with `status`: the charger is held to it, and the boot
   * deadline is met whatever the status (a Pending charger waits for its operator, a Rejected
   * one boots again after the retry interval: neither is closed for it).
   */
  private booted(status: RegistrationStatus): void {
    this.registration = status;
    this.triggered = undefined;
    this.stopBootTimer();
  }

  /**
   * A StopTransaction or TransactionEvent Ended that failed its schema still closes its
   * transaction from its valid fields (docs/CSMS.md "Transaction ends that fail their schema"),
   * before the CALLERROR the spec demands is sent. Must not throw: the CALLERROR still has to go.
   */
  private async salvageEnd(frame: Extract<InboundFrame, { t: 'call' }>, violation: OcppCallError): Promise<void> {
    const where = { charge_point: this.chargePointId, action: frame.action, violation: violation.message };
    try {
      const valid = (action: string, payload: unknown): boolean => {
        try {
          this.opts.schemas.checkRequest(this.version, { action, payload });
          return true;
        } catch {
          return false;
        }
      };
      const event = this.adapter.salvageEnd(frame.action, frame.payload, new Date(), valid);
      if (event === undefined) return;
      if (event === null) {
        this.opts.log.warn(where, 'invalid transaction end without a valid transaction id: nothing closed');
        return;
      }
      this.opts.log.warn(
        { ...where, transaction_id: event.transaction_id },
        'invalid transaction end: its valid fields applied to its transaction, if open',
      );
      await this.opts.handleEvent(this.chargePointId, this.version, event);
    } catch (err) {
      this.opts.log.error({ err, ...where }, 'invalid transaction end could not be applied');
    }
  }

  private onAnswer(frame: Extract<InboundFrame, { t: 'result' | 'error' }>): void {
    const p = this.pending;
    if (!p || p.id !== frame.id) {
      this.opts.log.debug({ id: frame.id, charge_point: this.chargePointId }, 'answer to no outstanding call');
      return;
    }
    this.pending = undefined;
    clearTimeout(p.timer);
    const seconds = (performance.now() - p.sentAt) / 1000;
    const { signals } = this.opts;
    if (frame.t === 'error') {
      signals.called(this.chargePointId, p.action, 'error', seconds, frame);
      p.reject(new ChargerCallError(frame.code, `${p.action}: ${frame.code} ${frame.description}`));
      return;
    }
    try {
      this.opts.schemas.checkResponse(this.version, p.action, frame.payload);
    } catch (err) {
      signals.called(this.chargePointId, p.action, 'invalid', seconds);
      p.reject(new ChargerCallError('FormatViolation', err instanceof Error ? err.message : String(err)));
      return;
    }
    signals.called(this.chargePointId, p.action, 'result', seconds);
    p.resolve(frame.payload);
  }

  /** `action`: the action of the CALL refused (undefined: a frame that was no readable CALL) */
  private sendError(
    id: string,
    action: string | undefined,
    known: boolean,
    kind: OcppErrorKind,
    description: string,
    details: Record<string, unknown>,
    // an InternalError is ours; every other code refuses what the charger sent
    cause: CallErrorCause = kind === 'InternalError' ? 'internal' : 'charger',
  ): void {
    const code = errorCodeFor(this.version, kind);
    this.opts.signals.callErrorSent(this.chargePointId, action, known, code, description, cause);
    this.send(errorFrame(id, code, description, details));
  }

  private send(text: string): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    // ws has nothing of its own queued to write (no compression is negotiated), so a frame written
    // here keeps its place among the pings and the close ws writes to the same socket
    const frame = textFrame(text);
    if (frame) this.socket.write(frame);
    else this.ws.send(text);
    if (this.ws.bufferedAmount > MAX_UNSENT_BYTES) this.dropUnread();
  }

  /** A charger that does not read what it is sent: its connection ends (no close frame would reach it). */
  private dropUnread(): void {
    const unsent = this.ws.bufferedAmount;
    this.opts.log.warn(
      { charge_point: this.chargePointId, unsent_bytes: unsent },
      'charger does not read what it is sent: connection ended',
    );
    this.closing ??= { code: 1008, reason: `${unsent} bytes unread` };
    this.closed = true;
    this.stopBootTimer();
    this.failPending(new ChargerDisconnectedError(`${this.chargePointId} does not read its socket`));
    this.ws.terminate();
  }
}
