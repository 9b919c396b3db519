import type { Context } from 'koa';

/**
 * Sets an answer's body, a plain object or array as its JSON text. Koa tests an object body
 * against the web `ReadableStream`, `Blob` and `Response` classes, once when it is set and again
 * when it is sent; the first test against `Response` loads Node's fetch implementation (undici),
 * which nothing else in a server process needs: 30-40 ms of the first answer, `/readyz` after a
 * start included (docs/PERFORMANCE.md, "Fourteenth sitting"). The headers are Koa's own for an
 * object: `application/json; charset=utf-8` unless a JSON type is set, and the length of the text.
 * Anything else (a Buffer, a string, a stream, null) is Koa's to handle, as before.
 */
export function setBody(ctx: Context, value: unknown): void {
  if (!isPlainJson(value)) {
    ctx.body = value;
    return;
  }
  if (!/\bjson\b/i.test(ctx.type)) ctx.type = 'json';
  ctx.body = JSON.stringify(value);
}

function isPlainJson(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return true;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
