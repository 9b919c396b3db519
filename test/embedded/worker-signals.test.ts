import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { LogLimit, redisErrorListener } from '../../src/log-limit.js';
import { createLogger } from '../../src/logger.js';
import { embeddedEnvironment } from '../support/platforms.js';
import { MAIN, startNode } from '../support/processes.js';
import { connect, type TestCharger } from '../ocpp/support/charger.js';
import { API_KEY, apiClient, uniqueChargePointId, type RegisteredChargePoint } from '../ocpp/support/csms.js';
import { v16, v201 } from '../ocpp/support/messages.js';
import { RawClient } from '../ocpp/support/raw-socket.js';
import { waitFor } from '../support/eventually.js';

/** Runs the product's main with `env` to its exit: its code and what it wrote. */
function runMain(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [MAIN], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => done({ code, stdout, stderr }));
  });
}

/**
 * The process-level signals of docs/OPERATIONS.md: start-up failures as JSON lines, Redis errors throttled.
 */
describe('worker readiness and process signals', function () {
  this.timeout(60_000);

  it('a failed start (the port taken) is one JSON line on stdout, error and stack inside, nothing on stderr', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const env = await embeddedEnvironment();
    try {
      const port = String((taken.address() as AddressInfo).port);
      const run = await runMain({ ...env.env, PORT: port, LOG_LEVEL: 'warn' });
      expect(run.code).to.equal(1);
      expect(run.stderr).to.equal('');
      const lines = run.stdout.trim().split('\n');
      const last = JSON.parse(lines.at(-1) ?? '{}') as {
        level: number;
        msg: string;
        err: { stack: string; code: string };
      };
      expect(last.level).to.equal(60);
      expect(last.msg).to.match(/^failed to start: listen EADDRINUSE/);
      expect(last.err).to.include({ code: 'EADDRINUSE' });
      expect(last.err.stack).to.be.a('string');
    } finally {
      taken.close();
      await env.cleanup();
    }
  });

  it('a bad setting is one JSON line naming it, exit 78', async () => {
    const run = await runMain({ PORT: 'eighty' });
    expect(run.code).to.equal(78);
    expect(run.stderr).to.equal('');
    const line = JSON.parse(run.stdout.trim()) as Record<string, unknown>;
    expect(line).to.include({ level: 60, setting: 'PORT' });
    expect(String(line.msg)).to.match(/^invalid setting PORT/);
  });

  it('warns at start, one line per variable, of a variable that looks like a misspelled setting', async () => {
    const env = await embeddedEnvironment();
    // PROCES_ROLE=web started role `all` without a word
    const node = await startNode({ ...env.env, PORT: '0', PROCES_ROLE: 'web', OCPP_HEARTBEAT_S: '60' });
    try {
      const warned = node.logs.filter((l) => l.msg === 'not a setting: environment variable ignored');
      expect(warned.filter((l) => l.variable === 'PROCES_ROLE')).to.have.length(1);
      expect(warned.find((l) => l.variable === 'PROCES_ROLE')).to.include({ level: 40, did_you_mean: 'PROCESS_ROLE' });
      expect(warned.filter((l) => l.variable === 'OCPP_HEARTBEAT_S')).to.have.length(1);
      // the value is never logged: a misspelled secret stays secret
      expect(JSON.stringify(warned)).to.not.contain('"web"');
      expect(node.logs.find((l) => l.msg === 'listening')).to.be.an('object');
    } finally {
      await node.stop();
      await env.cleanup();
    }
  });

  it('logs where its database is, and that a database it started on was empty', async () => {
    const env = await embeddedEnvironment();
    const file = String(env.env.DATABASE_URL).replace(/^sqlite:/, '');
    try {
      // a mistyped path started on a new, empty database without a word
      const first = await startNode({ ...env.env, PORT: '0' });
      await first.stop();
      expect(first.logs.find((l) => l.msg === 'the database was empty: a new one was made')).to.include({
        level: 40,
        database: `sqlite:${resolve(file)}`,
      });
      expect(first.logs.find((l) => l.msg === 'listening')).to.include({ database: `sqlite:${resolve(file)}` });
      const second = await startNode({ ...env.env, PORT: '0' });
      await second.stop();
      expect(second.logs.find((l) => l.msg === 'listening')).to.include({ database: `sqlite:${resolve(file)}` });
      expect(second.logs.some((l) => l.msg === 'the database was empty: a new one was made')).to.equal(false);
    } finally {
      await env.cleanup();
    }
  });

  it('a SIGTERM logs `charger disconnected` for each charger it closes, as a cluster web process does', async () => {
    const env = await embeddedEnvironment({ CSMS_API_KEY: API_KEY });
    const node = await startNode(env.env);
    const chargers: TestCharger[] = [];
    let raw: RawClient | undefined;
    try {
      const ids: string[] = [];
      for (const protocol of ['ocpp1.6', 'ocpp2.0.1'] as const) {
        const cp = (
          await apiClient(node.url)<RegisteredChargePoint>('POST', '/v1/charge-points', {
            id: uniqueChargePointId('SD'),
            protocol,
          })
        ).body;
        const charger = await connect({
          url: `${node.url.replace(/^http/, 'ws')}/ocpp/${cp.id}`,
          username: cp.username,
          password: cp.password,
          protocols: [protocol],
        });
        await charger.call('BootNotification', protocol === 'ocpp1.6' ? v16.boot() : v201.boot());
        chargers.push(charger);
        ids.push(cp.id);
      }
      // and one that never answers our close frame: its socket is ended, it does not hold the stop
      const mute = (
        await apiClient(node.url)<RegisteredChargePoint>('POST', '/v1/charge-points', {
          id: uniqueChargePointId('SD'),
          protocol: 'ocpp1.6',
        })
      ).body;
      raw = await RawClient.upgraded(Number(new URL(node.url).port), `/ocpp/${mute.id}`, {
        protocol: 'ocpp1.6',
        user: mute.id,
        password: mute.password,
      });
      ids.push(mute.id);
      await waitFor(
        'the mute charger is served',
        async () => node.logs.some((l) => l.msg === 'charger connected' && l.charge_point === mute.id),
        5000,
      );
      const stopping = Date.now();
      expect(await node.stop()).to.equal(0);
      expect(Date.now() - stopping).to.be.below(10_000);
      for (const id of ids) {
        const gone = node.logs.filter((l) => l.msg === 'charger disconnected' && l.charge_point === id);
        // was none: the process exited before the chargers' close handshakes came back
        expect(gone, id).to.have.length(1);
        expect(gone[0]).to.include({ code: 1012, reason: 'service restart', closed_by: 'csms' });
      }
    } finally {
      for (const c of chargers) c.ws.terminate();
      raw?.destroy();
      await node.stop();
      await env.cleanup();
    }
  });

  it('logs a Redis connection error once, not once per reconnect', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger(
      'info',
      {},
      { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) },
    );
    // nothing listens on port 1: every reconnect fails with the same error
    const redis = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, retryStrategy: () => 20 });
    let errors = 0;
    redis.on('error', () => errors++);
    redis.on('error', redisErrorListener(log, 'redis error'));
    await new Promise((r) => setTimeout(r, 1000));
    redis.disconnect();
    expect(errors).to.be.above(5);
    expect(lines.filter((l) => l.msg === 'redis error')).to.have.length(1);
    expect(lines[0]).to.include({ level: 40 });
    expect(String(lines[0]?.err)).to.contain('ECONNREFUSED');
  });

  it('LogLimit: N lines per key and in total per interval, the drops reported on the next line', () => {
    let now = 0;
    const limit = new LogLimit({ perKey: 2, total: 3, intervalMs: 1000, now: () => now });
    expect([limit.admit('a'), limit.admit('a'), limit.admit('a')]).to.deep.equal([0, 0, -1]);
    // the total is reached with b's first line
    expect([limit.admit('b'), limit.admit('b')]).to.deep.equal([0, -1]);
    now = 1000;
    expect([limit.admit('a'), limit.admit('b')]).to.deep.equal([1, 1]);
    // bounded memory: past the capacity the least recently added key is forgotten
    const small = new LogLimit({ perKey: 1, intervalMs: 1000, capacity: 2, now: () => now });
    small.admit('x');
    small.admit('x');
    small.admit('y');
    small.admit('z');
    expect(small.admit('x')).to.equal(0);
  });
});
