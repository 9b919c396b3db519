import type { Server } from 'node:http';
import { expect } from 'chai';
import { connect } from './support/charger.js';
import { API_KEY, startCsms, type CsmsUnderTest } from './support/csms.js';
import { RawClient } from './support/raw-socket.js';
import { embeddedEnvironment, type TestEnvironment } from '../support/platforms.js';
import { eventually } from '../support/eventually.js';

function connections(server: Server): Promise<number> {
  return new Promise((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
}

/** The server's open sockets come back down to `baseline` (keep-alive sockets of fetch may leave too). */
async function backTo(server: Server, baseline: number): Promise<void> {
  await eventually(async () => ((await connections(server)) <= baseline ? true : undefined), {
    timeoutMs: 5000,
    what: `sockets back to ${baseline}`,
  });
}

async function withSettings(
  settings: Record<string, string>,
): Promise<{ csms: CsmsUnderTest; env: TestEnvironment; port: number; server: Server }> {
  const env = await embeddedEnvironment({ CSMS_API_KEY: API_KEY, ...settings });
  const csms = await startCsms({}, env);
  const server = csms.started.platform.httpServer;
  if (!server) throw new Error('the platform has no HTTP server');
  return { csms, env, port: Number(new URL(csms.url).port), server };
}

describe('OCPP endpoint: upgrades it does not serve, half-open sockets, degraded mode', () => {
  let t: Awaited<ReturnType<typeof withSettings>>;
  before(async () => {
    t = await withSettings({ OCPP_HANDSHAKE_TIMEOUT_MS: '500' });
  });
  after(async () => {
    await t.csms.stop();
    await t.env.cleanup();
  });

  it('answers every upgrade it does not serve (404 unknown path, 400 malformed) and closes the socket', async () => {
    const baseline = await connections(t.server);
    const cases: Array<[string, number]> = [
      ['/ocpp//X', 404],
      ['/other', 404],
      ['/ocpp/', 404],
      ['/ocpp/A/B', 404],
      ['/ocpp', 404],
      ['/', 404],
      ['*', 400],
      ['http://elsewhere.example/ocpp/X', 400],
    ];
    const clients: RawClient[] = [];
    // 5 rounds: 40 bad upgrades whose clients never close their side
    for (let round = 0; round < 5; round += 1) {
      for (const [path, status] of cases) {
        const client = await RawClient.connect(t.port);
        clients.push(client);
        client.write(RawClient.upgradeRequest(path, { protocol: 'ocpp1.6' }));
        expect((await client.response()).status, path).to.equal(status);
      }
    }
    await backTo(t.server, baseline);
    expect(clients.every((c) => c.closed)).to.equal(true);
  });

  it('accepts /ocpp/<id> with a query string (ignored) and a trailing slash', async () => {
    const cp = await t.csms.registerChargePoint('ocpp1.6');
    for (const url of [`${cp.ocpp_url}?version=1`, `${cp.ocpp_url}/`]) {
      const charger = await connect({ url, username: cp.username, password: cp.password, protocols: ['ocpp1.6'] });
      await charger.close();
    }
  });

  // RFC 7230 section 7: a recipient accepts and ignores empty list elements; ws alone answered 400
  it('takes an offer of subprotocols with empty elements or one named twice, and answers the one it chose', async () => {
    const cp = await t.csms.registerChargePoint('ocpp1.6');
    for (const offer of ['ocpp1.6,', 'ocpp1.6, , ocpp2.0.1', ',ocpp1.6', 'ocpp1.6,ocpp1.6']) {
      const client = await RawClient.connect(t.port);
      const path = new URL(cp.ocpp_url).pathname;
      client.write(RawClient.upgradeRequest(path, { protocol: offer, user: cp.username, password: cp.password }));
      const answer = await client.response();
      expect(answer.status, offer).to.equal(101);
      expect(answer.headers['sec-websocket-protocol'], offer).to.equal('ocpp1.6');
      client.socket.destroy();
    }
    // elements that are all empty offer nothing: served with the registered version, named by none
    const client = await RawClient.connect(t.port);
    client.write(
      RawClient.upgradeRequest(new URL(cp.ocpp_url).pathname, {
        protocol: ', ,',
        user: cp.username,
        password: cp.password,
      }),
    );
    const none = await client.response();
    expect(none.status).to.equal(101);
    expect(none.headers).to.not.have.property('sec-websocket-protocol');
    client.socket.destroy();
  });

  it('destroys an idle socket and a half-sent upgrade after OCPP_HANDSHAKE_TIMEOUT_MS, not a keep-alive HTTP socket', async () => {
    const baseline = await connections(t.server);
    const idle = await RawClient.connect(t.port);
    const partial = await RawClient.connect(t.port);
    partial.write('GET /ocpp/CP-1 HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n');
    // a plain request hands the socket to the HTTP server's own keep-alive timeout
    const keepAlive = await RawClient.connect(t.port);
    keepAlive.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect((await keepAlive.response()).status).to.equal(200);
    await eventually(async () => (idle.closed && partial.closed ? true : undefined), {
      timeoutMs: 5000,
      what: 'idle and partial sockets closed',
    });
    expect(keepAlive.closed).to.equal(false);
    keepAlive.destroy();
    await backTo(t.server, baseline);
  });

  it('refuses new upgrades with 503 and a jittered Retry-After while a dependency is down; connected chargers stay', async () => {
    const cp = await t.csms.registerChargePoint('ocpp2.0.1');
    const connected = await connect({
      url: cp.ocpp_url,
      username: cp.username,
      password: cp.password,
      protocols: ['ocpp2.0.1'],
    });
    const health = t.csms.started.platform.services.health;
    const real = health.degradedBy.bind(health);
    health.degradedBy = () => 'redis';
    try {
      const retryAfter = new Set<string>();
      for (let i = 0; i < 8; i += 1) {
        const raw = await RawClient.connect(t.port);
        raw.write(
          RawClient.upgradeRequest(`/ocpp/${cp.id}`, {
            protocol: 'ocpp2.0.1',
            user: cp.username,
            password: cp.password,
          }),
        );
        const res = await raw.response();
        expect(res.status).to.equal(503);
        const seconds = Number(res.headers['retry-after']);
        expect(seconds).to.be.within(10, 30);
        retryAfter.add(String(seconds));
        raw.destroy();
      }
      // jitter: eight refusals do not all name the same second (chance of that: 21^-7)
      expect(retryAfter.size).to.be.greaterThan(1);
      expect(await connected.call('Heartbeat', {})).to.have.property('currentTime');
    } finally {
      health.degradedBy = real;
    }
    const again = await connect({
      url: cp.ocpp_url,
      username: cp.username,
      password: cp.password,
      protocols: ['ocpp2.0.1'],
    });
    await again.close();
    await connected.closed;
  });
});

describe('OCPP endpoint: failed logins back off per identity and address, and per address', () => {
  let t: Awaited<ReturnType<typeof withSettings>>;
  before(async () => {
    // behind a trusted proxy each test below poses as its own client address
    t = await withSettings({ OCPP_LOGIN_FAILURES: '3', TRUST_PROXY: 'true' });
  });
  after(async () => {
    await t.csms.stop();
    await t.env.cleanup();
  });

  async function attempt(
    id: string,
    password: string,
    address: string,
  ): Promise<{ status: number; headers: Record<string, string> }> {
    const raw = await RawClient.connect(t.port);
    raw.write(
      RawClient.upgradeRequest(`/ocpp/${id}`, {
        protocol: 'ocpp1.6',
        user: id,
        password,
        extra: `X-Forwarded-For: ${address}\r\n`,
      }),
    );
    const res = await raw.response();
    raw.destroy();
    return res;
  }

  it('refuses an identity from an address with 429 and Retry-After after OCPP_LOGIN_FAILURES wrong passwords, even the right one', async () => {
    const cp = await t.csms.registerChargePoint('ocpp1.6');
    for (let i = 0; i < 3; i += 1) expect((await attempt(cp.id, 'wrong-password', '10.0.0.1')).status).to.equal(401);
    const refused = await attempt(cp.id, cp.password, '10.0.0.1');
    expect(refused.status).to.equal(429);
    expect(Number(refused.headers['retry-after'])).to.be.at.least(1);
  });

  it('lets the charger in from its own address while wrong passwords for its identity come from elsewhere', async () => {
    const cp = await t.csms.registerChargePoint('ocpp1.6');
    // was 429 "from anywhere": whoever knew the id kept the charger out
    for (const address of ['10.0.5.1', '10.0.5.2', '10.0.5.3', '10.0.5.4'])
      for (let i = 0; i < 3; i += 1)
        expect((await attempt(cp.id, 'wrong-password', address)).status).to.be.oneOf([401, 429]);
    expect((await attempt(cp.id, cp.password, '10.0.5.9')).status).to.equal(101);
  });

  it('refuses an address with 429 after OCPP_LOGIN_FAILURES failures with random identities; other addresses still log in', async () => {
    const cp = await t.csms.registerChargePoint('ocpp1.6');
    for (let i = 0; i < 3; i += 1) expect((await attempt(`NOBODY-${i}`, 'guess', '10.0.1.1')).status).to.equal(401);
    expect((await attempt(cp.id, cp.password, '10.0.1.1')).status).to.equal(429);
    expect((await attempt(cp.id, cp.password, '10.0.1.2')).status).to.equal(101);
  });

  it('counts an IPv6 /64 as one address and leaves out a port the proxy wrote, as the HTTP surfaces do', async () => {
    const cp = await t.csms.registerChargePoint('ocpp1.6');
    // three identities from three addresses of one /64, written three ways: was three addresses
    for (const [i, address] of ['2001:db8:7:8::1', '[2001:db8:7:8::2]:443', '2001:0db8:0007:0008::3'].entries())
      expect((await attempt(`NOBODY-V6-${i}`, 'guess', address)).status).to.equal(401);
    expect((await attempt(cp.id, cp.password, '2001:db8:7:8::9')).status).to.equal(429);
    expect((await attempt(cp.id, cp.password, '2001:db8:7:9::9')).status).to.equal(101);
    // an IPv4 address with the port a proxy wrote after it is that address
    for (let i = 0; i < 3; i += 1)
      expect((await attempt(`NOBODY-P-${i}`, 'guess', `10.0.6.1:5100${i}`)).status).to.equal(401);
    expect((await attempt(cp.id, cp.password, '10.0.6.1')).status).to.equal(429);
  });

  it('counts one misconfigured charger once against its address: others behind the same address still log in', async () => {
    const [wrong, right] = [await t.csms.registerChargePoint('ocpp1.6'), await t.csms.registerChargePoint('ocpp1.6')];
    for (let i = 0; i < 3; i += 1) expect((await attempt(wrong.id, 'wrong-password', '10.0.3.1')).status).to.equal(401);
    expect((await attempt(wrong.id, wrong.password, '10.0.3.1')).status).to.equal(429);
    expect((await attempt(right.id, right.password, '10.0.3.1')).status).to.equal(101);
  });

  async function withoutCredentials(id: string, address: string): Promise<number> {
    const raw = await RawClient.connect(t.port);
    raw.write(
      RawClient.upgradeRequest(`/ocpp/${id}`, { protocol: 'ocpp1.6', extra: `X-Forwarded-For: ${address}\r\n` }),
    );
    const { status } = await raw.response();
    raw.destroy();
    return status;
  }

  it('does not count an upgrade of a registered charger without credentials (a client asking for the challenge)', async () => {
    const cp = await t.csms.registerChargePoint('ocpp1.6');
    for (let i = 0; i < 5; i += 1) expect(await withoutCredentials(cp.id, '10.0.2.1')).to.equal(401);
    expect((await attempt(cp.id, cp.password, '10.0.2.1')).status).to.equal(101);
  });

  it('counts unknown identities without credentials against their address (a scanner gets 429)', async () => {
    for (let i = 0; i < 3; i += 1) expect(await withoutCredentials(`SCAN-${i}`, '10.0.4.1')).to.equal(401);
    expect(await withoutCredentials('SCAN-3', '10.0.4.1')).to.equal(429);
    const cp = await t.csms.registerChargePoint('ocpp1.6');
    expect((await attempt(cp.id, cp.password, '10.0.4.2')).status).to.equal(101);
  });
});
