/** The figures of the comparison (compare.ts), its ratios and its Markdown table. */
export interface FloodFigures {
  messagesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** server CPU during the flood divided by the messages answered (undefined for external targets) */
  cpuMsPerMessage: number | undefined;
  messages: number;
  errors: number;
  lastError: string | undefined;
}

export interface ServerFigures {
  server: string;
  bootStormSeconds?: number | undefined;
  bootStormReady?: number;
  bootStormCpuMsPerCharger?: number | undefined;
  bootStormErrors?: number;
  /** settled RSS (after forced GC) per connected, booted charger */
  bytesPerConnection?: number | undefined;
  heapBytesPerConnection?: number | undefined;
  meterValues?: FloodFigures | undefined;
  heartbeat?: FloodFigures | undefined;
  /** `--workload status-notification` only */
  statusNotification?: FloodFigures | undefined;
  lastError?: string | undefined;
}

export interface Ratios {
  /** platform MeterValues rate / ocpp-rpc MeterValues rate (aim: at least 1.0) */
  meterValuesVsOcppRpc?: number | undefined;
  /** platform Heartbeat rate / ocpp-rpc Heartbeat rate */
  heartbeatVsOcppRpc?: number | undefined;
  /** platform boot storm time / bare ws boot storm time (aim: at most 1.5) */
  bootStormVsBareWs?: number | undefined;
  /** platform memory per connection / bare ws memory per connection (aim: at most 2) */
  memoryVsBareWs?: number | undefined;
}

export interface RunFigures {
  run: number;
  servers: ServerFigures[];
  ratios: Ratios;
}

function ratio(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined || b === 0 ? undefined : a / b;
}

export function ratiosOf(servers: ServerFigures[]): Ratios {
  const of = (name: string): ServerFigures | undefined => servers.find((s) => s.server === name);
  const platform = of('platform');
  const rpc = of('ocpp-rpc');
  const bare = of('bare-ws');
  return {
    meterValuesVsOcppRpc: ratio(platform?.meterValues?.messagesPerSecond, rpc?.meterValues?.messagesPerSecond),
    heartbeatVsOcppRpc: ratio(platform?.heartbeat?.messagesPerSecond, rpc?.heartbeat?.messagesPerSecond),
    bootStormVsBareWs: ratio(platform?.bootStormSeconds, bare?.bootStormSeconds),
    memoryVsBareWs: ratio(platform?.bytesPerConnection, bare?.bytesPerConnection),
  };
}

const dash = '-';

function fixed(v: number | undefined, digits: number): string {
  return v === undefined ? dash : v.toFixed(digits);
}

function floodCell(f: FloodFigures | undefined): string {
  if (!f) return dash;
  const cpu = f.cpuMsPerMessage === undefined ? '' : `, ${fixed(f.cpuMsPerMessage, 3)} ms CPU each`;
  const errors = f.errors > 0 ? `, ${f.errors} errors` : '';
  return `${f.messagesPerSecond.toFixed(0)} msg/s, p50 ${fixed(f.p50Ms, 1)} ms, p99 ${fixed(f.p99Ms, 1)} ms${cpu}${errors}`;
}

function bootCell(s: ServerFigures): string {
  if (s.bootStormReady === undefined) return dash;
  const time =
    s.bootStormSeconds === undefined ? `not all ready (${s.bootStormReady})` : `${fixed(s.bootStormSeconds, 2)} s`;
  const cpu =
    s.bootStormCpuMsPerCharger === undefined ? '' : ` (${fixed(s.bootStormCpuMsPerCharger, 2)} ms CPU per charger)`;
  return `${time}${cpu}`;
}

function serverRow(run: number, s: ServerFigures): string {
  const kb = s.bytesPerConnection === undefined ? dash : `${(s.bytesPerConnection / 1024).toFixed(1)} KB`;
  return `| ${run} | ${s.server} | ${bootCell(s)} | ${floodCell(s.meterValues)} | ${floodCell(s.heartbeat)} | ${kb} |`;
}

const RATIO_NAMES: [keyof Ratios, string][] = [
  ['meterValuesVsOcppRpc', 'MeterValues rate, platform / ocpp-rpc (aim >= 1.0)'],
  ['heartbeatVsOcppRpc', 'Heartbeat rate, platform / ocpp-rpc'],
  ['bootStormVsBareWs', 'boot storm time, platform / bare ws (aim <= 1.5)'],
  ['memoryVsBareWs', 'memory per connection, platform / bare ws (aim <= 2)'],
];

function ratioRows(runs: RunFigures[]): string[] {
  return RATIO_NAMES.map(([key, name]) => {
    const values = runs.map((r) => r.ratios[key]).filter((v): v is number => v !== undefined);
    const each = values.map((v) => v.toFixed(2)).join(', ') || dash;
    const spread = values.length > 1 ? `${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)}` : each;
    return `| ${name} | ${each} | ${spread} |`;
  });
}

export function markdownReport(
  o: { bootChargers: number; chargers: number; inFlight: number; floodSeconds: number },
  runs: RunFigures[],
): string {
  return [
    '',
    `| run | server | boot storm, ${o.bootChargers} chargers | MeterValues inside a transaction | Heartbeat | memory per connection |`,
    '|---|---|---|---|---|---|',
    ...runs.flatMap((r) => r.servers.map((s) => serverRow(r.run, s))),
    '',
    `Floods: ${o.chargers} chargers, ${o.inFlight} calls in flight, ${o.floodSeconds} s each.`,
    '',
    '| ratio | each run | spread |',
    '|---|---|---|',
    ...ratioRows(runs),
    '',
  ].join('\n');
}
