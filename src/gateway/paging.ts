/**
 * The paging headers of every list answer, OCPI and /v1 alike: `X-Total-Count`, `X-Limit` and,
 * while objects remain, `Link: <url>; rel="next"`. The next URL keeps the request's filters and
 * its limit and moves the offset; `origin` is the public origin the caller reached us at
 * (gateway/public-origin.ts), so a client behind a proxy can follow the link as given.
 */
export interface PageRequest {
  origin: string;
  path: string;
  /** the request's query; values that are not single strings are dropped from the next URL */
  query: Record<string, unknown>;
  offset: number;
  limit: number;
  total: number;
}

export function pagingHeaders(page: PageRequest): Record<string, string> {
  const headers: Record<string, string> = { 'X-Total-Count': String(page.total), 'X-Limit': String(page.limit) };
  const next = page.offset + page.limit;
  if (next < page.total) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(page.query)) {
      if (k === 'offset' || k === 'limit') continue;
      if (typeof v === 'string') params.set(k, v);
    }
    params.set('offset', String(next));
    params.set('limit', String(page.limit));
    headers.Link = `<${page.origin}${page.path}?${params.toString()}>; rel="next"`;
  }
  return headers;
}

/** The `next` URL of a Link header, if any (how we follow a partner's pages). */
export function nextLink(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(',')) {
    const m = /<([^>]+)>\s*;\s*rel="?next"?/i.exec(part);
    if (m?.[1]) return m[1];
  }
  return undefined;
}
