import { createServer } from 'node:net';
import { expect } from 'chai';
import { ocpiModule } from '../../src/ocpi/module.js';
import { aLocation, aToken221, isoAt } from '../support/ocpi-builders.js';
import { API_KEY } from '../support/ocpi-harness.js';
import {
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../support/platforms.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const address = server.address();
  await new Promise<void>((r) => server.close(() => r()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

interface Instance {
  url: string;
  env: TestEnvironment;
  started: StartedPlatform;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
}

/** A platform on its own port and database, with its own OCPI identity and PUBLIC_URL. */
async function instance(countryCode: string, partyId: string, name: string): Promise<Instance> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = await embeddedEnvironment({
    PORT: String(port),
    PUBLIC_URL: url,
    CSMS_API_KEY: API_KEY,
    OCPI_COUNTRY_CODE: countryCode,
    OCPI_PARTY_ID: partyId,
    OCPI_BUSINESS_NAME: name,
    // the other instance is on loopback, which the default policy refuses
    PARTNER_URL_POLICY: 'loopback',
  });
  const started = await startPlatform(env, [ocpiModule()]);
  return {
    url,
    env,
    started,
    call: async (method, path, body) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${API_KEY}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
  };
}

/**
 * Two instances of the service over real HTTP on loopback: one acts as CPO (DE-CPX), one as
 * eMSP (NL-EMY). No mocks: each discovers the other.
 */
describe('OCPI between two instances (CPO and eMSP) on loopback', function () {
  this.timeout(60_000);
  let cpo: Instance;
  let emsp: Instance;

  before(async () => {
    cpo = await instance('DE', 'CPX', 'Charge Point Operator X');
    emsp = await instance('NL', 'EMY', 'Mobility Provider Y');
  });
  after(async () => {
    for (const i of [cpo, emsp]) {
      await i.started.stop();
      await i.env.cleanup();
    }
  });

  it('completes the handshake, pulls the CPO locations page by page, and rotates the CPO credentials with PUT', async () => {
    // the eMSP's operator onboards the CPO: Token A and the versions URL, handed over out of band
    const onEmsp = await emsp.call('POST', '/v1/partners', { country_code: 'DE', party_id: 'CPX', role: 'CPO' });
    expect(onEmsp.status).to.equal(201);
    expect(onEmsp.body.versions_url).to.equal(`${emsp.url}/ocpi/emsp/versions`);

    // the CPO's operator registers the eMSP as a partner and starts the handshake with Token A
    const onCpo = await cpo.call('POST', '/v1/partners', { country_code: 'NL', party_id: 'EMY', role: 'EMSP' });
    expect(onCpo.status).to.equal(201);
    const registered = await cpo.call('POST', `/v1/partners/${String(onCpo.body.id)}/register`, {
      versions_url: onEmsp.body.versions_url,
      token: onEmsp.body.token,
    });
    expect(registered.status, JSON.stringify(registered.body)).to.equal(200);
    expect(registered.body).to.include({ status: 'registered', version: '2.2.1' });

    const cpoAtEmsp = await emsp.call('GET', `/v1/partners/${String(onEmsp.body.id)}`);
    expect(cpoAtEmsp.body).to.include({
      status: 'registered',
      version: '2.2.1',
      versions_url: `${cpo.url}/ocpi/cpo/versions`,
    });
    expect(cpoAtEmsp.body.business_details).to.deep.equal({ name: 'Charge Point Operator X' });
    // Token A is spent
    const withA = await fetch(`${emsp.url}/ocpi/emsp/2.2.1`, {
      headers: { Authorization: `Token ${String(onEmsp.body.token)}` },
    });
    expect(withA.status).to.equal(401);

    // the CPO's own locations
    const ids = ['CPX-1', 'CPX-2', 'CPX-3', 'CPX-4', 'CPX-5', 'CPX-6', 'CPX-7'];
    for (const [i, id] of ids.entries()) {
      const res = await cpo.call(
        'PUT',
        `/v1/ocpi/locations/${id}`,
        aLocation({ id, country_code: 'DE', party_id: 'CPX', last_updated: isoAt(i) }),
      );
      expect(res.status).to.equal(200);
    }

    // the eMSP pulls them, following Link headers three at a time
    const pulled = await emsp.call('POST', `/v1/partners/${String(onEmsp.body.id)}/pull-locations`, { limit: 3 });
    expect(pulled.status, JSON.stringify(pulled.body)).to.equal(200);
    // the highest shared version whose details list locations: the CPO 2.2.1 mount has them
    expect(pulled.body).to.include({ version: '2.2.1', pages: 3, stored: 7, rejected: 0 });
    expect(pulled.body.location_ids).to.deep.equal(ids);

    // the CPO rotates its credentials: a new token for the eMSP to call it with, and a new one from the eMSP
    const rotated = await cpo.call('POST', `/v1/partners/${String(onCpo.body.id)}/rotate`);
    expect(rotated.status, JSON.stringify(rotated.body)).to.equal(200);
    // the link's version: the eMSP's 2.2.1 mount takes PUT /credentials
    expect(rotated.body).to.include({ status: 'registered', rotated_with_version: '2.2.1' });

    // both sides still talk: the eMSP pulls again with the token it got in the rotation
    const again = await emsp.call('POST', `/v1/partners/${String(onEmsp.body.id)}/pull-locations`, { limit: 5 });
    expect(again.status, JSON.stringify(again.body)).to.equal(200);
    expect(again.body).to.include({ pages: 2, stored: 7 });
    // and the CPO can rotate once more with the token the eMSP gave it
    const twice = await cpo.call('POST', `/v1/partners/${String(onCpo.body.id)}/rotate`);
    expect(twice.status, JSON.stringify(twice.body)).to.equal(200);

    // the eMSP's command naming a location the CPO does not have: the CPO's 2003 reaches the
    // eMSP's operator as the CPO's answer, not as an outage ("partner unreachable: error answer")
    const token = aToken221({ country_code: 'NL', party_id: 'EMY', uid: 'EMY-CMD-1', contract_id: 'NL-EMY-C1' });
    expect((await emsp.call('PUT', '/v1/ocpi/tokens/NL/EMY/EMY-CMD-1', token)).status).to.equal(200);
    const refused = await emsp.call('POST', `/v1/partners/${String(onEmsp.body.id)}/commands/START_SESSION`, {
      token_uid: 'EMY-CMD-1',
      location_id: 'NO-SUCH-LOC',
    });
    expect(refused.status, JSON.stringify(refused.body)).to.equal(502);
    const error = refused.body.error as { message: string; details: Record<string, unknown> };
    expect(error.message).to.equal('the partner answered with an error: HTTP 200, OCPI status_code 2003');
    expect(error.details).to.include({ ocpi_status_code: 3001, partner_status_code: 2003 });
  });
  it('takes the version the operator asks for: a 2.1.1 link between two instances that both speak 2.2.1', async () => {
    const cpo2 = await instance('DE', 'CPV', 'Charge Point Operator V');
    const emsp2 = await instance('NL', 'EMV', 'Mobility Provider V');
    try {
      const onEmsp = await emsp2.call('POST', '/v1/partners', { country_code: 'DE', party_id: 'CPV', role: 'CPO' });
      const onCpo = await cpo2.call('POST', '/v1/partners', { country_code: 'NL', party_id: 'EMV', role: 'EMSP' });
      const registered = await cpo2.call('POST', `/v1/partners/${String(onCpo.body.id)}/register`, {
        versions_url: onEmsp.body.versions_url,
        token: onEmsp.body.token,
        version: '2.1.1',
      });
      expect(registered.status, JSON.stringify(registered.body)).to.equal(200);
      expect(registered.body).to.include({ status: 'registered', version: '2.1.1' });
      // the other side holds a 2.1.1 link too (the POST came to its 2.1.1 credentials endpoint)
      expect((await emsp2.call('GET', `/v1/partners/${String(onEmsp.body.id)}`)).body).to.include({
        status: 'registered',
        version: '2.1.1',
      });
      // and the eMSP's pull goes to the CPO's 2.1.1 mount
      const pulled = await emsp2.call('POST', `/v1/partners/${String(onEmsp.body.id)}/pull-locations`, {});
      expect(pulled.status, JSON.stringify(pulled.body)).to.equal(200);
      expect(pulled.body).to.include({ version: '2.1.1' });
    } finally {
      for (const i of [cpo2, emsp2]) {
        await i.started.stop();
        await i.env.cleanup();
      }
    }
  });
});
