import { expect } from 'chai';
import pino from 'pino';
import { COMMAND_EXPIRY_MS } from '../../actors/charge-point/protocol.js';
import { v16 } from './support/messages.js';
import { API_KEY, startCsms, type CsmsUnderTest } from './support/csms.js';
import { connect } from './support/charger.js';
import { connectedCharger, eventually } from './support/scenario.js';
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

  it('a call queued past its expiry behind one the charger leaves unanswered: expired at its time, when read and once dropped', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    await charger.call('BootNotification', v16.boot());
    type Command = { command_id: string; status: string; updated_at: string };
    const press = async (op: string, body: unknown) =>
      (await csms.api<{ command_id: string }>('POST', `/v1/charge-points/${cp.id}/${op}?wait_ms=0`, body)).body;
    const read = async (id: string) =>
      (await csms.api<Command>('GET', `/v1/charge-points/${cp.id}/commands/${id}`)).body;
    await press('clear-cache', {});
    const held = await charger.csmsCall('ClearCache');
    const reset = await press('reset', { type: 'soft' });
    const realNow = Date.now;
    // the process's clock 5 s past the reset's expiry (no test waits two minutes)
    Date.now = () => realNow() + COMMAND_EXPIRY_MS + 5000;
    try {
      const before = await read(reset.command_id);
      expect(before.status).to.equal('expired');
      // the charger answers the call ahead: the queue moves and drops the reset, never sent
      charger.ws.send(JSON.stringify([3, held.id, { status: 'Accepted' }]));
      await eventually(async () => ((await read(reset.command_id)).status === 'expired' ? true : undefined));
      await eventually(async () => {
        const view = await csms.api<{ commands: Command[] }>('GET', `/v1/charge-points/${cp.id}`);
        return view.body.commands.every((c) => c.status !== 'queued' && c.status !== 'sent') ? true : undefined;
      });
      const after = await read(reset.command_id);
      // was the moment the queue moved: the record changed again with the same status
      expect(Math.abs(Date.parse(after.updated_at) - Date.parse(before.updated_at))).to.be.below(100);
      expect(charger.csmsCalls.map((c) => c.action)).to.deep.equal(['ClearCache']);
    } finally {
      Date.now = realNow;
    }
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

    it(`${protocol}: a call left unanswered on a connection that a newer one replaced says so`, async () => {
      const { cp, charger } = await connectedCharger(csms, protocol);
      const sent = await csms.api<{ command_id: string }>(
        'POST',
        `/v1/charge-points/${cp.id}/clear-cache?wait_ms=0`,
        {},
      );
      expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
      await charger.csmsCall('ClearCache');
      // the same charger again (a reboot whose old socket the network has not closed yet)
      const newer = await connect({
        url: cp.ocpp_url,
        username: cp.username,
        password: cp.password,
        protocols: [protocol],
      });
      try {
        const record = await eventually(async () => {
          const view = await csms.api<{
            commands: Array<{ command_id: string; status: string; detail: string | null }>;
          }>('GET', `/v1/charge-points/${cp.id}`);
          const c = view.body.commands.find((x) => x.command_id === sent.body.command_id);
          return c?.status === 'failed' ? c : undefined;
        });
        // was the bare "connection closed before the answer": a second connection looked like a drop
        expect(record.detail).to.equal(
          'connection closed before the answer (the charger connected again before it answered)',
        );
        expect(await charger.closed).to.equal(4000);
      } finally {
        newer.ws.terminate();
      }
    });
  }
});
