import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import { strictCharger } from '../support/rpc-client.js';
import { eventually } from '../support/eventually.js';
import { aLocation, anEvse, aToken221 } from '../support/ocpi-builders.js';
import { API_KEY, OcpiApi } from '../support/ocpi-harness.js';
import { startSimulator, type OcpiSimulator } from '../support/ocpi-simulator.js';
import { clusterEnvironment, type TestEnvironment } from '../support/platforms.js';
import { startNode, type NodeProcess } from '../support/processes.js';

type Json = Record<string, unknown>;

/**
 * Roaming across web processes (docs/ROAMING.md "Commands", "The outbox"): an eMSP sends its
 * command to process A, the charger is connected to process B, the result reaches the eMSP; when A
 * is killed -9 right after it acknowledged the command, the result still arrives, once.
 */
describe('roaming in a cluster: a command on A, the charger on B (Redis, PostgreSQL, real processes)', function () {
  this.timeout(120_000);
  let env: TestEnvironment;
  let a: NodeProcess;
  let b: NodeProcess;
  let sim: OcpiSimulator;
  const chargers: RPCClient[] = [];

  before(async () => {
    env = await clusterEnvironment({
      CSMS_API_KEY: API_KEY,
      PROCESS_ROLE: 'web',
      PARTNER_URL_POLICY: 'loopback',
      OUTBOX_RETRY_BASE_MS: '100',
      OUTBOX_SWEEP_MS: '200',
    });
    [a, b] = await Promise.all([startNode(env.env), startNode(env.env)]);
    sim = await startSimulator({
      versions: ['2.2.1'],
      parties: [{ role: 'EMSP', country_code: 'DE', party_id: 'CLU' }],
    });
    const onA = apiOn(a);
    const created = await onA.request('POST', '/v1/partners', {
      body: { country_code: 'DE', party_id: 'CLU', role: 'EMSP' },
    });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const result = await sim.registerWith(String(created.body.versions_url), String(created.body.token));
    expect(result.answer.statusCode).to.equal(1000);
  });
  after(async () => {
    await Promise.all(chargers.map((c) => c.close({ force: true }).catch(() => undefined)));
    await Promise.all([a, b].map((p) => p?.stop()));
    await sim?.close();
    await env?.cleanup();
  });

  function apiOn(node: NodeProcess): OcpiApi {
    return new OcpiApi({
      mode: 'cluster',
      urls: [node.url],
      partner: () => Promise.reject(new Error('simulators only')),
      stop: async () => undefined,
    });
  }

  /** A location with EVSE E1 linked to a new 1.6 charger connected to `node`, answering starts after `delayMs`. */
  async function chargerOn(node: NodeProcess, delayMs: number): Promise<{ loc: string; starts: string[] }> {
    const api = apiOn(a);
    const loc = `LOC-${randomUUID().slice(0, 8)}`.toUpperCase();
    const id = `CP-${randomUUID().slice(0, 8)}`.toUpperCase();
    const put = await api.request('PUT', `/v1/ocpi/locations/${loc}`, {
      body: aLocation({ id: loc, evses: [anEvse({ uid: 'E1' })] }),
    });
    expect(put.status).to.equal(200);
    const cp = await api.request('POST', '/v1/charge-points', { body: { id, protocol: 'ocpp1.6' } });
    expect(cp.status).to.equal(201);
    const link = await api.request('PUT', `/v1/charge-points/${id}/evses/1`, {
      body: { location_id: loc, evse_uid: 'E1' },
    });
    expect(link.status).to.equal(200);
    const charger = strictCharger(node.url, { id, password: String(cp.body.password) }, 'ocpp1.6');
    chargers.push(charger);
    const starts: string[] = [];
    charger.handle('RemoteStartTransaction', ({ params }) => {
      starts.push(String((params as { idTag: string }).idTag));
      return new Promise((resolve) => setTimeout(() => resolve({ status: 'Accepted' }), delayMs));
    });
    await charger.connect();
    await charger.call('BootNotification', { chargePointVendor: 'Roam', chargePointModel: 'C1' });
    return { loc, starts };
  }

  /** START_SESSION through the commands endpoint the eMSP discovered at A. */
  async function startSession(loc: string): Promise<{ data: Json; url: string }> {
    const url = sim.responseUrl('2.2.1', 'START_SESSION', randomUUID());
    const token = aToken221({ uid: `C${randomUUID().slice(0, 8)}`.toUpperCase(), country_code: 'DE', party_id: 'CLU' });
    const answer = await sim.call(
      'POST',
      'commands',
      '/START_SESSION',
      { response_url: url, token, location_id: loc, evse_uid: 'E1' },
      { role: 'RECEIVER' },
    );
    expect(answer.status).to.equal(200);
    return { data: answer.data as Json, url };
  }

  const resultsAt = (url: string) => sim.received.filter((r) => r.method === 'POST' && url.endsWith(r.path));

  it('the command reaches the charger on B through A, and the result reaches the eMSP', async () => {
    const { loc, starts } = await chargerOn(b, 0);
    const { data, url } = await startSession(loc);
    expect(data.result).to.equal('ACCEPTED');
    const posted = await eventually(async () => resultsAt(url).find((r) => r.status === 200), { timeoutMs: 15_000 });
    expect(posted.body).to.deep.equal({ result: 'ACCEPTED' });
    expect(starts).to.have.length(1);
  });

  it('kill -9 of A after it acknowledged the command: the result still arrives, once', async () => {
    const { loc, starts } = await chargerOn(b, 1500);
    const { data, url } = await startSession(loc);
    expect(data.result).to.equal('ACCEPTED');
    a.signal('SIGKILL');
    await a.exited;
    const posted = await eventually(async () => resultsAt(url).find((r) => r.status === 200), {
      timeoutMs: 30_000,
      what: 'the result after kill -9 of A',
    });
    expect(posted.body).to.deep.equal({ result: 'ACCEPTED' });
    // nothing else is on its way: wait a few sweeps, then count
    await new Promise((r) => setTimeout(r, 2000));
    expect(resultsAt(url)).to.have.length(1);
    expect(starts).to.have.length(1);
    expect(sim.violations).to.deep.equal([]);
  });
});
