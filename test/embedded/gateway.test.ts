import { expect } from 'chai';
import Type from '#typebox';
import { defineMount } from '../../src/gateway/route-table.js';
import type { PlatformModule } from '../../src/platform/services.js';
import {
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../support/platforms.js';

/** A small module that exercises the gateway the way feature modules use it. */
function echoModule(): PlatformModule {
  return {
    name: 'gateway-test',
    mounts: () => [
      defineMount<{ who: string }>({
        name: 'gateway-test',
        prefix: '/gw',
        authenticate: (ctx) => {
          if (ctx.get('Authorization') !== 'Token good')
            throw Object.assign(new Error('no'), { status: 401, expose: true });
          return { who: 'tester' };
        },
        respond: (data) => ({ wrapped: data }),
        routes: [
          {
            method: 'POST',
            path: '/items/:id',
            summary: 'echo an item',
            params: Type.Object({ id: Type.String({ maxLength: 5 }) }),
            query: Type.Object({ n: Type.Optional(Type.Integer({ minimum: 1 })) }),
            body: Type.Object({ name: Type.String() }),
            handler: (req) => ({
              data: { id: req.params.id, n: req.query.n ?? null, body: req.body, who: req.auth.who },
            }),
          },
          {
            method: 'GET',
            path: '/boom',
            summary: 'fails',
            handler: () => {
              throw new Error('secret internals');
            },
          },
        ],
      }) as never,
    ],
  };
}

describe('gateway (embedded)', () => {
  let env: TestEnvironment;
  let p: StartedPlatform;
  const url = (path: string) => `${p.platform.url}${path}`;

  before(async () => {
    env = await embeddedEnvironment({ BODY_LIMIT: '1kb' });
    p = await startPlatform(env, [echoModule()]);
  });
  after(async () => {
    await p.stop();
    await env.cleanup();
  });

  it('answers /healthz and /readyz, and serves Prometheus metrics and the OpenAPI document', async () => {
    expect((await fetch(url('/healthz'))).status).to.equal(200);
    const ready = await fetch(url('/readyz'));
    expect(ready.status).to.equal(200);
    expect(((await ready.json()) as { status: string }).status).to.equal('ready');
    const metrics = await (await fetch(url('/metrics'))).text();
    expect(metrics).to.contain('http_request_duration_seconds');
    expect(metrics).to.contain('actor_shards_owned 256');
    const openapi = (await (await fetch(url('/openapi.json'))).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
    };
    expect(openapi.openapi).to.equal('3.1.0');
    expect(openapi.paths).to.have.property('/gw/items/{id}');
  });

  it('echoes X-Request-ID and X-Correlation-ID, and makes one up when none is given', async () => {
    const given = await fetch(url('/healthz'), {
      headers: { 'X-Request-ID': 'req-123', 'X-Correlation-ID': 'corr-9' },
    });
    expect(given.headers.get('x-request-id')).to.equal('req-123');
    expect(given.headers.get('x-correlation-id')).to.equal('corr-9');
    const made = await fetch(url('/healthz'));
    expect(made.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
  });

  it('validates path, query and body, and wraps the result in the mount envelope, with or without a trailing slash', async () => {
    for (const path of ['/gw/items/ab?n=2', '/gw/items/ab/?n=2']) {
      const res = await fetch(url(path), {
        method: 'POST',
        headers: { Authorization: 'Token good', 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'x' }),
      });
      expect(res.status, path).to.equal(200);
      expect(res.redirected).to.equal(false);
      expect(await res.json()).to.deep.equal({ wrapped: { id: 'ab', n: 2, body: { name: 'x' }, who: 'tester' } });
    }
    const bad = await fetch(url('/gw/items/toolong?n=0'), {
      method: 'POST',
      headers: { Authorization: 'Token good', 'Content-Type': 'application/json' },
      body: JSON.stringify({}),
    });
    expect(bad.status).to.equal(422);
    const detail = ((await bad.json()) as { detail: Array<{ loc: unknown[] }> }).detail;
    expect(detail.map((d) => d.loc[0])).to.include.members(['path']);
  });

  it('maps errors in one place: 401, 404, 405, 413, malformed JSON, and 500 without internals', async () => {
    expect((await fetch(url('/gw/items/ab'), { method: 'POST' })).status).to.equal(401);
    const notFound = await fetch(url('/nowhere'));
    expect(notFound.status).to.equal(404);
    expect(((await notFound.json()) as { error: { code: string } }).error.code).to.equal('not_found');
    expect((await fetch(url('/healthz'), { method: 'DELETE' })).status).to.equal(405);
    const big = await fetch(url('/gw/items/ab'), {
      method: 'POST',
      headers: { Authorization: 'Token good', 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(5000) }),
    });
    expect(big.status).to.equal(413);
    // the envelope of every /v1 error, naming the limit the body passed
    const bigError = ((await big.json()) as { error: { code: string; message: string } }).error;
    expect(bigError.code).to.equal('entity_too_large');
    expect(bigError.message).to.match(/^request body larger than the limit of \d+ bytes \(BODY_LIMIT\)$/);
    const malformed = await fetch(url('/gw/items/ab'), {
      method: 'POST',
      headers: { Authorization: 'Token good', 'Content-Type': 'application/json' },
      body: '{"name":',
    });
    expect(malformed.status).to.equal(422);
    expect(((await malformed.json()) as { detail: Array<{ type: string }> }).detail[0]?.type).to.equal('json_invalid');
    const boom = await fetch(url('/gw/boom'), { headers: { Authorization: 'Token good' } });
    expect(boom.status).to.equal(500);
    const body = await boom.text();
    expect(body).to.not.contain('secret internals');
    expect(body).to.contain('request_id');
  });
});
