import Router from '@koa/router';
import { expect } from 'chai';
import type { HttpMethod } from '../../src/gateway/route-table.js';
import { PrefixRoutes, type Registration } from '../../src/gateway/prefix-routes.js';

/** Mounts sharing and nesting prefixes, as the platform's do ('' system, /v1 twice, /ocpi/...). */
const table: Array<[string, HttpMethod, string]> = [
  ['', 'GET', '/healthz'],
  ['', 'GET', '/openapi.json'],
  ['/v1', 'GET', '/charge-points/:id'],
  ['/ocpi/cpo', 'GET', '/versions'],
  ['/ocpi/cpo', 'GET', '/:anything'],
  ['/ocpi/cpo/2.1.1', 'GET', '/'],
  ['/ocpi/cpo/2.1.1', 'GET', '/locations'],
  ['/ocpi/cpo/2.1.1', 'PATCH', '/tokens/:cc/:pid/:uid'],
  ['/ocpi/2.2.1', 'PUT', '/locations/:cc/:pid/:id'],
  ['/v1', 'PUT', '/ocpi/locations/:id'],
  ['/v1', 'GET', '/charge-points/:id'],
];

function registrations(): Registration[] {
  return table.map(([prefix, method, path]) => ({
    prefix,
    method,
    template: `${prefix}${path === '/' ? '' : path}` || '/',
    chain: [() => undefined],
  }));
}

const paths = [
  '/',
  '/healthz',
  '/HEALTHZ/',
  '/openapi.json',
  '/openapixjson',
  '/v1/charge-points/CP1',
  '/V1/charge-points/CP1/',
  '/v1/ocpi/locations/L1',
  '/v10/charge-points/CP1',
  '/ocpi/cpo',
  '/ocpi/cpo/versions',
  '/ocpi/cpo/2.1.1',
  '/ocpi/cpo/2.1.1/',
  '/OCPI/CPO/2.1.1/locations',
  '/ocpi/cpo/2.1.1/tokens/NL/ABC/T1',
  '/ocpi/cpo/2x1.1/locations',
  '/ocpi/2.2.1/locations/NL/ABC/L1',
  '//ocpi/cpo/2.1.1/locations',
  '/nowhere',
  '*',
];

/** The lookup by prefix finds the routes one router of every route finds, in the same order. */
describe('route lookup by mount prefix', () => {
  it('matches what one router of all routes matches, for every method', () => {
    const all = new Router({ strict: false });
    for (const r of registrations()) all.register(r.template, [r.method], r.chain);
    const byPrefix = new PrefixRoutes(registrations());
    for (const path of paths) {
      for (const method of ['GET', 'PUT', 'PATCH', 'OPTIONS']) {
        const expected = all.match(path, method);
        const actual = byPrefix.routerFor(path).router.match(path, method);
        const shape = (m: typeof expected) => ({
          path: m.path.map((l) => `${l.methods.join(',')} ${l.path}`),
          pathAndMethod: m.pathAndMethod.map((l) => `${l.methods.join(',')} ${l.path}`),
          route: m.route,
        });
        expect(shape(actual), `${method} ${path}`).to.deep.equal(shape(expected));
      }
    }
  });
});
