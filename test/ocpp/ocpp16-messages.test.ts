import { expect } from 'chai';
import type { ChargingSession } from '../../src/csms/session-store.js';
import { connect } from './support/charger.js';
import { startCsms, type CsmsUnderTest } from './support/csms.js';
import { v16 } from './support/messages.js';
import { actorState, connectedCharger, eventually, sendCommand } from './support/scenario.js';

describe('OCPP 1.6: charger messages and CSMS commands over a real WebSocket', () => {
  let csms: CsmsUnderTest;
  before(async () => {
    csms = await startCsms();
  });
  after(async () => csms.stop());

  it('answers BootNotification, Heartbeat, StatusNotification and Authorize and keeps what was reported', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    expect(charger.protocol).to.equal('ocpp1.6');
    const boot = await charger.call(
      'BootNotification',
      v16.boot({ chargePointSerialNumber: 'SN-77', iccid: '8931440400012345678', meterSerialNumber: 'M-1234' }),
    );
    expect(boot.status).to.equal('Accepted');
    expect(boot.interval).to.be.a('number').above(0);
    expect(Date.parse(String(boot.currentTime))).to.be.closeTo(Date.now(), 60_000);
    const hb = await charger.call('Heartbeat', {});
    expect(hb).to.have.property('currentTime');
    expect(await charger.call('StatusNotification', v16.status(1, 'Available'))).to.deep.equal({});
    expect(
      await charger.call('StatusNotification', v16.status(2, 'Faulted', { errorCode: 'GroundFailure' })),
    ).to.deep.equal({});
    const auth = await charger.call<{ idTagInfo: { status: string; expiryDate?: string } }>(
      'Authorize',
      v16.authorize('TAG-42'),
    );
    expect(auth.idTagInfo.status).to.equal('Accepted');
    // the charger may keep it in its authorization cache for OCPP_AUTH_CACHE_S (1 h)
    expect(Date.parse(auth.idTagInfo.expiryDate ?? '') - Date.now()).to.be.within(3_590_000, 3_600_000);

    const view = await csms.api<{
      online: boolean;
      boot: { vendor: string; serial_number: string; hardware?: Record<string, string> };
      connectors: Array<{ connector_id: number; status: string; error_code: string | null }>;
    }>('GET', `/v1/charge-points/${cp.id}`);
    expect(view.body.online).to.equal(true);
    expect(view.body.boot).to.include({ vendor: 'Alfen', serial_number: 'SN-77' });
    // the SIM and the meter it told of (they were dropped)
    expect(view.body.boot.hardware).to.deep.equal({ iccid: '8931440400012345678', meter_serial_number: 'M-1234' });
    expect(view.body.connectors.map((c) => [c.connector_id, c.status, c.error_code])).to.deep.equal([
      [1, 'Available', null],
      [2, 'Faulted', 'GroundFailure'],
    ]);
    await charger.close();
  });

  it('a status report older than the one held (queued offline, delivered late) does not replace it', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    await charger.call('BootNotification', v16.boot());
    const ago = (s: number) => new Date(Date.now() - s * 1000).toISOString();
    await charger.call('StatusNotification', v16.status(1, 'Charging', { timestamp: ago(10) }));
    // was taken: the connector showed Available, its time moved back
    expect(await charger.call('StatusNotification', v16.status(1, 'Available', { timestamp: ago(60) }))).to.deep.equal(
      {},
    );
    const connectors = async () =>
      (
        await csms.api<{ connectors: Array<{ connector_id: number; status: string }> }>(
          'GET',
          `/v1/charge-points/${cp.id}`,
        )
      ).body.connectors.map((c) => [c.connector_id, c.status]);
    expect(await connectors()).to.deep.equal([[1, 'Charging']]);
    // a newer one is taken; so is one after a status stamped far ahead (a clock that was wrong)
    await charger.call('StatusNotification', v16.status(1, 'Finishing', { timestamp: ago(5) }));
    expect(await connectors()).to.deep.equal([[1, 'Finishing']]);
    await charger.call('StatusNotification', v16.status(1, 'Faulted', { timestamp: '2099-01-01T00:00:00Z' }));
    await charger.call('StatusNotification', v16.status(1, 'Available', { timestamp: ago(1) }));
    expect(await connectors()).to.deep.equal([[1, 'Available']]);
    // after a reboot, a charger whose clock starts again from the same date: its reports count
    await charger.call('BootNotification', v16.boot());
    await charger.call('StatusNotification', v16.status(1, 'Unavailable', { timestamp: '2000-01-01T00:00:05Z' }));
    expect(await connectors()).to.deep.equal([[1, 'Unavailable']]);
    await charger.call('StatusNotification', v16.status(1, 'Available', { timestamp: '2000-01-01T00:00:04Z' }));
    expect(await connectors()).to.deep.equal([[1, 'Unavailable']]);
    await charger.close();
  });

  it("shows a status's time in UTC when the charger stamps it with its local offset", async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    await charger.call('BootNotification', v16.boot());
    await charger.call('StatusNotification', v16.status(1, 'Charging', { timestamp: '2026-06-01T14:30:00+02:00' }));
    const view = await csms.api<{ connectors: Array<{ updated_at: string }> }>('GET', `/v1/charge-points/${cp.id}`);
    // was '2026-06-01T14:30:00+02:00', the only time in /v1 not in UTC
    expect(view.body.connectors[0]?.updated_at).to.equal('2026-06-01T12:30:00.000Z');
    await charger.close();
  });

  it('runs a transaction: StartTransaction (retried: same transactionId), MeterValues, StopTransaction -> a session with its energy', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    await charger.call('BootNotification', v16.boot());
    const start = v16.start({ idTag: 'TAG-7', meterStart: 5000 });
    const first = await charger.call<{ transactionId: number; idTagInfo: { status: string } }>(
      'StartTransaction',
      start,
    );
    expect(first.idTagInfo.status).to.equal('Accepted');
    // the charger did not get the answer and sends the same StartTransaction again
    const retry = await charger.call<{ transactionId: number }>('StartTransaction', start);
    expect(retry.transactionId).to.equal(first.transactionId);
    expect(await charger.call('MeterValues', v16.meterValues(1, first.transactionId, 6200))).to.deep.equal({});
    const stop = v16.stop(first.transactionId, 7500, { idTag: 'TAG-7' });
    // the stop's idTag is answered as the start's was, with the time the charger's cache drops it
    const stopped = await charger.call<{ idTagInfo: { status: string; expiryDate?: string } }>('StopTransaction', stop);
    expect(stopped.idTagInfo.status).to.equal('Accepted');
    expect(Date.parse(stopped.idTagInfo.expiryDate ?? '') - Date.now()).to.be.within(3_590_000, 3_600_000);
    // a retried StopTransaction changes nothing
    await charger.call('StopTransaction', stop);
    // and a StartTransaction retried after the stop still gets its transaction, not a new one
    expect((await charger.call<{ transactionId: number }>('StartTransaction', start)).transactionId).to.equal(
      first.transactionId,
    );

    const sessions = await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${cp.id}`);
    expect(sessions.body).to.have.length(1);
    expect(sessions.body[0]).to.include({
      transaction_id: String(first.transactionId),
      status: 'COMPLETED',
      id_tag: 'TAG-7',
      meter_start_wh: 5000,
      meter_last_wh: 7500,
      energy_wh: 2500,
      stop_reason: 'Remote',
      protocol: 'ocpp1.6',
    });
    await charger.close();
  });

  it('a store of more than 20 finished transactions replayed keeps their ids and opens nothing; a late meter value reopens none', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    await charger.call('BootNotification', v16.boot());
    const base = Date.now() - 2 * 3_600_000;
    const at = (i: number, s: number) => new Date(base + i * 60_000 + s * 1000).toISOString();
    const pairs = Array.from({ length: 22 }, (_, i) => ({
      start: v16.start({ idTag: 'TAG-LOG', meterStart: i * 1000, timestamp: at(i, 0) }),
      stopAt: at(i, 40),
      meterStop: i * 1000 + 1000,
    }));
    const ids: number[] = [];
    for (const p of pairs) {
      const { transactionId } = await charger.call<{ transactionId: number }>('StartTransaction', p.start);
      await charger.call('StopTransaction', v16.stop(transactionId, p.meterStop, { timestamp: p.stopAt }));
      ids.push(transactionId);
    }
    const sessionsNow = async () =>
      (await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${cp.id}&limit=100`)).body
        .map((s) => [s.transaction_id, s.status, s.energy_wh])
        .sort();
    const once = await sessionsNow();
    expect(once).to.have.length(22);
    // the same log again after a reboot: each start was given a new id, and 44 sessions more were opened
    const again: number[] = [];
    for (const [i, p] of pairs.entries()) {
      const { transactionId } = await charger.call<{ transactionId: number }>('StartTransaction', p.start);
      await charger.call('StopTransaction', v16.stop(ids[i] ?? 0, p.meterStop, { timestamp: p.stopAt }));
      again.push(transactionId);
    }
    expect(again).to.deep.equal(ids);
    expect(await sessionsNow()).to.deep.equal(once);
    // a meter value of the first, delivered late: it had reopened it as ACTIVE
    expect(await charger.call('MeterValues', v16.meterValues(1, ids[0] ?? 0, 500))).to.deep.equal({});
    expect(await sessionsNow()).to.deep.equal(once);
    await charger.close();
  });

  it('shows the energy of a running session from its meter values', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    const { transactionId } = await charger.call<{ transactionId: number }>(
      'StartTransaction',
      v16.start({ meterStart: 100 }),
    );
    await charger.call('MeterValues', v16.meterValues(1, transactionId, 1100));
    const sessions = await csms.api<ChargingSession[]>('GET', `/v1/sessions?charge_point_id=${cp.id}&status=ACTIVE`);
    expect(sessions.body.map((s) => [s.status, s.energy_wh])).to.deep.equal([['ACTIVE', 1000]]);
    await charger.close();
  });

  it('remote start and remote stop from the /v1 API reach the charger as RemoteStartTransaction / RemoteStopTransaction', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    charger.answers = { RemoteStartTransaction: { status: 'Accepted' }, RemoteStopTransaction: { status: 'Accepted' } };
    await charger.call('BootNotification', v16.boot());
    const started = await csms.api<{ result: string; command_id: string }>(
      'POST',
      `/v1/charge-points/${cp.id}/remote-start`,
      { id_tag: 'TAG-R', connector_id: 1 },
    );
    expect(started.status).to.equal(200);
    expect(started.body.result).to.equal('ACCEPTED');
    const call = await charger.csmsCall('RemoteStartTransaction');
    expect(call.payload).to.deep.equal({ idTag: 'TAG-R', connectorId: 1 });
    // the charger's own answer is reported on the charge point, apart from the 200
    await eventually(async () => {
      const v = await csms.api<{ commands: Array<{ command_id: string; status: string }> }>(
        'GET',
        `/v1/charge-points/${cp.id}`,
      );
      return v.body.commands.find((c) => c.command_id === started.body.command_id && c.status === 'Accepted');
    });
    const { transactionId } = await charger.call<{ transactionId: number }>(
      'StartTransaction',
      v16.start({ idTag: 'TAG-R' }),
    );
    // an operator may name the 1.6 transaction by its integer id, as the charger reported it
    const stopped = await csms.api<{ transaction_id: string }>('POST', `/v1/charge-points/${cp.id}/remote-stop`, {
      transaction_id: transactionId,
    });
    expect(stopped.status).to.equal(200);
    expect(stopped.body.transaction_id).to.equal(String(transactionId));
    expect((await charger.csmsCall('RemoteStopTransaction')).payload).to.deep.equal({ transactionId });
    // two open transactions and none named: a 409 listing them, not a guess
    const second = await charger.call<{ transactionId: number }>(
      'StartTransaction',
      v16.start({ connectorId: 2, idTag: 'TAG-R' }),
    );
    const ambiguous = await csms.api<{ error: { code: string; message: string } }>(
      'POST',
      `/v1/charge-points/${cp.id}/remote-stop`,
    );
    expect(ambiguous.status).to.equal(409);
    expect(ambiguous.body.error.code).to.equal('transaction_id_required');
    expect(ambiguous.body.error.message).to.contain(String(second.transactionId));
    // a transaction that is not open, or an id 1.6 cannot carry: was 200 "sent" (the second never sent)
    for (const transaction_id of [12345, 'nope']) {
      const notOpen = await csms.api<{ error: { code: string; message: string } }>(
        'POST',
        `/v1/charge-points/${cp.id}/remote-stop`,
        { transaction_id },
      );
      expect([notOpen.status, notOpen.body.error.code]).to.deep.equal([409, 'transaction_not_open']);
      expect(notOpen.body.error.message).to.contain(String(second.transactionId));
    }
    expect(charger.csmsCalls.filter((c) => c.action === 'RemoteStopTransaction')).to.have.length(1);
    await charger.close();
  });

  it('sends ReserveNow, CancelReservation, UnlockConnector and TriggerMessage, one outstanding call at a time', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    await charger.call('BootNotification', v16.boot());
    const expiry = new Date(Date.now() + 3600_000).toISOString();
    await sendCommand(csms, cp.id, {
      kind: 'reserve',
      reservation_id: 11,
      id_tag: 'TAG-9',
      expiry_date: expiry,
      evse_id: 1,
      connector_id: null,
    });
    await sendCommand(csms, cp.id, { kind: 'unlock', evse_id: 1, connector_id: 1 });
    await sendCommand(csms, cp.id, { kind: 'trigger', message: 'StatusNotification', evse_id: 1 });
    const reserve = await charger.csmsCall('ReserveNow');
    expect(reserve.payload).to.deep.equal({ connectorId: 1, expiryDate: expiry, idTag: 'TAG-9', reservationId: 11 });
    // nothing else is sent while ReserveNow is unanswered
    await new Promise((r) => setTimeout(r, 200));
    expect(charger.csmsCalls.map((c) => c.action)).to.deep.equal(['ReserveNow']);
    charger.ws.send(JSON.stringify([3, reserve.id, { status: 'Accepted' }]));
    const unlock = await charger.csmsCall('UnlockConnector');
    expect(unlock.payload).to.deep.equal({ connectorId: 1 });
    charger.ws.send(JSON.stringify([3, unlock.id, { status: 'Unlocked' }]));
    const trigger = await charger.csmsCall('TriggerMessage');
    expect(trigger.payload).to.deep.equal({ requestedMessage: 'StatusNotification', connectorId: 1 });
    charger.ws.send(JSON.stringify([3, trigger.id, { status: 'Accepted' }]));
    await eventually(async () => ((await actorState(csms, cp.id)).outbound.length === 0 ? true : undefined));
    const state = await actorState(csms, cp.id);
    expect(state.reservations.map((r) => r.reservation_id)).to.deep.equal([11]);
    expect(state.commands.map((c) => [c.kind, c.status])).to.deep.equal([
      ['reserve', 'Accepted'],
      ['unlock', 'Unlocked'],
      ['trigger', 'Accepted'],
    ]);

    charger.answers = { CancelReservation: { status: 'Accepted' } };
    await sendCommand(csms, cp.id, { kind: 'cancel-reservation', reservation_id: 11 });
    expect((await charger.csmsCall('CancelReservation')).payload).to.deep.equal({ reservationId: 11 });
    await eventually(async () => ((await actorState(csms, cp.id)).reservations.length === 0 ? true : undefined));
    await charger.close();
  });

  it('reports a charger answer that fails the schema as failed, and carries on with the next call', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    await sendCommand(csms, cp.id, { kind: 'unlock', evse_id: 1, connector_id: 1 });
    const unlock = await charger.csmsCall('UnlockConnector');
    charger.ws.send(JSON.stringify([3, unlock.id, { status: 'Opened' }]));
    await eventually(async () => (await actorState(csms, cp.id)).commands.find((c) => c.status === 'failed'));
    charger.answers = { TriggerMessage: { status: 'Accepted' } };
    await sendCommand(csms, cp.id, { kind: 'trigger', message: 'Heartbeat', evse_id: null });
    await charger.csmsCall('TriggerMessage');
    await charger.close();
  });

  it("keeps at most 500 characters of a charger's CALLERROR description in the command record", async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    await sendCommand(csms, cp.id, { kind: 'unlock', evse_id: 1, connector_id: 1 });
    const unlock = await charger.csmsCall('UnlockConnector');
    charger.ws.send(JSON.stringify([4, unlock.id, 'InternalError', 'x'.repeat(250_000), {}]));
    const failed = await eventually(async () =>
      (await actorState(csms, cp.id)).commands.find((c) => c.status === 'failed'),
    );
    expect(failed.detail).to.match(/^UnlockConnector: InternalError x+…$/);
    expect(failed.detail?.length).to.equal(500);
    await charger.close();
  });

  it('the newest connection for an identity wins; the older socket is closed', async () => {
    const { cp, charger: older } = await connectedCharger(csms, 'ocpp1.6');
    await older.call('BootNotification', v16.boot());
    const newer = await connect({
      url: cp.ocpp_url,
      username: cp.username,
      password: cp.password,
      protocols: ['ocpp1.6'],
    });
    expect(await older.closed).to.equal(4000);
    newer.answers = { RemoteStartTransaction: { status: 'Accepted' } };
    expect((await csms.api('POST', `/v1/charge-points/${cp.id}/remote-start`, { id_tag: 'TAG-N' })).status).to.equal(
      200,
    );
    await newer.csmsCall('RemoteStartTransaction');
    expect((await csms.api<{ online: boolean }>('GET', `/v1/charge-points/${cp.id}`)).body.online).to.equal(true);
    await newer.close();
  });

  it('two connections of one identity racing in: exactly one stays, and it is the charger the CSMS talks to', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const opts = { url: cp.ocpp_url, username: cp.username, password: cp.password, protocols: ['ocpp1.6'] };
    const sockets = await Promise.all([connect(opts), connect(opts), connect(opts)]);
    const survivor = await eventually(async () => {
      const open = sockets.filter((c) => c.closeCode === undefined);
      return open.length === 1 ? open[0] : undefined;
    });
    survivor.answers = { RemoteStartTransaction: { status: 'Accepted' } };
    expect((await csms.api('POST', `/v1/charge-points/${cp.id}/remote-start`, { id_tag: 'TAG-RACE' })).status).to.equal(
      200,
    );
    await survivor.csmsCall('RemoteStartTransaction');
    expect((await survivor.call('BootNotification', v16.boot())).status).to.equal('Accepted');
    await survivor.close();
  });

  it('refuses a remote start naming two places (connector_id and evse_id differ) with 422, sending nothing', async () => {
    const { cp, charger } = await connectedCharger(csms, 'ocpp1.6');
    charger.answers = { RemoteStartTransaction: { status: 'Accepted' } };
    await charger.call('BootNotification', v16.boot());
    const both = await csms.api<{ error: { code: string } }>('POST', `/v1/charge-points/${cp.id}/remote-start`, {
      id_tag: 'TAG-2P',
      connector_id: 1,
      evse_id: 2,
    });
    // was 200, and the charger was asked to start on connector 1: evse_id dropped without a word
    expect([both.status, both.body.error.code]).to.deep.equal([422, 'connector_evse_conflict']);
    const same = await csms.api('POST', `/v1/charge-points/${cp.id}/remote-start`, {
      id_tag: 'TAG-2P',
      connector_id: 2,
      evse_id: 2,
    });
    expect(same.status).to.equal(200);
    expect((await charger.csmsCall('RemoteStartTransaction')).payload).to.deep.equal({
      idTag: 'TAG-2P',
      connectorId: 2,
    });
    expect(charger.csmsCalls.filter((c) => c.action === 'RemoteStartTransaction')).to.have.length(1);
    await charger.close();
  });

  it('answers 409 to a remote start or stop while the charger is offline, 404 for an unknown one', async () => {
    const cp = await csms.registerChargePoint('ocpp1.6');
    const start = await csms.api<{ error: { code: string } }>('POST', `/v1/charge-points/${cp.id}/remote-start`, {
      id_tag: 'TAG-1',
    });
    expect(start.status).to.equal(409);
    expect(start.body.error.code).to.equal('charge_point_offline');
    expect((await csms.api('POST', `/v1/charge-points/${cp.id}/remote-stop`)).status).to.equal(409);
    expect((await csms.api('POST', '/v1/charge-points/NOPE-1/remote-start', { id_tag: 'TAG-1' })).status).to.equal(404);

    // it was online, then went away: offline again
    const charger = await connect({
      url: cp.ocpp_url,
      username: cp.username,
      password: cp.password,
      protocols: ['ocpp1.6'],
    });
    await charger.close();
    await eventually(async () =>
      (await csms.api<{ online: boolean }>('GET', `/v1/charge-points/${cp.id}`)).body.online ? undefined : true,
    );
    expect((await csms.api('POST', `/v1/charge-points/${cp.id}/remote-start`, { id_tag: 'TAG-1' })).status).to.equal(
      409,
    );
  });
});
