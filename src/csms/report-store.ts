import Type, { type Static } from '#typebox';
import type { Database } from '../db/database.js';
import type { WriteStep } from '../db/merged-write.js';
import type { SqlRunner } from '../db/sql.js';
import {
  COMMAND_OUTCOME_KEEP_MS,
  COMMAND_OUTCOMES_MAX,
  DeviceVariable,
  ReportSeverity,
  type ReportEntry,
} from '../ocpp/domain.js';
import { HIDDEN_VALUE, isSecretName } from '../ocpp/reports.js';
import type { ReportWrites } from '../../actors/charge-point/ports.js';
import { titled } from '../gateway/openapi.js';

/** Rows of a charger's event log kept; older ones go as new ones come (docs/CSMS.md "Event log"). */
export const EVENT_LOG_KEEP = 1000;
/** Entries taken from one message (a NotifyEvent may carry many). */
const ENTRIES_PER_MESSAGE = 200;
const SUMMARY_CHARS = 500;
/** An entry's detail beyond this is replaced by its size (a charging schedule can be long). */
const DETAIL_CHARS = 8_192;
/** Device-model rows kept per charger; the least recently reported go first. */
export const DEVICE_MODEL_KEEP = 5_000;
/** A device-model row's key within its charger. */
const DEVICE_KEY = 'component, component_instance, evse_id, connector_id, variable, variable_instance, attribute';
/** Replies of operations kept per charger. */
export const REPLIES_KEEP = 20;

/**
 * The rows of the oldest part left (`oldest`, their shared time) past DEVICE_MODEL_KEEP, the
 * last in key order: those after the part's last kept row, found once by its offset. A `NOT IN`
 * of the kept rows' keys took 150-230 ms a part of 1,200 new names on SQLite, on the event loop:
 * one charger sending such parts slowed every other client's answers a hundredfold.
 */
async function trimOldestPart(tx: SqlRunner, chargePointId: string, oldest: number): Promise<void> {
  const [newer] = await tx.query(
    'SELECT COUNT(*) AS n FROM csms_device_variable WHERE charge_point_id = ? AND updated_at > ?',
    [chargePointId, oldest],
  );
  const keepOfPart = DEVICE_MODEL_KEEP - Number(newer?.n ?? 0);
  if (keepOfPart <= 0) {
    await tx.run('DELETE FROM csms_device_variable WHERE charge_point_id = ? AND updated_at = ?', [
      chargePointId,
      oldest,
    ]);
    return;
  }
  await tx.run(
    `DELETE FROM csms_device_variable WHERE charge_point_id = ? AND updated_at = ? AND (${DEVICE_KEY}) > (
       SELECT ${DEVICE_KEY} FROM csms_device_variable WHERE charge_point_id = ? AND updated_at = ?
       ORDER BY ${DEVICE_KEY} LIMIT 1 OFFSET ?)`,
    [chargePointId, oldest, chargePointId, oldest, keepOfPart - 1],
  );
}

function detailText(detail: unknown): string {
  const text = JSON.stringify(detail ?? null);
  return text.length <= DETAIL_CHARS ? text : JSON.stringify({ truncated: true, characters: text.length });
}

export const ChargerEventEntry = titled(
  'ChargerEventEntry',
  Type.Object({
    id: Type.Integer(),
    action: Type.String({ description: 'the OCPP action that reported it' }),
    severity: ReportSeverity,
    summary: Type.String(),
    timestamp: Type.String({ format: 'date-time', description: 'when the charger says it happened' }),
    received_at: Type.String({ format: 'date-time' }),
    detail: Type.Unknown({ description: 'the part of the message this entry is about, as the charger sent it' }),
  }),
);
export type ChargerEventEntry = Static<typeof ChargerEventEntry>;

export const DeviceModel = Type.Object({
  variables: Type.Array(
    Type.Intersect([DeviceVariable, Type.Object({ updated_at: Type.String({ format: 'date-time' }) })]),
  ),
});

const atMs = (timestamp: string, fallback: number): number => {
  const ms = Date.parse(timestamp);
  return Number.isFinite(ms) ? ms : fallback;
};

/**
 * The event log and device model writes of the charge-point actor (deps.reports), run inside its
 * fenced turn, so a report is answered only once it is stored.
 */

/**
 * A GetConfiguration or GetVariables reply with the password's value hidden, should a charger
 * return it although OCPP says it must not: replies are stored and shown to operators.
 */
function withoutSecrets(reply: unknown): unknown {
  if (typeof reply !== 'object' || reply === null) return reply;
  const r = reply as { configurationKey?: unknown; getVariableResult?: unknown };
  const hide = <T>(list: unknown, secret: (e: Record<string, unknown>) => boolean, field: string): T[] | undefined =>
    Array.isArray(list)
      ? list.map((e: unknown) =>
          typeof e === 'object' && e !== null && secret(e as Record<string, unknown>) && field in e
            ? ({ ...e, [field]: HIDDEN_VALUE } as T)
            : (e as T),
        )
      : undefined;
  const keys = hide(r.configurationKey, (e) => isSecretName(e.key), 'value');
  const variables = hide(
    r.getVariableResult,
    (e) => isSecretName((e.variable as { name?: unknown } | undefined)?.name),
    'attributeValue',
  );
  return {
    ...reply,
    ...(keys ? { configurationKey: keys } : {}),
    ...(variables ? { getVariableResult: variables } : {}),
  };
}

export const reportWrites: ReportWrites = {
  append(chargePointId: string, action: string, entries: ReportEntry[]): WriteStep {
    return async (tx: SqlRunner) => {
      const now = Date.now();
      for (const e of entries.slice(0, ENTRIES_PER_MESSAGE)) {
        await tx.run(
          `INSERT INTO csms_charger_event (charge_point_id, action, severity, summary, detail, at_ms, received_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
          [
            chargePointId,
            action,
            e.severity,
            e.summary.slice(0, SUMMARY_CHARS),
            detailText(e.detail),
            atMs(e.timestamp, now),
            now,
          ],
        );
      }
      // the log keeps the newest rows of each charger
      await tx.run(
        `DELETE FROM csms_charger_event WHERE charge_point_id = ? AND id <= (
           SELECT id FROM csms_charger_event WHERE charge_point_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
        [chargePointId, chargePointId, EVENT_LOG_KEEP],
      );
    };
  },

  deviceModel(chargePointId: string, requestId: number, variables: DeviceVariable[]): WriteStep {
    return async (tx: SqlRunner) => {
      const now = Date.now();
      for (const v of variables) {
        await tx.run(
          `INSERT INTO csms_device_variable (charge_point_id, component, component_instance, evse_id, connector_id, variable,
             variable_instance, attribute, value, mutability, data_type, unit, request_id, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (charge_point_id, component, component_instance, evse_id, connector_id, variable, variable_instance, attribute)
           DO UPDATE SET value = excluded.value, mutability = excluded.mutability, data_type = excluded.data_type,
             unit = excluded.unit, request_id = excluded.request_id, updated_at = excluded.updated_at`,
          [
            chargePointId,
            v.component,
            v.component_instance ?? '',
            v.evse_id ?? -1,
            v.connector_id ?? -1,
            v.variable,
            v.variable_instance ?? '',
            v.attribute,
            v.value,
            v.mutability,
            v.data_type,
            v.unit,
            requestId,
            now,
          ],
        );
      }
      // a charger that names ever new instances must not grow its model without end: the
      // newest DEVICE_MODEL_KEEP rows stay. The rows of one part share their time, so the cut
      // may fall inside a part: those of its rows past it go too (by their key, the order the
      // model is read in), or a model kept up to 199 rows more than it says
      await tx.run(
        `DELETE FROM csms_device_variable WHERE charge_point_id = ? AND updated_at < (
           SELECT updated_at FROM csms_device_variable WHERE charge_point_id = ? ORDER BY updated_at DESC LIMIT 1 OFFSET ?)`,
        [chargePointId, chargePointId, DEVICE_MODEL_KEEP],
      );
      const [kept] = await tx.query(
        'SELECT COUNT(*) AS n, MIN(updated_at) AS oldest FROM csms_device_variable WHERE charge_point_id = ?',
        [chargePointId],
      );
      if (Number(kept?.n ?? 0) > DEVICE_MODEL_KEEP) await trimOldestPart(tx, chargePointId, Number(kept?.oldest));
    };
  },

  reply(chargePointId: string, commandId: string, reply: unknown): WriteStep {
    return async (tx: SqlRunner) => {
      const now = Date.now();
      await tx.run(
        'INSERT INTO csms_command_reply (command_id, charge_point_id, reply, received_at) VALUES (?, ?, ?, ?) ON CONFLICT (command_id) DO NOTHING',
        [commandId, chargePointId, JSON.stringify(withoutSecrets(reply) ?? null), now],
      );
      // the newest REPLIES_KEEP, and those a route may still be waiting to read (as the records)
      await tx.run(
        `DELETE FROM csms_command_reply WHERE charge_point_id = ? AND command_id NOT IN (
           SELECT command_id FROM csms_command_reply WHERE charge_point_id = ? ORDER BY received_at DESC, command_id LIMIT ?)
         AND (received_at < ? OR command_id NOT IN (
           SELECT command_id FROM csms_command_reply WHERE charge_point_id = ? ORDER BY received_at DESC, command_id LIMIT ?))`,
        [
          chargePointId,
          chargePointId,
          REPLIES_KEEP,
          now - COMMAND_OUTCOME_KEEP_MS,
          chargePointId,
          COMMAND_OUTCOMES_MAX,
        ],
      );
    };
  },
};

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** Reads of the event log and device model for /v1. */
export class ReportReader {
  constructor(private readonly db: Database) {}

  async events(
    chargePointId: string,
    page: { limit: number; offset: number; severity?: ReportSeverity },
  ): Promise<{ total: number; items: ChargerEventEntry[] }> {
    const filter = page.severity === undefined ? '' : ' AND severity = ?';
    const params: unknown[] = page.severity === undefined ? [chargePointId] : [chargePointId, page.severity];
    const [count] = await this.db.execute(
      `SELECT COUNT(*) AS n FROM csms_charger_event WHERE charge_point_id = ?${filter}`,
      params,
    );
    const rows = await this.db.execute(
      `SELECT id, action, severity, summary, detail, at_ms, received_at FROM csms_charger_event
       WHERE charge_point_id = ?${filter} ORDER BY id DESC LIMIT ? OFFSET ?`,
      [...params, page.limit, page.offset],
    );
    return {
      total: Number(count?.n ?? 0),
      items: rows.map((r) => ({
        id: Number(r.id),
        action: String(r.action),
        severity: r.severity === 'error' ? 'error' : r.severity === 'warning' ? 'warning' : 'info',
        summary: String(r.summary),
        timestamp: new Date(Number(r.at_ms)).toISOString(),
        received_at: new Date(Number(r.received_at)).toISOString(),
        detail: JSON.parse(String(r.detail)) as unknown,
      })),
    };
  }

  /** The reply of an operation that returns data, if it is still kept. */
  async reply(commandId: string): Promise<unknown> {
    const [row] = await this.db.execute('SELECT reply FROM csms_command_reply WHERE command_id = ?', [commandId]);
    return row ? (JSON.parse(String(row.reply)) as unknown) : undefined;
  }

  async deviceModel(chargePointId: string): Promise<Static<typeof DeviceModel>> {
    const rows = await this.db.execute(
      `SELECT component, component_instance, evse_id, connector_id, variable, variable_instance, attribute, value,
         mutability, data_type, unit, updated_at
       FROM csms_device_variable WHERE charge_point_id = ?
       ORDER BY component, component_instance, evse_id, connector_id, variable, variable_instance, attribute`,
      [chargePointId],
    );
    return {
      variables: rows.map((r) => ({
        component: String(r.component),
        component_instance: r.component_instance === '' ? null : text(r.component_instance),
        evse_id: Number(r.evse_id) < 0 ? null : Number(r.evse_id),
        connector_id: Number(r.connector_id) < 0 ? null : Number(r.connector_id),
        variable: String(r.variable),
        variable_instance: r.variable_instance === '' ? null : text(r.variable_instance),
        attribute: String(r.attribute),
        value: text(r.value),
        mutability: text(r.mutability),
        data_type: text(r.data_type),
        unit: text(r.unit),
        updated_at: new Date(Number(r.updated_at)).toISOString(),
      })),
    };
  }
}
