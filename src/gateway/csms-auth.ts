import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { Config } from '../../config/index.js';
import { hashSecret } from '../secret-hash.js';
import { HttpError } from './errors.js';

export interface OperatorAuth {
  /** false when no CSMS_API_KEY is set (allowed outside production; a warning is logged at start) */
  authenticated: boolean;
}

function digest(s: string): Buffer {
  return Buffer.from(hashSecret(s), 'hex');
}

/**
 * A check of `Authorization: Bearer <secret>`, compared in constant time (digests of equal
 * length, so neither the secret nor its length leaks through timing).
 */
export function bearerCheck(secret: string): (ctx: Context) => boolean {
  const expected = digest(secret);
  return (ctx) => {
    const m = /^Bearer\s+(.+)$/i.exec(ctx.get('Authorization'));
    return Boolean(m?.[1]) && timingSafeEqual(digest((m?.[1] ?? '').trim()), expected);
  };
}

/**
 * `Authorization: Bearer <CSMS_API_KEY>` for the management surface (/v1 and operator tools).
 * With no key configured the surface is open (never in production: the config refuses to start
 * then).
 */
export function operatorAuthenticator(config: Pick<Config, 'CSMS_API_KEY'>): (ctx: Context) => OperatorAuth {
  const key = config.CSMS_API_KEY;
  const matches = key ? bearerCheck(key) : undefined;
  return (ctx) => {
    if (!matches) return { authenticated: false };
    if (!matches(ctx)) {
      ctx.set('WWW-Authenticate', 'Bearer realm="csms"');
      throw new HttpError(401, 'unauthorized', 'missing or invalid Authorization: Bearer <CSMS_API_KEY>');
    }
    return { authenticated: true };
  };
}
