import { expect } from 'chai';
import { platformModules } from '../../src/modules.js';
import { enqueue } from '../../src/ocpi/outbox/outbox-store.js';
import { clusterEnvironment, startPlatform, type TestEnvironment } from '../support/platforms.js';
import { runToExit, startNode } from '../support/processes.js';

/**
 * The worker process's readiness and metrics (Procfile `worker`). A worker is a cluster member:
 * without REDIS_URL it refuses to start (test/unit/config.test.ts).
 */
describe('a worker process (PROCESS_ROLE=worker, as the Procfile starts it)', function () {
  this.timeout(60_000);
  let env: TestEnvironment;
  before(async () => {
    env = await clusterEnvironment();
  });
  after(async () => env.cleanup());

  it('answers /healthz, /readyz and /metrics on PORT, and nothing else', async () => {
    const worker = await startNode({ ...env.env, PROCESS_ROLE: 'worker' });
    try {
      expect(worker.url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await fetch(`${worker.url}/healthz`)).status).to.equal(200);
      const ready = await fetch(`${worker.url}/readyz`);
      expect(ready.status).to.equal(200);
      expect(await ready.json()).to.deep.include({ status: 'ready' });
      const metrics = await (await fetch(`${worker.url}/metrics`)).text();
      expect(metrics).to.contain('actor_shards_owned 256');
      expect(metrics).to.contain('pricing_queue_depth{state="in_flight"} 0');
      // a worker serves no feature routes and no chargers
      expect((await fetch(`${worker.url}/v1/charge-points`)).status).to.equal(404);
      expect(worker.logs.find((l) => l.msg === 'worker started')).to.include({ role: 'worker' });
    } finally {
      expect(await worker.stop()).to.equal(0);
    }
  });

  it('reports the outbox per partner: pending rows, the oldest one age, dead letters', async () => {
    const p = await startPlatform(env, platformModules(), { overrides: { PROCESS_ROLE: 'worker' } });
    try {
      const { db } = p.platform.services;
      const created = Date.now() - 60_000;
      await db.sql.transaction(async (tx) => {
        for (const id of ['L1', 'L2', 'L3'])
          await enqueue(tx, { partner_key: 'NL-XYZ' }, { kind: 'location', location_id: id });
      });
      await db.sql.run(`UPDATE ocpi_outbox SET created_at = ? WHERE object_key LIKE '%L1%'`, [created]);
      await db.sql.run(`UPDATE ocpi_outbox SET status = 'dead' WHERE object_key LIKE '%L3%'`, []);
      // a registered partner with nothing waiting: its series at 0, not absent
      await db.sql.run(
        `INSERT INTO ocpi_partner (id, country_code, party_id, role, status, created_at, updated_at)
         VALUES ('p-idle', 'DE', 'IDL', 'EMSP', 'registered', 0, 0)`,
        [],
      );
      const text = await (await fetch(`${p.platform.url}/metrics`)).text();
      expect(text).to.contain('ocpi_outbox_pending{partner="DE-IDL"} 0');
      expect(text).to.contain('ocpi_outbox_dead_letters{partner="DE-IDL"} 0');
      expect(text).to.contain('ocpi_outbox_oldest_pending_age_seconds{partner="DE-IDL"} 0');
      expect(text).to.contain('ocpi_outbox_pending{partner="NL-XYZ"} 2');
      expect(text).to.contain('ocpi_outbox_dead_letters{partner="NL-XYZ"} 1');
      const age = /ocpi_outbox_oldest_pending_age_seconds\{partner="NL-XYZ"\} ([\d.]+)/.exec(text)?.[1];
      expect(Number(age)).to.be.within(59, 120);
    } finally {
      await p.stop();
    }
  });

  it('a process with another ACTOR_SHARDS than the running cluster refuses to start, naming it (exit 78)', async () => {
    const worker = await startNode({ ...env.env, PROCESS_ROLE: 'worker' });
    try {
      // it joined before: 128 shards beside 256 left 27 of them with no owner, every /readyz ready
      const run = await runToExit({ ...env.env, PROCESS_ROLE: 'web', ACTOR_SHARDS: '128', LOG_LEVEL: 'info' });
      expect(run.code).to.equal(78);
      const lines = run.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const fatal = lines.find((l) => l.level === 60);
      expect(fatal).to.include({ setting: 'ACTOR_SHARDS' });
      expect(String(fatal?.msg)).to.contain("the cluster's processes run with 256 shards, this one with 128");
      expect(lines.some((l) => l.msg === 'listening')).to.equal(false);
      // the worker still owns every shard
      const metrics = await (await fetch(`${worker.url}/metrics`)).text();
      expect(metrics).to.contain('actor_shards_owned 256');
    } finally {
      expect(await worker.stop()).to.equal(0);
    }
  });
});
