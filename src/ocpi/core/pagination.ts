/**
 * List paging (docs/OCPI.md "Lists"): `offset` (default 0), `limit` (default and maximum below,
 * docs/OCPI.md Decisions 2), `date_from` inclusive and `date_to` exclusive on last_updated.
 * Answers carry the paging headers of gateway/paging.ts.
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
