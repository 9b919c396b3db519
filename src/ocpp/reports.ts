import type { ChargerEvent, DeviceVariable, ReportEntry, ReportSeverity } from './domain.js';
import type { Ocpp16Messages } from './generated/ocpp16.js';
import type { Ocpp201Messages } from './generated/ocpp201.js';
import { nestedDeeperThan } from './text-guard.js';

/**
 * The messages a charger sends to tell what happened, as log entries (docs/CSMS.md "Event log"):
 * both versions' security events, 2.0.1 NotifyEvent, the status notifications of firmware,
 * diagnostics and log uploads, DataTransfer, certificate requests, charging limits and needs.
 * Each becomes a `reported` event of the charge-point actor; NotifyReport becomes the charger's
 * device model (`device-model-reported`).
 */

type Reported = Extract<ChargerEvent, { type: 'reported' }>;
type Req16<A extends keyof Ocpp16Messages> = Ocpp16Messages[A]['request'];
type Req201<A extends keyof Ocpp201Messages> = Ocpp201Messages[A]['request'];

const now = (): string => new Date().toISOString();

/**
 * How deep an entry's detail may nest. It is stored as JSON text and served as JSON, and both
 * recurse: a DataTransfer whose `data` nested 5,000 arrays overflowed the stack when its entry was
 * written, and the charger got InternalError (docs/CSMS.md "Event log").
 */
const DETAIL_MAX_DEPTH = 64;

/**
 * The configuration key and the variable that hold the charger's password (1.6 AuthorizationKey,
 * 2.0.1 SecurityCtrlr.BasicAuthPassword): write-only in OCPP, so a charger should never report
 * them; one that does has the value hidden wherever it is stored and shown (event log, device
 * model, operation replies). Names compare case-insensitively, as OCPP's identifiers do.
 */
const SECRET_NAMES = new Set(['authorizationkey', 'basicauthpassword']);
export const HIDDEN_VALUE = '(hidden)';
export const isSecretName = (name: unknown): boolean =>
  typeof name === 'string' && SECRET_NAMES.has(name.toLowerCase());

function entry(severity: ReportSeverity, summary: string, detail: unknown, timestamp?: string): ReportEntry {
  const kept = nestedDeeperThan(detail, DETAIL_MAX_DEPTH)
    ? { truncated: true, reason: `nested more than ${DETAIL_MAX_DEPTH} levels deep` }
    : detail;
  return { severity, summary, timestamp: timestamp ?? now(), detail: kept };
}

function one(action: string, e: ReportEntry, extra: Partial<Reported> = {}): Reported {
  return { type: 'reported', action, entries: [e], ...extra };
}

/**
 * A security event's severity: the ones that say something was refused, failed or tampered with
 * are warnings, the rest (start-up, reboot, time set, firmware updated, log cleared) information.
 * The specifications mark some events "critical" (to be sent at once); that is about delivery,
 * not about what an operator must look at, so it is not used here.
 */
export function securityEventSeverity(type: string): ReportSeverity {
  return /Invalid|Fail|Attempt|Tamper|Exhaust|Denied|Unauthori[sz]ed/i.test(type) ? 'warning' : 'info';
}

/** A status word of a long operation: failures are errors, the rest information. */
function progressSeverity(status: string): ReportSeverity {
  return /Fail|Invalid|Denied|BadMessage|NotSupported|Revoked/i.test(status) ? 'error' : 'info';
}

function securityEvent(p: { type: string; timestamp: string; techInfo?: string }): Reported {
  const info = p.techInfo === undefined ? '' : `: ${p.techInfo}`;
  return one(
    'SecurityEventNotification',
    entry(securityEventSeverity(p.type), `security event ${p.type}${info}`, p, p.timestamp),
  );
}

function progress(
  action: string,
  operation: 'firmware' | 'diagnostics' | 'log',
  status: string,
  requestId: number | undefined,
  payload: unknown,
): Reported {
  const what = { firmware: 'firmware update', diagnostics: 'diagnostics upload', log: 'log upload' }[operation];
  const request = requestId === undefined ? '' : ` (request ${requestId})`;
  return one(action, entry(progressSeverity(status), `${what}: ${status}${request}`, payload), {
    progress: { operation, status, request_id: requestId ?? null },
  });
}

function dataTransfer(p: { vendorId: string; messageId?: string; data?: unknown }): Reported {
  const message = p.messageId === undefined ? '' : ` message ${p.messageId}`;
  return one('DataTransfer', entry('info', `DataTransfer from vendor ${p.vendorId}${message}`, p), {
    data_transfer: { vendor_id: p.vendorId, message_id: p.messageId ?? null, data: p.data ?? null },
  });
}

const REFUSED_CSR = 'certificate signing request refused: no certificate authority is configured';

/** The 1.6 messages (the security whitepaper's included) that are reports; undefined for the others. */
export function report16(
  call: {
    [A in keyof Ocpp16Messages]: { action: A; payload: Req16<A> };
  }[keyof Ocpp16Messages],
): Reported | undefined {
  switch (call.action) {
    case 'SecurityEventNotification':
      return securityEvent(call.payload);
    case 'DiagnosticsStatusNotification':
      return progress(call.action, 'diagnostics', call.payload.status, undefined, call.payload);
    case 'FirmwareStatusNotification':
      return progress(call.action, 'firmware', call.payload.status, undefined, call.payload);
    case 'SignedFirmwareStatusNotification':
      return progress(call.action, 'firmware', call.payload.status, call.payload.requestId, call.payload);
    case 'LogStatusNotification':
      return progress(call.action, 'log', call.payload.status, call.payload.requestId, call.payload);
    case 'DataTransfer':
      return dataTransfer(call.payload);
    case 'SignCertificate':
      return one(call.action, entry('warning', REFUSED_CSR, { csr_length: call.payload.csr.length }));
    default:
      return undefined;
  }
}

const evseOf = (e: { id: number; connectorId?: number } | undefined): string =>
  e === undefined ? '' : `[evse ${e.id}${e.connectorId === undefined ? '' : `/${e.connectorId}`}]`;

/** NotifyEvent's entries: a Problem variable set true is an error, an alert a warning, the rest information. */
function eventSeverity(e: Req201<'NotifyEvent'>['eventData'][number]): ReportSeverity {
  if (e.cleared === true) return 'info';
  if (e.variable.name === 'Problem' && e.actualValue.toLowerCase() === 'true') return 'error';
  if (e.variable.name === 'Tripped' && e.actualValue.toLowerCase() === 'true') return 'error';
  return e.trigger === 'Alerting' ? 'warning' : 'info';
}

function notifyEvent(p: Req201<'NotifyEvent'>): Reported {
  return {
    type: 'reported',
    action: 'NotifyEvent',
    entries: p.eventData.map((reported) => {
      const e = isSecretName(reported.variable.name) ? { ...reported, actualValue: HIDDEN_VALUE } : reported;
      const where = `${e.component.name}${e.component.instance === undefined ? '' : `(${e.component.instance})`}${evseOf(e.component.evse)}`;
      const code = e.techCode === undefined ? '' : ` code ${e.techCode}`;
      const cleared = e.cleared === true ? ' (cleared)' : '';
      return entry(
        eventSeverity(e),
        `${where}.${e.variable.name} = ${e.actualValue} (${e.trigger}${code})${cleared}`,
        e,
        e.timestamp,
      );
    }),
  };
}

/** The rows of a NotifyReport part: one per attribute of each variable. */
export function deviceModelOf(p: Req201<'NotifyReport'>): Extract<ChargerEvent, { type: 'device-model-reported' }> {
  const variables: DeviceVariable[] = [];
  for (const r of p.reportData ?? []) {
    for (const a of r.variableAttribute) {
      variables.push({
        component: r.component.name,
        component_instance: r.component.instance ?? null,
        evse_id: r.component.evse?.id ?? null,
        connector_id: r.component.evse?.connectorId ?? null,
        variable: r.variable.name,
        variable_instance: r.variable.instance ?? null,
        attribute: a.type ?? 'Actual',
        value: a.value === undefined ? null : isSecretName(r.variable.name) ? HIDDEN_VALUE : a.value,
        mutability: a.mutability ?? null,
        data_type: r.variableCharacteristics?.dataType ?? null,
        unit: r.variableCharacteristics?.unit ?? null,
      });
    }
  }
  return {
    type: 'device-model-reported',
    request_id: p.requestId,
    seq_no: p.seqNo,
    tbc: p.tbc === true,
    generated_at: p.generatedAt,
    variables,
  };
}

type Call201 = {
  [A in keyof Ocpp201Messages]: { action: A; payload: Req201<A> };
}[keyof Ocpp201Messages];

/** Certificates: no certificate authority or OCSP responder here, so each request is logged and refused. */
function certificateReport201(call: Call201): Reported | undefined {
  switch (call.action) {
    case 'SignCertificate':
      return one(
        call.action,
        entry('warning', REFUSED_CSR, { certificate_type: call.payload.certificateType ?? null }),
      );
    case 'Get15118EVCertificate':
      return one(
        call.action,
        entry(
          'warning',
          `ISO 15118 EV certificate ${call.payload.action} refused: no certificate authority is configured`,
          { iso15118_schema_version: call.payload.iso15118SchemaVersion },
        ),
      );
    case 'GetCertificateStatus':
      return one(call.action, entry('info', 'certificate status (OCSP) asked: not available', call.payload));
    default:
      return undefined;
  }
}

/** Smart charging: limits, needs, schedules and profiles the charger tells of. */
function chargingReport201(call: Call201): Reported | undefined {
  switch (call.action) {
    case 'NotifyChargingLimit': {
      const l = call.payload.chargingLimit;
      const evse = call.payload.evseId === undefined ? '' : ` on EVSE ${call.payload.evseId}`;
      return one(
        call.action,
        entry(
          l.isGridCritical === true ? 'warning' : 'info',
          `charging limit from ${l.chargingLimitSource}${evse}${l.isGridCritical === true ? ' (grid critical)' : ''}`,
          call.payload,
        ),
      );
    }
    case 'ClearedChargingLimit':
      return one(
        call.action,
        entry('info', `charging limit from ${call.payload.chargingLimitSource} cleared`, call.payload),
      );
    case 'NotifyEVChargingNeeds':
      return one(
        call.action,
        entry(
          'info',
          `EV charging needs on EVSE ${call.payload.evseId} (${call.payload.chargingNeeds.requestedEnergyTransfer}); no schedule offered`,
          call.payload,
        ),
      );
    case 'NotifyEVChargingSchedule':
      return one(call.action, entry('info', `EV charging schedule on EVSE ${call.payload.evseId}`, call.payload));
    case 'ReportChargingProfiles':
      return one(
        call.action,
        entry(
          'info',
          `charging profiles (request ${call.payload.requestId}) on EVSE ${call.payload.evseId}: ${call.payload.chargingProfile.length}`,
          call.payload,
        ),
      );
    default:
      return undefined;
  }
}

/** Answers to an operator's requests that come as reports (display messages, customer data, monitors, firmware publication). */
function otherReport201(call: Call201): Reported | undefined {
  switch (call.action) {
    case 'PublishFirmwareStatusNotification':
      return one(
        call.action,
        entry(progressSeverity(call.payload.status), `firmware publication: ${call.payload.status}`, call.payload),
      );
    case 'NotifyDisplayMessages':
      return one(
        call.action,
        entry(
          'info',
          `display messages (request ${call.payload.requestId}): ${call.payload.messageInfo?.length ?? 0}`,
          call.payload,
        ),
      );
    case 'NotifyCustomerInformation':
      return one(
        call.action,
        entry(
          'info',
          `customer information (request ${call.payload.requestId}, part ${call.payload.seqNo})`,
          call.payload,
          call.payload.generatedAt,
        ),
      );
    case 'NotifyMonitoringReport':
      return one(
        call.action,
        entry(
          'info',
          `monitoring report (request ${call.payload.requestId}, part ${call.payload.seqNo}): ${call.payload.monitor?.length ?? 0} monitors`,
          call.payload,
          call.payload.generatedAt,
        ),
      );
    default:
      return undefined;
  }
}

/** The 2.0.1 messages that are reports; undefined for the others. */
export function report201(call: Call201): Reported | undefined {
  switch (call.action) {
    case 'SecurityEventNotification':
      return securityEvent(call.payload);
    case 'NotifyEvent':
      return notifyEvent(call.payload);
    case 'FirmwareStatusNotification':
      return progress(call.action, 'firmware', call.payload.status, call.payload.requestId, call.payload);
    case 'LogStatusNotification':
      return progress(call.action, 'log', call.payload.status, call.payload.requestId, call.payload);
    case 'DataTransfer':
      return dataTransfer(call.payload);
    default:
      return certificateReport201(call) ?? chargingReport201(call) ?? otherReport201(call);
  }
}
