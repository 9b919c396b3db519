import Value from '#typebox/value';
import { ConfigError } from './config-error.js';
import { byteSize } from './byte-size.js';
import { SettingsSchema, type Settings } from './settings.js';
import { postgresTls, redisTls, type SslMode, type TlsSettings } from './tls.js';

export { ConfigError } from './config-error.js';
export { SettingsSchema, type Settings } from './settings.js';
export { misspelledSettings, warnMisspelledSettings, type SuspectVariable } from './misspelled-settings.js';
export { CONNECT_TIMEOUT_MS, nodeTlsOptions, type SslMode, type TlsSettings } from './tls.js';

export interface Config extends Settings {
  /** derived: the URL partners and chargers use to reach this process */
  publicUrl: string;
  mode: 'embedded' | 'cluster';
  database:
    | {
        kind: 'sqlite';
        file: string;
        /** SQLITE_LOCKING=exclusive: the connection keeps the file's lock (no other process opens it) */
        exclusive?: boolean;
      }
    | {
        kind: 'postgresql';
        /** DATABASE_URL without its sslmode */
        url: string;
        schema: string;
        sslmode?: SslMode;
        /** undefined: plain TCP */
        tls?: TlsSettings;
      };
  /** REDIS_URL rediss://: how the link is checked; undefined for redis:// */
  redisTls: TlsSettings | undefined;
}

const known = Object.keys(SettingsSchema.properties);

/** The settings whose schema is an integer (Value.Convert would read `1.5` as 1, `0x50` as 80). */
const INTEGER_SETTINGS = known.filter((name) => {
  const schema: unknown = SettingsSchema.properties[name as keyof typeof SettingsSchema.properties];
  return typeof schema === 'object' && schema !== null && 'type' in schema && schema.type === 'integer';
});

/**
 * An integer setting is written in decimal digits: converted as it was, `PORT=1.5` listened on
 * port 1 and `PORT=0x50`, `8e1` or ` 80` on 80, none of them what was meant.
 */
function assertWholeNumbers(raw: Record<string, unknown>): void {
  for (const name of INTEGER_SETTINGS) {
    const value = raw[name];
    if (typeof value === 'string' && !/^-?[0-9]+$/.test(value))
      throw new ConfigError(name, `must be a whole number in decimal digits (got ${JSON.stringify(value)})`);
  }
}

/**
 * Reads the settings from an environment. Empty strings count as unset. Throws ConfigError
 * naming the first variable that fails its schema.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const name of known) {
    const value = env[name];
    if (value !== undefined && value !== '') raw[name] = value;
  }
  assertWholeNumbers(raw);
  const settings = Value.Default(SettingsSchema, Value.Convert(SettingsSchema, raw));
  if (!Value.Check(SettingsSchema, settings)) throw settingsError(settings, env);
  if (settings.NODE_ENV === 'production' && !settings.CSMS_API_KEY) {
    throw new ConfigError('CSMS_API_KEY', 'must be set when NODE_ENV=production');
  }
  const database = databaseOf(settings);
  // a setting that would change nothing is refused, as the TLS settings are with a sqlite: URL
  if (env.SQLITE_LOCKING && database.kind !== 'sqlite') {
    throw new ConfigError('SQLITE_LOCKING', 'needs a sqlite: DATABASE_URL (PostgreSQL takes its own locks)');
  }
  // the log writer holds at least 4 KB whatever it is given: a smaller value would be ignored
  if (byteSize(settings.LOG_BUFFER_BYTES) < 4096) {
    throw new ConfigError('LOG_BUFFER_BYTES', `must be at least 4kb (got ${settings.LOG_BUFFER_BYTES})`);
  }
  if (settings.REDIS_URL && database.kind === 'sqlite') {
    throw new ConfigError('DATABASE_URL', 'cluster mode (REDIS_URL set) needs a postgres:// DATABASE_URL');
  }
  // a web or worker process is a cluster member: without Redis it would own every shard on its
  // own, beside the cluster's processes on the same database, each side blind to the other's
  // chargers (a dyno whose REDIS_URL was left out ran so, ready, with no warning)
  if (settings.PROCESS_ROLE !== 'all' && !settings.REDIS_URL) {
    throw new ConfigError(
      'REDIS_URL',
      `PROCESS_ROLE=${settings.PROCESS_ROLE} is a cluster process and needs REDIS_URL (one process on its own: PROCESS_ROLE=all)`,
    );
  }
  return {
    ...settings,
    publicUrl: (settings.PUBLIC_URL ?? `http://localhost:${settings.PORT}`).replace(/\/+$/, ''),
    mode: settings.REDIS_URL ? 'cluster' : 'embedded',
    database,
    redisTls: redisTls(settings),
  };
}

function databaseOf(settings: Settings): Config['database'] {
  if (settings.DATABASE_URL.startsWith('sqlite:')) {
    for (const name of ['DATABASE_SSL_CA', 'DATABASE_SSL_REJECT_UNAUTHORIZED'] as const) {
      if (settings[name] !== undefined) throw new ConfigError(name, 'needs a postgres:// DATABASE_URL');
    }
    return {
      kind: 'sqlite',
      file: settings.DATABASE_URL.slice('sqlite:'.length),
      exclusive: settings.SQLITE_LOCKING === 'exclusive',
    };
  }
  const { url, sslmode, tls } = postgresTls(settings);
  return { kind: 'postgresql', url, schema: settings.DATABASE_SCHEMA, sslmode, ...(tls ? { tls } : {}) };
}

/** The error naming the first variable that fails its schema. */
function settingsError(settings: unknown, env: Record<string, string | undefined>): ConfigError {
  const first = Value.Errors(SettingsSchema, settings)[0];
  if (!first) return new ConfigError('settings', 'do not match their schema');
  const variable = first.instancePath.replace(/^\//, '').split('/')[0] || requiredName(first.params) || 'settings';
  const given = shown(variable, env[variable]);
  const allowed = constantsOf(variable);
  const message = allowed ? `must be one of ${allowed.join(', ')}` : first.message;
  return new ConfigError(variable, `${message}${given === undefined ? '' : ` (got ${given})`}`);
}

/** The values a setting may take when it is one of a list (its schema a union of constants). */
function constantsOf(variable: string): string[] | undefined {
  const schema: unknown = (SettingsSchema.properties as Record<string, unknown>)[variable];
  const branches = typeof schema === 'object' && schema !== null ? (schema as { anyOf?: unknown }).anyOf : undefined;
  if (!Array.isArray(branches)) return undefined;
  const values = branches.map((b: unknown) =>
    typeof b === 'object' && b !== null && 'const' in b ? String((b as { const: unknown }).const) : undefined,
  );
  return values.every((v) => v !== undefined) ? values : undefined;
}

/** Settings whose value is a secret or holds one: never written to a log line. */
const SECRET_SETTINGS = new Set(['CSMS_API_KEY', 'METRICS_TOKEN', 'DATABASE_SSL_CA', 'REDIS_TLS_CA']);
const URL_SETTINGS = new Set(['DATABASE_URL', 'REDIS_URL', 'PUBLIC_URL']);

/** How a bad value is quoted in the error: as given, a URL without its credentials, or not at all. */
function shown(variable: string, given: string | undefined): string | undefined {
  if (given === undefined || SECRET_SETTINGS.has(variable)) return undefined;
  if (!URL_SETTINGS.has(variable)) return JSON.stringify(given);
  try {
    const url = new URL(given);
    return JSON.stringify(`${url.protocol}//${url.host}`);
  } catch {
    return 'a value that is not a URL';
  }
}

function requiredName(params: object): string | undefined {
  const required = 'requiredProperties' in params ? params.requiredProperties : undefined;
  return Array.isArray(required) && typeof required[0] === 'string' ? required[0] : undefined;
}
