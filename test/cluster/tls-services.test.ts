import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { loadConfig } from '../../config/index.js';
import { Database } from '../../src/db/database.js';
import { createLogger } from '../../src/logger.js';
import { connect } from '../ocpp/support/charger.js';
import { API_KEY, apiClient, uniqueChargePointId, type RegisteredChargePoint } from '../ocpp/support/csms.js';
import { v16 } from '../ocpp/support/messages.js';
import { REDIS_URL as PLAIN_REDIS_URL } from '../support/databases.js';
import { waitFor } from '../support/eventually.js';
import { runToExit, startNode, type FailedStart, type NodeProcess } from '../support/processes.js';
import { TestCertificates, TlsPostgres, TlsRedis, tlsServicesMissing } from '../support/tls-services.js';

const DIST = resolve(import.meta.dirname, '../..');

/** The one JSON line a start that failed leaves on stdout, with how it ended. */
function failure(run: FailedStart): Record<string, unknown> {
  expect(run.code, `exit code; stdout: ${run.lines.join('\n')}; stderr: ${run.stderr}`).to.be.a('number');
  expect(run.code).to.not.equal(0);
  expect(run.ms, 'exits within seconds').to.be.below(10_000);
  expect(run.stderr, 'no plain-text stack trace').to.not.match(/\n\s+at /);
  expect(run.lines, 'one log line').to.have.length(1);
  const line = JSON.parse(run.lines[0] ?? '') as Record<string, unknown>;
  expect(line.level).to.equal(60); // pino's fatal
  return line;
}

/**
 * Issue 14, managed services: PostgreSQL and Redis over TLS as Heroku runs them, on servers of the
 * test's own (a throwaway CA, a PostgreSQL that accepts TLS connections only, a Redis without a
 * plain port). The platform runs in cluster mode against them with each way of trusting the
 * server, and a start it cannot make fails in seconds with one JSON line naming the setting.
 */
describe('managed services: PostgreSQL and Redis over TLS', function () {
  this.timeout(60_000);
  const missing = tlsServicesMissing();
  let certs: TestCertificates;
  let ca: string;
  let postgres: TlsPostgres | undefined;
  let redis: TlsRedis | undefined;
  const nodes: NodeProcess[] = [];

  before(async function () {
    if (missing) {
      console.log(`      skipped: ${missing}`);
      this.skip();
    }
    certs = TestCertificates.create();
    ca = readFileSync(certs.caFile, 'utf8');
    // one after the other: a failure leaves what did start where `after` finds it
    postgres = await TlsPostgres.start(certs);
    redis = await TlsRedis.start(certs, ca);
    // the release phase, over TLS as well
    const release = await runToExit(
      { DATABASE_URL: `${postgres.url}?sslmode=verify-full`, DATABASE_SSL_CA: certs.caFile },
      { entry: resolve(DIST, 'scripts/migrate.js') },
    );
    expect(release.code, release.lines.join('\n') + release.stderr).to.equal(0);
  });

  after(async () => {
    for (const node of nodes) await node.stop();
    await redis?.stop();
    postgres?.stop();
    certs?.remove();
  });

  function clusterEnv(overrides: Record<string, string>): Record<string, string> {
    return {
      DATABASE_URL: `${postgres?.url}?sslmode=verify-full`,
      DATABASE_SSL_CA: ca,
      REDIS_URL: redis?.url ?? '',
      REDIS_TLS_CA: certs.caFile,
      REDIS_PREFIX: `tls${nodes.length}`,
      PROCESS_ROLE: 'web',
      CSMS_API_KEY: API_KEY,
      PORT: '0',
      HOST: '127.0.0.1',
      NODE_ENV: 'test',
      LEASE_TTL_MS: '3000',
      ...overrides,
    };
  }

  /** readiness (PostgreSQL and Redis), a charge point registered and a charger booted through it */
  async function servesACharger(web: NodeProcess): Promise<void> {
    await waitFor('/readyz 200', async () => (await fetch(`${web.url}/readyz`)).status === 200, 10_000);
    const api = apiClient(web.url);
    const created = await api<RegisteredChargePoint>('POST', '/v1/charge-points', {
      id: uniqueChargePointId('TLS'),
      protocol: 'ocpp1.6',
    });
    expect(created.status).to.equal(201);
    const cp = created.body;
    const charger = await connect({
      url: `${web.url.replace(/^http/, 'ws')}/ocpp/${cp.id}`,
      username: cp.username,
      password: cp.password,
      protocols: ['ocpp1.6'],
    });
    try {
      const boot = (await charger.call('BootNotification', v16.boot())) as { status?: string };
      expect(boot.status).to.equal('Accepted');
      const read = await api<{ id: string }>('GET', `/v1/charge-points/${cp.id}`);
      expect(read.status).to.equal(200);
      expect(read.body.id).to.equal(cp.id);
    } finally {
      charger.ws.terminate();
    }
  }

  /** every client connection the server has, the platform's among them, is encrypted */
  async function allConnectionsEncrypted(): Promise<void> {
    const client = await postgres!.client(ca);
    try {
      const rows = (
        await client.query<{ ssl: boolean; own: boolean }>(
          `SELECT s.ssl, a.pid = pg_backend_pid() AS own FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
            WHERE a.backend_type = 'client backend'`,
        )
      ).rows;
      expect(rows.filter((r) => !r.own).length, "the platform's connections").to.be.greaterThan(0);
      expect(rows.every((r) => r.ssl)).to.equal(true);
    } finally {
      await client.end();
    }
  }

  it('serves with sslmode=verify-full and DATABASE_SSL_CA, rediss:// and REDIS_TLS_CA, every connection encrypted', async () => {
    const web = await startNode(clusterEnv({}));
    nodes.push(web);
    await servesACharger(web);
    await allConnectionsEncrypted();
  });

  it('serves with sslmode=require and certificates not checked (the Heroku recipe)', async () => {
    const web = await startNode(
      clusterEnv({
        DATABASE_URL: `${postgres?.url}?sslmode=require`,
        DATABASE_SSL_CA: '',
        DATABASE_SSL_REJECT_UNAUTHORIZED: 'false',
        REDIS_TLS_CA: '',
        REDIS_TLS_REJECT_UNAUTHORIZED: 'false',
      }),
    );
    nodes.push(web);
    await servesACharger(web);
  });

  for (const [mode, settings] of [
    ['verify-full', (): Record<string, string> => ({ DATABASE_SSL_CA: ca })],
    ['require', (): Record<string, string> => ({ DATABASE_SSL_REJECT_UNAUTHORIZED: 'false' })],
  ] as const) {
    it(`the platform's two pools (prepared statements, MikroORM) are encrypted with sslmode=${mode}`, async () => {
      const config = loadConfig({ DATABASE_URL: `${postgres?.url}?sslmode=${mode}`, ...settings() });
      const db = await Database.open(config.database, { log: createLogger('silent') });
      try {
        const sql = 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()';
        expect(await db.execute(sql)).to.deep.equal([{ ssl: true }]);
        await db.loadOrm();
        expect(await db.execute(sql, [], db.fork())).to.deep.equal([{ ssl: true }]);
      } finally {
        await db.close();
      }
    });
  }

  it('the PostgreSQL server refuses a connection without TLS', async () => {
    const plain = new pg.Client({ connectionString: postgres?.url, ssl: false, connectionTimeoutMillis: 5000 });
    const err = await plain.connect().then(
      () => undefined,
      (e: unknown) => e,
    );
    await plain.end().catch(() => undefined);
    expect(String(err)).to.match(/no encryption/);
  });

  it('without the CA, verify-full fails the start in seconds with one JSON line naming DATABASE_URL', async () => {
    const line = failure(await runToExit(clusterEnv({ DATABASE_SSL_CA: '' })));
    expect(line.setting).to.equal('DATABASE_URL');
    expect(line.msg).to.match(/^cannot reach PostgreSQL at 127\.0\.0\.1:\d+: .*certificate/);
    expect(line.msg).to.include('set DATABASE_SSL_CA');
  });

  it('without TLS the start fails naming DATABASE_URL: the server requires it', async () => {
    const line = failure(
      await runToExit(clusterEnv({ DATABASE_URL: `${postgres?.url}?sslmode=disable`, DATABASE_SSL_CA: '' })),
    );
    expect(line.setting).to.equal('DATABASE_URL');
    expect(line.msg).to.include('the server requires TLS');
  });

  it('without the CA, rediss:// fails the start in seconds with one JSON line naming REDIS_URL', async () => {
    const line = failure(await runToExit(clusterEnv({ REDIS_TLS_CA: '' })));
    expect(line.setting).to.equal('REDIS_URL');
    expect(line.msg).to.match(/^cannot reach Redis at 127\.0\.0\.1:\d+: .*certificate/);
    expect(line.msg).to.include('set REDIS_TLS_CA');
  });

  it('redis:// to the TLS port fails the start naming REDIS_URL', async () => {
    const line = failure(
      await runToExit(clusterEnv({ REDIS_URL: redis?.url.replace('rediss:', 'redis:') ?? '', REDIS_TLS_CA: '' })),
    );
    expect(line.setting).to.equal('REDIS_URL');
    expect(line.msg).to.match(/^cannot reach Redis/);
  });

  it('rediss:// to a Redis that does not speak TLS fails the start naming REDIS_URL, saying what to try', async () => {
    // the suite's plain Redis: it reads the TLS hello as an unfinished command and never answers it
    const line = failure(
      await runToExit(clusterEnv({ REDIS_URL: PLAIN_REDIS_URL.replace(/^redis:/, 'rediss:'), REDIS_TLS_CA: '' })),
    );
    expect(line.setting).to.equal('REDIS_URL');
    expect(line.msg).to.match(/^cannot reach Redis/);
    expect(line.msg, String(line.msg)).to.include('if the server does not speak TLS, use redis://');
  });

  it('a refused connection fails the start in seconds naming DATABASE_URL', async () => {
    const line = failure(await runToExit(clusterEnv({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/postgres' })));
    expect(line.setting).to.equal('DATABASE_URL');
    expect(line.msg).to.include('ECONNREFUSED');
  });
});
