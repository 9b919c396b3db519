import type { Logger } from 'pino';
import { LogLimit } from '../log-limit.js';
import type { CounterSlot, PlatformMetrics } from '../metrics.js';
import type { ProtocolName, RegistrationStatus } from './domain.js';

/**
 * What an on-call person sees of the OCPP endpoint (docs/OPERATIONS.md "Signals"): one JSON line
 * per connect, disconnect, boot, refused login and CALLERROR, and the counters behind them. The
 * lines a client can cause at will (refused logins, CALLERRORs we send, boots) are limited per
 * address or charger and in total; a line let through after drops says how many with
 * `suppressed`. Metric labels never name a charger: actions outside the schemas count as
 * `unknown`, error codes outside OCPP-J's as `other`.
 */

/** Why an upgrade was refused, as logged (`reason`). */
export type RefusalReason =
  | 'unknown'
  | 'bad_password'
  | 'no_credentials'
  | 'throttled'
  | 'no_subprotocol'
  | 'invalid_id'
  | 'degraded'
  | 'shutting_down';

/**
 * Why a CALLERROR was sent (`cause` of `ocpp_callerrors_total`): what the charger sent
 * (`charger`), a dependency that was unreachable (`dependency`: PostgreSQL or Redis; the charger
 * still gets InternalError) or a failure here, a bug (`internal`). A CALLERROR a charger sends us
 * is counted as `charger`.
 */
export type CallErrorCause = 'charger' | 'dependency' | 'internal';

/** How a CSMS-to-charger call ended. */
export type OutboundOutcome = 'result' | 'error' | 'invalid' | 'timeout' | 'closed';

export interface OcppSignalsOptions {
  log: Logger;
  metrics: PlatformMetrics;
  /** lines per charger or address per interval (default 10) */
  linesPerKey?: number;
  /** lines of one kind for all chargers or addresses together per interval (default 100) */
  linesTotal?: number;
  /** default 60 s */
  intervalMs?: number;
}

/** Every error code of OCPP-J 1.6 and 2.0.1; anything else a charger sends counts as `other`. */
const ERROR_CODES = new Set([
  'NotImplemented',
  'NotSupported',
  'InternalError',
  'ProtocolError',
  'SecurityError',
  'FormationViolation',
  'FormatViolation',
  'PropertyConstraintViolation',
  'OccurenceConstraintViolation',
  'OccurrenceConstraintViolation',
  'TypeConstraintViolation',
  'GenericError',
  'RpcFrameworkError',
  'MessageTypeNotSupported',
]);

/** what charger-controlled text may take of a line */
const TEXT_CHARS = 200;

interface InboundSlots {
  result: CounterSlot;
  error: CounterSlot;
}

export class OcppSignals {
  private readonly log: Logger;
  private readonly metrics: PlatformMetrics;
  private readonly inbound = new Map<string, InboundSlots>();
  private readonly unknownAction: InboundSlots;
  private readonly malformed: CounterSlot;
  private readonly errorsSent: Record<CallErrorCause, Map<string, CounterSlot>> = {
    charger: new Map(),
    dependency: new Map(),
    internal: new Map(),
  };
  private readonly errorsReceived = new Map<string, CounterSlot>();
  private readonly refusals: LogLimit;
  private readonly callErrors: LogLimit;
  private readonly boots: LogLimit;
  /** `OCPP call failed` while a dependency is away: every call of every charger fails alike */
  private readonly outageFailures: LogLimit;

  constructor(opts: OcppSignalsOptions) {
    this.log = opts.log;
    this.metrics = opts.metrics;
    const limit = {
      perKey: opts.linesPerKey ?? 10,
      total: opts.linesTotal ?? 100,
      intervalMs: opts.intervalMs ?? 60_000,
    };
    this.refusals = new LogLimit(limit);
    this.callErrors = new LogLimit(limit);
    this.boots = new LogLimit(limit);
    this.outageFailures = new LogLimit({ perKey: 1, intervalMs: limit.intervalMs, capacity: 10 });
    this.unknownAction = this.bindInbound('unknown');
    this.malformed = opts.metrics.ocppMessages.slot(['in', 'malformed', 'error']);
  }

  /** A charger is connected and served (its actor pinned here). */
  connected(id: string, protocol: ProtocolName, address: string, connection: string): void {
    this.log.info({ charge_point: id, protocol, address, connection }, 'charger connected');
  }

  /** A served charger's socket closed: `by` says who closed it (the CSMS's code, or the charger's). */
  disconnected(
    id: string,
    protocol: ProtocolName,
    close: { code: number; reason: string; by: 'charger' | 'csms' },
    connectedMs: number,
  ): void {
    this.log.info(
      {
        charge_point: id,
        protocol,
        code: close.code,
        reason: close.reason.slice(0, TEXT_CHARS),
        closed_by: close.by,
        duration_s: Math.round(connectedMs / 1000),
      },
      'charger disconnected',
    );
  }

  /** A BootNotification answered with `status`. */
  booted(
    id: string,
    boot: { vendor: string; model: string; firmware_version: string | null },
    status: RegistrationStatus,
  ): void {
    const suppressed = this.boots.admit(id);
    if (suppressed < 0) return;
    this.log.info(
      {
        charge_point: id,
        vendor: boot.vendor,
        model: boot.model,
        firmware: boot.firmware_version,
        status,
        ...(suppressed > 0 ? { suppressed } : {}),
      },
      'charger booted',
    );
  }

  /** An upgrade refused before the charger got a socket; limited per address. */
  refused(id: string, address: string, reason: RefusalReason, status: number): void {
    const suppressed = this.refusals.admit(address);
    if (suppressed < 0) return;
    this.log.warn(
      {
        charge_point: id.slice(0, 64),
        address,
        reason,
        status,
        ...(suppressed > 0 ? { suppressed } : {}),
      },
      'charger login refused',
    );
  }

  /** A charger's CALL answered with a CALLRESULT (runs per message: slots only). */
  answered(action: string, known: boolean): void {
    const slots = known ? (this.inbound.get(action) ?? this.bindKnown(action)) : this.unknownAction;
    slots.result.n++;
    this.metrics.handled++;
  }

  /**
   * A CALLERROR sent to a charger: for its CALL of `action` (undefined: a frame that was no
   * CALL we could read), counted and logged (limited per charger).
   */
  callErrorSent(
    id: string,
    action: string | undefined,
    known: boolean,
    code: string,
    description: string,
    cause: CallErrorCause,
  ): void {
    if (action === undefined) this.malformed.n++;
    else (known ? (this.inbound.get(action) ?? this.bindKnown(action)) : this.unknownAction).error.n++;
    this.count(this.errorsSent[cause], 'sent', code, cause).n++;
    const suppressed = this.callErrors.admit(id);
    if (suppressed < 0) return;
    this.log.warn(
      {
        charge_point: id,
        action: action === undefined ? null : action.slice(0, 64),
        code,
        description: description.slice(0, TEXT_CHARS),
        cause,
        ...(suppressed > 0 ? { suppressed } : {}),
      },
      'CALLERROR sent to charger',
    );
  }

  /**
   * A charger's call failed here (it is answered InternalError): a bug, logged at error each
   * time, or an unreachable `dependency`, logged at warn once per interval for all chargers
   * together, saying how many lines were suppressed (docs/OPERATIONS.md "InternalError during an
   * outage").
   */
  callFailed(id: string, action: string, err: unknown, dependency: string | undefined): void {
    const where = { err, action, charge_point: id };
    if (dependency === undefined) {
      this.log.error(where, 'OCPP call failed');
      return;
    }
    const suppressed = this.outageFailures.admit(dependency);
    if (suppressed >= 0)
      this.log.warn({ ...where, dependency, ...(suppressed > 0 ? { suppressed } : {}) }, 'OCPP call failed');
  }

  /**
   * A CSMS-to-charger call of `action` ended; `seconds` for an answer (result, error or one
   * that failed its schema). A CALLERROR's code and description come with `error`.
   */
  called(
    id: string,
    action: string,
    outcome: OutboundOutcome,
    seconds: number | undefined,
    error?: { code: string; description: string },
  ): void {
    this.metrics.ocppMessages.add(['out', action, outcome]);
    if (seconds !== undefined) this.metrics.ocppCallSeconds.tally([action], seconds);
    if (!error) return;
    this.count(this.errorsReceived, 'received', error.code, 'charger').n++;
    this.log.warn(
      {
        charge_point: id,
        action,
        code: error.code.slice(0, 64),
        description: error.description.slice(0, TEXT_CHARS),
      },
      'CALLERROR received from charger',
    );
  }

  private bindKnown(action: string): InboundSlots {
    const slots = this.bindInbound(action);
    this.inbound.set(action, slots);
    return slots;
  }

  private bindInbound(action: string): InboundSlots {
    return {
      result: this.metrics.ocppMessages.slot(['in', action, 'result']),
      error: this.metrics.ocppMessages.slot(['in', action, 'error']),
    };
  }

  private count(
    slots: Map<string, CounterSlot>,
    direction: 'sent' | 'received',
    code: string,
    cause: CallErrorCause,
  ): CounterSlot {
    const label = ERROR_CODES.has(code) ? code : 'other';
    let slot = slots.get(label);
    if (!slot) slots.set(label, (slot = this.metrics.ocppCallErrors.slot([direction, label, cause])));
    return slot;
  }
}
