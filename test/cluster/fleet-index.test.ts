import { expect } from 'chai';
import { connect, type TestCharger } from '../ocpp/support/charger.js';
import { API_KEY, apiClient, uniqueChargePointId, type RegisteredChargePoint } from '../ocpp/support/csms.js';
import { v16 } from '../ocpp/support/messages.js';
import { eventually } from '../ocpp/support/scenario.js';
import { clusterEnvironment, type TestEnvironment } from '../support/platforms.js';
import { startNode, type NodeProcess } from '../support/processes.js';

interface ListedConnector {
  connector_id: number;
  status: string;
  last_reported_status?: string;
}
interface Listed {
  id: string;
  online: boolean;
  connectors: ListedConnector[];
}
interface Overview {
  total: number;
  faulted: number;
  alerts: { charge_point_id: string; status: string }[];
}

/**
 * The fleet index is kept per process and refreshed from the database by state version
 * (src/csms/fleet-index.ts): what a charger on process B changes, and a charger removed through
 * B, must show in the very next list or overview served by process A, whose index was read
 * before the change. No `eventually` around those reads: "next request" is the promise.
 */
describe('Fleet index across web processes (Redis, PostgreSQL, real processes)', function () {
  this.timeout(60_000);
  let env: TestEnvironment;
  let a: NodeProcess;
  let b: NodeProcess;
  const chargers: TestCharger[] = [];

  before(async () => {
    env = await clusterEnvironment({ CSMS_API_KEY: API_KEY, PROCESS_ROLE: 'web' });
    [a, b] = await Promise.all([startNode(env.env), startNode(env.env)]);
  });
  after(async () => {
    await Promise.all(chargers.map((c) => c.close().catch(() => undefined)));
    await Promise.all([a, b].map((p) => p?.stop()));
    await env.cleanup();
  });

  async function register(node: NodeProcess, id: string): Promise<RegisteredChargePoint> {
    const created = await apiClient(node.url)<RegisteredChargePoint>('POST', '/v1/charge-points', {
      id,
      protocol: 'ocpp1.6',
    });
    expect(created.status).to.equal(201);
    return created.body;
  }

  /** A charger registered and connected on `node`, booted, its connector 1 Available. */
  async function chargerOn(node: NodeProcess, prefix: string): Promise<{ charger: TestCharger; id: string }> {
    const cp = await register(node, uniqueChargePointId(prefix));
    const charger = await connect({
      url: `${node.url.replace(/^http/, 'ws')}/ocpp/${cp.id}`,
      username: cp.username,
      password: cp.password,
      protocols: ['ocpp1.6'],
    });
    chargers.push(charger);
    await charger.call('BootNotification', v16.boot());
    await charger.call('StatusNotification', v16.status(1, 'Available'));
    return { charger, id: cp.id };
  }

  const list = (node: NodeProcess, query: string) => apiClient(node.url)<Listed[]>('GET', `/v1/charge-points?${query}`);
  const overview = async (node: NodeProcess): Promise<Overview> =>
    (await apiClient(node.url)<Overview>('GET', '/v1/fleet?alerts=1000')).body;

  it("shows a status a charger on another process reported in A's next request", async () => {
    const { charger, id } = await chargerOn(b, 'FIX');
    // A's index holds the charger Available (its pin in Redis may take a moment to be seen)
    await eventually(async () => {
      const r = await list(a, `q=${id}`);
      return r.body[0]?.online === true ? true : undefined;
    });
    expect((await list(a, `q=${id}&status=Faulted`)).body).to.deep.equal([]);
    const before = await overview(a);

    await charger.call('StatusNotification', v16.status(1, 'Faulted', { errorCode: 'GroundFailure' }));

    const faulted = await list(a, `q=${id}&status=Faulted`);
    expect(faulted.body.map((x) => x.id)).to.deep.equal([id]);
    expect(faulted.headers.get('x-total-count')).to.equal('1');
    const after = await overview(a);
    expect(after.faulted).to.equal(before.faulted + 1);
    expect(after.alerts.map((x) => x.charge_point_id)).to.include(id);

    await charger.call('StatusNotification', v16.status(1, 'Available'));
    expect((await list(a, `q=${id}&status=Faulted`)).body).to.deep.equal([]);
    expect((await overview(a)).alerts.map((x) => x.charge_point_id)).not.to.include(id);
  });

  it('drops a charger removed through another process from the next list and overview', async () => {
    const { id } = await chargerOn(b, 'FIX');
    await eventually(async () => ((await list(a, `q=${id}`)).body.length === 1 ? true : undefined));
    const before = await overview(a);

    const removed = await apiClient(b.url)('DELETE', `/v1/charge-points/${id}?force=true`);
    expect(removed.status).to.equal(204);

    const found = await list(a, `q=${id}`);
    expect(found.body).to.deep.equal([]);
    expect(found.headers.get('x-total-count')).to.equal('0');
    expect((await overview(a)).total).to.equal(before.total - 1);
  });

  it('shows a charger registered again under a removed id without the state it had', async () => {
    const { charger, id } = await chargerOn(b, 'FIX');
    await charger.call('StatusNotification', v16.status(2, 'Faulted', { errorCode: 'GroundFailure' }));
    await charger.close();
    // offline, its last report kept: A's index holds both connectors
    await eventually(async () => {
      const r = await list(a, `q=${id}`);
      return r.body[0]?.online === false ? r.body[0] : undefined;
    });
    expect((await list(a, `q=${id}`)).body[0]?.connectors.map((c) => c.connector_id)).to.deep.equal([1, 2]);

    // an offline charger's stored state is reset in the removal's transaction (B), not by its actor
    expect((await apiClient(b.url)('DELETE', `/v1/charge-points/${id}`)).status).to.equal(204);
    await register(b, id);

    const again = await list(a, `q=${id}`);
    expect(again.body.map((x) => ({ id: x.id, online: x.online, connectors: x.connectors }))).to.deep.equal([
      { id, online: false, connectors: [] },
    ]);
    expect((await overview(a)).alerts.map((x) => x.charge_point_id)).not.to.include(id);
  });
});
