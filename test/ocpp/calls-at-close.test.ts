import { expect } from 'chai';
import pino from 'pino';
import { API_KEY, startCsms, type CsmsUnderTest } from './support/csms.js';
import { connectedCharger } from './support/scenario.js';
import { embeddedEnvironment, type TestEnvironment } from '../support/platforms.js';

/**
 * A charger whose connection ends while its calls are handled (it leaves, or is cut off for not
 * reading what it is sent: src/ocpp/connection.ts `dropUnread`): its calls in flight end with it,
 * logged at debug, not as an error per call (which let any charger raise error alerts at will).
 */
describe('OCPP: the calls of a charger whose connection ends', function () {
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
    it(`${protocol}: a charger that leaves with calls in flight logs no error for them`, async () => {
      const { charger } = await connectedCharger(csms, protocol);
      const since = lines.length;
      const data = { vendorId: 'V', data: 'x'.repeat(2_000) };
      for (let n = 0; n < 200; n++) charger.ws.send(JSON.stringify([2, `g${n}`, 'DataTransfer', data]));
      await new Promise((resolve) => setTimeout(resolve, 5));
      charger.ws.terminate();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(
        lines
          .slice(since)
          .filter((l) => l.level >= 50)
          .map((l) => l.msg),
      ).to.deep.equal([]);
    });
  }
});
