import { expect } from 'chai';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { PG_URL, REDIS_URL, tempSchema, tempSqlite, uniqueName } from '../support/databases.js';
import { deleteRedisPrefix } from '../support/platforms.js';

/** The checkout: dist/test/embedded -> the repository root (README.md, package.json, dist/). */
const ROOT = resolve(import.meta.dirname, '../../..');

/**
 * The README's commands run as written (docs: README "Quick start", "Using it", "Running a
 * cluster"), in a shell, against the servers they start. What a test must change is said where
 * it is changed: the ports (free ones instead of 3000-3003), the database (a temporary SQLite
 * file, a temporary PostgreSQL schema) and the Redis key prefix, so that runs do not collide, and
 * the cluster recipe's `npm run build`, done already by the run.
 */
describe('README: its commands, run as written', function () {
  this.timeout(120_000);
  const readme = readFileSync(resolve(ROOT, 'README.md'), 'utf8');
  const started: ChildProcess[] = [];
  after(() => {
    // each block ran in its own process group: the background processes it started go with it
    for (const child of started) if (child.pid) process.kill(-child.pid, 'SIGTERM');
  });

  /** The indented code block (4 spaces) whose first line starts with `first`. */
  function block(first: string): string {
    const lines = readme.split('\n');
    const at = lines.findIndex((l) => l.startsWith(`    ${first}`));
    expect(at, `README has no code block starting with "${first}"`).to.be.greaterThan(-1);
    const out: string[] = [];
    for (let i = at; i < lines.length && lines[i]?.startsWith('    '); i += 1) out.push(lines[i]?.slice(4) ?? '');
    return out.join('\n');
  }

  const freePort = (): Promise<number> =>
    new Promise((done, fail) => {
      const server = createServer();
      server.once('error', fail);
      server.listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => done(typeof address === 'object' && address ? address.port : 0));
      });
    });

  /** Runs a block in bash in the checkout, in the background (its own process group). */
  function background(script: string, env: Record<string, string>): ChildProcess {
    const child = spawn('bash', ['-c', `${script}\nwait`], {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'warn', ...env },
      stdio: 'ignore',
      detached: true,
    });
    started.push(child);
    return child;
  }

  /** Runs a block in bash in the checkout and returns what it printed. */
  function run(script: string, env: Record<string, string>): string {
    const result = spawnSync('bash', ['-c', script], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status, `${script}\n${result.stderr}`).to.equal(0);
    return result.stdout;
  }

  async function ready(port: number): Promise<void> {
    const until = Date.now() + 90_000;
    while (Date.now() < until) {
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`)
        .then((r) => r.ok)
        .catch(() => false);
      if (ok) return;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`nothing ready on port ${port}`);
  }

  it('quick start: npm start with an exported key; a charger registered with curl; a partner onboarded with the script', async () => {
    const port = await freePort();
    const db = tempSqlite();
    const quick = block('export CSMS_API_KEY=');
    expect(quick).to.contain('npm start');
    // the key the block exports is used by the commands that follow: one shell's key, here ours
    const key = 'k'.repeat(16) + uniqueName('r');
    background(quick.replace(/export CSMS_API_KEY=.*$/m, `export CSMS_API_KEY=${key}`), {
      PORT: String(port),
      DATABASE_URL: db.url,
    });
    await ready(port);
    const env = { CSMS_API_KEY: key, PORT: String(port) };

    const curl = block('curl -X POST localhost:3000/v1/charge-points').replaceAll(
      'localhost:3000',
      `localhost:${port}`,
    );
    const registered = JSON.parse(run(curl, env)) as { id: string; ocpp_url: string; password: string };
    expect(registered).to.include({ id: 'CP-1' });
    expect(registered.ocpp_url).to.match(/^ws:\/\/localhost:\d+\/ocpp\/CP-1$/);
    expect(registered.password).to.match(/^[A-Za-z0-9]{20}$/);

    const onboarded = JSON.parse(run(block('node dist/scripts/ocpi-partners.js onboard'), env)) as {
      token: string;
      versions_url: string;
    };
    expect(onboarded.versions_url).to.match(/\/ocpi\/cpo\/versions$/);
    expect(onboarded.token).to.be.a('string');
    db.cleanup();
  });

  it('running a cluster: release phase, two web processes and a worker on PostgreSQL and Redis', async () => {
    const schema = await tempSchema();
    const prefix = uniqueName('readme');
    const [web1, web2, worker] = [await freePort(), await freePort(), await freePort()];
    const recipe = block('export DATABASE_URL=')
      .replace(/^export DATABASE_URL=\S+ REDIS_URL=\S+/m, `export DATABASE_URL=${PG_URL} REDIS_URL=${REDIS_URL}`)
      // the suite runs from this checkout's build: building again would rewrite dist/ under other tests
      .replace(/^npm run build$/m, ': npm run build')
      .replace('PORT=3001', `PORT=${web1}`)
      .replace('PORT=3002', `PORT=${web2}`)
      .replace('PORT=3003', `PORT=${worker}`);
    expect(recipe).to.contain('npm run migrate');
    try {
      background(recipe, { DATABASE_SCHEMA: schema.schema, REDIS_PREFIX: prefix });
      await Promise.all([ready(web1), ready(web2), ready(worker)]);
      const key = 'change-me-to-a-long-random-key';
      const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
      const created = await fetch(`http://127.0.0.1:${web1}/v1/charge-points`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ id: 'CP-CLUSTER', protocol: 'ocpp2.0.1' }),
      });
      expect(created.status).to.equal(201);
      const seen = await fetch(`http://127.0.0.1:${web2}/v1/charge-points/CP-CLUSTER`, { headers });
      expect(seen.status).to.equal(200);
    } finally {
      for (const child of started.splice(0)) if (child.pid) process.kill(-child.pid, 'SIGTERM');
      await new Promise((r) => setTimeout(r, 1_000));
      await schema.drop();
      await deleteRedisPrefix(prefix);
    }
  });
});
