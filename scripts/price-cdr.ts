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
 * The CDR file is an OCPI CDR (its totals, if any, are ignored) or just `start_date_time`,
 * `end_date_time`, `charging_periods` (and `currency`). Without `--tariff`, the first of the CDR's
 * own `tariffs` prices it. Prints the priced CDR as JSON (`--totals`: without the breakdown).
 * Exit status 0 priced, 2 bad input (the reasons on stderr).
 */

const CLI = {
  summary: 'Prices a CDR with a tariff from files, as POST /v1/tariffs/price does; prints the priced CDR as JSON.',
  options: {
    cdr: {
      type: 'string',
      value: 'FILE',
      help: 'an OCPI 2.2.1 CDR, or {start_date_time, end_date_time, charging_periods[, currency]} (required)',
    },
    tariff: { type: 'string', value: 'FILE', help: "an OCPI 2.2.1 Tariff (default: the first of the CDR's tariffs)" },
    'time-zone': {
      type: 'string',
      value: 'ZONE',
      help: "the location's IANA time zone (default: the CDR location's time_zone; required when neither is given and the tariff reads the local time)",
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

function main(): void {
  const { values } = commandLine(CLI);
  if (!values.cdr) usageError('--cdr is required');
  const cdr = record(readJson(values.cdr));
  const ownTariffs = Array.isArray(cdr.tariffs) ? (cdr.tariffs as unknown[]) : [];
  const tariff = values.tariff ? readJson(values.tariff) : ownTariffs[0];
  if (tariff === undefined) fail('no --tariff given and the CDR carries no tariffs');
  const given = values['time-zone'] ?? record(cdr.cdr_location).time_zone;
  // a tariff that reads the wall clock would be priced in UTC, not where the charger is: a total
  // that looks right and is not. Refused then; any other tariff prices the same in every zone
  if (given === undefined && readsLocalTime(tariff))
    usageError(
      "the tariff's restrictions read the location's local time (start_time, end_time, start_date, end_date or day_of_week): give --time-zone, or a CDR with cdr_location.time_zone",
    );
  if (given === undefined) process.stderr.write('note: no --time-zone and no time_zone in the CDR: priced in UTC\n');
  const zone = given ?? 'UTC';
  const request = {
    tariff,
    cdr: {
      start_date_time: cdr.start_date_time,
      end_date_time: cdr.end_date_time,
      ...(cdr.currency === undefined ? {} : { currency: cdr.currency }),
      charging_periods: cdr.charging_periods,
    },
    time_zone: zone,
  };
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
