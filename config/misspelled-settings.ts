import type { Logger } from 'pino';
import { SettingsSchema } from './settings.js';

/** An environment variable that is no setting but looks like one. */
export interface SuspectVariable {
  variable: string;
  /** the setting it is closest to, when one is within the edit distance */
  didYouMean?: string;
}

const SETTINGS: readonly string[] = Object.keys(SettingsSchema.properties);
const KNOWN = new Set(SETTINGS);

/**
 * Prefixes that are the platform's own: a variable starting with one is meant for us. Not NODE_
 * (NODE_OPTIONS, NODE_EXTRA_CA_CERTS), PUBLIC_ or HEAP_, which other software reads too.
 */
const OWN_PREFIXES = [
  'OCPP_',
  'OCPI_',
  'CSMS_',
  'DATABASE_',
  'REDIS_',
  'LOG_',
  'PROCESS_',
  'ROAMING_',
  'PRICING_',
  'OUTBOX_',
  'PARTNER_',
  'ACTOR_',
  'SQLITE_',
];

/**
 * Variables with those prefixes that are no setting on purpose: read by our scripts and tests
 * (`CSMS_URL`, `ROAMING_TEST_DB`, ...) or set by a host beside ours (Heroku Redis's
 * `REDIS_TLS_URL`, the PgBouncer buildpack's `DATABASE_CONNECTION_POOL_URL`).
 */
const NOT_SETTINGS = new Set([
  'CSMS_URL',
  'OCPP_FUZZ_SEED',
  'ROAMING_TEST_DB',
  'REDIS_SERVER_BIN',
  'REDIS_TLS_URL',
  'DATABASE_CONNECTION_POOL_URL',
]);

/**
 * What Kubernetes sets for every service of the namespace (`<SERVICE>_SERVICE_HOST`,
 * `<SERVICE>_PORT_6379_TCP_ADDR`, ...): a service named redis or ocpp would otherwise make lines
 * at every start.
 */
const KUBERNETES_SERVICE =
  /_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT(_\d+_(TCP|UDP|SCTP)(_(ADDR|PORT|PROTO))?)?)$/;

/**
 * Environment variables that are not settings but look like a misspelling of one (`PROCES_ROLE`
 * was silently ignored: the process started as `all`): within 2 edits of a setting's name (1 for
 * names of up to 5 characters, so that HOME is not taken for HOST), or starting with one of the
 * platform's own prefixes. Run once at start; a few thousand character comparisons.
 */
export function misspelledSettings(env: Readonly<Record<string, string | undefined>>): SuspectVariable[] {
  const suspects: SuspectVariable[] = [];
  for (const variable of Object.keys(env)) {
    if (KNOWN.has(variable) || NOT_SETTINGS.has(variable) || !/^[A-Za-z][A-Za-z0-9_]*$/.test(variable)) continue;
    if (KUBERNETES_SERVICE.test(variable)) continue;
    const upper = variable.toUpperCase();
    const close = UNIT_LESS.get(upper) ?? closestSetting(upper);
    if (close !== undefined || OWN_PREFIXES.some((p) => upper.startsWith(p)))
      suspects.push({ variable, ...(close !== undefined ? { didYouMean: close } : {}) });
  }
  return suspects.sort((a, b) => (a.variable < b.variable ? -1 : 1));
}

/**
 * A setting's name without its unit (`LEASE_TTL` for `LEASE_TTL_MS`): the likeliest slip, and
 * 3 edits from the name, beyond what `closestSetting` allows.
 */
const UNIT_LESS = new Map(
  SETTINGS.flatMap((name): Array<[string, string]> => {
    const m = /^(.+)_(MS|S|KB|BYTES)$/.exec(name);
    return m?.[1] && !KNOWN.has(m[1]) ? [[m[1], name]] : [];
  }),
);

/** The setting nearest to `name` within the allowed distance (a setting of another case counts). */
function closestSetting(name: string): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const setting of SETTINGS) {
    const allowed = setting.length <= 5 ? 1 : 2;
    if (Math.abs(setting.length - name.length) > allowed) continue;
    const d = editDistance(name, setting, allowed);
    if (d <= allowed && d < bestDistance) {
      best = setting;
      bestDistance = d;
    }
  }
  return best;
}

/** the two rows editDistance works in (a setting's name is far shorter) */
const rows: [Int32Array, Int32Array] = [new Int32Array(256), new Int32Array(256)];

/**
 * Levenshtein distance of `a` and `b`, or `limit + 1` once it must exceed `limit`: only the cells
 * within `limit` of the diagonal are computed (a path outside them costs more than `limit`).
 */
function editDistance(a: string, b: string, limit: number): number {
  const over = limit + 1;
  let previous = rows[0];
  let row = rows[1];
  previous.fill(over, 0, b.length + 1);
  for (let j = 0; j <= Math.min(b.length, limit); j++) previous[j] = j;
  for (let i = 1; i <= a.length; i++) {
    row.fill(over, 0, b.length + 1);
    if (i <= limit) row[0] = i;
    let rowMin = over;
    for (let j = Math.max(1, i - limit); j <= Math.min(b.length, i + limit); j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const v = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost, over);
      row[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > limit) return over;
    [previous, row] = [row, previous];
  }
  return previous[b.length]!;
}

/** One warning line per suspect variable (docs/CONFIGURATION.md "Misspelled settings"); never its value. */
export function warnMisspelledSettings(
  log: Pick<Logger, 'warn'>,
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  for (const { variable, didYouMean } of misspelledSettings(env))
    log.warn(
      { variable, ...(didYouMean !== undefined ? { did_you_mean: didYouMean } : {}) },
      'not a setting: environment variable ignored',
    );
}
