import type { Context } from 'koa';

/**
 * List paging (spec Limits 1-2, DESIGN §5): `offset` (default 0), `limit` (default and maximum
 * below: the spec leaves them open), `date_from` inclusive and `date_to` exclusive on
 * last_updated. Answers carry X-Total-Count, X-Limit and, while objects remain, a
 * `Link: <url>; rel="next"` that keeps the filters and the limit.
 */
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export interface ListWindow {
  offset: number;
  limit: number;
  /** epoch ms, inclusive */
  from?: number;
  /** epoch ms, exclusive */
  to?: number;
}

export interface Page<T> {
  items: T[];
  total: number;
}

export function listWindow(query: Record<string, unknown>): ListWindow {
  const offset = typeof query.offset === 'number' ? query.offset : 0;
  const asked = typeof query.limit === 'number' ? query.limit : DEFAULT_LIMIT;
  const window: ListWindow = { offset, limit: Math.min(asked, MAX_LIMIT) };
  if (typeof query.date_from === 'string') window.from = Date.parse(query.date_from);
  if (typeof query.date_to === 'string') window.to = Date.parse(query.date_to);
  return window;
}

/** The paging headers of a list answer; `base` is the public origin the caller reached us at. */
export function pageHeaders(ctx: Context, base: string, window: ListWindow, total: number): Record<string, string> {
  const headers: Record<string, string> = { 'X-Total-Count': String(total), 'X-Limit': String(window.limit) };
  const next = window.offset + window.limit;
  if (next < total) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(ctx.query)) {
      if (k === 'offset' || k === 'limit') continue;
      if (typeof v === 'string') params.set(k, v);
    }
    params.set('offset', String(next));
    params.set('limit', String(window.limit));
    headers.Link = `<${base}${ctx.path}?${params.toString()}>; rel="next"`;
  }
  return headers;
}

/** The `next` URL of a Link header, if any. */
export function nextLink(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(',')) {
    const m = /<([^>]+)>\s*;\s*rel="?next"?/i.exec(part);
    if (m?.[1]) return m[1];
  }
  return undefined;
}
