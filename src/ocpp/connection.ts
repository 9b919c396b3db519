import { randomFillSync, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { RawData, WebSocket } from 'ws';
import type { ChargerCommand, ChargerEvent, ChargerEventOutcome, ProtocolAdapter, ProtocolName } from './domain.js';
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
import type { OcppSchemas } from './schemas.js';
import { stringWithNul } from './text-guard.js';
import { ocpp16Adapter } from './v16/adapter.js';
import { ocpp201Adapter } from './v201/adapter.js';

/** What every connection of an endpoint shares (one object per endpoint, not per socket). */
export interface ConnectionSettings {
  schemas: OcppSchemas;
  log: Logger;
  /** hands a domain event of charger `chargePointId` to its actor and returns the outcome */
  handleEvent(chargePointId: string, protocol: ProtocolName, event: ChargerEvent): Promise<ChargerEventOutcome>;
  callTimeoutMs: number;
}

/** A connection of either version (the class is typed by its version). */
export type AnyChargerConnection = ChargerConnection<'ocpp1.6'> | ChargerConnection<'ocpp2.0.1'>;

/** A charger's connection in the protocol it negotiated. */
export function chargerConnection(
  ws: WebSocket,
  protocol: ProtocolName,
  chargePointId: string,
  settings: ConnectionSettings,
): AnyChargerConnection {
  return protocol === 'ocpp1.6'
    ? new ChargerConnection(ws, chargePointId, settings, ocpp16Adapter)
    : new ChargerConnection(ws, chargePointId, settings, ocpp201Adapter);
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
  { onMessage(data: RawData, isBinary: boolean): void; onPong(): void; onClose(): void }
>();

function onSocketMessage(this: WebSocket, data: RawData, isBinary: boolean): void {
  connectionOf.get(this)?.onMessage(data, isBinary);
}

function onSocketPong(this: WebSocket): void {
  connectionOf.get(this)?.onPong();
}

function onSocketClose(this: WebSocket): void {
  connectionOf.get(this)?.onClose();
}

/**
 * Calls from the charger being handled at once, held ones included. OCPP-J (1.6-J section 4.1.1,
 * 2.0.1 part 4 section 4.1.1) allows one outstanding CALL per direction; a charger that floods
 * gets GenericError for the calls past this many rather than an unbounded queue of actor asks.
 */
export const MAX_CALLS_IN_PROGRESS = 32;

interface PendingCall<V extends ProtocolName> {
  id: string;
  action: string;
  resolve(payload: OcppResponse<V>): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
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
  private pending: PendingCall<V> | undefined;
  /** frames that arrive before the actor is pinned wait here */
  private held: string[] | undefined = [];
  private closed = false;
  /** frames received and not yet fully handled (held ones included) */
  private inProgress = 0;
  private bootTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ws: WebSocket,
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

  onClose(): void {
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
  open(opts: { bootDeadlineMs: number | null } = { bootDeadlineMs: null }): void {
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

  /** Clears the boot deadline and lets its timer go (a booted charger keeps no timer). */
  private stopBootTimer(): void {
    clearTimeout(this.bootTimer);
    this.bootTimer = undefined;
  }

  /** Liveness round: a socket that did not answer the previous ping is dead. */
  probe(): void {
    if (!this.alive) {
      this.ws.terminate();
      return;
    }
    this.alive = false;
    this.ws.ping();
  }

  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.stopBootTimer();
    this.failPending(new ChargerDisconnectedError(reason));
    this.ws.close(code, reason);
  }

  /** A domain command as a CALL in this socket's protocol; resolves with the charger's status word. */
  command(
    command: ChargerCommand,
    remoteStartId: number,
  ): { action: string; answer: Promise<{ status: string; reply: unknown }> } {
    const call = this.adapter.toCall(command, remoteStartId);
    if (!call)
      return {
        action: command.kind,
        answer: Promise.reject(new Error(`${this.version} has no call for ${command.kind}`)),
      };
    return {
      action: call.action,
      answer: this.call(call).then((payload) => ({ status: this.adapter.answerStatus(payload), reply: payload })),
    };
  }

  /** Sends a CSMS-to-charger CALL; resolves with the charger's (schema-checked) CALLRESULT payload. */
  call(call: OcppCall<V>): Promise<OcppResponse<V>> {
    const { action, payload } = call;
    if (this.pending) return Promise.reject(new Error(`a call (${this.pending.action}) is already outstanding`));
    if (!this.isOpen) return Promise.reject(new ChargerDisconnectedError(`${this.chargePointId} is not connected`));
    try {
      // the types say the payload fits; the check stays, as a guard against a bug in an adapter
      this.opts.schemas.checkRequest(this.version, call);
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.pending?.id !== id) return;
        this.pending = undefined;
        reject(
          new ChargerCallTimeoutError(
            `${this.chargePointId} did not answer ${action} within ${this.opts.callTimeoutMs} ms`,
          ),
        );
      }, this.opts.callTimeoutMs);
      timer.unref();
      this.pending = { id, action, resolve, reject, timer };
      this.ws.send(callFrame(id, action, payload));
    });
  }

  private failPending(err: Error): void {
    const p = this.pending;
    if (!p) return;
    this.pending = undefined;
    clearTimeout(p.timer);
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
      case 'malformed':
        this.sendError(
          frame.id,
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
    try {
      if (!schemas.knows(this.version, frame.action))
        throw new OcppCallError('NotImplemented', `${frame.action} is not an ${this.version} action`);
      const call = { action: frame.action, payload: frame.payload };
      // from here on the call is typed: its payload is its action's generated request type (an
      // assertion signature needs the declared this.opts.schemas, not the destructured alias)
      this.opts.schemas.checkRequest(this.version, call);
      const nul = mayHoldNul ? stringWithNul(call.payload) : undefined;
      // a field the schema allows but that no store can hold: refused here, never an InternalError
      if (nul !== undefined)
        throw new OcppCallError(
          'PropertyConstraintViolation',
          `${frame.action}: the string at ${nul} contains a NUL character`,
          { path: nul },
        );
      const event = adapter.toEvent(call);
      if (event === undefined) throw new OcppCallError('NotSupported', `${frame.action} is not supported by this CSMS`);
      const outcome = event === null ? undefined : await this.opts.handleEvent(this.chargePointId, this.version, event);
      reply = adapter.toReply(call, outcome, new Date());
    } catch (err) {
      if (err instanceof OcppCallError) {
        this.sendError(frame.id, err.kind, err.message, err.details);
      } else {
        this.opts.log.error({ err, action: frame.action, charge_point: this.chargePointId }, 'OCPP call failed');
        this.sendError(frame.id, 'InternalError', 'the CSMS could not process this call', {});
      }
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
      this.sendError(frame.id, 'InternalError', 'the CSMS produced an invalid reply', {});
      return;
    }
    if (frame.action === 'BootNotification' && 'status' in reply && reply.status === 'Accepted') this.stopBootTimer();
    this.send(resultFrame(frame.id, reply));
  }

  private onAnswer(frame: Extract<InboundFrame, { t: 'result' | 'error' }>): void {
    const p = this.pending;
    if (!p || p.id !== frame.id) {
      this.opts.log.debug({ id: frame.id, charge_point: this.chargePointId }, 'answer to no outstanding call');
      return;
    }
    this.pending = undefined;
    clearTimeout(p.timer);
    if (frame.t === 'error') {
      p.reject(new ChargerCallError(frame.code, `${p.action}: ${frame.code} ${frame.description}`));
      return;
    }
    try {
      this.opts.schemas.checkResponse(this.version, p.action, frame.payload);
    } catch (err) {
      p.reject(new ChargerCallError('FormatViolation', err instanceof Error ? err.message : String(err)));
      return;
    }
    p.resolve(frame.payload);
  }

  private sendError(id: string, kind: OcppErrorKind, description: string, details: Record<string, unknown>): void {
    this.send(errorFrame(id, errorCodeFor(this.version, kind), description, details));
  }

  private send(text: string): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(text);
  }
}
