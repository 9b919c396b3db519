import { expect } from 'chai';
import WebSocket from 'ws';
import { connect, type Frame, type TestCharger } from './support/charger.js';
import { API_KEY, startCsms, type CsmsUnderTest } from './support/csms.js';
import { v16, v201 } from './support/messages.js';
import pg from 'pg';
import { RawClient } from './support/raw-socket.js';
import { connectedCharger } from './support/scenario.js';
import { PG_URL } from '../support/databases.js';
import { eventually } from '../support/eventually.js';
import { clusterEnvironment, embeddedEnvironment, type TestEnvironment } from '../support/platforms.js';

interface SessionView {
  transaction_id: string;
  id_tag: string | null;
  status: string;
}

function errorCode(f: Frame): string {
  if (f[0] !== 4) throw new Error(`expected a CALLERROR, got ${JSON.stringify(f)}`);
  return f[2];
}

describe('OCPP limits: boot deadline and open transactions per charger', () => {
  let csms: CsmsUnderTest;
  let env: TestEnvironment;
  before(async () => {
    env = await embeddedEnvironment({
      CSMS_API_KEY: API_KEY,
      OCPP_BOOT_DEADLINE_MS: '1000',
      OCPP_MAX_OPEN_TRANSACTIONS: '2',
    });
    csms = await startCsms({}, env);
  });
  after(async () => {
    await csms.stop();
    await env.cleanup();
  });

  it('closes a charger that never sends BootNotification with 1008; a booted one, and its reconnect, stay', async () => {
    const booted = await connectedCharger(csms, 'ocpp2.0.1');
    expect((await booted.charger.call('BootNotification', v201.boot())).status).to.equal('Accepted');
    await booted.charger.close();
    // a reconnect without a reboot needs no new BootNotification (1.6-J 4.2, 2.0.1 B01)
    const reconnected = await connect({
      url: booted.cp.ocpp_url,
      username: booted.cp.username,
      password: booted.cp.password,
      protocols: ['ocpp2.0.1'],
    });
    const silent = await connectedCharger(csms, 'ocpp1.6');
    expect(
      await eventually(async () => silent.charger.closeCode, {
        timeoutMs: 5000,
        what: 'the charger that never booted closed',
      }),
    ).to.equal(1008);
    // the deadline has passed for both: only the one that never booted is gone
    expect(reconnected.ws.readyState).to.equal(WebSocket.OPEN);
    expect(await reconnected.call('Heartbeat', {})).to.have.property('currentTime');
    await reconnected.close();
  });

  it('1.6: refuses a StartTransaction beyond OCPP_MAX_OPEN_TRANSACTIONS with idTagInfo Invalid and keeps no session for it', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    await charger.call('BootNotification', v16.boot());
    type StartConf = { transactionId: number; idTagInfo: { status: string } };
    const starts = [1, 2, 3].map((connectorId) => v16.start({ connectorId, idTag: `TAG-${connectorId}` }));
    const started: StartConf[] = [];
    for (const start of starts) started.push(await charger.call<StartConf>('StartTransaction', start));
    expect(started.map((s) => s.idTagInfo.status)).to.deep.equal(['Accepted', 'Accepted', 'Invalid']);
    // the refused start has an id of its own; its StopTransaction is answered and changes nothing
    const refusedId = started[2]?.transactionId;
    expect(refusedId)
      .to.be.a('number')
      .and.not.oneOf(started.slice(0, 2).map((s) => s.transactionId));
    await charger.call('StopTransaction', v16.stop(refusedId ?? -1, 1500, { reason: 'DeAuthorized' }));
    const sessions = await csms.api<SessionView[]>('GET', `/v1/sessions?charge_point_id=${cp.id}`);
    expect(sessions.body.map((s) => s.id_tag).sort()).to.deep.equal(['TAG-1', 'TAG-2']);
    // a retry of an accepted start is still recognised, and a stop makes room for a new start
    const retry = await charger.call<StartConf>('StartTransaction', starts[0]);
    expect(retry.transactionId).to.equal(started[0]?.transactionId);
    expect(retry.idTagInfo.status).to.equal('Accepted');
    await charger.call('StopTransaction', v16.stop(started[0]?.transactionId ?? -1, 2000));
    const again = await charger.call<{ idTagInfo: { status: string } }>(
      'StartTransaction',
      v16.start({ connectorId: 3, idTag: 'TAG-3' }),
    );
    expect(again.idTagInfo.status).to.equal('Accepted');
    await charger.close();
  });

  it('2.0.1: answers a TransactionEvent Started beyond the limit with idTokenInfo Invalid, with or without an idToken', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp2.0.1');
    await charger.call('BootNotification', v201.boot());
    // each on an EVSE of its own: a start on the EVSE of an open transaction would end that one
    for (const [evse, id] of [
      [1, 'T-1'],
      [2, 'T-2'],
    ] as const) {
      const r = await charger.call<{ idTokenInfo?: { status: string } }>(
        'TransactionEvent',
        v201.transactionEvent({ eventType: 'Started', transactionId: id, seqNo: 0, idToken: 'TAG-1', wh: 0, evse }),
      );
      expect(r.idTokenInfo?.status).to.equal('Accepted');
    }
    const withToken = await charger.call<{ idTokenInfo?: { status: string } }>(
      'TransactionEvent',
      v201.transactionEvent({ eventType: 'Started', transactionId: 'T-3', seqNo: 0, idToken: 'TAG-1', wh: 0, evse: 3 }),
    );
    expect(withToken.idTokenInfo?.status).to.equal('Invalid');
    const withoutToken = await charger.call<{ idTokenInfo?: { status: string } }>(
      'TransactionEvent',
      v201.transactionEvent({ eventType: 'Started', transactionId: 'T-4', seqNo: 0, wh: 0, evse: 4 }),
    );
    expect(withoutToken.idTokenInfo?.status).to.equal('Invalid');
    const sessions = await csms.api<SessionView[]>('GET', `/v1/sessions?charge_point_id=${cp.id}`);
    expect(sessions.body.map((s) => s.transaction_id).sort()).to.deep.equal(['T-1', 'T-2']);
    await charger.close();
  });

  // the official 1.6 schemas bound no integer: a negative connectorId passed them and failed inside
  // the CSMS (InternalError), and 1e300 was stored as a connector's number
  it('1.6: refuses a negative or out-of-range connector number with PropertyConstraintViolation; the connector list stays clean', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    await charger.call('BootNotification', v16.boot());
    const codes: string[] = [];
    for (const [action, payload] of [
      ['StatusNotification', v16.status(-5)],
      ['StatusNotification', v16.status(1e300)],
      ['StatusNotification', v16.status(2 ** 31)],
      ['MeterValues', v16.meterValues(-1, undefined, 10)],
      ['StartTransaction', v16.start({ connectorId: -1 })],
      // a transaction runs on a connector: 0, the whole charger, is none (1.6 section 6.45: > 0)
      ['StartTransaction', v16.start({ connectorId: 0 })],
      ['StopTransaction', v16.stop(1e300, 10)],
    ] as Array<[string, unknown]>)
      codes.push(errorCode(await charger.callFrame(action, payload)));
    expect(codes).to.deep.equal(Array<string>(7).fill('PropertyConstraintViolation'));
    await charger.call('StatusNotification', v16.status(2 ** 31 - 1));
    // a 1.6 connector is its own EVSE in the views
    const view = await csms.api<{ connectors: Array<{ evse_id: number }> }>('GET', `/v1/charge-points/${cp.id}`);
    expect(view.body.connectors.map((c) => c.evse_id)).to.deep.equal([2 ** 31 - 1]);
    await charger.close();
  });

  it('2.0.1: refuses negative EVSE and connector numbers with PropertyConstraintViolation', async () => {
    const { charger } = await connectedCharger(csms, 'ocpp2.0.1');
    await charger.call('BootNotification', v201.boot());
    const started = v201.transactionEvent({ eventType: 'Started', transactionId: 'T-NEG', seqNo: 0, idToken: 'TAG-1' });
    const codes: string[] = [];
    for (const [action, payload] of [
      ['StatusNotification', v201.status(-1, 1)],
      ['StatusNotification', v201.status(1, -1)],
      ['MeterValues', v201.meterValues(-1, 10)],
      ['TransactionEvent', { ...started, evse: { id: -1, connectorId: 1 } }],
    ] as Array<[string, unknown]>)
      codes.push(errorCode(await charger.callFrame(action, payload)));
    expect(codes).to.deep.equal(Array<string>(4).fill('PropertyConstraintViolation'));
    expect(await charger.call('StatusNotification', v201.status(1, 1))).to.deep.equal({});
    await charger.close();
  });

  it('1.6: a negative or absurd register reading is none: the session is billed from the readings that are', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    await charger.call('BootNotification', v16.boot());
    const start = await charger.call<{ transactionId: number }>(
      'StartTransaction',
      v16.start({ idTag: 'TAG-REG', meterStart: -500 }),
    );
    await charger.call('MeterValues', v16.meterValues(1, start.transactionId, 1000));
    await charger.call('MeterValues', v16.meterValues(1, start.transactionId, 1e20));
    await charger.call('MeterValues', v16.meterValues(1, start.transactionId, 3000));
    await charger.call('StopTransaction', v16.stop(start.transactionId, -1));
    const sessions = await csms.api<
      Array<{ status: string; meter_start_wh: number | null; meter_last_wh: number; energy_wh: number }>
    >('GET', `/v1/sessions?charge_point_id=${cp.id}`);
    expect(sessions.body[0]).to.include({
      status: 'COMPLETED',
      meter_start_wh: 1000,
      meter_last_wh: 3000,
      energy_wh: 2000,
    });
    await charger.close();
  });

  it('2.0.1: answers the status of ever new connectors, and keeps at most 128 of them', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp2.0.1');
    await charger.call('BootNotification', v201.boot());
    for (let evse = 1; evse <= 150; evse++)
      expect(await charger.call('StatusNotification', v201.status(evse, 1))).to.deep.equal({});
    const view = await csms.api<{ connectors: Array<{ evse_id: number }> }>('GET', `/v1/charge-points/${cp.id}`);
    expect(view.body.connectors).to.have.length(128);
    expect(view.body.connectors.at(-1)?.evse_id).to.equal(128);
    // a connector it keeps still changes
    expect(await charger.call('StatusNotification', v201.status(1, 1, 'Occupied'))).to.deep.equal({});
    await eventually(async () => {
      const v = await csms.api<{ connectors: Array<{ evse_id: number; status: string }> }>(
        'GET',
        `/v1/charge-points/${cp.id}`,
      );
      return v.body.connectors[0]?.status === 'Occupied' ? true : undefined;
    });
    await charger.close();
  });
});

describe('OCPP edge on PostgreSQL: NUL strings, a stalled password lookup', () => {
  let csms: CsmsUnderTest;
  let env: TestEnvironment;
  before(async () => {
    env = await clusterEnvironment({ CSMS_API_KEY: API_KEY, OCPP_HANDSHAKE_TIMEOUT_MS: '1000' });
    csms = await startCsms({}, env);
  });
  after(async () => {
    await csms.stop();
    await env.cleanup();
  });

  async function refusals(charger: TestCharger, calls: Array<[string, unknown]>): Promise<string[]> {
    const codes: string[] = [];
    for (const [action, payload] of calls) codes.push(errorCode(await charger.callFrame(action, payload)));
    return codes;
  }

  // PostgreSQL `text` cannot store U+0000: before the edge refused it, an idTag with a NUL failed
  // its session write and the charger got InternalError on every retry (issue 7)
  it('1.6: refuses idTag, vendor, serial and meter value strings with a NUL with PropertyConstraintViolation; a clean start works', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    const meter = v16.meterValues(1, undefined, 10);
    const sample = meter.meterValue[0]?.sampledValue[0];
    const codes = await refusals(charger, [
      ['StartTransaction', v16.start({ idTag: 'TAG\u0000-1' })],
      ['Authorize', v16.authorize('\u0000')],
      ['BootNotification', v16.boot({ chargePointVendor: 'Al\u0000fen' })],
      ['BootNotification', v16.boot({ chargePointSerialNumber: 'SN\u0000' })],
      [
        'MeterValues',
        {
          ...meter,
          meterValue: [{ timestamp: new Date().toISOString(), sampledValue: [{ ...sample, value: '1\u00000' }] }],
        },
      ],
      ['StopTransaction', v16.stop(1, 10, { idTag: 'T\u0000' })],
    ]);
    expect(codes).to.deep.equal(Array<string>(6).fill('PropertyConstraintViolation'));
    const ok = await charger.call<{ idTagInfo: { status: string } }>('StartTransaction', v16.start({ idTag: 'TAG-1' }));
    expect(ok.idTagInfo.status).to.equal('Accepted');
    const sessions = await csms.api<SessionView[]>('GET', `/v1/sessions?charge_point_id=${cp.id}`);
    expect(sessions.body.map((s) => s.id_tag)).to.deep.equal(['TAG-1']);
    await charger.close();
  });

  it('2.0.1: refuses an idToken, a model and a customData key with a NUL with PropertyConstraintViolation', async () => {
    const { charger } = await connectedCharger(csms, 'ocpp2.0.1');
    const codes = await refusals(charger, [
      [
        'TransactionEvent',
        v201.transactionEvent({ eventType: 'Started', transactionId: 'T-NUL', seqNo: 0, idToken: 'TAG\u0000' }),
      ],
      ['Authorize', v201.authorize('A\u0000')],
      ['BootNotification', v201.boot({ chargingStation: { model: 'M\u0000', vendorName: 'ABB' } })],
      ['Heartbeat', { customData: { vendorId: 'acme', 'k\u0000': 1 } }],
    ]);
    expect(codes).to.deep.equal(Array<string>(4).fill('PropertyConstraintViolation'));
    const ok = await charger.call<{ idTokenInfo?: { status: string } }>(
      'TransactionEvent',
      v201.transactionEvent({ eventType: 'Started', transactionId: 'T-OK', seqNo: 0, idToken: 'TAG-1' }),
    );
    expect(ok.idTokenInfo?.status).to.equal('Accepted');
    await charger.close();
  });

  it('destroys an upgrade whose password lookup stalls (table locked) at OCPP_HANDSHAKE_TIMEOUT_MS; logins work again after', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const locker = new pg.Client({ connectionString: PG_URL });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${env.env.DATABASE_SCHEMA}".csms_charge_point IN ACCESS EXCLUSIVE MODE`);
      const raw = await RawClient.connect(Number(new URL(csms.url).port));
      raw.write(
        RawClient.upgradeRequest(`/ocpp/${cp.id}`, { protocol: 'ocpp1.6', user: cp.username, password: cp.password }),
      );
      await eventually(async () => (raw.closed ? true : undefined), {
        timeoutMs: 5000,
        what: 'the stalled upgrade destroyed',
      });
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    const charger = await connect({
      url: cp.ocpp_url,
      username: cp.username,
      password: cp.password,
      protocols: ['ocpp1.6'],
    });
    await charger.close();
  });
});
