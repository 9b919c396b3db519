import Type from '#typebox';
import type { Config } from '../../config/index.js';
import type { OperatorAuth } from './csms-auth.js';
import { pagingHeaders } from './paging.js';
import { publicOrigin } from './public-origin.js';
import { MAX_OFFSET } from './request-limits.js';
import type { RouteRequest } from './route-table.js';
import { Defaulted } from './validation.js';

/** `offset` and `limit` of every /v1 list (query parameters). */
export const Paging = {
  offset: Defaulted(Type.Integer({ minimum: 0, maximum: MAX_OFFSET, default: 0 })),
  limit: Defaulted(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
};

/** The paging headers of gateway/paging.ts for a /v1 list. */
export function pageHeaders(
  config: Config,
  req: RouteRequest<OperatorAuth>,
  total: number,
  offset: number,
  limit: number,
): Record<string, string> {
  const origin = publicOrigin(config, req.koa);
  return pagingHeaders({ origin, path: req.koa.path, query: req.koa.query, offset, limit, total });
}
