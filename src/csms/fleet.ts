import type { ProtocolName } from '../ocpp/domain.js';

/**
 * The fleet as the console's list and overview need it (docs/CSMS.md "The /v1 API", "Fleet
 * index"): one small entry per registered charger, from the registry, a summary of the charger's
 * stored actor state (kept per process and refreshed by version: fleet-index.ts) and whether it
 * is connected, then searched, filtered, sorted and counted in memory. Only the page it returns is
 * read in full (api.ts listChargePoints).
 */
export interface FleetEntry {
  id: string;
  protocol: ProtocolName;
  online: boolean;
  /** epoch ms; 0: never seen */
  last_seen: number;
  vendor: string | null;
  model: string | null;
  /** as last reported (stored state), whether or not the charger is connected now */
  connectors: FleetConnector[];
  open_transactions: number;
  /** the id's place in natural order (`naturalIdOrder`): sorting by id compares these */
  rank: number;
}

export interface FleetConnector {
  evse_id: number;
  connector_id: number;
  status: string;
  error_code: string | null;
  /** the charger's own words for a fault (1.6 `info`, `vendorId`, `vendorErrorCode`), when it gave them */
  info?: string;
  vendor_id?: string;
  vendor_error_code?: string;
  updated_at: string;
}

/** What a stored charge-point state holds for the index, without checking the whole state (10,000 of them). */
export interface StateSummary {
  protocol: ProtocolName | null;
  vendor: string | null;
  model: string | null;
  connectors: FleetConnector[];
  open_transactions: number;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A summary with the version (actor_state.version) of the state it was made of. */
export interface VersionedSummary {
  version: number;
  summary: StateSummary | undefined;
}

/** The index's part of a stored state; undefined for anything that is not shaped as one. */
export function summarizeState(state: unknown): StateSummary | undefined {
  if (!isRecord(state) || !Array.isArray(state.connectors)) return undefined;
  const boot = isRecord(state.boot) ? state.boot : undefined;
  const connectors: FleetConnector[] = [];
  for (const c of state.connectors as unknown[]) {
    if (!isRecord(c) || typeof c.evse_id !== 'number' || typeof c.connector_id !== 'number') continue;
    connectors.push({
      evse_id: c.evse_id,
      connector_id: c.connector_id,
      status: str(c.status) ?? 'Unknown',
      error_code: str(c.error_code),
      ...(typeof c.info === 'string' ? { info: c.info } : {}),
      ...(typeof c.vendor_id === 'string' ? { vendor_id: c.vendor_id } : {}),
      ...(typeof c.vendor_error_code === 'string' ? { vendor_error_code: c.vendor_error_code } : {}),
      updated_at: str(c.updated_at) ?? '',
    });
  }
  const protocol = state.protocol === 'ocpp1.6' || state.protocol === 'ocpp2.0.1' ? state.protocol : null;
  return {
    protocol,
    vendor: str(boot?.vendor),
    model: str(boot?.model),
    connectors,
    open_transactions: Array.isArray(state.transactions) ? state.transactions.length : 0,
  };
}

/** What the index takes of a registry row (charge-point-store.ts ChargePointRow). */
export interface RegistryFacts {
  id: string;
  protocol: ProtocolName;
  last_seen_at: number | null;
}

export function fleetEntry(
  row: RegistryFacts,
  rank: number,
  online: boolean,
  summary: StateSummary | undefined,
  seenHere: number | undefined,
): FleetEntry {
  return {
    rank,
    id: row.id,
    protocol: summary?.protocol ?? row.protocol,
    online,
    last_seen: Math.max(row.last_seen_at ?? 0, seenHere ?? 0),
    vendor: summary?.vendor ?? null,
    model: summary?.model ?? null,
    connectors: summary?.connectors ?? [],
    open_transactions: summary?.open_transactions ?? 0,
  };
}

/** A connector's status as the views show it: Unknown while its charger is offline (views.ts). */
export const shownStatus = (e: FleetEntry, c: FleetConnector): string => (e.online ? c.status : 'Unknown');

/** An error code worth an alert: set, and not OCPP 1.6's NoError. */
const isError = (code: string | null): code is string => code !== null && code !== '' && code !== 'NoError';

export const isCharging = (e: FleetEntry): boolean =>
  e.online && (e.open_transactions > 0 || e.connectors.some((c) => c.status === 'Charging'));
export const isFaulted = (e: FleetEntry): boolean =>
  e.online && e.connectors.some((c) => c.status === 'Faulted' || isError(c.error_code));

export interface FleetQuery {
  q?: string;
  protocol?: ProtocolName;
  online?: boolean;
  /** a connector status, compared case-insensitively with what the views show (Unknown while offline) */
  status?: string;
  /** the chargers the overview counts as charging (`isCharging`) or faulted (`isFaulted`) */
  state?: 'charging' | 'faulted';
  sort: 'id' | 'last_seen' | 'status';
  order: 'asc' | 'desc';
}

/** Ids in natural order: CP-2 before CP-10 (digit runs compared as numbers), case-insensitive. */
/** made on first use: a collator costs ~20 ms of ICU set-up, which a cold start would pay */
let collator: Intl.Collator | undefined;
const naturalIds = (): Intl.Collator => (collator ??= new Intl.Collator('en', { numeric: true, sensitivity: 'base' }));

/**
 * Each id's place in natural order, ties (ids equal but for case) broken by code units: sorted
 * once, so that a request compares numbers (a collator's compare costs a microsecond; a sort of
 * 10,000 ids makes some 130,000 of them).
 */
export function naturalIdOrder(ids: readonly string[]): Map<string, number> {
  const sorted = [...ids].sort((a, b) => naturalIds().compare(a, b) || (a < b ? -1 : a > b ? 1 : 0));
  return new Map(sorted.map((id, i) => [id, i]));
}

/**
 * A charger's place in `sort=status`, what needs attention first: faulted; offline with a
 * transaction open or a fault last reported; offline; charging, occupied, reserved, unavailable,
 * available, nothing reported; never connected last. Offline chargers came last, below the
 * healthy ones, a charger that dropped off in the middle of a charge too.
 */
function statusRank(e: FleetEntry): number {
  if (isFaulted(e)) return 0;
  if (!e.online) {
    if (e.last_seen === 0) return 9;
    const lastFault = e.connectors.some((c) => c.status === 'Faulted' || isError(c.error_code));
    return e.open_transactions > 0 || lastFault ? 1 : 2;
  }
  if (isCharging(e)) return 3;
  const statuses = new Set(e.connectors.filter((c) => c.connector_id > 0).map((c) => c.status));
  if (['Occupied', 'Preparing', 'SuspendedEV', 'SuspendedEVSE', 'Finishing'].some((s) => statuses.has(s))) return 4;
  if (statuses.has('Reserved')) return 5;
  if (statuses.has('Unavailable')) return 6;
  if (statuses.has('Available')) return 7;
  return 8;
}

/** The entries a list query selects, in its order. */
export function selectFleet(entries: readonly FleetEntry[], query: FleetQuery): FleetEntry[] {
  const needle = query.q?.trim().toLowerCase();
  const status = query.status?.toLowerCase();
  const selected = entries.filter(
    (e) =>
      (query.protocol === undefined || e.protocol === query.protocol) &&
      (query.online === undefined || e.online === query.online) &&
      (query.state === undefined || (query.state === 'charging' ? isCharging(e) : isFaulted(e))) &&
      (status === undefined ||
        (e.connectors.length === 0 && !e.online
          ? status === 'unknown'
          : e.connectors.some((c) => shownStatus(e, c).toLowerCase() === status))) &&
      (!needle ||
        e.id.toLowerCase().includes(needle) ||
        (e.vendor?.toLowerCase().includes(needle) ?? false) ||
        (e.model?.toLowerCase().includes(needle) ?? false)),
  );
  const byId = (a: FleetEntry, b: FleetEntry): number => a.rank - b.rank;
  const compare: (a: FleetEntry, b: FleetEntry) => number =
    query.sort === 'last_seen'
      ? (a, b) => a.last_seen - b.last_seen || byId(a, b)
      : query.sort === 'status'
        ? (a, b) => statusRank(a) - statusRank(b) || byId(a, b)
        : byId;
  const sign = query.order === 'desc' ? -1 : 1;
  return selected.sort((a, b) => sign * compare(a, b));
}

export interface FleetAlert {
  charge_point_id: string;
  online: boolean;
  evse_id: number;
  connector_id: number;
  status: string;
  error_code: string | null;
  info?: string;
  vendor_id?: string;
  vendor_error_code?: string;
  updated_at: string;
}

export interface FleetOverview {
  total: number;
  online: number;
  offline: number;
  charging: number;
  faulted: number;
  by_protocol: Record<string, number>;
  /** connectors (connector 0 of 1.6, the charger as a whole, left out) by the status the views show */
  connectors_by_status: Record<string, number>;
  alerts_total: number;
  alerts: FleetAlert[];
}

/**
 * The overview's counts and alerts: connectors that reported Faulted or an error code (an
 * offline charger's last report included, marked online false), newest first.
 */
export function fleetOverview(entries: readonly FleetEntry[], maxAlerts: number): FleetOverview {
  const overview: FleetOverview = {
    total: entries.length,
    online: 0,
    offline: 0,
    charging: 0,
    faulted: 0,
    by_protocol: {},
    connectors_by_status: {},
    alerts_total: 0,
    alerts: [],
  };
  const alerts: FleetAlert[] = [];
  for (const e of entries) {
    if (e.online) overview.online++;
    else overview.offline++;
    if (isCharging(e)) overview.charging++;
    if (isFaulted(e)) overview.faulted++;
    overview.by_protocol[e.protocol] = (overview.by_protocol[e.protocol] ?? 0) + 1;
    for (const c of e.connectors) {
      if (c.connector_id > 0) {
        const shown = shownStatus(e, c);
        overview.connectors_by_status[shown] = (overview.connectors_by_status[shown] ?? 0) + 1;
      }
      if (c.status === 'Faulted' || isError(c.error_code))
        alerts.push({ charge_point_id: e.id, online: e.online, ...c });
    }
  }
  alerts.sort((a, b) => (a.updated_at < b.updated_at ? 1 : a.updated_at > b.updated_at ? -1 : 0));
  overview.alerts_total = alerts.length;
  overview.alerts = alerts.slice(0, maxAlerts);
  return overview;
}
