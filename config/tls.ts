import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { ConfigError } from './config-error.js';
import type { Settings } from './settings.js';

/** How a connection to PostgreSQL or Redis is encrypted and checked (docs/CONFIGURATION.md "TLS"). */
export interface TlsSettings {
  /** PEM text of the CA certificate(s) to trust instead of the system's */
  ca?: string;
  /** false: any certificate is accepted (the link is encrypted, the server not authenticated) */
  rejectUnauthorized: boolean;
  /** the certificate must also name the host the URL names (verify-full); only with rejectUnauthorized */
  checkHostName: boolean;
}

/**
 * A connection to PostgreSQL or Redis (TCP, TLS handshake, login) that takes longer fails: a
 * process that cannot reach them at start-up says so within seconds (docs/CONFIGURATION.md).
 */
export const CONNECT_TIMEOUT_MS = 5000;

/** The sslmode values of libpq that the platform supports; `prefer` and `allow` may fall back to plain text. */
export type SslMode = 'disable' | 'require' | 'verify-ca' | 'verify-full';

const SSL_MODES: readonly string[] = ['disable', 'require', 'verify-ca', 'verify-full'];
/** libpq parameters the drivers would read from the URL on their own, bypassing the settings */
const REFUSED_PARAMS = ['ssl', 'sslcert', 'sslkey', 'sslrootcert', 'sslpassword', 'uselibpqcompat'];

export interface PostgresTls {
  /** DATABASE_URL without sslmode: the drivers are given the TLS options explicitly */
  url: string;
  sslmode: SslMode;
  /** undefined: plain TCP */
  tls: TlsSettings | undefined;
}

/**
 * DATABASE_URL's sslmode with DATABASE_SSL_CA and DATABASE_SSL_REJECT_UNAUTHORIZED, as libpq reads
 * sslmode: `require` encrypts without checking the certificate (unless a CA is given: then its
 * chain is checked, as libpq does with a root certificate file), `verify-ca` checks the chain,
 * `verify-full` the chain and the host name. Without sslmode the link is plain unless one of the
 * two settings is set (Heroku's DATABASE_URL carries no sslmode): then it is verify-full.
 * DATABASE_SSL_REJECT_UNAUTHORIZED=false turns every check off.
 */
export function postgresTls(settings: Settings): PostgresTls {
  const [base = '', query] = splitQuery(settings.DATABASE_URL);
  const params = new URLSearchParams(query ?? '');
  for (const name of REFUSED_PARAMS) {
    if (params.has(name)) {
      throw new ConfigError('DATABASE_URL', `?${name}= is not supported: use sslmode= and DATABASE_SSL_CA`);
    }
  }
  const given = params.get('sslmode');
  params.delete('sslmode');
  const rest = params.toString();
  const url = rest ? `${base}?${rest}` : base;
  const ca = settings.DATABASE_SSL_CA ? readCa('DATABASE_SSL_CA', settings.DATABASE_SSL_CA) : undefined;
  const reject = settings.DATABASE_SSL_REJECT_UNAUTHORIZED;
  if (given !== null && !SSL_MODES.includes(given)) {
    throw new ConfigError(
      'DATABASE_URL',
      `sslmode=${given} is not supported: use ${SSL_MODES.join(', ')} (prefer and allow could fall back to plain text)`,
    );
  }
  const sslmode = (given ?? (ca !== undefined || reject !== undefined ? 'verify-full' : 'disable')) as SslMode;
  if (sslmode === 'disable') {
    const extra = ca !== undefined ? 'DATABASE_SSL_CA' : reject !== undefined ? 'DATABASE_SSL_REJECT_UNAUTHORIZED' : '';
    if (extra) throw new ConfigError(extra, 'has no effect with sslmode=disable in DATABASE_URL');
    return { url, sslmode, tls: undefined };
  }
  // a check asked for in the URL is never turned off by another setting without saying so
  if ((given === 'verify-ca' || given === 'verify-full') && reject === 'false')
    throw new ConfigError(
      'DATABASE_SSL_REJECT_UNAUTHORIZED',
      `false would turn off the certificate checks sslmode=${given} asks for: drop it, or use sslmode=require`,
    );
  const verify = reject !== undefined ? reject === 'true' : sslmode !== 'require' || ca !== undefined;
  return {
    url,
    sslmode,
    tls: { ...(ca !== undefined ? { ca } : {}), rejectUnauthorized: verify, checkHostName: sslmode === 'verify-full' },
  };
}

/** REDIS_URL rediss:// with REDIS_TLS_CA and REDIS_TLS_REJECT_UNAUTHORIZED; undefined for redis://. */
export function redisTls(settings: Settings): TlsSettings | undefined {
  const ca = settings.REDIS_TLS_CA;
  const reject = settings.REDIS_TLS_REJECT_UNAUTHORIZED;
  if (!settings.REDIS_URL?.startsWith('rediss://')) {
    const extra = ca !== undefined ? 'REDIS_TLS_CA' : reject !== undefined ? 'REDIS_TLS_REJECT_UNAUTHORIZED' : '';
    if (extra) throw new ConfigError(extra, 'needs a rediss:// REDIS_URL');
    return undefined;
  }
  return {
    ...(ca !== undefined ? { ca: readCa('REDIS_TLS_CA', ca) } : {}),
    rejectUnauthorized: reject !== 'false',
    checkHostName: true,
  };
}

/** The options `tls.connect` takes for these settings (pg's `ssl`, ioredis's `tls`). */
export function nodeTlsOptions(tls: TlsSettings): ConnectionOptions {
  return {
    ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
    rejectUnauthorized: tls.rejectUnauthorized,
    // verify-ca: the chain is checked, the name in the certificate is not
    ...(tls.checkHostName ? {} : { checkServerIdentity: () => undefined }),
  };
}

function splitQuery(url: string): [string, string | undefined] {
  const at = url.indexOf('?');
  return at < 0 ? [url, undefined] : [url.slice(0, at), url.slice(at + 1)];
}

/**
 * PEM text as given (a platform that cannot hold a line break in a variable may write `\n`), or
 * the path of a file holding it.
 */
function readCa(variable: string, value: string): string {
  let text: string;
  if (value.includes('-----BEGIN')) {
    text = value.includes('\n') ? value : value.replace(/\\n/g, '\n');
  } else {
    try {
      text = readFileSync(value, 'utf8');
    } catch (err) {
      throw new ConfigError(variable, `cannot read ${value}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ConfigError(variable, 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
  }
  return text;
}
