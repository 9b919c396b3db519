import Value from '#typebox/value';
import { SettingsSchema, type Settings } from './settings.js';

export { SettingsSchema, type Settings } from './settings.js';

/** A setting that cannot be used; the message names the variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`invalid setting ${variable}: ${message}`);
  }
}

export interface Config extends Settings {
  /** derived: the URL partners and chargers use to reach this process */
  publicUrl: string;
  mode: 'embedded' | 'cluster';
  database: { kind: 'sqlite'; file: string } | { kind: 'postgresql'; url: string; schema: string };
}

const known = Object.keys(SettingsSchema.properties);

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
  const settings = Value.Default(SettingsSchema, Value.Convert(SettingsSchema, raw));
  if (!Value.Check(SettingsSchema, settings)) throw settingsError(settings, env);
  if (settings.NODE_ENV === 'production' && !settings.CSMS_API_KEY) {
    throw new ConfigError('CSMS_API_KEY', 'must be set when NODE_ENV=production');
  }
  const database: Config['database'] = settings.DATABASE_URL.startsWith('sqlite:')
    ? { kind: 'sqlite', file: settings.DATABASE_URL.slice('sqlite:'.length) }
    : { kind: 'postgresql', url: settings.DATABASE_URL, schema: settings.DATABASE_SCHEMA };
  if (settings.REDIS_URL && database.kind === 'sqlite') {
    throw new ConfigError('DATABASE_URL', 'cluster mode (REDIS_URL set) needs a postgres:// DATABASE_URL');
  }
  return {
    ...settings,
    publicUrl: (settings.PUBLIC_URL ?? `http://localhost:${settings.PORT}`).replace(/\/+$/, ''),
    mode: settings.REDIS_URL ? 'cluster' : 'embedded',
    database,
  };
}

/** The error naming the first variable that fails its schema. */
function settingsError(settings: unknown, env: Record<string, string | undefined>): ConfigError {
  const first = Value.Errors(SettingsSchema, settings)[0];
  if (!first) return new ConfigError('settings', 'do not match their schema');
  const variable = first.instancePath.replace(/^\//, '').split('/')[0] || requiredName(first.params) || 'settings';
  const given = env[variable];
  return new ConfigError(variable, `${first.message}${given === undefined ? '' : ` (got ${JSON.stringify(given)})`}`);
}

function requiredName(params: object): string | undefined {
  const required = 'requiredProperties' in params ? params.requiredProperties : undefined;
  return Array.isArray(required) && typeof required[0] === 'string' ? required[0] : undefined;
}
