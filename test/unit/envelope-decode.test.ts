import { expect } from 'chai';
import { decodeEnvelope, InProcessTransport, type Envelope } from '../../src/runtime/transport.js';

/**
 * Envelopes from Redis were published by another process (or by anything that can publish to
 * the inbox channel): they are checked before the runtime sees them, and one that fails is an
 * error the transport logs and drops.
 */
describe('transport envelopes', () => {
  it('reads every kind of envelope, and a call whose undefined message JSON left out', () => {
    const envelopes: Envelope[] = [
      { t: 'call', id: 'a1', from: 'p1', to: 'counter/x', msg: { op: 'inc' }, ask: true, hops: 0 },
      { t: 'reply', id: 'a1', ok: true, value: 3 },
      { t: 'reply', id: 'a1', ok: false, error: { name: 'AskTimeoutError', code: 'ASK_TIMEOUT', message: 'late' } },
      { t: 'wake', to: 'counter/x' },
      { t: 'unpin', to: 'charge-point/CP-1', epoch: 7 },
    ];
    for (const env of envelopes) expect(decodeEnvelope(JSON.stringify(env))).to.deep.equal(env);
    expect(decodeEnvelope('{"t":"call","id":"","from":"p1","to":"counter/x","ask":false,"hops":1}')).to.deep.equal({
      t: 'call',
      id: '',
      from: 'p1',
      to: 'counter/x',
      ask: false,
      hops: 1,
    });
  });

  it('refuses text that is not JSON or not an envelope', () => {
    for (const text of [
      'not json',
      'null',
      '[]',
      '{"t":"shout","to":"counter/x"}',
      '{"t":"wake"}',
      '{"t":"unpin","to":"charge-point/CP-1","epoch":"7"}',
      '{"t":"reply","id":"a1","ok":false}',
      '{"t":"call","id":"a1","from":"p1","to":"counter/x","ask":"yes","hops":0}',
    ]) {
      expect(() => decodeEnvelope(text), text).to.throw();
    }
  });

  it('in one process, hands over a JSON copy of what was sent', async () => {
    const transport = new InProcessTransport();
    const got: Envelope[] = [];
    await transport.start('me', (env) => got.push(env));
    const sent: Envelope = { t: 'reply', id: 'a2', ok: true, value: { at: new Date(0), skip: undefined } };
    expect(await transport.send('me', sent)).to.equal(true);
    expect(await transport.send('someone-else', sent)).to.equal(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(got).to.deep.equal([{ t: 'reply', id: 'a2', ok: true, value: { at: '1970-01-01T00:00:00.000Z' } }]);
    await transport.stop();
  });
});
