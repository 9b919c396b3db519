import { expect } from 'chai';
import pino from 'pino';
import type { TestCharger } from './support/charger.js';
import { API_KEY, startCsms, type CsmsUnderTest, type RegisteredChargePoint } from './support/csms.js';
import { embeddedEnvironment } from '../support/platforms.js';
import { v16 } from './support/messages.js';
import { encodeFrame, RawClient } from './support/raw-socket.js';
import { connectedCharger, eventually } from './support/scenario.js';

/**
 * Issue 7, "one frame kills the process": a charger with valid credentials sends a WebSocket
 * frame that `ws` rejects. Only that connection may end, with the close code RFC 6455 section
 * 7.4.1 gives the fault; the process, its HTTP side and every other charger carry on.
 */
describe('OCPP endpoint: a bad WebSocket frame closes only its own connection', () => {
  let csms: CsmsUnderTest;
  let port: number;
  let other: { cp: RegisteredChargePoint; charger: TestCharger };
  before(async () => {
    csms = await startCsms();
    port = Number(new URL(csms.url).port);
    other = await connectedCharger(csms, 'ocpp1.6');
    other.charger.answers = { RemoteStartTransaction: { status: 'Accepted' } };
    await other.charger.call('BootNotification', v16.boot());
  });
  after(async () => {
    await other.charger.close();
    await csms.stop();
  });

  /** A raw socket logged in as `cp`, in the protocol it was registered with. */
  const upgradedAs = (cp: RegisteredChargePoint): Promise<RawClient> =>
    RawClient.upgraded(port, `/ocpp/${cp.id}`, { protocol: cp.protocol, user: cp.username, password: cp.password });

  const cases: Array<{ what: string; frames: Buffer[]; code: number }> = [
    {
      what: 'invalid UTF-8 in a text frame',
      frames: [encodeFrame({ opcode: 1, payload: Buffer.from([0x5b, 0xc3, 0x28, 0x5d]) })],
      code: 1007,
    },
    { what: 'a reserved opcode', frames: [encodeFrame({ opcode: 3, payload: '[]' })], code: 1002 },
    {
      what: 'a length over the frame limit',
      frames: [encodeFrame({ opcode: 1, payload: '[', declaredLength: 1024n * 1024n })],
      code: 1009,
    },
    {
      what: 'a length over 2^53',
      frames: [encodeFrame({ opcode: 2, payload: 'x', declaredLength: 2n ** 62n })],
      code: 1009,
    },
    { what: 'an unmasked frame', frames: [encodeFrame({ opcode: 1, payload: '[]', masked: false })], code: 1002 },
    { what: 'a fragmented ping', frames: [encodeFrame({ opcode: 9, payload: 'p', fin: false })], code: 1002 },
    { what: 'RSV1 without an extension', frames: [encodeFrame({ opcode: 1, payload: '[]', rsv: 0b100 })], code: 1002 },
    {
      what: 'a continuation with nothing to continue',
      frames: [encodeFrame({ opcode: 0, payload: '[]' })],
      code: 1002,
    },
    {
      what: 'invalid UTF-8 split across fragments',
      frames: [
        encodeFrame({ opcode: 1, payload: Buffer.from([0x5b, 0xe2]), fin: false }),
        encodeFrame({ opcode: 0, payload: Buffer.from([0x28, 0xa1]) }),
      ],
      code: 1007,
    },
  ];

  for (const c of cases) {
    it(`closes the connection with ${c.code} on ${c.what}; /healthz and another charger carry on`, async () => {
      const cp = await csms.registerChargePoint('ocpp2.0.1');
      const raw = await upgradedAs(cp);
      for (const f of c.frames) raw.write(f);
      expect(await raw.closeCode()).to.equal(c.code);
      raw.destroy();
      expect((await fetch(`${csms.url}/healthz`)).status).to.equal(200);
      expect(await other.charger.call('Heartbeat', {})).to.have.property('currentTime');
    });
  }

  it('answers pings with pongs, and ends a connection that sends more than 60 pings in one read; the rest carries on', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const polite = await upgradedAs(cp);
    polite.write(Buffer.concat(Array.from({ length: 60 }, () => encodeFrame({ opcode: 9, payload: 'p' }))));
    const pongs = (raw: RawClient): number => raw.opcodes().filter((o) => o === 10).length;
    await eventually(async () => (pongs(polite) === 60 ? true : undefined));
    await new Promise((r) => setTimeout(r, 200));
    expect(polite.closed).to.equal(false);
    polite.destroy();
    // ws's own guard (maxPendingAutoPongs, 60): pongs the socket has not taken yet past that end the connection, without a close frame
    const flood = await upgradedAs(cp);
    flood.write(Buffer.concat(Array.from({ length: 1000 }, () => encodeFrame({ opcode: 9, payload: 'p' }))));
    expect(await flood.closeCode()).to.equal('none');
    expect(pongs(flood)).to.be.at.most(60);
    expect((await fetch(`${csms.url}/healthz`)).status).to.equal(200);
    expect(await other.charger.call('Heartbeat', {})).to.have.property('currentTime');
  });

  it('ends the connection of a charger that sends and never reads, before what it is not reading piles up', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const raw = await upgradedAs(cp);
    const online = async (): Promise<boolean> =>
      ((await csms.api<{ online: boolean }>('GET', `/v1/charge-points/${cp.id}`)).body as { online: boolean }).online;
    expect(await online()).to.equal(true);
    // it reads nothing more; each 1-byte binary frame is answered with a CALLERROR of ~60 bytes
    raw.socket.pause();
    const frames = Buffer.concat(Array.from({ length: 1000 }, () => encodeFrame({ opcode: 2, payload: 'x' })));
    const until = Date.now() + 30_000;
    let ended = false;
    for (let sent = 0; !ended && sent < 2_000_000 && Date.now() < until; sent += 1000) {
      raw.write(frames);
      await new Promise((r) => setImmediate(r));
      if (sent % 50_000 === 0) ended = !(await online());
    }
    await eventually(async () => ((await online()) ? undefined : true), 10_000);
    raw.destroy();
    expect((await fetch(`${csms.url}/healthz`)).status).to.equal(200);
    expect(await other.charger.call('Heartbeat', {})).to.have.property('currentTime');
  });

  it("answers a frame with a CALLERROR within the frame limit, however much of the charger's frame its details would quote", async () => {
    const cp = await csms.registerChargePoint('ocpp2.0.1');
    const raw = await upgradedAs(cp);
    // a NUL under a key of 200,000 slashes: the details' path quoted it, escaped to twice its size
    const payload = JSON.stringify([
      2,
      'x',
      'DataTransfer',
      { vendorId: 'v', data: { ['/'.repeat(200_000)]: '\u0000' } },
    ]);
    raw.write(encodeFrame({ opcode: 1, payload }));
    const [reply] = await eventually(async () => (raw.texts().length > 0 ? raw.texts() : undefined));
    expect(reply?.length).to.be.below(4096);
    expect(JSON.parse(reply ?? '[]')).to.have.nested.property('[0]', 4);
    raw.destroy();
  });

  it('keeps the other charger usable end to end: a remote start still reaches it', async () => {
    const from = other.charger.received.length;
    const res = await csms.api('POST', `/v1/charge-points/${other.cp.id}/remote-start`, {
      id_tag: 'TAG-1',
      connector_id: 1,
    });
    expect(res.status).to.equal(200);
    const call = await other.charger.waitFor((f) => f[0] === 2 && f[2] === 'RemoteStartTransaction', 5000, from);
    expect(call[3]).to.include({ idTag: 'TAG-1' });
  });
});

describe('OCPP endpoint: OCPP_MAX_MESSAGE_KB sets the largest message a charger may send', () => {
  let csms: CsmsUnderTest;
  const lines: Array<Record<string, unknown>> = [];
  before(async () => {
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const env = await embeddedEnvironment({ CSMS_API_KEY: API_KEY, OCPP_MAX_MESSAGE_KB: '1024' });
    csms = await startCsms({}, env, [], log);
  });
  after(async () => {
    await csms.stop();
  });

  it('answers a 2.0.1 NotifyReport of 600 KiB when raised to 1024, and closes one over it with 1009', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp2.0.1');
    const variable = (i: number) => ({
      component: { name: 'Vendor', instance: `part-${i}` },
      variable: { name: 'Note' },
      variableAttribute: [{ type: 'Actual', value: 'x'.repeat(900), mutability: 'ReadOnly' }],
    });
    const report = (n: number) => ({
      requestId: 1,
      generatedAt: new Date().toISOString(),
      seqNo: 0,
      reportData: Array.from({ length: n }, (_, i) => variable(i)),
    });
    expect(JSON.stringify(report(600)).length).to.be.above(256 * 1024 * 2);
    expect(await charger.call('NotifyReport', report(600))).to.deep.equal({});
    const model = await csms.api<{ variables: unknown[] }>('GET', `/v1/charge-points/${cp.id}/device-model`);
    expect(model.body.variables).to.have.length(600);
    // no answer comes: the connection closes
    void charger.call('NotifyReport', report(1200)).catch(() => undefined);
    expect(await eventually(async () => charger.closeCode)).to.equal(1009);
    // the operator is told which setting lets it in
    const told = lines.find((l) => l.msg === 'charger sent a message over OCPP_MAX_MESSAGE_KB');
    expect(told).to.include({ level: 40, charge_point: cp.id, max_message_kb: 1024 });
  });
});
