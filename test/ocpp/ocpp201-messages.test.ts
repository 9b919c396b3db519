import { expect } from 'chai';
import type { ChargingSession } from '../../src/csms/session-store.js';
import { connect } from './support/charger.js';
import { startCsms, type CsmsUnderTest } from './support/csms.js';
import { v201 } from './support/messages.js';
import { chargePointProtocol } from '../../actors/charge-point/protocol.js';
import { resultProbeModule, resultProbeProtocol } from './support/result-probe.js';
import { actorState, connectedCharger, eventually, sendCommand } from './support/scenario.js';

describe('OCPP 2.0.1: charger messages and CSMS commands over a real WebSocket', () => {
  let csms: CsmsUnderTest;
  before(async () => {
    csms = await startCsms({ callTimeoutMs: 1_000 }, undefined, [resultProbeModule]);
  });
  after(async () => csms.stop());

  it('answers BootNotification, Heartbeat, StatusNotification and Authorize and keeps what was reported', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp2.0.1');
    expect(charger.protocol).to.equal('ocpp2.0.1');
    const boot = await charger.call('BootNotification', v201.boot());
    expect(boot.status).to.equal('Accepted');
    expect(boot.interval).to.be.a('number').above(0);
    expect(await charger.call('Heartbeat', {})).to.have.property('currentTime');
    expect(await charger.call('StatusNotification', v201.status(1, 1, 'Available'))).to.deep.equal({});
    expect(await charger.call('StatusNotification', v201.status(2, 1, 'Unavailable'))).to.deep.equal({});
    const auth = await charger.call<{ idTokenInfo: { status: string } }>('Authorize', v201.authorize('TAG-42'));
    expect(auth.idTokenInfo.status).to.equal('Accepted');
    const view = await csms.api<{
      protocol: string;
      boot: { vendor: string; model: string };
      connectors: Array<{ evse_id: number; status: string }>;
    }>('GET', `/v1/charge-points/${cp.id}`);
    expect(view.body.protocol).to.equal('ocpp2.0.1');
    expect(view.body.boot).to.include({ vendor: 'ABB', model: 'Terra AC' });
    expect(view.body.connectors.map((c) => [c.evse_id, c.status])).to.deep.equal([
      [1, 'Available'],
      [2, 'Unavailable'],
    ]);
    await charger.close();
  });

  it('builds a session from TransactionEvent Started/Updated/Ended, ignoring a repeated seqNo', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp2.0.1');
    const transactionId = 'TX-201-A';
    const started = v201.transactionEvent({
      eventType: 'Started',
      transactionId,
      seqNo: 0,
      wh: 10_000,
      idToken: 'TAG-5',
    });
    // an accepted token may stay in the charger's authorization cache for OCPP_AUTH_CACHE_S (1 h)
    const answer = await charger.call<{ idTokenInfo: { status: string; cacheExpiryDateTime?: string } }>(
      'TransactionEvent',
      started,
    );
    expect(answer.idTokenInfo.status).to.equal('Accepted');
    expect(Date.parse(answer.idTokenInfo.cacheExpiryDateTime ?? '') - Date.now()).to.be.within(3_590_000, 3_600_000);
    await charger.call('TransactionEvent', started);
    const updated = v201.transactionEvent({ eventType: 'Updated', transactionId, seqNo: 1, wh: 12_000 });
    await charger.call('TransactionEvent', updated);
    // the same seqNo again with a different reading: a duplicate, not new data
    await charger.call('TransactionEvent', {
      ...v201.transactionEvent({ eventType: 'Updated', transactionId, seqNo: 1, wh: 99_000 }),
    });
    let sessions = await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${cp.id}`);
    expect(sessions.body.map((s) => [s.status, s.energy_wh])).to.deep.equal([['ACTIVE', 2000]]);
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({
        eventType: 'Ended',
        transactionId,
        seqNo: 2,
        wh: 13_500,
        stoppedReason: 'EVDisconnected',
      }),
    );
    sessions = await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${cp.id}`);
    expect(sessions.body).to.have.length(1);
    expect(sessions.body[0]).to.include({
      transaction_id: transactionId,
      status: 'COMPLETED',
      energy_wh: 3500,
      stop_reason: 'EVDisconnected',
      id_tag: 'TAG-5',
      protocol: 'ocpp2.0.1',
    });
    // MeterValues outside a transaction are accepted and change no session
    expect(await charger.call('MeterValues', v201.meterValues(1, 14_000))).to.deep.equal({});
    await charger.close();
  });

  it('remote start and stop become RequestStartTransaction / RequestStopTransaction', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp2.0.1');
    charger.answers = {
      RequestStartTransaction: { status: 'Accepted' },
      RequestStopTransaction: { status: 'Accepted' },
    };
    // a connector without its EVSE: was sent without evseId (the charger picks any EVSE)
    const connectorOnly = await csms.api<{ error: { code: string } }>(
      'POST',
      `/v1/charge-points/${cp.id}/remote-start`,
      {
        id_tag: 'TAG-R',
        connector_id: 1,
      },
    );
    expect([connectorOnly.status, connectorOnly.body.error.code]).to.deep.equal([422, 'connector_without_evse']);
    expect(
      (await csms.api('POST', `/v1/charge-points/${cp.id}/remote-start`, { id_tag: 'TAG-R', evse_id: 1 })).status,
    ).to.equal(200);
    const call = await charger.csmsCall('RequestStartTransaction');
    expect(call.payload).to.deep.include({ idToken: { idToken: 'TAG-R', type: 'Central' }, evseId: 1 });
    expect(call.payload.remoteStartId).to.be.a('number');
    await charger.call(
      'TransactionEvent',
      v201.transactionEvent({
        eventType: 'Started',
        transactionId: 'TX-R',
        seqNo: 0,
        wh: 0,
        idToken: 'TAG-R',
        remoteStartId: Number(call.payload.remoteStartId),
      }),
    );
    const stop = await csms.api<{ transaction_id: string }>('POST', `/v1/charge-points/${cp.id}/remote-stop`, {});
    expect(stop.status).to.equal(200);
    expect(stop.body.transaction_id).to.equal('TX-R');
    expect((await charger.csmsCall('RequestStopTransaction')).payload).to.deep.equal({ transactionId: 'TX-R' });
    await charger.close();
  });

  it('sends ReserveNow, CancelReservation, UnlockConnector, TriggerMessage; ReservationStatusUpdate ends a reservation', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp2.0.1');
    charger.answers = {
      ReserveNow: { status: 'Accepted' },
      CancelReservation: { status: 'Accepted' },
      UnlockConnector: { status: 'Unlocked' },
      TriggerMessage: { status: 'Accepted' },
    };
    const expiry = new Date(Date.now() + 3600_000).toISOString();
    await sendCommand(csms, cp.id, {
      kind: 'reserve',
      reservation_id: 21,
      id_tag: 'TAG-9',
      expiry_date: expiry,
      evse_id: 1,
      connector_id: null,
    });
    expect((await charger.csmsCall('ReserveNow')).payload).to.deep.equal({
      id: 21,
      expiryDateTime: expiry,
      idToken: { idToken: 'TAG-9', type: 'Central' },
      evseId: 1,
    });
    await eventually(async () => ((await actorState(csms, cp.id)).reservations.length === 1 ? true : undefined));
    expect(await charger.call('ReservationStatusUpdate', v201.reservationStatusUpdate(21, 'Expired'))).to.deep.equal(
      {},
    );
    expect((await actorState(csms, cp.id)).reservations).to.deep.equal([]);

    await sendCommand(csms, cp.id, { kind: 'cancel-reservation', reservation_id: 22 });
    expect((await charger.csmsCall('CancelReservation')).payload).to.deep.equal({ reservationId: 22 });
    await sendCommand(csms, cp.id, { kind: 'unlock', evse_id: 1, connector_id: 2 });
    expect((await charger.csmsCall('UnlockConnector')).payload).to.deep.equal({ evseId: 1, connectorId: 2 });
    await sendCommand(csms, cp.id, { kind: 'trigger', message: 'BootNotification', evse_id: null });
    expect((await charger.csmsCall('TriggerMessage')).payload).to.deep.equal({ requestedMessage: 'BootNotification' });
    await eventually(async () => {
      const s = await actorState(csms, cp.id);
      return s.outbound.length === 0 ? s : undefined;
    }).then((s) =>
      expect(s.commands.map((c) => c.status)).to.deep.equal(['Accepted', 'Accepted', 'Unlocked', 'Accepted']),
    );
    await charger.close();
  });

  it("delivers each command's final outcome to the actor that asked for it (answer, timeout)", async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp2.0.1');
    charger.answers = { ReserveNow: { status: 'Occupied' } };
    const { actors } = csms.started.platform.services;
    const probeRef = actors.ref(resultProbeProtocol, 'ocpi-commands');
    const probe = probeRef.address;
    const chargePoint = actors.ref(chargePointProtocol, cp.id);
    const expiry = new Date(Date.now() + 600_000).toISOString();
    const reserve = {
      kind: 'reserve',
      reservation_id: 31,
      id_tag: 'TAG-3',
      expiry_date: expiry,
      evse_id: null,
      connector_id: null,
    } as const;
    const first = await chargePoint.ask({ type: 'command', command: reserve, notify: probe });
    // UnlockConnector gets no answer: it times out (callTimeoutMs 1 s here)
    const second = await chargePoint.ask({
      type: 'command',
      command: { kind: 'unlock', evse_id: 1, connector_id: 1 },
      notify: probe,
    });
    const results = await eventually(async () => {
      const r = await probeRef.ask({ type: 'get' });
      return r.length === 2 ? r : undefined;
    });
    expect(results.map((r) => [r.command_id, r.kind, r.status])).to.deep.equal([
      [first.command_id, 'reserve', 'Occupied'],
      [second.command_id, 'unlock', 'timeout'],
    ]);
    expect(results.every((r) => r.charge_point_id === cp.id)).to.equal(true);
    await charger.close();
  });

  it('the newest connection wins and a remote start while offline answers 409', async () => {
    const { cp, charger: older } = await connectedCharger(csms, 'ocpp2.0.1');
    const newer = await connect({
      url: cp.ocpp_url,
      username: cp.username,
      password: cp.password,
      protocols: ['ocpp2.0.1'],
    });
    expect(await older.closed).to.equal(4000);
    expect(await newer.call('Heartbeat', {})).to.have.property('currentTime');
    await newer.close();
    await eventually(async () =>
      (await csms.api<{ online: boolean }>('GET', `/v1/charge-points/${cp.id}`)).body.online ? undefined : true,
    );
    expect((await csms.api('POST', `/v1/charge-points/${cp.id}/remote-start`, { id_tag: 'TAG-1' })).status).to.equal(
      409,
    );
  });
});
