import { expect } from 'chai';
import type { ChargingSession } from '../../src/csms/session-store.js';
import { connect, type TestCharger } from '../ocpp/support/charger.js';
import { API_KEY, apiClient, uniqueChargePointId, type RegisteredChargePoint } from '../ocpp/support/csms.js';
import { v16 } from '../ocpp/support/messages.js';
import { clusterEnvironment, embeddedEnvironment, type TestEnvironment } from '../support/platforms.js';
import { startNode, type NodeProcess } from '../support/processes.js';

const CHARGERS = 12;
const METER_START = 1000;

/** A small seeded generator (mulberry32), so a failing run can be repeated. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Flooding {
  cp: RegisteredChargePoint;
  charger: TestCharger;
  transactionId: number;
  /** the highest meter reading the process acknowledged (CALLRESULT received) */
  acked: number;
}

async function startCharger(node: NodeProcess): Promise<Flooding> {
  const api = apiClient(node.url);
  const cp = (
    await api<RegisteredChargePoint>('POST', '/v1/charge-points', {
      id: uniqueChargePointId('GC'),
      protocol: 'ocpp1.6',
    })
  ).body;
  const charger = await connect({
    url: `${node.url.replace(/^http/, 'ws')}/ocpp/${cp.id}`,
    username: cp.username,
    password: cp.password,
    protocols: ['ocpp1.6'],
  });
  await charger.call('BootNotification', v16.boot());
  const { transactionId } = await charger.call<{ transactionId: number }>(
    'StartTransaction',
    v16.start({ idTag: 'TAG-GC', meterStart: METER_START }),
  );
  return { cp, charger, transactionId, acked: METER_START };
}

/** MeterValues one after the other, each sent as soon as the previous one was answered. */
async function flood(f: Flooding): Promise<void> {
  const died = f.charger.closed.then(() => {
    throw new Error('closed');
  });
  died.catch(() => undefined);
  for (let wh = f.acked + 1; ; wh++) {
    try {
      await Promise.race([f.charger.call('MeterValues', v16.meterValues(1, f.transactionId, wh)), died]);
    } catch {
      return; // the process died: this one was not acknowledged
    }
    f.acked = wh;
  }
}

function crashTest(mode: 'embedded' | 'cluster', seed: number): void {
  describe(`acknowledged meter values survive kill -9 under group commit (${mode}, seed ${seed})`, function () {
    this.timeout(120_000);
    let env: TestEnvironment;
    let node: NodeProcess | undefined;

    before(async () => {
      const extra = { CSMS_API_KEY: API_KEY };
      env =
        mode === 'cluster'
          ? await clusterEnvironment({ ...extra, PROCESS_ROLE: 'web' })
          : await embeddedEnvironment(extra);
    });
    after(async () => {
      await node?.stop();
      await env.cleanup();
    });

    it('finds every MeterValues that got a CALLRESULT after the restart', async () => {
      const random = seeded(seed);
      const first = await startNode(env.env);
      const chargers = await Promise.all(Array.from({ length: CHARGERS }, () => startCharger(first)));
      const floods = chargers.map(flood);
      await new Promise((r) => setTimeout(r, 700 + Math.floor(random() * 800)));
      first.signal('SIGKILL');
      await first.exited;
      await Promise.all(floods);
      node = await startNode(env.env);
      const api = apiClient(node.url);
      let acknowledged = 0;
      for (const f of chargers) {
        acknowledged += f.acked - METER_START;
        const sessions = await api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${f.cp.id}`);
        const session = sessions.body.find((s) => s.transaction_id === String(f.transactionId));
        // readings only grow, one in flight per charger: the stored last reading is at least the
        // last acknowledged one (one more when the answer to the last was lost with the process)
        expect(session?.meter_last_wh, f.cp.id).to.be.at.least(f.acked);
        expect(session?.meter_last_wh, f.cp.id).to.be.at.most(f.acked + 1);
      }
      console.log(`      ${acknowledged} MeterValues acknowledged by ${CHARGERS} chargers before kill -9, all found`);
      expect(acknowledged, 'meter values acknowledged before the kill').to.be.greaterThan(CHARGERS * 5);
    });
  });
}

crashTest('embedded', 9);
crashTest('cluster', 9);
