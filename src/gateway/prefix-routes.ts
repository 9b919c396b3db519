import Router from '@koa/router';
import type { Middleware } from 'koa';
import type { HttpMethod } from './route-table.js';

/** One route as the router registers it: the full path template, its method and its middleware. */
export interface Registration {
  prefix: string;
  template: string;
  method: HttpMethod;
  chain: Middleware[];
}

/** A prefix made of plain path segments, which @koa/router's templates match literally. */
const PLAIN_PREFIX = /^(\/[A-Za-z0-9._~-]+)*$/;

/** `prefix` as a path holds it: itself, or followed by `/`; case-insensitive as the router is (not `sensitive`). */
function prefixTest(prefix: string): RegExp | undefined {
  if (!PLAIN_PREFIX.test(prefix)) return undefined;
  return new RegExp(`^${prefix.replace(/[.]/g, '\\.')}(?:/|$)`, 'i');
}

/** A router and its middleware (built once: `routes()` makes a new function on every call). */
export interface RouterChain {
  router: Router;
  routes: Middleware;
}

function routerChain(router: Router): RouterChain {
  // @koa/router types its middleware for a context that already has `params` and `router`: it
  // sets both itself before any route runs, so koa's plain context is what it really takes
  return { router, routes: router.routes() as Middleware };
}

interface Group {
  prefix: string;
  /** undefined: a prefix that is not plain, tried on every path */
  test: RegExp | undefined;
}

/**
 * Route lookup by mount prefix. A route's template is its mount's prefix followed by `/...` (or
 * the prefix alone), so it can only match a path that the prefix holds; @koa/router tests every
 * route of a router against every request. This keeps one router per chain of prefixes: for a
 * path, the router holding the routes of every prefix that holds it, in the order they were
 * registered, which matches exactly the routes one router of all routes would match, in the
 * same order. The prefixes holding one path are prefixes of each other, so the longest one that
 * holds the path names the chain: one router per distinct prefix, plus one for paths no plain
 * prefix holds.
 */
export class PrefixRoutes {
  /** longest prefix first; each router is built by the first request its prefix holds */
  private readonly chains: Array<{ test: RegExp; prefixes: ReadonlySet<string>; chain?: RouterChain }> = [];
  private readonly always: ReadonlySet<string>;
  private fallback: RouterChain | undefined;

  constructor(private readonly registrations: readonly Registration[]) {
    const groups = new Map<string, Group>();
    for (const r of registrations) {
      if (!groups.has(r.prefix)) groups.set(r.prefix, { prefix: r.prefix, test: prefixTest(r.prefix) });
    }
    this.always = new Set([...groups.values()].filter((g) => !g.test).map((g) => g.prefix));
    const plain = [...groups.values()].filter((g): g is Group & { test: RegExp } => g.test !== undefined);
    plain.sort((a, b) => b.prefix.length - a.prefix.length);
    for (const g of plain) {
      const holding = plain.filter((other) => other.test.test(g.prefix || '/')).map((other) => other.prefix);
      this.chains.push({ test: g.test, prefixes: new Set([...holding, ...this.always]) });
    }
  }

  /** The router whose routes are all the routes that can match `path`. */
  routerFor(path: string): RouterChain {
    for (const c of this.chains) if (c.test.test(path)) return (c.chain ??= this.routerOf(c.prefixes));
    return (this.fallback ??= this.routerOf(this.always));
  }

  /**
   * The router of the routes of `prefixes`, in the order they were registered. Made on first use:
   * @koa/router compiles every template as it is registered, ~20 ms for all the mounts, which a
   * start would spend before its first `/readyz` answer (docs/PERFORMANCE.md, "Fourteenth
   * sitting"); each mount's routes are compiled by the first request under its prefix instead.
   */
  private routerOf(prefixes: ReadonlySet<string>): RouterChain {
    const router = new Router({ strict: false });
    for (const r of this.registrations) if (prefixes.has(r.prefix)) router.register(r.template, [r.method], r.chain);
    return routerChain(router);
  }
}
