import { expect } from 'chai';
import type { ChargingSession } from '../../src/csms/session-store.js';
import type { ChargePointView } from '../../src/csms/views.js';
import { strictCharger } from '../support/rpc-client.js';
import { bootedCharger, startCsms, type CsmsUnderTest } from './support/csms.js';
import { v16, v201 } from './support/messages.js';
import { eventually } from './support/scenario.js';

/**
 * A transaction whose start never reached this CSMS (lost, or sent before a migration) still
 * becomes a session when its updates or its end arrive: its energy and end are not dropped. One
 * whose end never arrived completes when the next start comes on its EVSE (a 1.6 connector),
 * which runs one transaction at a time; the open transactions of other EVSEs are left alone
 * (docs/CSMS.md "Sessions whose start never arrived", "Sessions whose end never arrived").
 */
describe('transactions whose start or end never arrived', function () {
  this.timeout(20_000);
  let csms: CsmsUnderTest;
  before(async () => {
    csms = await startCsms();
  });
  after(async () => csms.stop());

  const sessionsOf = async (id: string): Promise<ChargingSession[]> =>
    (await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${encodeURIComponent(id)}`)).body;
  /** A registered charger of `protocol`, connected and booted. */
  const booted = (protocol: 'ocpp1.6' | 'ocpp2.0.1') => bootedCharger(csms, protocol);

  it('OCPP 1.6: a StopTransaction of an unknown transaction is a completed session; later ids do not reuse it', async () => {
    const { cp, charger } = await booted('ocpp1.6');
    expect(await charger.call('StopTransaction', v16.stop(4711, 52_000, { reason: 'EVDisconnected' }))).to.deep.equal(
      {},
    );
    const [session] = await eventually(async () => {
      const list = await sessionsOf(cp.id);
      return list.length > 0 ? list : undefined;
    });
    expect(session).to.include({
      transaction_id: '4711',
      status: 'COMPLETED',
      meter_last_wh: 52_000,
      stop_reason: 'EVDisconnected',
    });
    // a retry of the same stop changes nothing
    await charger.call('StopTransaction', v16.stop(4711, 52_000));
    expect(await sessionsOf(cp.id)).to.have.length(1);
    const { transactionId } = (await charger.call('StartTransaction', v16.start({ meterStart: 60_000 }))) as {
      transactionId: number;
    };
    expect(transactionId).to.be.greaterThan(4711);
    await charger.close();
  });

  it("OCPP 1.6: a stop of an unknown transaction starts from its transactionData's begin reading and time", async () => {
    const { cp, charger } = await booted('ocpp1.6');
    const end = new Date(Date.now() - 60_000);
    const begin = new Date(end.getTime() - 3_600_000);
    const reading = (at: Date, wh: string, context: string) => ({
      timestamp: at.toISOString(),
      sampledValue: [{ value: wh, context, measurand: 'Energy.Active.Import.Register', unit: 'Wh' }],
    });
    await charger.call(
      'StopTransaction',
      v16.stop(4242, 9_000, {
        timestamp: end.toISOString(),
        reason: 'PowerLoss',
        transactionData: [reading(begin, '5000', 'Transaction.Begin'), reading(end, '9000', 'Transaction.End')],
      }),
    );
    const [session] = await eventually(async () => {
      const list = await sessionsOf(cp.id);
      return list.length > 0 ? list : undefined;
    });
    // was 0 Wh from the stop's own time: the begin reading the message carried was not read
    expect(session).to.include({ status: 'COMPLETED', meter_start_wh: 5_000, meter_last_wh: 9_000, energy_wh: 4_000 });
    expect(session?.started_at).to.equal(begin.toISOString());
    await charger.close();
  });

  it('OCPP 1.6: MeterValues of an unknown transaction open it on the connector they name; a start there ends it', async () => {
    const { cp, charger } = await booted('ocpp1.6');
    await charger.call('MeterValues', v16.meterValues(2, 77, 5_000));
    const [phantom] = await eventually(async () => {
      const list = await sessionsOf(cp.id);
      return list.length > 0 ? list : undefined;
    });
    // was connector 0, where no start ever ended it: ACTIVE for good, the charger counted charging
    expect(phantom).to.include({ transaction_id: '77', evse_id: 2, status: 'ACTIVE' });
    await charger.call('StartTransaction', v16.start({ connectorId: 2, meterStart: 6_000 }));
    const ended = await eventually(async () =>
      (await sessionsOf(cp.id)).find((s) => s.transaction_id === '77' && s.status === 'COMPLETED'),
    );
    expect(ended).to.include({ evse_id: 2 });
    await charger.close();
  });

  it('OCPP 1.6: MeterValues of an unknown transaction on a connector with one running end nothing', async () => {
    const { cp, charger } = await booted('ocpp1.6');
    const { transactionId } = (await charger.call('StartTransaction', v16.start({ meterStart: 5_000 }))) as {
      transactionId: number;
    };
    await charger.call('MeterValues', v16.meterValues(1, transactionId, 6_000));
    // a stray id on the same connector: it ended the running transaction, whose stop was then lost
    await charger.call('MeterValues', v16.meterValues(1, 999_999, 7_000));
    await charger.call('StopTransaction', v16.stop(transactionId, 8_000, { reason: 'Local' }));
    const real = (await sessionsOf(cp.id)).find((s) => s.transaction_id === String(transactionId));
    expect(real).to.include({ status: 'COMPLETED', energy_wh: 3_000, stop_reason: 'Local' });
    await charger.close();
  });

  it('OCPP 1.6: a stop of an unknown id at the 32-bit top does not push later ids past it', async () => {
    const { charger } = await booted('ocpp1.6');
    const top = 2 ** 31 - 1;
    expect(await charger.call('StopTransaction', v16.stop(top, 52_000))).to.deep.equal({});
    // was InternalError on every later start: the id after it, 2^31, is no OCPP integer
    const ids: number[] = [];
    for (const connectorId of [1, 2]) {
      const started = (await charger.call('StartTransaction', v16.start({ connectorId }))) as { transactionId: number };
      ids.push(started.transactionId);
    }
    for (const id of ids) expect(id).to.be.within(1, top - 1);
    expect(new Set(ids).size).to.equal(2);
    await charger.close();
  });

  it('OCPP 2.0.1: Updated and Ended without Started make one session with the energy between them', async () => {
    const { cp, charger } = await booted('ocpp2.0.1');
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({ eventType: 'Updated', transactionId: 'tx-lost', seqNo: 4, wh: 10_000 }),
    );
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({ eventType: 'Updated', transactionId: 'tx-lost', seqNo: 5, wh: 12_500 }),
    );
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({
        eventType: 'Ended',
        transactionId: 'tx-lost',
        seqNo: 6,
        wh: 13_000,
        stoppedReason: 'Local',
      }),
    );
    const sessions = await eventually(async () => {
      const list = await sessionsOf(cp.id);
      return list[0]?.status === 'COMPLETED' ? list : undefined;
    });
    expect(sessions).to.have.length(1);
    expect(sessions[0]).to.include({
      transaction_id: 'tx-lost',
      meter_start_wh: 10_000,
      meter_last_wh: 13_000,
      energy_wh: 3_000,
      stop_reason: 'Local',
    });
    await charger.close();
  });

  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
  /** A 2.0.1 TransactionEvent queued offline `minutesAgo`, its readings stamped then too. */
  const event = (o: Parameters<typeof v201.transactionEvent>[0], minutesAgo: number) => {
    const e = v201.transactionEvent(o);
    return {
      ...e,
      timestamp: at(minutesAgo),
      offline: true,
      ...(e.meterValue ? { meterValue: e.meterValue.map((m) => ({ ...m, timestamp: at(minutesAgo) })) } : {}),
    };
  };

  it('OCPP 2.0.1: a Started delivered after an Updated gives the session its start, first reading and token', async () => {
    const { cp, charger } = await booted('ocpp2.0.1');
    // queued while offline and delivered out of order: the Updated first
    await charger.call(
      'TransactionEvent',
      event({ eventType: 'Updated', transactionId: 'tx-late', seqNo: 1, wh: 15_000 }, 30),
    );
    const started = await charger.call(
      'TransactionEvent',
      event({ eventType: 'Started', transactionId: 'tx-late', seqNo: 0, wh: 5_000, idToken: 'LATE-TOK' }, 60),
    );
    expect((started as { idTokenInfo?: { status: string } }).idTokenInfo?.status).to.equal('Accepted');
    await charger.call(
      'TransactionEvent',
      event({ eventType: 'Ended', transactionId: 'tx-late', seqNo: 2, wh: 25_000, stoppedReason: 'EVDisconnected' }, 0),
    );
    const [session] = await eventually(async () => {
      const list = await sessionsOf(cp.id);
      return list[0]?.status === 'COMPLETED' ? list : undefined;
    });
    // was: no token, started 30 minutes ago at 15,000 Wh, 10,000 Wh of the 20,000 delivered
    expect(session).to.include({ id_tag: 'LATE-TOK', meter_start_wh: 5_000, meter_last_wh: 25_000, energy_wh: 20_000 });
    expect(Date.parse(session?.started_at ?? '')).to.be.closeTo(Date.parse(at(60)), 2_000);
    expect(await sessionsOf(cp.id)).to.have.length(1);
    await charger.close();
  });

  it('OCPP 2.0.1: a Started delivered after the Ended of its transaction opens no second session', async () => {
    const { cp, charger } = await booted('ocpp2.0.1');
    await charger.call(
      'TransactionEvent',
      event({ eventType: 'Updated', transactionId: 'tx-last', seqNo: 1, wh: 15_000 }, 30),
    );
    await charger.call(
      'TransactionEvent',
      event({ eventType: 'Ended', transactionId: 'tx-last', seqNo: 2, wh: 25_000, stoppedReason: 'EVDisconnected' }, 0),
    );
    await charger.call(
      'TransactionEvent',
      event({ eventType: 'Started', transactionId: 'tx-last', seqNo: 0, wh: 5_000, idToken: 'LAST-TOK' }, 60),
    );
    const [session] = await eventually(async () => {
      const list = await sessionsOf(cp.id);
      return list[0]?.id_tag === 'LAST-TOK' ? list : undefined;
    });
    // was: a second session, ACTIVE for good, and the first without its token, from 15,000 Wh
    expect(session).to.include({
      status: 'COMPLETED',
      meter_start_wh: 5_000,
      meter_last_wh: 25_000,
      energy_wh: 20_000,
    });
    expect(Date.parse(session?.started_at ?? '')).to.be.closeTo(Date.parse(at(60)), 2_000);
    expect(await sessionsOf(cp.id)).to.have.length(1);
    // a Started after the end with the same id is a new transaction
    await charger.call(
      'TransactionEvent',
      event({ eventType: 'Started', transactionId: 'tx-last', seqNo: 0, wh: 30_000 }, -1),
    );
    expect(await sessionsOf(cp.id)).to.have.length(2);
    await charger.close();
  });

  const byTransaction = (list: ChargingSession[]) =>
    Object.fromEntries(list.map((s) => [s.transaction_id, [s.status, s.meter_last_wh, s.stop_reason]]));

  it('OCPP 1.6: the earlier transaction on the connector completes at its last reading; a late stop changes nothing', async () => {
    const { cp, charger } = await booted('ocpp1.6');
    type StartConf = { transactionId: number; idTagInfo: { status: string } };
    const start = async (o: Parameters<typeof v16.start>[0]) =>
      (await charger.call('StartTransaction', v16.start(o))) as StartConf;
    const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000).toISOString();
    const first = await start({ connectorId: 1, meterStart: 1000, timestamp: minutesAgo(60) });
    const other = await start({ connectorId: 2, meterStart: 500, timestamp: minutesAgo(50) });
    const readAt = minutesAgo(40);
    const reading = v16.meterValues(1, first.transactionId, 3000);
    reading.meterValue[0]!.timestamp = readAt;
    await charger.call('MeterValues', reading);
    // the StopTransaction of `first` was lost; the next driver starts on connector 1
    const next = await start({ connectorId: 1, idTag: 'TAG-0002', meterStart: 3500 });
    expect(next.idTagInfo.status).to.equal('Accepted');
    expect(next.transactionId).to.not.equal(first.transactionId);
    let sessions = await sessionsOf(cp.id);
    expect(byTransaction(sessions)).to.deep.equal({
      [String(first.transactionId)]: ['COMPLETED', 3000, 'Other'],
      [String(other.transactionId)]: ['ACTIVE', 500, null],
      [String(next.transactionId)]: ['ACTIVE', 3500, null],
    });
    // nothing shows it ran on after its last reading
    const stoppedAt = (id: number) => sessions.find((s) => s.transaction_id === String(id))?.stopped_at;
    expect(stoppedAt(first.transactionId)).to.equal(readAt);
    // one without a reading ends at the start that came after it
    const thirdAt = minutesAgo(5);
    const third = await start({ connectorId: 2, idTag: 'TAG-0003', meterStart: 900, timestamp: thirdAt });
    sessions = await sessionsOf(cp.id);
    expect(stoppedAt(other.transactionId)).to.equal(thirdAt);
    expect(byTransaction(sessions)[String(third.transactionId)]).to.deep.equal(['ACTIVE', 900, null]);
    // the lost stop, delivered after all, is answered and changes nothing
    expect(await charger.call('StopTransaction', v16.stop(first.transactionId, 3400))).to.deep.equal({});
    expect(byTransaction(await sessionsOf(cp.id))[String(first.transactionId)]).to.deep.equal([
      'COMPLETED',
      3000,
      'Other',
    ]);
    await charger.close();
  });

  it('OCPP 2.0.1: a Started on the EVSE of an open transaction completes it; one on another EVSE does not', async () => {
    const { cp, charger } = await booted('ocpp2.0.1');
    const started = async (transactionId: string, evse: number, wh: number) =>
      (await charger.call(
        'TransactionEvent',
        v201.transactionEvent({ eventType: 'Started', transactionId, seqNo: 0, idToken: 'TAG-1', wh, evse }),
      )) as { idTokenInfo?: { status: string } };
    await started('A', 1, 1000);
    await started('B', 2, 2000);
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({ eventType: 'Updated', transactionId: 'A', seqNo: 1, wh: 4000, evse: 1 }),
    );
    expect((await started('C', 1, 4200)).idTokenInfo?.status).to.equal('Accepted');
    expect(byTransaction(await sessionsOf(cp.id))).to.deep.equal({
      A: ['COMPLETED', 4000, 'Other'],
      B: ['ACTIVE', 2000, null],
      C: ['ACTIVE', 4200, null],
    });
    // A's own Ended, late, changes nothing; C's ends C
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({ eventType: 'Ended', transactionId: 'A', seqNo: 2, wh: 4100, stoppedReason: 'Local' }),
    );
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({ eventType: 'Ended', transactionId: 'C', seqNo: 1, wh: 5000, stoppedReason: 'Local' }),
    );
    expect(byTransaction(await sessionsOf(cp.id))).to.deep.equal({
      A: ['COMPLETED', 4000, 'Other'],
      B: ['ACTIVE', 2000, null],
      C: ['COMPLETED', 5000, 'Local'],
    });
    await charger.close();
  });
});

describe('a session names the remote start it followed', function () {
  this.timeout(20_000);
  let csms: CsmsUnderTest;
  before(async () => {
    csms = await startCsms();
  });
  after(async () => csms.stop());

  for (const protocol of ['ocpp1.6', 'ocpp2.0.1'] as const)
    it(`${protocol}: remote_start_command_id is the remote start's command id`, async () => {
      const cp = await csms.registerChargePoint(protocol);
      const charger = strictCharger(csms.url, cp, protocol);
      let remoteStartId = 0;
      charger.handle(protocol === 'ocpp1.6' ? 'RemoteStartTransaction' : 'RequestStartTransaction', ({ params }) => {
        remoteStartId = Number((params as { remoteStartId?: number }).remoteStartId ?? 0);
        return Promise.resolve({ status: 'Accepted' });
      });
      await charger.connect();
      await charger.call('BootNotification', protocol === 'ocpp1.6' ? v16.boot() : v201.boot());
      const started = await csms.api<{ command_id: string }>('POST', `/v1/charge-points/${cp.id}/remote-start`, {
        id_tag: 'APP-USER',
        evse_id: 1,
      });
      await eventually(async () =>
        (await csms.api<ChargePointView>('GET', `/v1/charge-points/${cp.id}`)).body.commands.some(
          (c) => c.status === 'Accepted',
        )
          ? true
          : undefined,
      );
      if (protocol === 'ocpp1.6')
        await charger.call('StartTransaction', v16.start({ idTag: 'APP-USER', meterStart: 0 }));
      else
        await charger.call(
          'TransactionEvent',
          v201.transactionEvent({
            eventType: 'Started',
            transactionId: 'tx-remote',
            seqNo: 0,
            wh: 0,
            idToken: 'APP-USER',
            remoteStartId,
          }),
        );
      const [session] = await eventually(async () => {
        const list = (await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${cp.id}`)).body;
        return list.length > 0 ? list : undefined;
      });
      expect(session?.remote_start_command_id).to.equal(started.body.command_id);
      // a start nobody asked for names none
      if (protocol === 'ocpp1.6') {
        await charger.call('StartTransaction', v16.start({ connectorId: 2, idTag: 'WALK-IN', meterStart: 0 }));
        const list = (await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${cp.id}`)).body;
        expect(list.find((s) => s.id_tag === 'WALK-IN')?.remote_start_command_id).to.equal(null);
      }
      await charger.close();
    });

  it("ocpp1.6: a charger that starts with the remote-started tag in another case (idTag is case-insensitive) is accepted, and the session is the command's", async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const charger = strictCharger(csms.url, cp, 'ocpp1.6');
    charger.handle('RemoteStartTransaction', () => Promise.resolve({ status: 'Accepted' }));
    await charger.connect();
    await charger.call('BootNotification', v16.boot());
    const started = await csms.api<{ command_id: string }>(
      'POST',
      `/v1/charge-points/${cp.id}/remote-start?wait_ms=5000`,
      { id_tag: 'opr-two', connector_id: 1 },
    );
    expect(started.body).to.include({ result: 'ACCEPTED' });
    const answer = (await charger.call('StartTransaction', v16.start({ idTag: 'OPR-TWO', meterStart: 0 }))) as {
      idTagInfo: { status: string };
    };
    // was Invalid: a charger set to stop on an invalid id ended the charge the operator started
    expect(answer.idTagInfo.status).to.equal('Accepted');
    const [session] = (await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${cp.id}`)).body;
    expect(session).to.include({ remote_start_command_id: started.body.command_id });
    await charger.close();
  });

  it("ocpp2.0.1: the operator's remote start of a transaction already running (plugged in first) is its command", async () => {
    const cp = await csms.registerChargePoint('ocpp2.0.1');
    const charger = strictCharger(csms.url, cp, 'ocpp2.0.1');
    let remoteStartId = 0;
    charger.handle('RequestStartTransaction', ({ params }) => {
      remoteStartId = Number((params as { remoteStartId?: number }).remoteStartId ?? 0);
      return Promise.resolve({ status: 'Accepted', transactionId: 'tx-plugged' });
    });
    await charger.connect();
    await charger.call('BootNotification', v201.boot());
    await charger.call('TransactionEvent', {
      ...v201.transactionEvent({ eventType: 'Started', transactionId: 'tx-plugged', seqNo: 0, wh: 0 }),
      triggerReason: 'CablePluggedIn',
    });
    const started = await csms.api<{ command_id: string }>('POST', `/v1/charge-points/${cp.id}/remote-start`, {
      id_tag: 'APP-LATE',
      evse_id: 1,
    });
    expect(started.status).to.equal(200);
    await charger.call('TransactionEvent', {
      ...v201.transactionEvent({
        eventType: 'Updated',
        transactionId: 'tx-plugged',
        seqNo: 1,
        wh: 500,
        remoteStartId,
      }),
      triggerReason: 'RemoteStart',
      idToken: { idToken: 'APP-LATE', type: 'Central' },
    });
    const [session] = (await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${cp.id}`)).body;
    // was null, "a start nobody asked for", on an EVSE no OCPI location links
    expect(session).to.include({ id_tag: 'APP-LATE', remote_start_command_id: started.body.command_id });
    await charger.close();
  });
});

describe('an offline charger', function () {
  this.timeout(20_000);
  let csms: CsmsUnderTest;
  before(async () => {
    csms = await startCsms();
  });
  after(async () => csms.stop());

  it('shows its connectors Unknown, with the status it last reported', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const charger = strictCharger(csms.url, cp, 'ocpp1.6');
    await charger.connect();
    await charger.call('BootNotification', v16.boot());
    await charger.call('StatusNotification', v16.status(1, 'Charging'));
    const view = async () => (await csms.api<ChargePointView>('GET', `/v1/charge-points/${cp.id}`)).body;
    expect((await view()).connectors.map((c) => c.status)).to.deep.equal(['Charging']);
    await charger.close();
    const offline = await eventually(async () => {
      const v = await view();
      return v.online ? undefined : v;
    });
    expect(offline.connectors.map((c) => [c.status, c.last_reported_status])).to.deep.equal([['Unknown', 'Charging']]);
  });
});
