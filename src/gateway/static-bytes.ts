import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { RouteResult } from './route-table.js';

/** A body that never changes while the process runs, encoded once, with its entity tag. */
export interface StaticBytes {
  readonly body: Buffer;
  readonly etag: string;
}

/**
 * `make`'s bytes, made at the first call and shared by every answer after it. A body kept as a
 * string was encoded again for each answer: 1.7 MB of Swagger UI a request, held per connection
 * until the client read it (1,000 connections that never read held 660 MB), and `/openapi.json`
 * serialised per request (15-20 ms each: 2,500 requests delayed a charger's Heartbeat 36 s). One
 * Buffer for all of them is referenced by each socket's queue, never copied.
 */
export function staticBytes(make: () => Buffer | string): () => StaticBytes {
  let made: StaticBytes | undefined;
  return () => {
    if (made) return made;
    const made_ = make();
    const body = typeof made_ === 'string' ? Buffer.from(made_, 'utf8') : made_;
    made = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    return made;
  };
}

/** Whether `If-None-Match` names `etag` (a list, weak forms and `*` included; RFC 9110 section 13.1.2). */
function notModified(ctx: Context, etag: string): boolean {
  const header = ctx.get('If-None-Match');
  if (header === '') return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

/** The answer with `bytes`: 304 without a body when the client holds them already. */
export function staticAnswer(
  ctx: Context,
  bytes: StaticBytes,
  type: string,
  headers: Readonly<Record<string, string>> = {},
): RouteResult {
  const all = { ...headers, ETag: bytes.etag };
  if (notModified(ctx, bytes.etag)) return { status: 304, headers: all, raw: { body: null, type } };
  return { headers: all, raw: { body: bytes.body, type } };
}
