import { randomBytes } from 'node:crypto';
import { request, type IncomingHttpHeaders } from 'node:http';
import { expect } from 'chai';
import WebSocket from 'ws';
import { connect, tryConnect, type Frame, type TestCharger } from './support/charger.js';
import { startCsms, type CsmsUnderTest, type RegisteredChargePoint } from './support/csms.js';
import { v16, v201 } from './support/messages.js';
import { connectedCharger, eventually } from './support/scenario.js';

/**
 * A WebSocket upgrade on a raw socket, as a charger's own stack sends it: the answer's status and
 * headers, and the first frame the server sends after a 101 when it is a close (code, reason).
 */
function rawUpgrade(
  url: string,
  username: string,
  password: string,
  protocols: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; close?: { code: number; reason: string } }> {
  return new Promise((resolve, reject) => {
    const req = request(url.replace(/^ws/, 'http'), {
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        'Sec-WebSocket-Protocol': protocols,
        Authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
      },
    });
    req.on('response', (res) => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    req.on('upgrade', (res, socket, head) => {
      let bytes = head;
      const read = (): void => {
        // a close frame from the server: 0x88, an unmasked length under 126, the code, the reason
        if (bytes.length < 2 || bytes.length < 2 + (bytes[1] ?? 0)) return;
        socket.destroy();
        const close =
          bytes[0] === 0x88
            ? { code: bytes.readUInt16BE(2), reason: bytes.subarray(4, 2 + (bytes[1] ?? 0)).toString() }
            : undefined;
        resolve({ status: res.statusCode ?? 0, headers: res.headers, ...(close ? { close } : {}) });
      };
      socket.on('data', (chunk: Buffer) => {
        bytes = Buffer.concat([bytes, chunk]);
        read();
      });
      socket.on('error', reject);
      read();
    });
    req.on('error', reject);
    req.end();
  });
}

function errorCode(f: Frame): string {
  if (f[0] !== 4) throw new Error(`expected a CALLERROR, got ${JSON.stringify(f)}`);
  return f[2];
}

describe('OCPP endpoint: the upgrade, bad frames and CALLERRORs', () => {
  let csms: CsmsUnderTest;
  before(async () => {
    csms = await startCsms({ pingIntervalMs: 200 });
  });
  after(async () => csms.stop());

  describe('at the upgrade', () => {
    let cp: RegisteredChargePoint;
    before(async () => {
      cp = await csms.registerChargePoint('ocpp2.0.1');
    });

    it('refuses an unknown identity, a wrong password and a missing Authorization with 401', async () => {
      const unknown = await tryConnect({
        url: cp.ocpp_url.replace(cp.id, 'UNKNOWN-1'),
        username: 'UNKNOWN-1',
        password: cp.password,
        protocols: ['ocpp2.0.1'],
      });
      expect(unknown).to.deep.equal({ ok: false, status: 401 });
      const wrong = await tryConnect({
        url: cp.ocpp_url,
        username: cp.username,
        password: `${cp.password}x`,
        protocols: ['ocpp2.0.1'],
      });
      expect(wrong).to.deep.equal({ ok: false, status: 401 });
      const otherUser = await tryConnect({
        url: cp.ocpp_url,
        username: 'someone-else',
        password: cp.password,
        protocols: ['ocpp2.0.1'],
      });
      expect(otherUser).to.deep.equal({ ok: false, status: 401 });
      const none = await tryConnect({ url: cp.ocpp_url, protocols: ['ocpp2.0.1'] });
      expect(none).to.deep.equal({ ok: false, status: 401 });
    });

    it('refuses a path that is not a charge point identity with 404, and stays up', async () => {
      const base = cp.ocpp_url.slice(0, cp.ocpp_url.lastIndexOf('/'));
      expect(
        await tryConnect({
          url: `${base}/%E0%A4%A`,
          username: cp.username,
          password: cp.password,
          protocols: ['ocpp2.0.1'],
        }),
      ).to.deep.equal({ ok: false, status: 404 });
      expect(
        await tryConnect({ url: `${base}/a%20b`, username: 'a b', password: cp.password, protocols: ['ocpp2.0.1'] }),
      ).to.deep.equal({ ok: false, status: 404 });
      const charger = await connect({
        url: cp.ocpp_url,
        username: cp.username,
        password: cp.password,
        protocols: ['ocpp2.0.1'],
      });
      await charger.close();
    });

    it('completes the handshake of a charger with no common subprotocol without naming one, then closes with 1002 (OCPP-J MUST)', async () => {
      const r = await rawUpgrade(cp.ocpp_url, cp.username, cp.password, 'ocpp1.5, ocpp1.2');
      expect(r.status).to.equal(101);
      expect(r.headers).not.to.have.property('sec-websocket-protocol');
      expect(r.close).to.deep.equal({
        code: 1002,
        reason: 'no common subprotocol: this CSMS speaks ocpp1.6 and ocpp2.0.1',
      });
    });

    it('serves a charger that offers no subprotocol with its registered version', async () => {
      const charger = await connect({ url: cp.ocpp_url, username: cp.username, password: cp.password, protocols: [] });
      expect(charger.protocol).to.equal('');
      // it is served as the 2.0.1 charger it was registered as
      expect((await charger.call('BootNotification', v201.boot())).status).to.equal('Accepted');
      await charger.close();
    });

    /** A charger registered as 2.0.1 whose firmware now offers 1.6 only, connected. */
    const registeredAs201SpeakingOcpp16 = async () => {
      const other = await csms.registerChargePoint('ocpp2.0.1');
      const charger = await connect({
        url: other.ocpp_url,
        username: other.username,
        password: other.password,
        protocols: ['ocpp1.6'],
      });
      return { other, charger };
    };

    it('serves a charger whose firmware now speaks the other version with it, and shows that version', async () => {
      const { other, charger } = await registeredAs201SpeakingOcpp16();
      expect(charger.protocol).to.equal('ocpp1.6');
      expect((await charger.call('BootNotification', v16.boot())).status).to.equal('Accepted');
      const view = await csms.api<{ protocol: string }>('GET', `/v1/charge-points/${other.id}`);
      expect(view.body.protocol).to.equal('ocpp1.6');
      await charger.close();
    });

    it('shows and lists a charger never seen before in the version it connects with, before any event', async () => {
      const { other, charger } = await registeredAs201SpeakingOcpp16();
      // a Heartbeat is answered without the charger's actor: no event of it says the version
      await charger.call('Heartbeat', {});
      const view = await csms.api<{ protocol: string }>('GET', `/v1/charge-points/${other.id}`);
      // was ocpp2.0.1 until its first event, and its operations those of 2.0.1
      expect(view.body.protocol).to.equal('ocpp1.6');
      const variables = await csms.api<{ error: string }>('POST', `/v1/charge-points/${other.id}/get-variables`, {
        variables: [{ component: 'OCPPCommCtrlr', variable: 'HeartbeatInterval' }],
      });
      expect(variables.status).to.equal(422);
      const listed = async (protocol: string) =>
        (await csms.api<Array<{ id: string }>>('GET', `/v1/charge-points?protocol=${protocol}&limit=1000`)).body.map(
          (c) => c.id,
        );
      // was left out of ocpp1.6 and listed under ocpp2.0.1, the version it was registered with
      expect(await listed('ocpp1.6')).to.include(other.id);
      expect(await listed('ocpp2.0.1')).not.to.include(other.id);
      await charger.close();
    });

    it('picks the registered protocol among several offered, without permessage-deflate', async () => {
      const charger = await connect({
        url: cp.ocpp_url,
        username: cp.username,
        password: cp.password,
        protocols: ['ocpp1.6', 'ocpp2.0.1'],
      });
      expect(charger.protocol).to.equal('ocpp2.0.1');
      expect(charger.ws.extensions).to.equal('');
      await charger.close();
    });

    it('drops a charger that stops answering pings (liveness)', async () => {
      const headers = { Authorization: `Basic ${Buffer.from(`${cp.username}:${cp.password}`).toString('base64')}` };
      const ws = new WebSocket(cp.ocpp_url, ['ocpp2.0.1'], { headers, autoPong: false });
      const closed = new Promise<void>((r) => ws.once('close', () => r()));
      await new Promise((r) => ws.once('open', r));
      await closed;
      await eventually(async () =>
        (await csms.api<{ online: boolean }>('GET', `/v1/charge-points/${cp.id}`)).body.online ? undefined : true,
      );
    });
  });

  for (const version of ['ocpp1.6', 'ocpp2.0.1'] as const) {
    const names =
      version === 'ocpp1.6'
        ? {
            format: 'FormationViolation',
            occurrence: 'OccurenceConstraintViolation',
            frame: 'FormationViolation',
            type: 'NotSupported',
          }
        : {
            format: 'FormatViolation',
            occurrence: 'OccurrenceConstraintViolation',
            frame: 'RpcFrameworkError',
            type: 'MessageTypeNotSupported',
          };
    const boot = version === 'ocpp1.6' ? v16.boot() : v201.boot();

    describe(`${version} CALLERRORs`, () => {
      let charger: TestCharger;
      before(async () => {
        ({ charger } = await connectedCharger(csms, version));
      });
      after(async () => {
        // after every bad frame the connection is still up and working
        expect((await charger.call('BootNotification', boot)).status).to.equal('Accepted');
        await charger.close();
      });

      it(`answers a frame that is not JSON with ${names.frame} and message id -1`, async () => {
        const f = await charger.sendRaw('{not json', '-1');
        expect(f[0]).to.equal(4);
        expect(errorCode(f)).to.equal(names.frame);
      });

      it(`answers a frame that is not an OCPP-J array with ${names.frame}`, async () => {
        expect(errorCode(await charger.sendRaw('{"a":1}', '-1'))).to.equal(names.frame);
        // a CALL too short whose id can be read is answered under its id
        expect(errorCode(await charger.sendRaw('[2, "m-short"]', 'm-short'))).to.equal(names.frame);
      });

      it(`answers an unknown message type with ${names.type} under its id, in a frame of two elements too`, async () => {
        // [9, "m9"] was answered under "-1" with ${names.frame}, as if its id could not be read
        expect(errorCode(await charger.sendRaw('[9, "m9"]', 'm9'))).to.equal(names.type);
        expect(errorCode(await charger.sendRaw('[6, "m6", {}]', 'm6'))).to.equal(names.type);
      });

      it('answers nothing to a CALLRESULT or CALLERROR it cannot read: a CALLERROR answers a CALL only', async () => {
        const from = charger.received.length;
        for (const stray of ['[4,"never"]', '[3]', '[4, 17, "GenericError", "", {}]', '[3, "", {}]'])
          charger.sendText(stray);
        // the frames are taken in order: once the Heartbeat is answered, the strays were read
        await charger.call('Heartbeat', {});
        // was [4,"-1","FormationViolation",...] for each: an error sent back for an error
        expect(charger.received.slice(from).map((f) => f[0])).to.deep.equal([3]);
      });

      it(`answers an unknown message type with ${names.type}`, async () => {
        expect(errorCode(await charger.sendRaw('[7, "m-type", "Heartbeat", {}]', 'm-type'))).to.equal(names.type);
      });

      it("answers an unknown action with NotImplemented and a CSMS's action sent by a charger with NotSupported", async () => {
        expect(errorCode(await charger.callFrame('MakeCoffee', {}))).to.equal('NotImplemented');
        // a name that would reach another version's schema folder is no action either
        const other = version === 'ocpp1.6' ? '../ocpp-20-schemas/Heartbeat' : '../ocpp-16-schemas/Heartbeat';
        expect(errorCode(await charger.callFrame(other, {}))).to.equal('NotImplemented');
        const [action, payload] =
          version === 'ocpp1.6'
            ? ['RemoteStartTransaction', { idTag: 'TAG' }]
            : ['RequestStartTransaction', { idToken: { idToken: 'TAG', type: 'Central' }, remoteStartId: 1 }];
        expect(errorCode(await charger.callFrame(action, payload))).to.equal('NotSupported');
        // its payload is not read: one the CSMS would never send is still the CSMS's action, not a schema error
        expect(errorCode(await charger.callFrame(action, { nonsense: true }))).to.equal('NotSupported');
        expect(errorCode(await charger.callFrame('Reset', {}))).to.equal('NotSupported');
      });

      it(`answers a missing required field with ${names.occurrence}`, async () => {
        expect(errorCode(await charger.callFrame('BootNotification', {}))).to.equal(names.occurrence);
      });

      it('answers a wrong type with TypeConstraintViolation', async () => {
        const bad =
          version === 'ocpp1.6'
            ? v16.status(1, 'Available', { connectorId: 'one' })
            : { ...v201.status(1, 1), evseId: 'one' };
        expect(errorCode(await charger.callFrame('StatusNotification', bad))).to.equal('TypeConstraintViolation');
      });

      it('answers a value outside its enumeration or an unknown property with PropertyConstraintViolation', async () => {
        const badEnum = version === 'ocpp1.6' ? v16.status(1, 'Exploded') : v201.status(1, 1, 'Exploded');
        expect(errorCode(await charger.callFrame('StatusNotification', badEnum))).to.equal(
          'PropertyConstraintViolation',
        );
        expect(errorCode(await charger.callFrame('Heartbeat', { extra: true }))).to.equal(
          'PropertyConstraintViolation',
        );
      });

      it(`answers a string over its maximum length with ${names.format}`, async () => {
        const long = 'X'.repeat(60);
        const bad = version === 'ocpp1.6' ? v16.authorize(long) : v201.authorize(long);
        expect(errorCode(await charger.callFrame('Authorize', bad))).to.equal(names.format);
      });
    });
  }
});
