import { expect } from 'chai';
import { connect, type TestCharger } from '../ocpp/support/charger.js';
import { API_KEY, apiClient, uniqueChargePointId, type RegisteredChargePoint } from '../ocpp/support/csms.js';
import { v16 } from '../ocpp/support/messages.js';
import { eventually } from '../ocpp/support/scenario.js';
import { openEventStream, type EventStream } from '../support/event-stream.js';
import { clusterEnvironment, type TestEnvironment } from '../support/platforms.js';
import { startNode, type NodeProcess } from '../support/processes.js';
import { monitorRedis, type RedisMonitor } from '../support/redis-monitor.js';

/**
 * The live change feed across web processes: an operator's event stream on A sees the chargers
 * on B, and while no stream is open anywhere the processes stop sending events over Redis.
 */
describe('CSMS events across web processes (Redis, PostgreSQL, real processes)', function () {
  this.timeout(60_000);
  let env: TestEnvironment;
  let a: NodeProcess;
  let b: NodeProcess;
  let monitor: RedisMonitor;
  let channel: string;
  const published = (): string[] =>
    monitor.commands.filter((c) => c.name === 'publish' && c.args[0] === channel).map((c) => c.args[1] ?? '');

  before(async () => {
    env = await clusterEnvironment({ CSMS_API_KEY: API_KEY, PROCESS_ROLE: 'web' });
    channel = `${env.env.REDIS_PREFIX ?? ''}:csms:events`;
    monitor = await monitorRedis(env.env.REDIS_URL ?? '');
    [a, b] = await Promise.all([startNode(env.env), startNode(env.env)]);
  });
  after(async () => {
    monitor?.close();
    await Promise.all([a, b].map((p) => p?.stop()));
    await env.cleanup();
  });

  /** `promise`, or a failure naming `what` after `ms` */
  const within = <T>(ms: number, what: string, promise: Promise<T>): Promise<T> =>
    Promise.race([
      promise,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms).unref(),
      ),
    ]);

  /** each charger's login, for a second connection of the same identity */
  const logins = new Map<string, RegisteredChargePoint>();

  async function chargerOn(node: NodeProcess, prefix: string): Promise<{ charger: TestCharger; id: string }> {
    const created = await apiClient(node.url)<RegisteredChargePoint>('POST', '/v1/charge-points', {
      id: uniqueChargePointId(prefix),
      protocol: 'ocpp1.6',
    });
    const cp = created.body;
    logins.set(cp.id, cp);
    const charger = await connect({
      url: `${node.url.replace(/^http/, 'ws')}/ocpp/${cp.id}`,
      username: cp.username,
      password: cp.password,
      protocols: ['ocpp1.6'],
    });
    return { charger, id: cp.id };
  }

  /** An operator's event stream on `node`: the text received so far, and its end. */
  const streamOn = (node: NodeProcess): Promise<EventStream> => openEventStream(node.url, API_KEY);

  it('sends (almost) nothing over Redis while no event stream is open', async () => {
    const { charger } = await chargerOn(b, 'EVQ');
    await charger.call('BootNotification', v16.boot());
    for (const status of ['Preparing', 'Available', 'Preparing', 'Available', 'Unavailable']) {
      await charger.call('StatusNotification', v16.status(1, status));
    }
    // online, boot and five statuses are 7 changes; the first publish reaches no process and
    // quiets the publisher (a second may already be on its way when the answer comes)
    await new Promise((r) => setTimeout(r, 300));
    expect(published().length).to.be.at.most(2);
    await charger.close();
  });

  it('delivers the changes of a charger on B to an event stream opened on A', async () => {
    const { received, close } = await streamOn(a);
    try {
      // B is quiet from the test before; A's stream ends that at once
      await new Promise((r) => setTimeout(r, 200));
      const { charger, id } = await chargerOn(b, 'EVL');
      await charger.call('BootNotification', v16.boot());
      const seen = async (): Promise<true | undefined> =>
        received.join('').includes(`"charge_point_id":"${id}"`) ? true : undefined;
      await eventually(seen, 5000);
      // and it came over Redis: the monitor that saw (almost) nothing before sees B publish it
      expect(published().some((payload) => payload.includes(id))).to.equal(true);
      await charger.close();
    } finally {
      await close();
    }
  });

  it('a charger whose newer connection on the other process replaces the older: the stream says online last', async () => {
    const streams = await Promise.all([streamOn(a), streamOn(b)]);
    try {
      await new Promise((r) => setTimeout(r, 200));
      const first = await chargerOn(a, 'EVR');
      const id = first.id;
      let charger = first.charger;
      await charger.call('BootNotification', v16.boot());
      const said = (received: string[]) =>
        [...received.join('').matchAll(new RegExp(`"charge_point_id":"${id}","online":(true|false)`, 'g'))].map(
          (m) => m[1],
        );
      // back and forth: each new connection replaces the one on the other process (4000)
      for (const [round, node] of [b, a, b, a].entries()) {
        await new Promise((r) => setTimeout(r, 500));
        const login = logins.get(id);
        const next = await within(
          10_000,
          `round ${round}: the new connection`,
          connect({
            url: `${node.url.replace(/^http/, 'ws')}/ocpp/${id}`,
            username: login?.username ?? '',
            password: login?.password ?? '',
            protocols: ['ocpp1.6'],
          }),
        );
        await within(10_000, `round ${round}: its boot`, next.call('BootNotification', v16.boot()));
        expect(await within(10_000, `round ${round}: the older one's close`, charger.closed)).to.equal(4000);
        charger = next;
        await new Promise((r) => setTimeout(r, 500));
        // was offline last now and then: the replaced socket's close, told after the new one's open
        for (const stream of streams) expect(said(stream.received).at(-1), node.url).to.equal('true');
      }
      const view = await apiClient(a.url)<{ online: boolean }>('GET', `/v1/charge-points/${id}`);
      expect(view.body.online).to.equal(true);
      await charger.close();
    } finally {
      await Promise.all(streams.map((st) => st.close()));
    }
  });

  // last: it kills B
  it('tells a stream on A that the chargers of B went offline when B was killed (kill -9)', async () => {
    const { received, close } = await streamOn(a);
    try {
      await new Promise((r) => setTimeout(r, 200));
      const { charger, id } = await chargerOn(b, 'EVK');
      await charger.call('BootNotification', v16.boot());
      const said = (what: string) => async (): Promise<true | undefined> =>
        received.join('').includes(`"charge_point_id":"${id}","online":${what}`) ? true : undefined;
      await eventually(said('true'), 5000);
      b.signal('SIGKILL');
      await b.exited;
      await charger.closed;
      // B could not say it; A takes B's pins once B's membership lapsed (LEASE_TTL_MS 3 s here)
      await eventually(said('false'), 15_000);
      const view = await apiClient(a.url)<{ online: boolean }>('GET', `/v1/charge-points/${id}`);
      expect(view.body.online).to.equal(false);
    } finally {
      await close();
    }
  });
});
