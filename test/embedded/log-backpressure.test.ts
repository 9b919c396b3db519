import { createInterface } from 'node:readline';
import { expect } from 'chai';
import { embeddedEnvironment, type TestEnvironment } from '../support/platforms.js';
import { startNode, type NodeProcess } from '../support/processes.js';
import { eventually } from '../support/eventually.js';

const KEY = 'log-backpressure-operator-key';
const DROPPED = 'log lines dropped: stdout was not read fast enough';

/** `n` requests, 16 at a time, each logged with one line; their statuses. */
async function requests(p: NodeProcess, n: number): Promise<number[]> {
  const statuses: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < n) {
        next += 1;
        const res = await fetch(`${p.url}/v1/charge-points?limit=1`, { headers: { authorization: `Bearer ${KEY}` } });
        await res.arrayBuffer();
        statuses.push(res.status);
      }
    }),
  );
  return statuses;
}

/** How long /healthz takes to answer, in ms. */
async function healthMs(p: NodeProcess): Promise<number> {
  const t = performance.now();
  const res = await fetch(`${p.url}/healthz`);
  expect(res.status).to.equal(200);
  return performance.now() - t;
}

/**
 * A platform process whose stdout nobody reads (a stalled log drain): it keeps serving, holds at
 * most LOG_BUFFER_BYTES of lines and says how many it dropped once read again, and a SIGTERM
 * still ends it (docs/OPERATIONS.md "Signals").
 */
describe('logs: a stdout nobody reads', function () {
  this.timeout(90_000);
  let env: TestEnvironment;
  let p: NodeProcess;
  /** stdout lines that are not whole JSON objects */
  const raw = { broken: 0 };

  before(async () => {
    env = await embeddedEnvironment();
    p = await startNode({ ...env.env, CSMS_API_KEY: KEY, LOG_BUFFER_BYTES: '64kb' });
    createInterface({ input: p.child.stdout! }).on('line', (line) => {
      try {
        JSON.parse(line);
      } catch {
        raw.broken += 1;
      }
    });
  });
  after(async () => {
    if (p.child.exitCode === null && p.child.signalCode === null) p.signal('SIGKILL');
    await env.cleanup();
  });

  /** SIGTERM: the exit code, or 'hung' after 15 s; and how long it took. */
  async function terminate(proc: NodeProcess): Promise<{ code: number | null | 'hung'; ms: number }> {
    const t = Date.now();
    proc.signal('SIGTERM');
    const code = await Promise.race([proc.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000))]);
    return { code, ms: Date.now() - t };
  }

  it('serves on while stdout is stalled, then reports the lines it dropped', async () => {
    p.child.stdout?.pause();
    // ~250 bytes a line: a 64 KB pipe and a 64 KB buffer are full long before 3,000 lines
    const statuses = await requests(p, 3000);
    expect(statuses.filter((s) => s !== 200)).to.deep.equal([]);
    expect(await healthMs(p)).to.be.below(1000);
    p.child.stdout?.resume();
    // one notice per second with the count since the last; the first may have found room during the stall
    const notices = (): Array<Record<string, unknown>> => p.logs.filter((l) => l.msg === DROPPED);
    const dropped = (): number => notices().reduce((sum, l) => sum + Number(l.dropped), 0);
    await eventually(() => Promise.resolve(dropped() > 100 ? true : undefined), {
      timeoutMs: 10_000,
      what: 'notices of more than 100 dropped lines',
    });
    for (const notice of notices()) {
      expect(notice).to.include({ level: 40, role: 'all', max_buffer_bytes: 64 * 1024 });
      expect(notice.pid).to.equal(p.pid);
    }
    // what was kept arrives whole and in order
    expect(raw.broken).to.equal(0);
    const times = p.logs.filter((l) => l.msg === 'request').map((l) => String(l.time));
    expect(times.length).to.be.above(100);
    expect(times).to.deep.equal([...times].sort());
  });

  it('ends on SIGTERM within a few seconds even with stdout stalled', async () => {
    p.child.stdout?.pause();
    expect((await requests(p, 2000)).filter((s) => s !== 200)).to.deep.equal([]);
    const { code, ms } = await terminate(p);
    expect(code).to.equal(0);
    // the shutdown, then at most EXIT_FLUSH_MS (2 s) for the lines still held
    expect(ms).to.be.below(10_000);
  });

  it('goes on serving, and ends on SIGTERM, once the reader of stdout is gone (a broken pipe)', async () => {
    const q = await startNode({ ...env.env, CSMS_API_KEY: KEY });
    try {
      q.child.stdout?.destroy();
      expect((await requests(q, 300)).filter((s) => s !== 200)).to.deep.equal([]);
      expect(await healthMs(q)).to.be.below(1000);
      const { code, ms } = await terminate(q);
      expect(code).to.equal(0);
      expect(ms).to.be.below(10_000);
    } finally {
      if (q.child.exitCode === null && q.child.signalCode === null) q.signal('SIGKILL');
    }
  });
});
