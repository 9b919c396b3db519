import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import { eventually } from '../support/eventually.js';
import { aToken, aToken221 } from '../support/ocpi-builders.js';
import type { RecordedRequest } from '../support/ocpi-simulator.js';
import { RoamingWorld, type Emsp } from '../support/roaming-world.js';

type Json = Record<string, unknown>;

/**
 * Sessions flow out (docs/ROAMING.md "Sessions"): an eMSP that pushed its token starts a charge
 * with START_SESSION, sees its session PUT with energy while it runs, stops it with STOP_SESSION
 * and gets it COMPLETED; the sessions Sender serves it to that eMSP alone. The charger is an
 * ocpp-rpc client that does what a charger does after a remote start and stop.
 */
describe('roaming: sessions of partner tokens on our chargers go to their eMSP', function () {
  this.timeout(60_000);
  let world: RoamingWorld;
  let emsp221: Emsp;
  let emsp211: Emsp;

  before(async () => {
    world = await RoamingWorld.start({ ROAMING_SESSION_PUSH_MS: '0' });
    emsp221 = await world.emsp('2.2.1');
    emsp211 = await world.emsp('2.1.1');
  });
  after(async () => world.stop());

  /** A 1.6 charger that starts and stops a transaction when asked, as firmware does. */
  function behaves16(charger: RPCClient): { transactionId: () => number } {
    let transactionId = 0;
    charger.handle('RemoteStartTransaction', ({ params }) => {
      const { idTag } = params as { idTag: string };
      setTimeout(() => {
        void charger
          .call('StartTransaction', { connectorId: 1, idTag, meterStart: 1000, timestamp: new Date().toISOString() })
          .then((r) => {
            transactionId = (r as { transactionId: number }).transactionId;
          });
      }, 20);
      return Promise.resolve({ status: 'Accepted' });
    });
    charger.handle('RemoteStopTransaction', ({ params }) => {
      const id = (params as { transactionId: number }).transactionId;
      setTimeout(() => {
        void charger.call('StopTransaction', {
          transactionId: id,
          meterStop: 5000,
          timestamp: new Date().toISOString(),
        });
      }, 20);
      return Promise.resolve({ status: 'Accepted' });
    });
    return { transactionId: () => transactionId };
  }

  /** emsp221's START_SESSION at EVSE E1 of `loc`: the CPO's answer's result */
  const startSession221 = async (loc: string, token: Json, reference: string): Promise<unknown> => {
    const start = await emsp221.sim.call(
      'POST',
      'commands',
      '/START_SESSION',
      {
        response_url: emsp221.sim.responseUrl('2.2.1', 'START_SESSION', randomUUID()),
        token,
        location_id: loc,
        evse_uid: 'E1',
        authorization_reference: reference,
      },
      { role: 'RECEIVER' },
    );
    return (start.data as Json).result;
  };
  const sessionPuts = (e: Emsp, since: number): RecordedRequest[] =>
    e.sim
      .receivedSince(since)
      .filter((r) => r.method === 'PUT' && /\/sessions\/NL\/EVP\/[^/]+$/.test(r.path) && r.status === 200);
  const lastSession = (e: Emsp, since: number): Json | undefined => sessionPuts(e, since).at(-1)?.body as Json;
  const kwhOf = (e: Emsp, s: Json | undefined): number | undefined => s?.kwh as number | undefined;
  const statusOf = (s: Json | undefined) => s?.status;

  for (const version of ['2.2.1', '2.1.1'] as const) {
    it(`${version}: START_SESSION -> session PUT ACTIVE -> energy -> STOP_SESSION -> COMPLETED`, async () => {
      const e = version === '2.2.1' ? emsp221 : emsp211;
      const { loc, charger } = await world.linkedCharger('ocpp1.6');
      const tx = behaves16(charger);
      const uid = `S${randomUUID().slice(0, 8)}`.toUpperCase();
      const token = await world.pushToken(e, uid);
      const since = e.sim.lastSeq;
      const start = await e.sim.call(
        'POST',
        'commands',
        '/START_SESSION',
        {
          response_url: e.sim.responseUrl(version, 'START_SESSION', randomUUID()),
          token,
          location_id: loc,
          evse_uid: 'E1',
        },
        version === '2.2.1' ? { role: 'RECEIVER' } : {},
      );
      expect((start.data as Json).result).to.equal('ACCEPTED');
      const active = await eventually(async () => {
        const s = lastSession(e, since);
        return statusOf(s) === 'ACTIVE' ? s : undefined;
      });
      const sessionId = String(active.id);
      if (version === '2.2.1') {
        expect(active).to.deep.include({ location_id: loc, evse_uid: 'E1', connector_id: '1', auth_method: 'COMMAND' });
        expect(active.cdr_token).to.deep.include({ uid, party_id: e.sim.party.party_id });
        expect(active.currency).to.equal('EUR');
      } else {
        // 2.1.1 has no COMMAND (AuthMethod): the eMSP's request authorized it
        expect(active).to.deep.include({ auth_id: token.auth_id, auth_method: 'AUTH_REQUEST' });
        // the 2.1.1 Session has no authorization_id (a strict eMSP refused the PUT)
        expect(active).not.to.have.property('authorization_id');
        expect((active.location as Json).id).to.equal(loc);
        expect(active.start_datetime).to.be.a('string');
      }
      await eventually(async () => (tx.transactionId() > 0 ? true : undefined));
      await charger.call('MeterValues', {
        connectorId: 1,
        transactionId: tx.transactionId(),
        meterValue: [
          {
            timestamp: new Date().toISOString(),
            sampledValue: [{ value: '3500', measurand: 'Energy.Active.Import.Register', unit: 'Wh' }],
          },
        ],
      });
      await eventually(async () => (kwhOf(e, lastSession(e, since)) === 2.5 ? true : undefined));
      // the sessions Sender serves it to this eMSP
      const listed = await e.sim.call('GET', 'sessions', '', undefined, version === '2.2.1' ? { role: 'SENDER' } : {});
      expect((listed.data as Json[]).map((s) => s.id)).to.include(sessionId);
      if (version === '2.1.1')
        for (const s of listed.data as Json[]) expect(s).not.to.have.property('authorization_id');
      const stop = await e.sim.call(
        'POST',
        'commands',
        '/STOP_SESSION',
        { response_url: e.sim.responseUrl(version, 'STOP_SESSION', randomUUID()), session_id: sessionId },
        version === '2.2.1' ? { role: 'RECEIVER' } : {},
      );
      expect((stop.data as Json).result).to.equal('ACCEPTED');
      const done = await eventually(async () => {
        const s = lastSession(e, since);
        return statusOf(s) === 'COMPLETED' ? s : undefined;
      });
      expect(done.kwh).to.equal(4);
      expect(done[version === '2.2.1' ? 'end_date_time' : 'end_datetime']).to.be.a('string');
      expect(e.sim.violations).to.deep.equal([]);
    });
  }

  it('START_SESSION with a token the eMSP never pushed (an app user): the session still goes to that eMSP', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    behaves16(charger);
    const uid = `APP${randomUUID().slice(0, 8)}`.toUpperCase();
    const since = emsp221.sim.lastSeq;
    const token = aToken221({ uid, type: 'APP_USER', country_code: 'DE', party_id: emsp221.sim.party.party_id });
    const start = await emsp221.sim.call(
      'POST',
      'commands',
      '/START_SESSION',
      { response_url: emsp221.sim.responseUrl('2.2.1', 'START_SESSION', randomUUID()), token, location_id: loc },
      { role: 'RECEIVER' },
    );
    expect((start.data as Json).result).to.equal('ACCEPTED');
    const session = await eventually(async () => lastSession(emsp221, since));
    expect(session.cdr_token).to.deep.include({ uid, type: 'APP_USER' });
    expect(session.auth_method).to.equal('COMMAND');
  });

  it("a START_SESSION starts one transaction: a later start with its token, blocked since, is refused and not the command's", async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    const tx = behaves16(charger);
    const uid = `ONCE${randomUUID().slice(0, 8)}`.toUpperCase();
    const token = await world.pushToken(emsp221, uid);
    const since = emsp221.sim.lastSeq;
    expect(await startSession221(loc, token, 'AREF-ONCE')).to.equal('ACCEPTED');
    const first = await eventually(async () => lastSession(emsp221, since));
    expect(first).to.deep.include({ auth_method: 'COMMAND', authorization_reference: 'AREF-ONCE' });
    await eventually(async () => (tx.transactionId() > 0 ? true : undefined));
    await charger.call('StopTransaction', {
      transactionId: tx.transactionId(),
      meterStop: 2000,
      timestamp: new Date().toISOString(),
    });
    await eventually(async () => (statusOf(lastSession(emsp221, since)) === 'COMPLETED' ? true : undefined));
    // the eMSP blocks the card
    await world.pushToken(emsp221, uid, { valid: false, last_updated: new Date(Date.now() + 1000).toISOString() });
    const later = emsp221.sim.lastSeq;
    // was Accepted twice within 10 minutes of the command, and the session and CDR said
    // COMMAND / AREF-ONCE: the command was never used up
    const authorized = (await charger.call('Authorize', { idTag: uid })) as { idTagInfo: { status: string } };
    expect(authorized.idTagInfo.status).to.equal('Blocked');
    const started = (await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: uid,
      meterStart: 2000,
      timestamp: new Date().toISOString(),
    })) as { idTagInfo: { status: string } };
    expect(started.idTagInfo.status).to.equal('Blocked');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sessionPuts(emsp221, later)).to.deep.equal([]);
  });

  it('1.6: two START_SESSIONs before the transaction starts: it follows the last, and the earlier lets no later start in', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    // the charger accepts both calls, and the driver starts once
    charger.handle('RemoteStartTransaction', () => Promise.resolve({ status: 'Accepted' }));
    const uid = `TWO${randomUUID().slice(0, 8)}`.toUpperCase();
    const token = await world.pushToken(emsp221, uid, { whitelist: 'NEVER' });
    emsp221.sim.setAuthorization(uid, 'BLOCKED');
    const since = emsp221.sim.lastSeq;
    expect(await startSession221(loc, token, 'AREF-1')).to.equal('ACCEPTED');
    expect(await startSession221(loc, token, 'AREF-2')).to.equal('ACCEPTED');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const first = (await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: uid,
      meterStart: 0,
      timestamp: new Date().toISOString(),
    })) as { transactionId: number; idTagInfo: { status: string } };
    expect(first.idTagInfo.status).to.equal('Accepted');
    const session = await eventually(async () => lastSession(emsp221, since));
    expect(session).to.deep.include({ auth_method: 'COMMAND', authorization_reference: 'AREF-2' });
    await charger.call('StopTransaction', {
      transactionId: first.transactionId,
      meterStop: 1000,
      timestamp: new Date().toISOString(),
    });
    await eventually(async () => (statusOf(lastSession(emsp221, since)) === 'COMPLETED' ? true : undefined));
    const later = emsp221.sim.lastSeq;
    // was Accepted as the first command's (COMMAND / AREF-1), the eMSP not asked: a connector
    // runs one transaction, and the one that started used both commands
    const second = (await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: uid,
      meterStart: 1000,
      timestamp: new Date().toISOString(),
    })) as { idTagInfo: { status: string } };
    expect(second.idTagInfo.status).to.equal('Blocked');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sessionPuts(emsp221, later).filter((r) => (r.body as Json).id !== session.id)).to.deep.equal([]);
  });

  it("START_SESSION with the uid of another eMSP's card: the session is the sender's, with its authorization_reference", async () => {
    const other = await world.emsp('2.2.1');
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    behaves16(charger);
    const uid = `CARD${randomUUID().slice(0, 8)}`.toUpperCase();
    await world.pushToken(other, uid, { whitelist: 'ALWAYS' });
    const since = emsp221.sim.lastSeq;
    const otherSince = other.sim.lastSeq;
    const token = aToken221({ uid, type: 'APP_USER', country_code: 'DE', party_id: emsp221.sim.party.party_id });
    expect(await startSession221(loc, token, 'AREF-1')).to.equal('ACCEPTED');
    const session = await eventually(async () => lastSession(emsp221, since));
    expect(session.cdr_token).to.deep.include({ uid, type: 'APP_USER', party_id: emsp221.sim.party.party_id });
    expect(session).to.deep.include({ auth_method: 'COMMAND', authorization_reference: 'AREF-1' });
    // the eMSP whose card has that uid authorized nothing and is sent nothing
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sessionPuts(other, otherSince)).to.deep.equal([]);
  });

  it("2.1.1: a START_SESSION token with party fields of its own (2.1.1 has none) is still the sender's", async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    behaves16(charger);
    const uid = `P${randomUUID().slice(0, 8)}`.toUpperCase();
    const since = emsp211.sim.lastSeq;
    // was stored as FR-ZZZ's token: the charge was made, and its CDR sent to no one
    const token = { ...aToken({ uid, auth_id: `X-${uid}` }), country_code: 'FR', party_id: 'ZZZ' };
    const start = await emsp211.sim.call('POST', 'commands', '/START_SESSION', {
      response_url: emsp211.sim.responseUrl('2.1.1', 'START_SESSION', randomUUID()),
      token,
      location_id: loc,
      evse_uid: 'E1',
    });
    expect((start.data as Json).result).to.equal('ACCEPTED');
    const session = await eventually(async () => lastSession(emsp211, since));
    expect(session.auth_id).to.equal(`X-${uid}`);
  });

  it('another eMSP cannot stop the session, nor see it: UNKNOWN_SESSION', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    behaves16(charger);
    const uid = `S${randomUUID().slice(0, 8)}`.toUpperCase();
    await world.pushToken(emsp221, uid);
    const since = emsp221.sim.lastSeq;
    await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: uid,
      meterStart: 0,
      timestamp: new Date().toISOString(),
    });
    const active = await eventually(async () => lastSession(emsp221, since));
    // a start at the charger, with no command: the eMSP authorized it in real time
    expect(active).to.deep.include({ auth_method: 'AUTH_REQUEST', authorization_reference: `REF-${uid}` });
    const stop = await emsp211.sim.call('POST', 'commands', '/STOP_SESSION', {
      response_url: emsp211.sim.responseUrl('2.1.1', 'STOP_SESSION', randomUUID()),
      session_id: String(active.id),
    });
    expect((stop.data as Json).result).to.equal('UNKNOWN_SESSION');
    const listed = await emsp211.sim.call('GET', 'sessions');
    expect((listed.data as Json[]).map((s) => s.id)).not.to.include(active.id);
  });

  it("2.0.1: a transaction started at plug-in becomes the eMSP's session when the token comes", async () => {
    const { loc, charger } = await world.linkedCharger('ocpp2.0.1');
    const uid = `S${randomUUID().slice(0, 8)}`.toUpperCase();
    await world.pushToken(emsp221, uid);
    const since = emsp221.sim.lastSeq;
    const event = (eventType: string, seqNo: number, extra: Json) => ({
      eventType,
      timestamp: new Date().toISOString(),
      triggerReason: eventType === 'Started' ? 'CablePluggedIn' : eventType === 'Ended' ? 'EVDeparted' : 'Authorized',
      seqNo,
      transactionInfo: { transactionId: 'TX-PLUG-1' },
      ...extra,
    });
    const energy = (wh: number) => ({
      meterValue: [
        {
          timestamp: new Date().toISOString(),
          sampledValue: [{ value: wh, measurand: 'Energy.Active.Import.Register' }],
        },
      ],
    });
    await charger.call('TransactionEvent', event('Started', 0, { evse: { id: 1, connectorId: 1 }, ...energy(100) }));
    await new Promise((r) => setTimeout(r, 200));
    expect(sessionPuts(emsp221, since)).to.have.length(0);
    await charger.call('TransactionEvent', event('Updated', 1, { idToken: { idToken: uid, type: 'ISO14443' } }));
    const active = await eventually(async () => lastSession(emsp221, since));
    expect(active).to.deep.include({ status: 'ACTIVE', location_id: loc, evse_uid: 'E1' });
    await charger.call('TransactionEvent', {
      ...event('Ended', 2, energy(2100)),
      transactionInfo: { transactionId: 'TX-PLUG-1', stoppedReason: 'EVDisconnected' },
    });
    const done = await eventually(async () => {
      const s = lastSession(emsp221, since);
      return statusOf(s) === 'COMPLETED' ? s : undefined;
    });
    expect(done.kwh).to.equal(2);
  });

  it('2.0.1: a START_SESSION authorizing a transaction started at plug-in is used up by it: a later tap is checked', async () => {
    const { loc, cp, charger } = await world.linkedCharger('ocpp2.0.1');
    const uid = `P${randomUUID().slice(0, 8)}`.toUpperCase();
    const token = await world.pushToken(emsp221, uid, { whitelist: 'NEVER' });
    emsp221.sim.setAuthorization(uid, 'BLOCKED');
    const since = emsp221.sim.lastSeq;
    let remoteStartId: number | undefined;
    charger.handle('RequestStartTransaction', ({ params }) => {
      remoteStartId = (params as { remoteStartId: number }).remoteStartId;
      return Promise.resolve({ status: 'Accepted' });
    });
    const event = (
      eventType: string,
      transactionId: string,
      seqNo: number,
      triggerReason: string,
      extra: Json = {},
    ) => ({
      eventType,
      timestamp: new Date().toISOString(),
      triggerReason,
      seqNo,
      transactionInfo: { transactionId, ...(eventType === 'Ended' ? { stoppedReason: 'EVDisconnected' } : {}) },
      evse: { id: 1, connectorId: 1 },
      ...extra,
    });
    await charger.call('TransactionEvent', event('Started', 'TX-PLUG-CMD', 0, 'CablePluggedIn'));
    expect(await startSession221(loc, token, 'PLUGREF')).to.equal('ACCEPTED');
    await eventually(async () => (remoteStartId === undefined ? undefined : true), { what: 'RequestStartTransaction' });
    const authorized = (await charger.call(
      'TransactionEvent',
      event('Updated', 'TX-PLUG-CMD', 1, 'RemoteStart', {
        idToken: { idToken: uid, type: 'Central' },
        transactionInfo: { transactionId: 'TX-PLUG-CMD', remoteStartId },
      }),
    )) as { idTokenInfo?: { status: string } };
    expect(authorized.idTokenInfo?.status).to.equal('Accepted');
    const first = await eventually(async () => lastSession(emsp221, since));
    expect(first).to.deep.include({ auth_method: 'COMMAND', authorization_reference: 'PLUGREF' });
    // the operator sees which remote start the session followed: was null
    const list = await world.api.request('GET', `/v1/sessions?charge_point_id=${encodeURIComponent(cp.id)}`);
    const row = (list.body as { value: Json[] }).value.find((x) => x.transaction_id === 'TX-PLUG-CMD');
    expect(row?.remote_start_command_id).to.be.a('string');
    await charger.call('TransactionEvent', event('Ended', 'TX-PLUG-CMD', 2, 'EVDeparted'));
    const later = emsp221.sim.lastSeq;
    // the card tapped for a new transaction: was Accepted as the command's (a second COMMAND
    // session and CDR with PLUGREF), the eMSP not asked
    const tapped = (await charger.call(
      'TransactionEvent',
      event('Started', 'TX-PLUG-TAP', 0, 'Authorized', { idToken: { idToken: uid, type: 'ISO14443' } }),
    )) as { idTokenInfo?: { status: string } };
    expect(tapped.idTokenInfo?.status).to.equal('Blocked');
    await new Promise((resolve) => setTimeout(resolve, 300));
    // no session but the first (its COMPLETED may come after the tap)
    expect(sessionPuts(emsp221, later).filter((r) => (r.body as Json).id !== first.id)).to.deep.equal([]);
  });

  it("2.0.1: a card tapped while a START_SESSION of its uid waits is no remote start: it is checked, and not the command's", async () => {
    const { loc, charger } = await world.linkedCharger('ocpp2.0.1');
    const uid = `W${randomUUID().slice(0, 8)}`.toUpperCase();
    const token = await world.pushToken(emsp221, uid, { whitelist: 'NEVER' });
    emsp221.sim.setAuthorization(uid, 'BLOCKED');
    // the charger accepts the remote start, and never starts it
    charger.handle('RequestStartTransaction', () => Promise.resolve({ status: 'Accepted' }));
    expect(await startSession221(loc, token, 'WAITING')).to.equal('ACCEPTED');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const since = emsp221.sim.lastSeq;
    const card = { idToken: uid, type: 'ISO14443' };
    const authorized = (await charger.call('Authorize', { idToken: card })) as { idTokenInfo: { status: string } };
    // was Accepted as "a remote start we sent", and the session went out as COMMAND / WAITING
    expect(authorized.idTokenInfo.status).to.equal('Blocked');
    const tapped = (await charger.call('TransactionEvent', {
      eventType: 'Started',
      timestamp: new Date().toISOString(),
      triggerReason: 'Authorized',
      seqNo: 0,
      transactionInfo: { transactionId: 'TX-TAP-WAIT' },
      evse: { id: 1, connectorId: 1 },
      idToken: card,
    })) as { idTokenInfo?: { status: string } };
    expect(tapped.idTokenInfo?.status).to.equal('Blocked');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sessionPuts(emsp221, since)).to.deep.equal([]);
  });

  it("2.0.1: the start of a START_SESSION, with its remoteStartId, is the command's though the eMSP refused the card just before", async () => {
    const { loc, charger } = await world.linkedCharger('ocpp2.0.1');
    const uid = `R${randomUUID().slice(0, 8)}`.toUpperCase();
    const token = await world.pushToken(emsp221, uid);
    emsp221.sim.setAuthorization(uid, 'BLOCKED');
    const card = await charger.call('Authorize', { idToken: { idToken: uid, type: 'ISO14443' } });
    expect((card as { idTokenInfo: { status: string } }).idTokenInfo.status).to.equal('Blocked');
    let remoteStartId: number | undefined;
    charger.handle('RequestStartTransaction', ({ params }) => {
      remoteStartId = (params as { remoteStartId: number }).remoteStartId;
      return Promise.resolve({ status: 'Accepted' });
    });
    const since = emsp221.sim.lastSeq;
    expect(await startSession221(loc, token, 'REF-AFTER-REFUSAL')).to.equal('ACCEPTED');
    await eventually(async () => (remoteStartId === undefined ? undefined : true), { what: 'RequestStartTransaction' });
    // the driver holds the card to the reader: the charger names it, with the command's remoteStartId
    const started = (await charger.call('TransactionEvent', {
      eventType: 'Started',
      timestamp: new Date().toISOString(),
      triggerReason: 'RemoteStart',
      seqNo: 0,
      transactionInfo: { transactionId: 'TX-AFTER-REFUSAL', remoteStartId },
      evse: { id: 1, connectorId: 1 },
      idToken: { idToken: uid, type: 'ISO14443' },
    })) as { idTokenInfo?: { status: string } };
    // was Blocked on the remembered refusal of the card (and the eMSP asked of a card with the
    // command's remoteStartId): the session and CDR were lost to the eMSP that started it
    expect(started.idTokenInfo?.status).to.equal('Accepted');
    const session = await eventually(async () => lastSession(emsp221, since));
    expect(session).to.deep.include({ auth_method: 'COMMAND', authorization_reference: 'REF-AFTER-REFUSAL' });
  });

  it("2.0.1: an Updated naming another eMSP's card with a START_SESSION's remoteStartId is the card's, not the command's", async () => {
    const other = await world.emsp('2.2.1');
    const { loc, charger } = await world.linkedCharger('ocpp2.0.1');
    const uid = `S${randomUUID().slice(0, 8)}`.toUpperCase();
    const card = `K${randomUUID().slice(0, 8)}`.toUpperCase();
    const token = await world.pushToken(emsp221, uid);
    await world.pushToken(other, card, { whitelist: 'ALWAYS' });
    let remoteStartId: number | undefined;
    charger.handle('RequestStartTransaction', ({ params }) => {
      remoteStartId = (params as { remoteStartId: number }).remoteStartId;
      return Promise.resolve({ status: 'Accepted' });
    });
    const since = emsp221.sim.lastSeq;
    const otherSince = other.sim.lastSeq;
    const base = { timestamp: new Date().toISOString(), evse: { id: 1, connectorId: 1 } };
    await charger.call('TransactionEvent', {
      ...base,
      eventType: 'Started',
      triggerReason: 'CablePluggedIn',
      seqNo: 0,
      transactionInfo: { transactionId: 'TX-OTHER-CARD' },
    });
    expect(await startSession221(loc, token, 'CMDREF')).to.equal('ACCEPTED');
    await eventually(async () => (remoteStartId === undefined ? undefined : true), { what: 'RequestStartTransaction' });
    // the charger names a card that is not the command's token, beside the command's remoteStartId
    const named = (await charger.call('TransactionEvent', {
      ...base,
      eventType: 'Updated',
      triggerReason: 'Authorized',
      seqNo: 1,
      transactionInfo: { transactionId: 'TX-OTHER-CARD', remoteStartId },
      idToken: { idToken: card, type: 'ISO14443' },
    })) as { idTokenInfo?: { status: string } };
    expect(named.idTokenInfo?.status).to.equal('Accepted');
    // the card's eMSP gets the session; was COMMAND with CMDREF to the command's eMSP
    const session = await eventually(async () => lastSession(other, otherSince));
    expect(session.cdr_token).to.deep.include({ uid: card, party_id: other.sim.party.party_id });
    expect(session.auth_method).to.equal('WHITELIST');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sessionPuts(emsp221, since)).to.deep.equal([]);
  });

  it("2.0.1: a transaction kept after its card was refused, authorized by another card: the session is that card's and roams to its eMSP", async () => {
    const { cp, charger } = await world.linkedCharger('ocpp2.0.1');
    const uid = `L${randomUUID().slice(0, 8)}`.toUpperCase();
    await world.pushToken(emsp221, uid, { whitelist: 'ALWAYS' });
    const since = emsp221.sim.lastSeq;
    /** The TransactionEvents of one transaction of `client` at EVSE 1, its end for `stoppedReason`. */
    const eventsOf =
      (client: typeof charger, transactionId: string, stoppedReason: string) =>
      (eventType: string, seqNo: number, extra: Json) =>
        client.call('TransactionEvent', {
          eventType,
          timestamp: new Date().toISOString(),
          seqNo,
          transactionInfo: { transactionId, ...(eventType === 'Ended' ? { stoppedReason } : {}) },
          evse: { id: 1, connectorId: 1 },
          ...extra,
        }) as Promise<{ idTokenInfo?: { status: string } }>;
    const event = eventsOf(charger, `TX-LATE-${uid}`, 'EVDisconnected');
    const refused = await event('Started', 0, {
      triggerReason: 'Authorized',
      idToken: { idToken: 'NO-SUCH-CARD', type: 'ISO14443' },
    });
    expect(refused.idTokenInfo?.status).to.equal('Invalid');
    const card = { idToken: uid, type: 'ISO14443' };
    const authorized = await event('Updated', 1, { triggerReason: 'Authorized', idToken: card });
    expect(authorized.idTokenInfo?.status).to.equal('Accepted');
    await event('Ended', 2, { triggerReason: 'EVDeparted' });
    const sessions = await world.api.request('GET', `/v1/sessions?charge_point_id=${encodeURIComponent(cp.id)}`);
    // was id_tag NO-SUCH-CARD with the card that paid as the one that stopped it, and no eMSP told
    expect((sessions.body as { value: Json[] }).value[0]).to.include({ id_tag: uid, stop_id_tag: null });
    const session = await eventually(async () => lastSession(emsp221, since));
    expect(session.cdr_token).to.deep.include({ uid });

    // a card named to stop it (StopAuthorized) is the stop's, its own refused or not
    const { cp: cp2, charger: charger2 } = await world.linkedCharger('ocpp2.0.1');
    const stop = eventsOf(charger2, `TX-STOP-${uid}`, 'Local');
    await stop('Started', 0, { triggerReason: 'Authorized', idToken: { idToken: 'NO-SUCH-CARD', type: 'ISO14443' } });
    await stop('Updated', 1, { triggerReason: 'StopAuthorized', idToken: card });
    await stop('Ended', 2, { triggerReason: 'StopAuthorized', idToken: card });
    const stopped = await world.api.request('GET', `/v1/sessions?charge_point_id=${encodeURIComponent(cp2.id)}`);
    expect((stopped.body as { value: Json[] }).value[0]).to.include({ id_tag: 'NO-SUCH-CARD', stop_id_tag: uid });
  });

  it("2.0.1: the command's remoteStartId with a card whose uid differs in case only is no command's start; the uid's first holder has it", async () => {
    const other = await world.emsp('2.2.1');
    const { loc, charger } = await world.linkedCharger('ocpp2.0.1');
    const upper = `M${randomUUID().slice(0, 8)}`.toUpperCase();
    const card = upper.toLowerCase();
    const token = await world.pushToken(emsp221, upper, { whitelist: 'ALWAYS' });
    await world.pushToken(other, card, {
      whitelist: 'ALWAYS',
      last_updated: new Date(Date.now() + 1000).toISOString(),
    });
    let remoteStartId: number | undefined;
    charger.handle('RequestStartTransaction', ({ params }) => {
      remoteStartId = (params as { remoteStartId: number }).remoteStartId;
      return Promise.resolve({ status: 'Accepted' });
    });
    const since = emsp221.sim.lastSeq;
    const otherSince = other.sim.lastSeq;
    expect(await startSession221(loc, token, 'CASEREF')).to.equal('ACCEPTED');
    await eventually(async () => (remoteStartId === undefined ? undefined : true), { what: 'RequestStartTransaction' });
    await charger.call('TransactionEvent', {
      eventType: 'Started',
      timestamp: new Date().toISOString(),
      triggerReason: 'Authorized',
      seqNo: 0,
      transactionInfo: { transactionId: 'TX-CASE-CARD', remoteStartId },
      evse: { id: 1, connectorId: 1 },
      idToken: { idToken: card, type: 'ISO14443' },
    });
    // a card, not the command's token (another case may be another card): decided as a card, and
    // one uid in any case (OCPI CiString) is its valid holder's stored first (Decisions 12); it
    // went to the eMSP of the lower-case token, pushed later
    const session = await eventually(async () => lastSession(emsp221, since));
    expect(session.cdr_token).to.deep.include({ uid: upper, party_id: emsp221.sim.party.party_id });
    expect(session.auth_method).to.equal('WHITELIST');
    expect(session).to.not.have.property('authorization_reference');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sessionPuts(other, otherSince)).to.deep.equal([]);
  });

  it("a start stamped 15 s ahead, an end by the corrected clock: the partner's session never ends before it starts", async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    const uid = world.unique('AHEAD');
    await world.pushToken(emsp221, uid, { whitelist: 'ALWAYS' });
    const since = emsp221.sim.lastSeq;
    const arrived = Date.now();
    const { transactionId } = (await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: uid,
      meterStart: 1000,
      timestamp: new Date(Date.now() + 15_000).toISOString(),
    })) as { transactionId: number };
    await charger.call('StopTransaction', { transactionId, meterStop: 15_000, timestamp: new Date().toISOString() });
    const ended = await eventually(async () => {
      const last = lastSession(emsp221, since);
      return last?.status === 'COMPLETED' ? last : undefined;
    });
    const start = Date.parse(String(ended.start_date_time));
    // counted at its arrival, as our own session is (was: the stamp as sent, 15 s ahead)
    expect(start).to.be.within(arrived - 1000, Date.now());
    expect(Date.parse(String(ended.end_date_time))).to.be.at.least(start);
  });

  it('a transaction with a token no partner issued makes no OCPI session', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    const since = emsp221.sim.lastSeq;
    await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: 'LOCAL-ONLY',
      meterStart: 0,
      timestamp: new Date().toISOString(),
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(sessionPuts(emsp221, since)).to.have.length(0);
  });
});
