import { CONNECT_TIMEOUT_MS, type Config } from '../../config/index.js';
import type { Database } from '../db/database.js';

/**
 * PostgreSQL or Redis cannot be used at start-up. `setting` names the variable an operator looks
 * at; the message says what failed and, where it can tell, what to set (docs/CONFIGURATION.md).
 */
export class DependencyError extends Error {
  override readonly name = 'DependencyError';
  constructor(
    readonly setting: 'DATABASE_URL' | 'REDIS_URL',
    message: string,
  ) {
    super(message);
  }
}

type PostgresDatabase = Extract<Config['database'], { kind: 'postgresql' }>;

/** node's codes of a certificate that does not chain to a trusted CA */
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);
const OUT_OF_DATE = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);

/**
 * One query on a PostgreSQL database just opened: a server that cannot be used (unreachable,
 * TLS refused or untrusted, login refused) fails the start here, within CONNECT_TIMEOUT_MS.
 */
export async function checkDatabase(db: Database, database: Config['database']): Promise<void> {
  if (database.kind !== 'postgresql') return;
  try {
    await db.sql.query('SELECT 1 AS ok');
  } catch (err) {
    throw databaseError(err, database);
  }
}

/** The first connection to PostgreSQL failed: why, in one line, with the setting to change. */
export function databaseError(err: unknown, database: PostgresDatabase): DependencyError {
  const { code, message } = describe(err);
  const hint = tlsHint(code, 'DATABASE_SSL_CA', 'DATABASE_SSL_REJECT_UNAUTHORIZED') ?? postgresHint(code, message);
  const reason = /timeout expired/i.test(message) ? `no answer within ${CONNECT_TIMEOUT_MS / 1000} s` : message;
  return new DependencyError(
    'DATABASE_URL',
    `cannot reach PostgreSQL at ${endpoint(database.url, 5432)}: ${reason}${hint ? `; ${hint}` : ''}`,
  );
}

/** The first connection to Redis failed. */
export function redisError(err: unknown, url: string): DependencyError {
  const { code, message } = describe(err);
  const hint = tlsHint(code, 'REDIS_TLS_CA', 'REDIS_TLS_REJECT_UNAUTHORIZED') ?? redisHint(code, message, url);
  return new DependencyError(
    'REDIS_URL',
    `cannot reach Redis at ${endpoint(url, 6379)}: ${message}${hint ? `; ${hint}` : ''}`,
  );
}

function tlsHint(code: string, caSetting: string, rejectSetting: string): string | undefined {
  if (UNTRUSTED.has(code))
    return `set ${caSetting} (the CA that signed the server's certificate) or ${rejectSetting}=false`;
  if (OUT_OF_DATE.has(code)) return `the server's certificate is out of date (or set ${rejectSetting}=false)`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    return caSetting.startsWith('DATABASE')
      ? 'connect by a host name the certificate carries, or use sslmode=verify-ca'
      : `connect by a host name the certificate carries, or set ${rejectSetting}=false`;
  }
  return undefined;
}

function postgresHint(code: string, message: string): string | undefined {
  if (/does not support SSL/i.test(message)) return 'the server does not speak TLS: use sslmode=disable';
  if (code === '28000' && /no encryption/i.test(message)) {
    return 'the server requires TLS: add ?sslmode=verify-full (or require) to DATABASE_URL';
  }
  if (code === '28P01') return 'check the user and password in DATABASE_URL';
  if (code === '3D000') return 'create the database or fix its name in DATABASE_URL';
  return networkHint(code);
}

function redisHint(code: string, message: string, url: string): string | undefined {
  const tls = url.startsWith('rediss://');
  if (/WRONGPASS|NOAUTH|invalid password/i.test(message)) return 'check the user and password in REDIS_URL';
  if (tls && (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'EPROTO')) {
    return 'the server does not speak TLS: use redis://';
  }
  // a plain Redis reads the TLS hello as an unfinished command and waits: the handshake times out
  if (tls && (code === 'ETIMEDOUT' || /timed? ?out/i.test(message))) {
    return 'no TLS answer: if the server does not speak TLS, use redis://';
  }
  if (!tls && (code === 'ECONNRESET' || /Connection is closed/i.test(message))) {
    return 'if the server expects TLS, use rediss://';
  }
  return networkHint(code);
}

function networkHint(code: string): string | undefined {
  if (code === 'ECONNREFUSED') return 'nothing listens there: check the host and port';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'the host name does not resolve';
  return undefined;
}

function describe(err: unknown): { code: string; message: string } {
  if (!(err instanceof Error)) return { code: '', message: String(err) };
  // an AggregateError (every address of a host refused) carries the reasons inside
  const inner = err instanceof AggregateError && err.errors[0] instanceof Error ? err.errors[0] : err;
  const code = 'code' in inner && typeof inner.code === 'string' ? inner.code : '';
  return { code, message: inner.message || code || inner.name };
}

/** host:port of a URL, never its credentials */
function endpoint(url: string, defaultPort: number): string {
  try {
    const u = new URL(url);
    return `${u.hostname || 'localhost'}:${u.port || defaultPort}`;
  } catch {
    return 'the configured address';
  }
}
