import { expect } from 'chai';
import { Redis } from 'ioredis';
import { REDIS_URL } from '../support/databases.js';
import { eventually } from '../support/eventually.js';
import { clusterEnvironment, startPlatform, type StartedPlatform, type TestEnvironment } from '../support/platforms.js';
import { testActorsModule } from '../support/test-actors.js';

/**
 * A sender re-sends an ask, under the same id, when it believes the owner gone (its membership
 * lapsed). If the owner was alive after all, the turn must not run twice: the owner joins the
 * running turn or answers from memory. Driven at the wire: envelopes published to the owner's
 * inbox by a raw Redis client standing in for another process.
 */
describe('cluster: an ask re-sent under the same id runs once', function () {
  this.timeout(30_000);
  let env: TestEnvironment;
  let p: StartedPlatform;
  let pub: Redis;
  let sub: Redis;
  const replies: Array<{ id: string; ok: boolean; value?: unknown }> = [];

  before(async () => {
    env = await clusterEnvironment();
    p = await startPlatform(env, [testActorsModule()]);
    pub = new Redis(REDIS_URL);
    sub = new Redis(REDIS_URL);
    sub.on('message', (_channel: string, text: string) =>
      replies.push(JSON.parse(text) as { id: string; ok: boolean; value?: unknown }),
    );
    await sub.subscribe(`${env.env.REDIS_PREFIX}:inbox:stand-in`);
  });

  after(async () => {
    sub?.disconnect();
    pub?.disconnect();
    await p?.stop();
    await env?.cleanup();
  });

  async function send(id: string, msg: unknown): Promise<void> {
    const call = { t: 'call', id, from: 'stand-in', to: 'counter/resent', msg, ask: true, hops: 0 };
    const receivers = await pub.publish(
      `${env.env.REDIS_PREFIX}:inbox:${p.platform.services.actors.processId}`,
      JSON.stringify(call),
    );
    expect(receivers).to.equal(1);
  }

  const repliesTo = (id: string) => replies.filter((r) => r.id === id);

  it('joins a turn still running and answers a finished one from memory', async () => {
    await send('ask-1', { op: 'inc', work_ms: 300 });
    await send('ask-1', { op: 'inc', work_ms: 300 });
    await eventually(async () => (repliesTo('ask-1').length === 2 ? true : undefined), {
      what: 'two replies to ask-1',
    });
    await send('ask-1', { op: 'inc', work_ms: 300 });
    await eventually(async () => (repliesTo('ask-1').length === 3 ? true : undefined), {
      what: 'a third reply to ask-1',
    });
    expect(repliesTo('ask-1').map((r) => r.value)).to.deep.equal([1, 1, 1]);
    // a new ask id is a new ask
    await send('ask-2', { op: 'inc' });
    await eventually(async () => (repliesTo('ask-2').length === 1 ? true : undefined), { what: 'a reply to ask-2' });
    expect(repliesTo('ask-2')[0]?.value).to.equal(2);
  });

  it('remembers the last 10,000 answered asks: past that the oldest runs again, a recent one is still answered from memory', async () => {
    await send('old', { op: 'inc' });
    await eventually(async () => (repliesTo('old').length === 1 ? true : undefined), { what: 'a reply to old' });
    const before = Number(repliesTo('old')[0]?.value);
    const fills = 10_000;
    const call = (id: string) =>
      JSON.stringify({ t: 'call', id, from: 'stand-in', to: 'counter/resent', msg: { op: 'get' }, ask: true, hops: 0 });
    const inbox = `${env.env.REDIS_PREFIX}:inbox:${p.platform.services.actors.processId}`;
    // in rounds of 1,000, each answered before the next: one burst of 10,000 envelopes on a
    // starved machine can hold the event loop past the shard's lease (the test is about memory)
    const round = 1000;
    for (let start = 0; start < fills; start += round) {
      const pipeline = pub.pipeline();
      for (let i = start; i < start + round; i++) pipeline.publish(inbox, call(`fill-${i}`));
      await pipeline.exec();
      await eventually(
        async () => (replies.filter((r) => r.id.startsWith('fill-')).length === start + round ? true : undefined),
        { what: `${start + round} replies`, timeoutMs: 20_000 },
      );
    }
    expect(replies.filter((r) => r.id.startsWith('fill-') && !r.ok)).to.deep.equal([]);
    const countIn = (r: { value?: unknown } | undefined): unknown =>
      (r?.value as { count?: unknown } | undefined)?.count;
    const last = repliesTo(`fill-${fills - 1}`)[0];
    expect(countIn(last), JSON.stringify(last)).to.equal(before);

    // forgotten: it runs again and counts once more
    await send('old', { op: 'inc' });
    await eventually(async () => (repliesTo('old').length === 2 ? true : undefined), { what: 'a second reply to old' });
    expect(repliesTo('old')[1]?.value).to.equal(before + 1);
    // remembered: the answer it had, not the count now
    await send(`fill-${fills - 1}`, { op: 'get' });
    await eventually(async () => (repliesTo(`fill-${fills - 1}`).length === 2 ? true : undefined), {
      what: 'a second reply to the last fill',
    });
    expect(countIn(repliesTo(`fill-${fills - 1}`)[1])).to.equal(before);
  });
});
