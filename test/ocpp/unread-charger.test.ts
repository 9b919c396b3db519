import { expect } from 'chai';
import pino from 'pino';
import { API_KEY, startCsms, type CsmsUnderTest } from './support/csms.js';
import { connectedCharger } from './support/scenario.js';
import { eventually } from '../support/eventually.js';
import { embeddedEnvironment, type TestEnvironment } from '../support/platforms.js';

/**
 * A charger that sends and never reads its answers is cut off once about 1 MB waits unsent
 * (MAX_UNSENT_BYTES, src/ocpp/connection.ts). What it still had in flight ends with it: that is
 * logged once, at warn, not as an error per call (which let any charger raise error alerts).
 */
describe('OCPP: a charger that does not read what it is sent', function () {
  this.timeout(30_000);
  const lines: Array<{ level: number; msg: string }> = [];
  let csms: CsmsUnderTest;
  let env: TestEnvironment;

  before(async () => {
    env = await embeddedEnvironment({ CSMS_API_KEY: API_KEY });
    const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    csms = await startCsms({}, env, [], log);
  });
  after(async () => {
    await csms.stop();
    await env.cleanup();
  });

  for (const protocol of ['ocpp1.6', 'ocpp2.0.1'] as const) {
    it(`${protocol}: is cut off with one warning; its calls in flight log no error; another charger is answered`, async () => {
      const { charger } = await connectedCharger(csms, protocol);
      const { charger: other } = await connectedCharger(csms, protocol);
      const since = lines.length;
      const socket = (charger.ws as unknown as { _socket: { pause(): void } })._socket;
      socket.pause();
      const data = { vendorId: 'V', data: 'x'.repeat(2_000) };
      // small answers, and the calls keep coming while the unread socket fills
      let i = 0;
      const flood = setInterval(() => {
        for (let n = 0; n < 500 && charger.ws.readyState === charger.ws.OPEN; n++)
          charger.ws.send(JSON.stringify([2, `f${i++}`, 'DataTransfer', data]));
      }, 5);
      try {
        await eventually(async () => (charger.ws.readyState === charger.ws.CLOSED ? true : undefined), {
          timeoutMs: 20_000,
          what: 'the flooding charger cut off',
        });
      } finally {
        clearInterval(flood);
      }
      const heartbeat = await other.callFrame('Heartbeat', {});
      expect(heartbeat[0]).to.equal(3);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const mine = lines.slice(since);
      expect(mine.filter((l) => l.msg === 'charger does not read what it is sent: connection ended')).to.have.length(1);
      expect(mine.filter((l) => l.level >= 50).map((l) => l.msg)).to.deep.equal([]);
    });
  }
});
