import { expect } from 'chai';
import type { ChargingSession } from '../../src/csms/session-store.js';
import { connect, type TestCharger } from '../ocpp/support/charger.js';
import { API_KEY, apiClient, uniqueChargePointId, type RegisteredChargePoint } from '../ocpp/support/csms.js';
import { v16 } from '../ocpp/support/messages.js';
import { eventually } from '../ocpp/support/scenario.js';
import { clusterEnvironment, type TestEnvironment } from '../support/platforms.js';
import { startNode, type NodeProcess } from '../support/processes.js';
import { strictCharger } from '../support/rpc-client.js';

interface ChargePointView {
  online: boolean;
  commands: Array<{ command_id: string; status: string; detail: string | null }>;
}

describe('charge points across web processes (Redis, PostgreSQL, real processes)', function () {
  this.timeout(120_000);
  let env: TestEnvironment;
  let a: NodeProcess;
  let b: NodeProcess;

  before(async () => {
    env = await clusterEnvironment({ CSMS_API_KEY: API_KEY, PROCESS_ROLE: 'web' });
    [a, b] = await Promise.all([startNode(env.env), startNode(env.env)]);
  });
  after(async () => {
    await Promise.all([a, b].map((p) => p?.stop()));
    await env.cleanup();
  });

  const wsUrl = (node: NodeProcess, id: string): string => `${node.url.replace(/^http/, 'ws')}/ocpp/${id}`;

  async function chargerOn(node: NodeProcess, cp: RegisteredChargePoint): Promise<TestCharger> {
    const charger = await connect({
      url: wsUrl(node, cp.id),
      username: cp.username,
      password: cp.password,
      protocols: ['ocpp1.6'],
    });
    charger.answers = { RemoteStartTransaction: { status: 'Accepted' } };
    return charger;
  }

  /** A 1.6 charge point registered through B, its charger connected to `node` and booted. */
  async function bootedOn(
    node: NodeProcess,
    prefix: string,
  ): Promise<{ cp: RegisteredChargePoint; charger: TestCharger }> {
    const cp = (
      await apiClient(b.url)<RegisteredChargePoint>('POST', '/v1/charge-points', {
        id: uniqueChargePointId(prefix),
        protocol: 'ocpp1.6',
      })
    ).body;
    const charger = await chargerOn(node, cp);
    await charger.call('BootNotification', v16.boot());
    return { cp, charger };
  }

  it('the newest connection wins across processes: the socket on A is closed when the charger connects to B', async () => {
    const apiA = apiClient(a.url);
    const created = await apiA<RegisteredChargePoint>('POST', '/v1/charge-points', {
      id: uniqueChargePointId('NW'),
      protocol: 'ocpp1.6',
    });
    const cp = created.body;
    const onA = await chargerOn(a, cp);
    await onA.call('BootNotification', v16.boot());
    const onB = await chargerOn(b, cp);
    expect(await onA.closed).to.equal(4000);
    expect((await apiA('POST', `/v1/charge-points/${cp.id}/remote-start`, { id_tag: 'TAG-NW' })).status).to.equal(200);
    expect((await onB.csmsCall('RemoteStartTransaction', 10_000)).payload).to.deep.equal({ idTag: 'TAG-NW' });
    expect((await apiA<ChargePointView>('GET', `/v1/charge-points/${cp.id}`)).body.online).to.equal(true);
    await onB.close();
  });

  it('a remote start sent to B reaches the charger on A; after kill -9 of A the charger reconnects to B and carries on', async () => {
    const apiA = apiClient(a.url);
    const apiB = apiClient(b.url);
    const created = await apiB<RegisteredChargePoint>('POST', '/v1/charge-points', {
      id: uniqueChargePointId('CL'),
      protocol: 'ocpp1.6',
    });
    expect(created.status).to.equal(201);
    const cp = created.body;

    const onA = await chargerOn(a, cp);
    await onA.call('BootNotification', v16.boot());
    // the online flag is the same on every process
    expect((await apiA<ChargePointView>('GET', `/v1/charge-points/${cp.id}`)).body.online).to.equal(true);
    expect((await apiB<ChargePointView>('GET', `/v1/charge-points/${cp.id}`)).body.online).to.equal(true);
    const online = await apiB<Array<{ id: string }>>('GET', '/v1/charge-points?online=true');
    expect(online.body.map((c) => c.id)).to.include(cp.id);

    const first = await apiB<{ command_id: string }>('POST', `/v1/charge-points/${cp.id}/remote-start`, {
      id_tag: 'TAG-B1',
      connector_id: 1,
    });
    expect(first.status).to.equal(200);
    expect((await onA.csmsCall('RemoteStartTransaction', 10_000)).payload).to.deep.equal({
      idTag: 'TAG-B1',
      connectorId: 1,
    });
    await eventually(
      async () =>
        (await apiB<ChargePointView>('GET', `/v1/charge-points/${cp.id}`)).body.commands.find(
          (c) => c.command_id === first.body.command_id && c.status === 'Accepted',
        ),
      10_000,
    );
    const { transactionId } = await onA.call<{ transactionId: number }>(
      'StartTransaction',
      v16.start({ idTag: 'TAG-B1', meterStart: 100 }),
    );
    await onA.call('MeterValues', v16.meterValues(1, transactionId, 600));

    // a second charger on A that never answers the call B sends it, and stays away after the kill
    const quiet = (
      await apiB<RegisteredChargePoint>('POST', '/v1/charge-points', {
        id: uniqueChargePointId('QT'),
        protocol: 'ocpp1.6',
      })
    ).body;
    const quietOnA = await chargerOn(a, quiet);
    await quietOnA.call('BootNotification', v16.boot());
    const waiting = apiB<{ command_id: string; command_status: string; answered: boolean; detail: string | null }>(
      'POST',
      `/v1/charge-points/${quiet.id}/data-transfer?wait_ms=25000`,
      { vendor_id: 'x', data: 'a' },
    );
    await quietOnA.csmsCall('DataTransfer', 10_000);
    // recorded as sent (and B's ask answered) before A dies
    await eventually(
      async () =>
        (await apiB<ChargePointView>('GET', `/v1/charge-points/${quiet.id}`)).body.commands.find(
          (c) => c.status === 'sent',
        ),
      10_000,
    );

    a.signal('SIGKILL');
    await a.exited;
    await onA.closed;
    await quietOnA.closed;

    // no process is left to record the call's end: B's route and B's reads say it failed once
    // the pin lapsed (LEASE_TTL_MS 3 s here), not "sent" until the charger comes back
    const killedAt = Date.now();
    const outcome = await waiting;
    expect(Date.now() - killedAt, 'answered within the wait').to.be.below(15_000);
    expect(outcome.body).to.include({
      command_status: 'failed',
      answered: true,
      detail: 'connection closed before the answer',
    });
    const seen = (await apiB<ChargePointView>('GET', `/v1/charge-points/${quiet.id}`)).body;
    expect(seen.online).to.equal(false);
    expect(seen.commands.find((c) => c.command_id === outcome.body.command_id)).to.include({
      status: 'failed',
      detail: 'connection closed before the answer',
    });

    // the charger reconnects to the surviving process and finishes what it started
    const onB = await chargerOn(b, cp);
    await onB.call('BootNotification', v16.boot());
    await onB.call('StopTransaction', v16.stop(transactionId, 1600));
    const second = await apiB<{ command_id: string }>('POST', `/v1/charge-points/${cp.id}/remote-start`, {
      id_tag: 'TAG-B2',
    });
    expect(second.status).to.equal(200);
    expect((await onB.csmsCall('RemoteStartTransaction', 10_000)).payload).to.deep.equal({ idTag: 'TAG-B2' });
    expect((await apiB<ChargePointView>('GET', `/v1/charge-points/${cp.id}`)).body.online).to.equal(true);

    const sessions = await apiB<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${cp.id}`);
    expect(sessions.body.map((s) => [s.transaction_id, s.status, s.energy_wh])).to.deep.equal([
      [String(transactionId), 'COMPLETED', 1500],
    ]);
    await onB.close();
    await eventually(
      async () => ((await apiB<ChargePointView>('GET', `/v1/charge-points/${cp.id}`)).body.online ? undefined : true),
      10_000,
    );
    expect((await apiB('POST', `/v1/charge-points/${cp.id}/remote-start`, { id_tag: 'TAG-B3' })).status).to.equal(409);
  });

  it('a remote start to a charger whose process is paused past its lease is 503 (maybe sent), not 409 (not sent)', async () => {
    const c = await startNode(env.env);
    try {
      const apiB = apiClient(b.url);
      const { cp, charger: onC } = await bootedOn(c, 'PZ');
      c.signal('SIGSTOP');
      // B's ask waits in C's socket; C's membership lapses, and when C resumes it reads the ask and
      // sends the start on the charger's socket, still open: the operator was told "not connected"
      const answer = await apiB<{ error: { code: string; message: string } }>(
        'POST',
        `/v1/charge-points/${cp.id}/remote-start`,
        {
          id_tag: 'TAG-PZ',
          connector_id: 1,
        },
      );
      c.signal('SIGCONT');
      expect(answer.status, JSON.stringify(answer.body)).to.equal(503);
      expect(answer.body.error.code).to.equal('charge_point_unreachable');
      // not "retry": a retry would start the charger twice once the process resumes
      expect(answer.body.error.message).to.include('may still reach it').and.not.include('retry');
      await onC.close();
    } finally {
      c.signal('SIGCONT');
      await c.stop();
    }
  });

  it('a process stopped (SIGTERM) while an operation waits for a charger on another process answers it with the record', async () => {
    const c = await startNode(env.env);
    // on B, and it never answers the DataTransfer: C's route waits up to 25 s
    const { cp: quiet, charger: onB } = await bootedOn(b, 'ST');
    const waiting = apiClient(c.url)<{ command_id: string; command_status: string; answered: boolean }>(
      'POST',
      `/v1/charge-points/${quiet.id}/data-transfer?wait_ms=25000`,
      { vendor_id: 'x', data: 'a' },
    );
    await onB.csmsCall('DataTransfer', 10_000);
    const stoppedAt = Date.now();
    const stopped = c.stop();
    // before, C's server drained for 5 s, then closed the connection: an empty reply, no command id
    const answer = await waiting;
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.body.command_id).to.be.a('string');
    expect(answer.body).to.include({ answered: false, command_status: 'sent' });
    expect(Date.now() - stoppedAt).to.be.below(4000);
    await stopped;
    await onB.close();
  });

  it('a process stopped (SIGTERM) with a call out to its own charger says the call was sent and its answer lost', async () => {
    const c = await startNode(env.env);
    const { cp: quiet, charger: onC } = await bootedOn(c, 'SC');
    const waiting = apiClient(c.url)<{ command_id: string; command_status: string; detail: string | null }>(
      'POST',
      `/v1/charge-points/${quiet.id}/data-transfer?wait_ms=25000`,
      { vendor_id: 'x', data: 'a' },
    );
    // the charger got the call: what it does with it, the CSMS can no longer learn
    await onC.csmsCall('DataTransfer', 10_000);
    const stopped = c.stop();
    const answer = await waiting;
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    expect(answer.body).to.include({
      command_status: 'failed',
      detail: 'connection closed before the answer (service restart)',
    });
    await stopped;
    const seen = (await apiClient(b.url)<ChargePointView>('GET', `/v1/charge-points/${quiet.id}`)).body;
    expect(seen.commands.find((x) => x.command_id === answer.body.command_id)).to.include({
      status: 'failed',
      detail: 'connection closed before the answer (service restart)',
    });
    await onC.close();
  });
  it('two devices of one identity connecting at once, round after round: each is answered or closed as replaced, and the other chargers carry on', async () => {
    const c = await startNode(env.env);
    const api = apiClient(b.url);
    const register = async (prefix: string): Promise<RegisteredChargePoint> =>
      (
        await api<RegisteredChargePoint>('POST', '/v1/charge-points', {
          id: uniqueChargePointId(prefix),
          protocol: 'ocpp1.6',
        })
      ).body;
    try {
      const steady = await Promise.all(
        Array.from({ length: 8 }, async () => {
          const charger = strictCharger(c.url, await register('ST'), 'ocpp1.6');
          await charger.connect();
          await charger.call('BootNotification', v16.boot());
          const started = (await charger.call('StartTransaction', v16.start({ idTag: 'TAG-ST' }))) as {
            transactionId: number;
          };
          return { charger, transactionId: started.transactionId };
        }),
      );
      const twins = await Promise.all(Array.from({ length: 40 }, () => register('TW')));
      const until = Date.now() + 6_000;
      const failures: string[] = [];
      let answered = 0;
      let connects = 0;
      // what a device was answered with a CALLERROR (closed under its call is not one)
      const twinErrors: string[] = [];
      // a device connects, boots and reports for a moment; its twin, connecting at the same time, replaces one of them
      const device = async (cp: RegisteredChargePoint): Promise<void> => {
        const charger = strictCharger(c.url, cp, 'ocpp1.6');
        const stop = Date.now() + 300;
        try {
          await charger.connect();
          connects += 1;
          await charger.call('BootNotification', v16.boot());
          for (let wh = 10; Date.now() < stop; wh += 10)
            await charger.call('MeterValues', v16.meterValues(1, undefined, wh));
        } catch (err) {
          // replaced or refused: the socket closed under the call
          const code = (err as { rpcErrorCode?: string }).rpcErrorCode;
          if (code) twinErrors.push(`${code}: ${(err as Error).message}`);
        }
        await charger.close({ force: true });
      };
      // every twin, both devices at once, round after round (a fleet back after an outage, with duplicates)
      const rounds = async (): Promise<void> => {
        while (Date.now() < until) await Promise.all(twins.flatMap((cp) => [device(cp), device(cp)]));
      };
      const meter = async ({ charger, transactionId }: (typeof steady)[number]): Promise<void> => {
        for (let wh = 1_010; Date.now() < until; wh += 10) {
          try {
            await charger.call('MeterValues', v16.meterValues(1, transactionId, wh));
            answered += 1;
          } catch (err) {
            failures.push(err instanceof Error ? err.message : String(err));
          }
        }
      };
      await Promise.all([rounds(), ...steady.map(meter)]);
      await Promise.all(steady.map(({ charger }) => charger.close()));
      expect(connects, 'the twins replaced each other').to.be.above(twins.length * 4);
      // were InternalError for every charger of the process: fence raises deadlocked the batches
      expect(failures, 'meter values of the chargers that stayed').to.deep.equal([]);
      expect(answered).to.be.above(steady.length * 10);
      // the older of two claims at once took the pin back, and the newer device's turns were fenced
      expect(twinErrors.slice(0, 3), `${twinErrors.length} CALLERRORs to the twins`).to.deep.equal([]);
      const unexpected = c.logs.filter(
        (l) =>
          JSON.stringify(l).includes('deadlock') ||
          l.msg === 'pin epoch behind the database fence; raising the counter' ||
          l.msg === 'charger connection could not be set up',
      );
      expect(unexpected.map((l) => l.msg)).to.deep.equal([]);
    } finally {
      await c.stop();
    }
  });
});
