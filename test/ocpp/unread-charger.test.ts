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

  for (const protocol of ['ocpp1.6', 'ocpp2.0.1'] as const) {
    it(`${protocol}: is cut off with one warning; its calls in flight log no error; another charger is answered`, async () => {
      const { charger } = await connectedCharger(csms, protocol);
      const { charger: other } = await connectedCharger(csms, protocol);
      const since = lines.length;
      const socket = (charger.ws as unknown as { _socket: { pause(): void } })._socket;
      socket.pause();
      // unreadable frames of 3 bytes are answered with a CALLERROR of about 100, so the answers
      // outgrow what the calls take; calls that reach the actor are in flight at the cut. Sent
      // only while the client's own buffer is short: a flood without it queued gigabytes here
      const burst = [...Array<string>(200).fill('[2,'), ...Array<string>(20).fill('')].map((frame, n) =>
        frame === '' ? JSON.stringify([2, `d${n}`, 'DataTransfer', { vendorId: 'V' }]) : frame,
      );
      const flood = setInterval(() => {
        for (let n = 0; n < 20 && charger.ws.readyState === charger.ws.OPEN && charger.ws.bufferedAmount < 262_144; n++)
          for (const frame of burst) charger.ws.send(frame);
      }, 2);
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
