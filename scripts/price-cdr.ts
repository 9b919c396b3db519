import { readFileSync } from 'node:fs';
import { compileLazily } from '../src/lazy-compile.js';
import { priceCdr } from '../src/tariffs/engine.js';
import { readsLocalTime } from '../src/tariffs/local-time.js';
import { PriceRequest } from '../src/tariffs/types.js';
import { commandLine, usageError } from './cli.js';

/**
 * Prices a CDR with a tariff from files, as `POST /v1/tariffs/price` does (docs/TARIFFS.md):
 *
 *   node dist/scripts/price-cdr.js --cdr cdr.json [--tariff tariff.json] [--time-zone Europe/Amsterdam] [--totals]
 *
 * The CDR file is an OCPI 2.2.1 or 2.1.1 CDR (its totals, if any, are ignored) or just
 * `start_date_time`, `end_date_time`, `charging_periods` (and `currency`). Without `--tariff`, the
 * first of the CDR's own `tariffs` prices it. The zone is `--time-zone`, else a 2.1.1 CDR's
 * `location.time_zone` (a 2.2.1 `cdr_location` has none). Prints the priced CDR as JSON (`--totals`: without the breakdown).
 * Exit status 0 priced, 2 bad input (the reasons on stderr).
 */

const CLI = {
  summary: 'Prices a CDR with a tariff from files, as POST /v1/tariffs/price does; prints the priced CDR as JSON.',
  options: {
    cdr: {
      type: 'string',
      value: 'FILE',
      help: 'an OCPI 2.2.1 or 2.1.1 CDR, or {start_date_time, end_date_time, charging_periods[, currency]} (required)',
    },
    tariff: { type: 'string', value: 'FILE', help: "an OCPI 2.2.1 Tariff (default: the first of the CDR's tariffs)" },
    'time-zone': {
      type: 'string',
      value: 'ZONE',
      help: "the location's IANA time zone (default: a 2.1.1 CDR's location.time_zone; required when neither is given and the tariff reads the local time)",
    },
    totals: { type: 'boolean', default: false, help: 'leave out the per-period breakdown' },
  },
  notes: 'Exit status 0 priced, 2 bad input (the reasons on stderr).',
} as const;

function fail(message: string): never {
  process.stderr.write(`price-cdr: ${message}\n`);
  process.exit(2);
}

function readJson(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    fail(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    fail(`${path} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const record = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** What prices a CDR file of either version: 2.1.1 names its end `stop_date_time` and carries the whole `location`. */
interface CdrInput {
  version: '2.1.1' | '2.2.1';
  cdr: Record<string, unknown>;
  tariffs: unknown[];
  /** the zone the CDR itself gives: only a 2.1.1 CDR's location has a `time_zone` */
  zone?: unknown;
}

function cdrInput(file: Record<string, unknown>): CdrInput {
  const tariffs = Array.isArray(file.tariffs) ? (file.tariffs as unknown[]) : [];
  const period = { currency: file.currency, charging_periods: file.charging_periods };
  const is211 = file.end_date_time === undefined && file.stop_date_time !== undefined;
  if (!is211) {
    const cdr = { start_date_time: file.start_date_time, end_date_time: file.end_date_time, ...period };
    return { version: '2.2.1', cdr, tariffs };
  }
  const cdr = { start_date_time: file.start_date_time, end_date_time: file.stop_date_time, ...period };
  return { version: '2.1.1', cdr, tariffs, zone: record(file.location).time_zone };
}

function main(): void {
  const { values } = commandLine(CLI);
  if (!values.cdr) usageError('--cdr is required');
  const input = cdrInput(record(readJson(values.cdr)));
  const tariff = values.tariff ? readJson(values.tariff) : input.tariffs[0];
  if (tariff === undefined) fail('no --tariff given and the CDR carries no tariffs');
  const given = values['time-zone'] ?? input.zone;
  // a tariff that reads the wall clock would be priced in UTC, not where the charger is: a total
  // that looks right and is not. Refused then; any other tariff prices the same in every zone
  if (given === undefined && readsLocalTime(tariff))
    usageError(
      "the tariff's restrictions read the location's local time (start_time, end_time, start_date, end_date or day_of_week): give --time-zone (a 2.2.1 CDR names no zone; a 2.1.1 CDR's location.time_zone is taken)",
    );
  if (given === undefined)
    process.stderr.write(
      `note: no --time-zone${input.version === '2.1.1' ? " and no time_zone in the CDR's location" : ''}: priced in UTC\n`,
    );
  const zone = given ?? 'UTC';
  const cdr = Object.fromEntries(Object.entries(input.cdr).filter(([, v]) => v !== undefined));
  const request = { tariff, cdr, time_zone: zone };
  const check = compileLazily(PriceRequest);
  if (!check.Check(request)) {
    const reasons = [...check.Errors(request)].slice(0, 10).map((e) => `${e.instancePath || '/'}: ${e.message}`);
    fail(`the input does not validate:\n  ${reasons.join('\n  ')}`);
  }
  const outcome = priceCdr(request.tariff, request.cdr, request.time_zone, { breakdown: !values.totals });
  if (!outcome.ok) fail(`${outcome.code}: ${outcome.message}`);
  const { breakdown, ...totals } = outcome.priced;
  process.stdout.write(`${JSON.stringify(values.totals ? totals : { ...totals, breakdown }, null, 2)}\n`);
}

main();
