import { expect } from 'chai';
import { credentials211, credentials221 } from '../support/ocpi-builders.js';
import { OcpiApi, embeddedTarget, uniqueParty, type OcpiTarget } from '../support/ocpi-harness.js';
import { partnerServer, type PartnerServer } from '../support/ocpi-partners.js';

/** What a scripted partner answers on one path: a status and a body, or a reset connection. */
type Scripted = readonly [number, string | object] | 'reset';

/**
 * A partner whose versions URL or version details cannot be used: the handshake answers the
 * OCPI codes (3001 unable to use the client's API, 3002 unsupported version) instead of hanging,
 * and Token A stays usable for a retry. The message is a category, never what the partner said
 * (issue 7). Timeouts, size limits, redirects and the destination policy: outbound-calls.test.ts.
 */
describe('OCPI credentials: discovery failures (scripted partners on loopback)', function () {
  this.timeout(30_000);
  let target: OcpiTarget;
  let api: OcpiApi;
  const servers: PartnerServer[] = [];

  before(async () => {
    target = await embeddedTarget();
    api = new OcpiApi(target);
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  after(async () => target.stop());

  /** A partner answering `script(base)[path]`; `base` is its own origin, for URLs in its answers. */
  async function scripted(script: (base: string) => Record<string, Scripted>, seen: string[] = []): Promise<string> {
    let base = '';
    const server = await partnerServer((req, res) => {
      seen.push(String(req.headers.authorization));
      const answer = script(base)[req.url ?? ''];
      if (answer === 'reset') return void req.socket.destroy();
      const [status, body] = answer ?? [404, '{}'];
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    });
    servers.push(server);
    base = server.url;
    return `${base}/versions`;
  }

  const versions221 = (base: string): Scripted => [
    200,
    { status_code: 1000, data: [{ version: '2.2.1', url: `${base}/2.2.1` }] },
  ];
  const details221 = (base: string): Scripted => [
    200,
    {
      status_code: 1000,
      data: {
        version: '2.2.1',
        endpoints: [{ identifier: 'credentials', role: 'SENDER', url: `${base}/2.2.1/credentials` }],
      },
    },
  ];

  async function registerAgainst(versionsUrl: string, party = uniqueParty(), tokenA?: string) {
    const token = tokenA ?? (await api.onboard(party, 'CPO')).token;
    const res = await api.request('POST', '/ocpi/emsp/2.2.1/credentials', {
      token,
      encoding: 'base64',
      body: credentials221(party, 'their-token', versionsUrl),
    });
    return { ...res, tokenA: token, party };
  }

  it('answers 3001 when the versions URL fails, and Token A still registers afterwards', async () => {
    const res = await registerAgainst(await scripted(() => ({ '/versions': [500, 'oops'] })));
    expect(res.status).to.equal(200);
    expect(res.body.status_code).to.equal(3001);
    expect(res.body.status_message).to.equal(
      "Unable to use the client's API: partner unreachable: not an OCPI envelope",
    );

    const fixed = await scripted((base) => ({ '/versions': versions221(base), '/2.2.1': details221(base) }));
    const retry = await registerAgainst(fixed, res.party, res.tokenA);
    expect(retry.body.status_code).to.equal(1000);
  });

  it('answers 3002 when the partner supports none of our versions, without repeating what it offers', async () => {
    const res = await registerAgainst(
      await scripted((base) => ({
        '/versions': [200, { status_code: 1000, data: [{ version: '2.0', url: `${base}/2.0` }] }],
      })),
    );
    expect(res.body.status_code).to.equal(3002);
    expect(res.body.status_message).to.equal('Unsupported version: no version in common; we support 2.2.1, 2.1.1');
  });

  it('a partner registering on our 2.1.1 credentials endpoint gets a 2.1.1 link, even when it offers 2.2.1 too', async () => {
    const both = await scripted((base) => ({
      '/versions': [
        200,
        {
          status_code: 1000,
          data: [
            { version: '2.1.1', url: `${base}/2.1.1` },
            { version: '2.2.1', url: `${base}/2.2.1` },
          ],
        },
      ],
      '/2.1.1': [
        200,
        {
          status_code: 1000,
          data: {
            version: '2.1.1',
            endpoints: [
              { identifier: 'credentials', url: `${base}/2.1.1/credentials` },
              { identifier: 'tokens', url: `${base}/2.1.1/tokens` },
            ],
          },
        },
      ],
      '/2.2.1': [
        200,
        {
          status_code: 1000,
          data: {
            version: '2.2.1',
            endpoints: [
              { identifier: 'credentials', role: 'SENDER', url: `${base}/2.2.1/credentials` },
              { identifier: 'tokens', role: 'SENDER', url: `${base}/2.2.1/tokens` },
            ],
          },
        },
      ],
    }));
    const party = uniqueParty();
    const onboarded = await api.onboard(party, 'CPO');
    const res = await api.request('POST', '/ocpi/emsp/2.1.1/credentials', {
      token: onboarded.token,
      body: credentials211(party, 'their-token', both),
    });
    expect(res.body.status_code, JSON.stringify(res.body)).to.equal(1000);
    // OCPI: a POST "initiates the registration process for this endpoint's version"
    const link = (await api.request('GET', `/v1/partners/${onboarded.id}`)).body as {
      version: string;
      endpoints: Array<{ version: string; identifier: string }>;
    };
    expect(link.version).to.equal('2.1.1');
    // and every call on it goes to the partner's 2.1.1 endpoints, never its 2.2.1 ones
    expect(link.endpoints.map((e) => `${e.version} ${e.identifier}`)).to.deep.equal([
      '2.1.1 credentials',
      '2.1.1 tokens',
    ]);

    // one that does not list the version it registers on: 3002, and Token A stays usable
    const only221 = await scripted((base) => ({ '/versions': versions221(base), '/2.2.1': details221(base) }));
    const other = uniqueParty();
    const second = await api.onboard(other, 'CPO');
    const refused = await api.request('POST', '/ocpi/emsp/2.1.1/credentials', {
      token: second.token,
      body: credentials211(other, 'their-token', only221),
    });
    expect(refused.body.status_code).to.equal(3002);
    expect(refused.body.status_message).to.equal(
      'Unsupported version: called on our 2.1.1 credentials endpoint, but the versions URL does not list 2.1.1',
    );
  });

  it('answers 3003 when the version details list no endpoints at all (no mutual module), and Token A stays usable', async () => {
    const bare = await scripted((base) => ({
      '/versions': versions221(base),
      '/2.2.1': [200, { status_code: 1000, data: { version: '2.2.1', endpoints: [] } }],
    }));
    const res = await registerAgainst(bare);
    expect(res.body).to.include({
      status_code: 3003,
      status_message: "No matching endpoints: the partner's version details (2.2.1) list no endpoints",
    });
    const fixed = await scripted((base) => ({ '/versions': versions221(base), '/2.2.1': details221(base) }));
    expect((await registerAgainst(fixed, res.party, res.tokenA)).body.status_code).to.equal(1000);
  });

  it('answers 3003 when the version details list no credentials endpoint (the module every implementation has)', async () => {
    const noCredentials = await scripted((base) => ({
      '/versions': versions221(base),
      '/2.2.1': [
        200,
        {
          status_code: 1000,
          data: {
            version: '2.2.1',
            endpoints: [{ identifier: 'tokens', role: 'SENDER', url: `${base}/2.2.1/tokens` }],
          },
        },
      ],
    }));
    expect((await registerAgainst(noCredentials)).body).to.include({
      status_code: 3003,
      status_message: "No matching endpoints: the partner's version details (2.2.1) list no credentials endpoint",
    });
  });

  it('answers 3001 when the version details are unreachable or not OCPI', async () => {
    const reset = await scripted((base) => ({ '/versions': versions221(base), '/2.2.1': 'reset' }));
    expect((await registerAgainst(reset)).body).to.include({
      status_code: 3001,
      status_message: "Unable to use the client's API: partner unreachable: no connection",
    });
    const html = await scripted(() => ({ '/versions': [200, '<html>hello</html>'] }));
    expect((await registerAgainst(html)).body).to.include({
      status_code: 3001,
      status_message: "Unable to use the client's API: partner unreachable: not an OCPI envelope",
    });
  });

  it('sends the partner its token base64-encoded on a 2.2.1 handshake', async () => {
    const seen: string[] = [];
    const res = await registerAgainst(
      await scripted((base) => ({ '/versions': versions221(base), '/2.2.1': details221(base) }), seen),
    );
    expect(res.body.status_code).to.equal(1000);
    expect(seen).to.deep.equal([
      `Token ${Buffer.from('their-token').toString('base64')}`,
      `Token ${Buffer.from('their-token').toString('base64')}`,
    ]);
  });
});
