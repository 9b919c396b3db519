import { expect } from 'chai';
import Type from '#typebox';
import { defineMount, route } from '../../src/gateway/route-table.js';
import { Defaulted } from '../../src/gateway/validation.js';
import {
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../support/platforms.js';

/*
 * A toy route added the way a mount adds one: `route({...})` in a mount's `routes`. Its schemas
 * type the handler's `params`, `query` and `body`; the `@ts-expect-error` lines are checked by
 * `npm run typecheck` and each would compile if the handler's types were lost (back to unknown).
 */

interface Shelf {
  shelf: string;
}

const shelfMount = defineMount<Shelf>({
  name: 'toy-shelf',
  prefix: '/toy',
  authenticate: () => ({ shelf: 'north' }),
  routes: [
    route({
      method: 'POST',
      path: '/shelves/:row/books',
      summary: 'Shelves a book',
      params: Type.Object({ row: Type.Integer({ minimum: 1 }) }),
      query: Type.Object({ copies: Defaulted(Type.Integer({ minimum: 1, default: 1 })) }),
      body: Type.Object({ title: Type.String() }),
      bodyOptional: true,
      handler: (req) => {
        const row: number = req.params.row;
        const copies: number = req.query.copies;
        const title: string = req.body?.title ?? '(untitled)';
        // @ts-expect-error -- the body may be absent on a bodyOptional route
        const _present: { title: string } = req.body;
        // @ts-expect-error -- the path names no `shelf` parameter
        const _shelf: string = req.params.shelf;
        return { status: 201, data: { shelf: req.auth.shelf, row, copies, title } };
      },
    }),
    route({
      method: 'GET',
      path: '/shelves/:row/books/:title',
      summary: 'A book by title (path parameters without a schema are strings)',
      handler: (req) => {
        const title: string = req.params.title;
        // @ts-expect-error -- a route without a body schema sees what was sent, unknown
        const _sent: { title: string } = req.body;
        return { data: { row: req.params.row, title } };
      },
    }),
  ],
});

describe('typed routes (a toy route added through the public API)', () => {
  let env: TestEnvironment;
  let p: StartedPlatform;

  before(async () => {
    env = await embeddedEnvironment();
    p = await startPlatform(env, [{ name: 'toy', mounts: () => [shelfMount] }]);
  });

  after(async () => {
    await p?.stop().catch(() => undefined);
    await env?.cleanup();
  });

  it('hands the handler the validated values: path and query converted, defaults applied, the body as sent', async () => {
    const res = await fetch(`${p.platform.url}/toy/shelves/3/books`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ title: 'Dune' }),
    });
    expect(res.status).to.equal(201);
    expect(await res.json()).to.deep.equal({ shelf: 'north', row: 3, copies: 1, title: 'Dune' });
    const bare = await fetch(`${p.platform.url}/toy/shelves/4/books?copies=2`, { method: 'POST' });
    expect(await bare.json()).to.deep.equal({ shelf: 'north', row: 4, copies: 2, title: '(untitled)' });
    const named = await fetch(`${p.platform.url}/toy/shelves/5/books/Emma`);
    expect(await named.json()).to.deep.equal({ row: '5', title: 'Emma' });
  });

  it('answers 422 before the handler when a value fails its schema', async () => {
    const res = await fetch(`${p.platform.url}/toy/shelves/0/books`, { method: 'POST' });
    expect(res.status).to.equal(422);
  });
});
