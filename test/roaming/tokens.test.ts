import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { aToken221 } from '../support/ocpi-builders.js';
import type { RecordedRequest } from '../support/ocpi-simulator.js';
import { RoamingWorld, type Emsp } from '../support/roaming-world.js';

type Json = Record<string, unknown>;

/**
 * Tokens authorize charges (docs/ROAMING.md "Tokens"): what an ocpp-rpc charger is answered for an
 * id tag, by the whitelist rule of the OCPI token an eMSP simulator pushed us, by the eMSP's
 * real-time answer, and for tokens no one issued.
 */
describe('roaming: tokens authorize charges on our chargers', function () {
  this.timeout(60_000);
  let world: RoamingWorld;
  let emsp: Emsp;
  let emsp211: Emsp;

  before(async () => {
    world = await RoamingWorld.start({ ROAMING_AUTHORIZE_TIMEOUT_MS: '500', ROAMING_SESSION_PUSH_MS: '0' });
    emsp = await world.emsp('2.2.1');
    emsp211 = await world.emsp('2.1.1');
  });
  after(async () => world.stop());

  const uid = () => `A${randomUUID().slice(0, 8)}`.toUpperCase();
  const authorizeCalls = (e: Emsp, tag: string): RecordedRequest[] =>
    e.sim.received.filter((r) => r.method === 'POST' && r.path.includes(`/tokens/${tag}/authorize`));
  type Charger16 = { call: (a: string, p: unknown) => Promise<unknown> };
  const authorize16 = async (charger: Charger16, idTag: string) =>
    ((await charger.call('Authorize', { idTag })) as { idTagInfo: { status: string } }).idTagInfo.status;
  /** a 1.6 StartTransaction's answer for `idTag` on `connectorId` */
  const start16 = async (charger: Charger16, connectorId: number, idTag: string) =>
    (
      (await charger.call('StartTransaction', {
        connectorId,
        idTag,
        meterStart: 0,
        timestamp: new Date().toISOString(),
      })) as { idTagInfo: { status: string } }
    ).idTagInfo.status;

  it('an id tag that is no token is Invalid; our own token is Accepted', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    expect(await authorize16(charger, 'NOBODY-1')).to.equal('Invalid');
    const own = uid();
    const put = await world.api.request('PUT', `/v1/ocpi/tokens/NL/EVP/${own}`, { body: aToken221({ uid: own }) });
    expect(put.status, JSON.stringify(put.body)).to.be.oneOf([200, 201]);
    expect(await authorize16(charger, own)).to.equal('Accepted');
  });

  it('1.6: a remote-started id tag is let in at the connector the start named only, and not once the charger refused the start', async () => {
    const { cp, charger } = await world.linkedCharger('ocpp1.6');
    let answer = 'Accepted';
    let answered = 0;
    charger.handle('RemoteStartTransaction', () => Promise.resolve({ status: answer }));
    const remoteStart = async (idTag: string) => {
      answered += 1;
      const res = await world.api.request('POST', `/v1/charge-points/${cp.id}/remote-start`, {
        body: { id_tag: idTag, connector_id: 1 },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      await eventually(
        async () => {
          const view = await world.api.request('GET', `/v1/charge-points/${cp.id}`);
          const commands = (view.body as { commands: Array<{ status: string }> }).commands;
          const n = commands.filter((c) => c.status === 'Accepted' || c.status === 'Rejected').length;
          return n >= answered ? n : undefined;
        },
        { what: 'the charger answered the remote start' },
      );
    };
    // id tags that are no token: only the remote start lets them in
    const elsewhere = uid();
    await remoteStart(elsewhere);
    // was Accepted on any connector
    expect(await start16(charger, 2, elsewhere)).to.equal('Invalid');
    expect(await start16(charger, 1, elsewhere)).to.equal('Accepted');
    answer = 'Rejected';
    const refused = uid();
    await remoteStart(refused);
    // was Accepted by Authorize and StartTransaction for 10 minutes
    expect(await authorize16(charger, refused)).to.equal('Invalid');
    expect(await start16(charger, 2, refused)).to.equal('Invalid');
  });

  it('a token the operator blocks or issues counts at once on the charger that saw it last', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    const card = uid();
    await world.api.request('PUT', `/v1/ocpi/tokens/NL/EVP/${card}`, { body: aToken221({ uid: card }) });
    expect(await authorize16(charger, card)).to.equal('Accepted');
    await world.api.request('PUT', `/v1/ocpi/tokens/NL/EVP/${card}`, { body: aToken221({ uid: card, valid: false }) });
    // was Accepted for 5 minutes more (the decision was remembered), its cache expiry renewed
    expect(await authorize16(charger, card)).to.equal('Blocked');
    const issued = uid();
    expect(await authorize16(charger, issued)).to.equal('Invalid');
    await world.api.request('PUT', `/v1/ocpi/tokens/NL/EVP/${issued}`, { body: aToken221({ uid: issued }) });
    expect(await authorize16(charger, issued)).to.equal('Accepted');
  });

  it('an id tag finds its token whatever the case of its letters; the eMSP is asked with its own uid', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    const own = uid();
    await world.api.request('PUT', `/v1/ocpi/tokens/NL/EVP/${own}`, { body: aToken221({ uid: own }) });
    // IdToken and Token.uid are CiStrings: a reader sending lower-case hex was refused Invalid
    expect(await authorize16(charger, own.toLowerCase())).to.equal('Accepted');
    const blocked = uid();
    await world.pushToken(emsp, blocked, { valid: false });
    expect(await authorize16(charger, blocked.toLowerCase())).to.equal('Blocked');
    const allowed = uid();
    await world.pushToken(emsp, allowed);
    expect(await authorize16(charger, allowed.toLowerCase())).to.equal('Accepted');
    expect(authorizeCalls(emsp, allowed)).to.have.length(1);
    expect(await authorize16(charger, 'nobody-case-1')).to.equal('Invalid');
  });

  it("an eMSP that pushes a token of another eMSP's card's uid, in any case, takes nothing from it: the valid one stored first counts, online and offline", async () => {
    const { cp, charger } = await world.linkedCharger('ocpp1.6');
    const card = uid();
    await world.pushToken(emsp, card, { whitelist: 'ALWAYS', group_id: 'GROUP-FIRST' });
    // later pushes of the uid by another eMSP, one in lower case (which readers send): the token
    // updated last counted, and the tag's exact case before all; each took the card's sessions
    const other = await world.emsp('2.2.1');
    const later = {
      whitelist: 'ALWAYS',
      group_id: 'GROUP-LATER',
      last_updated: new Date(Date.now() + 1000).toISOString(),
    };
    await world.pushToken(other, card, later);
    await world.pushToken(other, card.toLowerCase(), later);
    const since = emsp.sim.lastSeq;
    expect(await start16(charger, 1, card.toLowerCase())).to.equal('Accepted');
    const pushed = await eventually(async () =>
      emsp.sim.receivedSince(since).find((r) => r.method === 'PUT' && r.path.includes('/sessions/')),
    );
    expect((pushed.body as { cdr_token: Json }).cdr_token).to.include({
      party_id: emsp.sim.party.party_id,
      uid: card,
    });
    expect(other.sim.received.filter((r) => r.path.includes('/sessions/'))).to.deep.equal([]);
    // the charger's local list holds the same token: its group, one entry for the uid
    const sent: Array<{ localAuthorizationList?: Array<{ idTag: string; idTagInfo?: { parentIdTag?: string } }> }> = [];
    charger.handle('SendLocalList', ({ params }) => {
      sent.push(params as (typeof sent)[number]);
      return Promise.resolve({ status: 'Accepted' });
    });
    const sync = await world.api.request('POST', `/v1/charge-points/${cp.id}/sync-local-list`, {
      body: { full: true },
    });
    expect(sync.status).to.equal(200);
    const entries = sent
      .flatMap((m) => m.localAuthorizationList ?? [])
      .filter((e) => e.idTag.toLowerCase() === card.toLowerCase());
    expect(entries.map((e) => [e.idTag, e.idTagInfo?.parentIdTag])).to.deep.equal([[card, 'GROUP-FIRST']]);
    // once the first eMSP withdraws its card, the other's valid token counts
    await world.pushToken(emsp, card, { valid: false, last_updated: new Date(Date.now() + 2000).toISOString() });
    expect(await authorize16(charger, card)).to.equal('Accepted');
  });

  it('valid false is Blocked; whitelist ALWAYS is Accepted without asking the eMSP', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    const blocked = uid();
    await world.pushToken(emsp, blocked, { valid: false });
    expect(await authorize16(charger, blocked)).to.equal('Blocked');
    const always = uid();
    await world.pushToken(emsp, always, { whitelist: 'ALWAYS' });
    expect(await authorize16(charger, always)).to.equal('Accepted');
    expect(authorizeCalls(emsp, always)).to.have.length(0);
  });

  it('an eMSP that ended the link (credentials DELETE): its tokens authorize no more charges', async () => {
    const gone = await world.emsp('2.2.1');
    const tag = uid();
    await world.pushToken(gone, tag, { whitelist: 'ALWAYS' });
    const before = await world.linkedCharger('ocpp1.6');
    expect(await authorize16(before.charger, tag)).to.equal('Accepted');
    const answer = await gone.sim.unregister();
    expect(answer.statusCode).to.equal(1000);
    // another charger (a charger remembers an answer for a few minutes): no one would be billed
    const { charger } = await world.linkedCharger('ocpp1.6');
    expect(await authorize16(charger, tag)).to.equal('Invalid');
  });

  it('an eMSP gone for good: unregister answers 502 and keeps the link; with ?force=true the link ends here, and its tokens with it', async () => {
    const gone = await world.emsp('2.2.1');
    const tag = uid();
    await world.pushToken(gone, tag, { whitelist: 'ALWAYS' });
    await gone.sim.close();
    const kept = await world.api.request('POST', `/v1/partners/${gone.id}/unregister`);
    expect(kept.status, JSON.stringify(kept.body)).to.equal(502);
    const { charger } = await world.linkedCharger('ocpp1.6');
    expect(await authorize16(charger, tag)).to.equal('Accepted');
    const ended = await world.api.request('POST', `/v1/partners/${gone.id}/unregister?force=true`);
    expect(ended.status, JSON.stringify(ended.body)).to.equal(200);
    expect(ended.body).to.include({ status: 'unregistered' });
    // another charger (a charger remembers an answer for a few minutes)
    const other = await world.linkedCharger('ocpp1.6');
    expect(await authorize16(other.charger, tag)).to.equal('Invalid');
  });

  it('an eMSP that ended the link during a charge: the stop naming its token is not Accepted for another hour', async () => {
    const gone = await world.emsp('2.2.1');
    const tag = uid();
    await world.pushToken(gone, tag, { whitelist: 'ALWAYS' });
    const { cp, charger } = await world.linkedCharger('ocpp1.6');
    const { transactionId, idTagInfo } = (await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: tag,
      meterStart: 0,
      timestamp: new Date().toISOString(),
    })) as { transactionId: number; idTagInfo: { status: string } };
    expect(idTagInfo.status).to.equal('Accepted');
    expect((await gone.sim.unregister()).statusCode).to.equal(1000);
    const stopped = (await charger.call('StopTransaction', {
      transactionId,
      idTag: tag,
      meterStop: 4000,
      timestamp: new Date().toISOString(),
    })) as { idTagInfo?: { status: string; expiryDate?: string } };
    // was Accepted with an expiryDate an hour ahead: a caching charger let the card in on, unbilled
    expect(stopped.idTagInfo?.status).to.equal('Invalid');
    expect(stopped.idTagInfo?.expiryDate).to.equal(undefined);
    // the transaction still ends, its energy kept
    const sessions = await world.api.request('GET', `/v1/sessions?charge_point_id=${cp.id}`);
    expect((sessions.body as { value: Json[] }).value[0]).to.include({ status: 'COMPLETED', energy_wh: 4000 });
  });

  it("an eMSP that ended the link: its RFID tokens leave the chargers' local lists", async () => {
    const gone = await world.emsp('2.2.1');
    const tag = uid();
    await world.pushToken(gone, tag, { whitelist: 'ALWAYS' });
    const { cp, charger } = await world.linkedCharger('ocpp1.6');
    const sent: Array<{ updateType: string; localAuthorizationList?: Array<{ idTag: string; idTagInfo?: Json }> }> = [];
    charger.handle('SendLocalList', ({ params }) => {
      sent.push(params as (typeof sent)[number]);
      return Promise.resolve({ status: 'Accepted' });
    });
    const sync = () => world.api.request('POST', `/v1/charge-points/${cp.id}/sync-local-list`, { body: {} });
    expect((await sync()).status).to.equal(200);
    expect(sent.flatMap((m) => m.localAuthorizationList ?? []).map((e) => e.idTag)).to.include(tag);
    expect((await gone.sim.unregister()).statusCode).to.equal(1000);
    sent.length = 0;
    expect((await sync()).status).to.equal(200);
    // a differential update without idTagInfo removes the entry (1.6 SendLocalList)
    const entry = sent.flatMap((m) => m.localAuthorizationList ?? []).find((e) => e.idTag === tag);
    expect(entry).to.deep.equal({ idTag: tag });
  });

  it('whitelist ALLOWED asks the eMSP in real time with the location; its answer decides, its reference goes on the session', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    const allowed = uid();
    await world.pushToken(emsp, allowed);
    expect(await authorize16(charger, allowed)).to.equal('Accepted');
    const [call] = authorizeCalls(emsp, allowed);
    expect(call?.path).to.match(/\?type=RFID$/);
    expect(call?.body).to.deep.equal({ location_id: loc, evse_uids: ['E1'] });
    const since = emsp.sim.lastSeq;
    const start = (await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: allowed,
      meterStart: 0,
      timestamp: new Date().toISOString(),
    })) as { idTagInfo: { status: string } };
    expect(start.idTagInfo.status).to.equal('Accepted');
    // the Authorize's answer is remembered for the start: the eMSP is asked once
    expect(authorizeCalls(emsp, allowed)).to.have.length(1);
    const session = await eventually(async () =>
      emsp.sim.receivedSince(since).find((r) => r.method === 'PUT' && r.path.includes('/sessions/')),
    );
    expect(session.body).to.deep.include({ auth_method: 'AUTH_REQUEST', authorization_reference: `REF-${allowed}` });

    const refused = uid();
    await world.pushToken(emsp, refused);
    emsp.sim.setAuthorization(refused, 'BLOCKED');
    expect(await authorize16(charger, refused)).to.equal('Blocked');
  });

  it("an eMSP's remembered ALLOWED holds only while its token is unchanged: blocked, or moved to NEVER, it is decided again", async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    const blocked = uid();
    await world.pushToken(emsp, blocked);
    expect(await authorize16(charger, blocked)).to.equal('Accepted');
    await world.pushToken(emsp, blocked, { valid: false, last_updated: new Date(Date.now() + 1000).toISOString() });
    // was Accepted for 5 minutes on the remembered answer, the eMSP not asked
    expect(await start16(charger, 1, blocked)).to.equal('Blocked');
    const never = uid();
    await world.pushToken(emsp, never);
    expect(await authorize16(charger, never)).to.equal('Accepted');
    emsp.sim.setAuthorization(never, 'BLOCKED');
    await world.pushToken(emsp, never, { whitelist: 'NEVER', last_updated: new Date(Date.now() + 1000).toISOString() });
    // NEVER: "the CPO shall always send a realtime authorization for any use of this Token"
    expect(await authorize16(charger, never)).to.equal('Blocked');
    expect(authorizeCalls(emsp, never)).to.have.length(2);
  });

  it("an eMSP's remembered answer is its link's: a link ended and made again within the minutes asks the eMSP anew", async () => {
    const again = await world.emsp('2.2.1');
    const { charger } = await world.linkedCharger('ocpp1.6');
    const tag = uid();
    await world.pushToken(again, tag);
    expect(await authorize16(charger, tag)).to.equal('Accepted');
    expect(authorizeCalls(again, tag)).to.have.length(1);
    expect((await again.sim.unregister()).statusCode).to.equal(1000);
    // the operator onboards it again, and it registers with the fresh Token A
    const { country_code, party_id } = again.sim.party;
    const onboarded = await world.api.request('POST', '/v1/partners', {
      body: { role: 'EMSP', country_code, party_id },
    });
    const { versions_url, token } = onboarded.body as { versions_url: string; token: string };
    expect((await again.sim.registerWith(versions_url, token)).answer.statusCode).to.equal(1000);
    // was Accepted on the answer of the link that ended, the eMSP not asked on the new one
    expect(await authorize16(charger, tag)).to.equal('Accepted');
    expect(authorizeCalls(again, tag)).to.have.length(2);
  });

  it('an eMSP that does not answer: ALLOWED_OFFLINE and ALLOWED fall back to Accepted, NEVER is Invalid', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    const offline = uid();
    const allowed = uid();
    const never = uid();
    await world.pushToken(emsp211, offline, { whitelist: 'ALLOWED_OFFLINE' });
    await world.pushToken(emsp211, allowed, { whitelist: 'ALLOWED' });
    await world.pushToken(emsp211, never, { whitelist: 'NEVER' });
    emsp211.sim.setDown(true);
    try {
      expect(await authorize16(charger, offline)).to.equal('Accepted');
      expect(await authorize16(charger, allowed)).to.equal('Accepted');
      expect(await authorize16(charger, never)).to.equal('Invalid');
      expect(authorizeCalls(emsp211, never)).to.have.length(1);
    } finally {
      emsp211.sim.setDown(false);
    }
  });

  it('whitelist NEVER: the eMSP is asked at every Authorize, its answer serves the one start after it, the charger may not cache it', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    const never = uid();
    await world.pushToken(emsp, never, { whitelist: 'NEVER' });
    const authorize = async () =>
      ((await charger.call('Authorize', { idTag: never })) as { idTagInfo: { status: string; expiryDate?: string } })
        .idTagInfo;
    const first = await authorize();
    expect(first.status).to.equal('Accepted');
    // an entry of the charger's cache that has expired when it is written: no later use from it
    expect(Date.parse(String(first.expiryDate))).to.be.at.most(Date.now());
    const startedAt = new Date().toISOString();
    const start = (await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: never,
      meterStart: 0,
      timestamp: startedAt,
    })) as { transactionId: number; idTagInfo: { status: string } };
    expect(start.idTagInfo.status).to.equal('Accepted');
    // the start took the Authorize's answer
    expect(authorizeCalls(emsp, never)).to.have.length(1);
    // the same start delivered again (its answer lost): the same transaction, an answer the
    // charger may not cache, and the eMSP not asked again
    const startedAgain = async () => {
      const retried = (await charger.call('StartTransaction', {
        connectorId: 1,
        idTag: never,
        meterStart: 0,
        timestamp: startedAt,
      })) as { transactionId: number; idTagInfo: { status: string; expiryDate?: string } };
      expect(retried.transactionId).to.equal(start.transactionId);
      expect(retried.idTagInfo.status).to.equal('Accepted');
      expect(Date.parse(String(retried.idTagInfo.expiryDate))).to.be.at.most(Date.now());
      expect(authorizeCalls(emsp, never)).to.have.length(1);
    };
    await startedAgain();
    const stop = (await charger.call('StopTransaction', {
      transactionId: start.transactionId,
      meterStop: 10,
      timestamp: new Date().toISOString(),
      idTag: never,
    })) as { idTagInfo?: { status: string; expiryDate?: string } };
    // the stop repeats the start's answer, an entry that has expired: was now + OCPP_AUTH_CACHE_S,
    // which a 1.6 charger's cache keeps (StopTransaction.conf updates it)
    expect(stop.idTagInfo?.status).to.equal('Accepted');
    expect(Date.parse(String(stop.idTagInfo?.expiryDate))).to.be.at.most(Date.now());
    // and after the end: answered as first, an entry that has expired (was now +
    // OCPP_AUTH_CACHE_S, which let the card in from the charger's cache)
    await startedAgain();

    // the eMSP blocks the card: the next use is asked, and refused
    emsp.sim.setAuthorization(never, 'BLOCKED');
    expect((await authorize()).status).to.equal('Blocked');
    expect(authorizeCalls(emsp, never)).to.have.length(2);
    const again = (await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: never,
      meterStart: 10,
      timestamp: new Date().toISOString(),
    })) as { idTagInfo: { status: string } };
    expect(again.idTagInfo.status).to.equal('Blocked');
  });

  it('1.6: a start delivered again after its card was made not valid is answered Blocked, the same transaction', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    const card = uid();
    await world.pushToken(emsp, card);
    const startedAt = new Date().toISOString();
    const start = async () =>
      (await charger.call('StartTransaction', {
        connectorId: 1,
        idTag: card,
        meterStart: 0,
        timestamp: startedAt,
      })) as {
        transactionId: number;
        idTagInfo: { status: string; expiryDate?: string };
      };
    const first = await start();
    expect(first.idTagInfo.status).to.equal('Accepted');
    await world.pushToken(emsp, card, { valid: false, last_updated: new Date(Date.now() + 1000).toISOString() });
    // was Accepted with a new expiry: the charger's cache kept the withdrawn card for another hour
    const retried = await start();
    expect(retried).to.deep.equal({ transactionId: first.transactionId, idTagInfo: { status: 'Blocked' } });
  });

  it('whitelist NEVER: an Authorize the eMSP did not answer replaces the answer before it; the start asks again', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    const never = uid();
    await world.pushToken(emsp, never, { whitelist: 'NEVER' });
    const authorize = async () =>
      ((await charger.call('Authorize', { idTag: never })) as { idTagInfo: { status: string } }).idTagInfo.status;
    expect(await authorize()).to.equal('Accepted');
    emsp.sim.setDown(true);
    try {
      expect(await authorize()).to.equal('Invalid');
    } finally {
      emsp.sim.setDown(false);
    }
    emsp.sim.setAuthorization(never, 'BLOCKED');
    const start = (await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: never,
      meterStart: 0,
      timestamp: new Date().toISOString(),
    })) as { idTagInfo: { status: string } };
    // was Accepted on the first Authorize's answer, the eMSP not asked: the last check had said Invalid
    expect(start.idTagInfo.status).to.equal('Blocked');
    expect(authorizeCalls(emsp, never)).to.have.length(3);
  });

  it('a token not valid whose whitelist requires real-time authorization (NEVER, ALLOWED_OFFLINE) is asked of the eMSP', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    for (const whitelist of ['NEVER', 'ALLOWED_OFFLINE']) {
      const topped = uid();
      await world.pushToken(emsp, topped, { valid: false, whitelist });
      // the driver topped up: the eMSP knows better than the token it pushed
      expect(await authorize16(charger, topped), whitelist).to.equal('Accepted');
      expect(authorizeCalls(emsp, topped), whitelist).to.have.length(1);
    }
    // an eMSP that does not answer leaves the token as it was pushed: not valid
    const stale = uid();
    await world.pushToken(emsp211, stale, { valid: false, whitelist: 'ALLOWED_OFFLINE' });
    emsp211.sim.setDown(true);
    try {
      expect(await authorize16(charger, stale)).to.equal('Blocked');
    } finally {
      emsp211.sim.setDown(false);
    }
  });

  it('the eMSP does not know the token (2004): Invalid, even for ALLOWED', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    const forgotten = uid();
    await world.pushToken(emsp, forgotten);
    emsp.sim.setAuthorization(forgotten, 'UNKNOWN');
    expect(await authorize16(charger, forgotten)).to.equal('Invalid');
  });

  it('the eMSP did not know a token it authorizes at each use (2004): the next use asks it again', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    for (const whitelist of ['NEVER', 'ALLOWED_OFFLINE']) {
      const issued = uid();
      await world.pushToken(emsp, issued, { whitelist });
      emsp.sim.setAuthorization(issued, 'UNKNOWN');
      expect(await authorize16(charger, issued), whitelist).to.equal('Invalid');
      // the eMSP activated the card: was Invalid for 5 minutes on the remembered 2004, not asked,
      // at the next Authorize and at a start that follows the refused one
      emsp.sim.setAuthorization(issued, 'ALLOWED');
      expect(await start16(charger, 1, issued), whitelist).to.equal('Accepted');
      expect(authorizeCalls(emsp, issued), whitelist).to.have.length(2);
      expect(await authorize16(charger, issued), whitelist).to.equal('Accepted');
      expect(authorizeCalls(emsp, issued), whitelist).to.have.length(3);
    }
  });

  it("ALLOWED_OFFLINE let in while the eMSP does not answer: the charger's cache may not keep it", async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    const offline = uid();
    await world.pushToken(emsp211, offline, { whitelist: 'ALLOWED_OFFLINE' });
    emsp211.sim.setDown(true);
    try {
      const info = ((await charger.call('Authorize', { idTag: offline })) as { idTagInfo: Json }).idTagInfo;
      expect(info.status).to.equal('Accepted');
      // was now + OCPP_AUTH_CACHE_S: a charger that authorizes from its cache started later uses
      // for an hour without asking, the eMSP back or not
      expect(Date.parse(String(info.expiryDate))).to.be.at.most(Date.now());
    } finally {
      emsp211.sim.setDown(false);
    }
  });

  it("the eMSP's answer allows some EVSEs only: elsewhere the token is refused, from the answer or remembered", async () => {
    const loc = world.unique('LOC-');
    await world.location(loc, ['E1', 'E2']);
    const cp = await world.chargePoint('ocpp1.6');
    await world.link(cp.id, 1, loc, 'E1');
    await world.link(cp.id, 2, loc, 'E2');
    const charger = await world.charger(cp, 'ocpp1.6');
    // whitelist ALLOWED: the answer is remembered for later uses; NEVER: it serves the next start
    for (const whitelist of ['ALLOWED', 'NEVER']) {
      const card = uid();
      await world.pushToken(emsp, card, { whitelist });
      emsp.sim.setAuthorization(card, 'ALLOWED', { location_id: loc, evse_uids: ['E1'] });
      // a 1.6 Authorize names no connector: allowed at one of the charger's EVSEs, but not for the
      // charger's cache, which is the whole charger's (was now + OCPP_AUTH_CACHE_S)
      const info = ((await charger.call('Authorize', { idTag: card })) as { idTagInfo: Json }).idTagInfo;
      expect(info.status, whitelist).to.equal('Accepted');
      expect(Date.parse(String(info.expiryDate)), whitelist).to.be.at.most(Date.now());
      // was Accepted, the session on E2 billed to the eMSP with its reference
      expect(await start16(charger, 2, card), whitelist).to.equal('Invalid');
      expect(await authorize16(charger, card), whitelist).to.equal('Accepted');
      expect(await start16(charger, 1, card), whitelist).to.equal('Accepted');
    }
    // an answer for another location: refused at every EVSE here
    const other = uid();
    await world.pushToken(emsp, other, { whitelist: 'NEVER' });
    emsp.sim.setAuthorization(other, 'ALLOWED', { location_id: 'SOMEWHERE-ELSE' });
    expect(await authorize16(charger, other)).to.equal('Invalid');
  });

  it('a repeated StartTransaction of a refused token is refused again', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    const start = { connectorId: 1, idTag: 'NOBODY-2', meterStart: 10, timestamp: new Date().toISOString() };
    const first = (await charger.call('StartTransaction', start)) as { idTagInfo: Json; transactionId: number };
    const again = (await charger.call('StartTransaction', start)) as { idTagInfo: Json; transactionId: number };
    expect(first.idTagInfo.status).to.equal('Invalid');
    expect(again).to.deep.equal(first);
  });

  it('2.0.1: the eMSP says NO_CREDIT: the charger is answered NoCredit', async () => {
    const { charger } = await world.linkedCharger('ocpp2.0.1');
    const poor = uid();
    await world.pushToken(emsp, poor);
    emsp.sim.setAuthorization(poor, 'NO_CREDIT');
    const answer = (await charger.call('Authorize', { idToken: { idToken: poor, type: 'ISO14443' } })) as Json;
    expect((answer.idTokenInfo as Json).status).to.equal('NoCredit');
  });

  it('2.0.1: a token first named in TransactionEvent Updated or Ended is authorized as Authorize is', async () => {
    // not linked: no OCPI session will come of it, the token must be checked all the same
    const cp = await world.chargePoint('ocpp2.0.1');
    const charger = await world.charger(cp, 'ocpp2.0.1');
    const own = uid();
    await world.api.request('PUT', `/v1/ocpi/tokens/NL/EVP/${own}`, { body: aToken221({ uid: own }) });
    const blocked = uid();
    await world.pushToken(emsp, blocked, { valid: false });
    const event = (transactionId: string, eventType: string, seqNo: number, idToken?: string) => ({
      eventType,
      timestamp: new Date().toISOString(),
      triggerReason:
        eventType === 'Started' ? 'CablePluggedIn' : eventType === 'Ended' ? 'StopAuthorized' : 'Authorized',
      seqNo,
      transactionInfo: { transactionId, ...(eventType === 'Ended' ? { stoppedReason: 'Local' } : {}) },
      ...(eventType === 'Started' ? { evse: { id: 1, connectorId: 1 } } : {}),
      ...(idToken === undefined ? {} : { idToken: { idToken, type: 'ISO14443' } }),
    });
    type Answer = { idTokenInfo?: { status: string; cacheExpiryDateTime?: string } };
    const send = async (e: Json) => (await charger.call('TransactionEvent', e)) as Answer;
    const idTagOf = async (transactionId: string) => {
      const list = await world.api.request('GET', `/v1/sessions?charge_point_id=${cp.id}`);
      return (list.body as { value: Json[] }).value.find((x) => x.transaction_id === transactionId)?.id_tag;
    };

    // Started without a token, then an unknown token in Updated: Invalid, as Authorize answers
    expect(await send(event('TX-U1', 'Started', 0))).to.deep.equal({});
    expect((await send(event('TX-U1', 'Updated', 1, 'NOBODY-UPD'))).idTokenInfo).to.deep.equal({ status: 'Invalid' });
    expect(await idTagOf('TX-U1')).to.equal('NOBODY-UPD');
    // the same token in the Ended: the answer the transaction had, without asking again
    expect((await send(event('TX-U1', 'Ended', 2, 'NOBODY-UPD'))).idTokenInfo).to.deep.equal({ status: 'Invalid' });

    // a token first named in the Ended
    await send(event('TX-U2', 'Started', 0));
    expect((await send(event('TX-U2', 'Ended', 1, blocked))).idTokenInfo).to.deep.equal({ status: 'Blocked' });
    expect(await idTagOf('TX-U2')).to.equal(blocked);

    // an accepted one carries the time the charger's cache drops it
    await send(event('TX-U3', 'Started', 0));
    const accepted = (await send(event('TX-U3', 'Updated', 1, own))).idTokenInfo;
    expect(accepted?.status).to.equal('Accepted');
    expect(Date.parse(accepted?.cacheExpiryDateTime ?? '') - Date.now()).to.be.within(3_590_000, 3_600_000);
    expect(await idTagOf('TX-U3')).to.equal(own);
    expect(
      (await charger.call('Authorize', { idToken: { idToken: 'NOBODY-UPD', type: 'ISO14443' } })) as Answer,
    ).to.have.nested.property('idTokenInfo.status', 'Invalid');
  });

  it("2.0.1: a transaction's token made not valid since its answer is Blocked when named again, not cached anew", async () => {
    const { charger } = await world.linkedCharger('ocpp2.0.1');
    const card = uid();
    await world.pushToken(emsp, card);
    const event = (eventType: string, seqNo: number) => ({
      eventType,
      timestamp: new Date().toISOString(),
      triggerReason: eventType === 'Started' ? 'Authorized' : eventType === 'Ended' ? 'StopAuthorized' : 'Authorized',
      seqNo,
      transactionInfo: { transactionId: `TX-W-${card}`, ...(eventType === 'Ended' ? { stoppedReason: 'Local' } : {}) },
      idToken: { idToken: card, type: 'ISO14443' },
      evse: { id: 1, connectorId: 1 },
    });
    type Answer = { idTokenInfo?: { status: string; cacheExpiryDateTime?: string } };
    const send = async (e: Json) => ((await charger.call('TransactionEvent', e)) as Answer).idTokenInfo;
    expect((await send(event('Started', 0)))?.status).to.equal('Accepted');
    // still valid: the same answer, the eMSP not asked
    expect((await send(event('Updated', 1)))?.status).to.equal('Accepted');
    await world.pushToken(emsp, card, { valid: false, last_updated: new Date(Date.now() + 1000).toISOString() });
    // was Accepted with a new hour in the charger's cache: the card its eMSP withdrew kept charging
    expect(await send(event('Updated', 2))).to.deep.equal({ status: 'Blocked' });
    // made valid again: let in again, as at any use (was Blocked for the rest of the transaction)
    await world.pushToken(emsp, card, { valid: true, last_updated: new Date(Date.now() + 2000).toISOString() });
    expect((await send(event('Updated', 3)))?.status).to.equal('Accepted');
    await world.pushToken(emsp, card, { valid: false, last_updated: new Date(Date.now() + 3000).toISOString() });
    expect(await send(event('Ended', 4))).to.deep.equal({ status: 'Blocked' });
  });

  it('2.0.1: idToken NoAuthorization (free vend) is no token to check: Accepted, and the session names none', async () => {
    const cp = await world.chargePoint('ocpp2.0.1');
    const charger = await world.charger(cp, 'ocpp2.0.1');
    const free = { idToken: '', type: 'NoAuthorization' };
    type Answer = { idTokenInfo?: { status: string } };
    const send = async (action: string, payload: Json) => (await charger.call(action, payload)) as Answer;
    expect((await send('Authorize', { idToken: free })).idTokenInfo).to.deep.equal({ status: 'Accepted' });
    const event = (eventType: string, seqNo: number) => ({
      eventType,
      timestamp: new Date().toISOString(),
      triggerReason: eventType === 'Started' ? 'CablePluggedIn' : 'EVCommunicationLost',
      seqNo,
      transactionInfo: {
        transactionId: 'TX-FREE',
        ...(eventType === 'Ended' ? { stoppedReason: 'EVDisconnected' } : {}),
      },
      evse: { id: 1, connectorId: 1 },
      idToken: free,
    });
    // was Invalid (an unknown token ''): a charger with StopTxOnInvalidId ended the charge at once
    expect((await send('TransactionEvent', event('Started', 0))).idTokenInfo).to.deep.equal({ status: 'Accepted' });
    expect((await send('TransactionEvent', event('Ended', 1))).idTokenInfo).to.deep.equal({ status: 'Accepted' });
    const list = await world.api.request('GET', `/v1/sessions?charge_point_id=${cp.id}`);
    const session = (list.body as { value: Json[] }).value.find((x) => x.transaction_id === 'TX-FREE');
    expect(session).to.include({ status: 'COMPLETED', id_tag: null });
    // a real token that no one issued is still refused on the same charger
    const unknown = await send('Authorize', { idToken: { idToken: 'NOBODY-FREE', type: 'ISO14443' } });
    expect(unknown.idTokenInfo).to.deep.equal({ status: 'Invalid' });
  });

  it('2.0.1: an idToken is its token by type: a card an RFID token, a PIN an OTHER one, an eMAID a contract id; Central and 1.6 any', async () => {
    const charger = await world.charger(await world.chargePoint('ocpp2.0.1'), 'ocpp2.0.1');
    const { charger: charger16 } = await world.linkedCharger('ocpp1.6');
    const [card, app, pin] = [uid(), uid(), uid()];
    const contract = `NL-EVP-C${app.slice(1, 9)}-K`;
    const own = async (body: Json) => {
      const put = await world.api.request('PUT', `/v1/ocpi/tokens/NL/EVP/${String(body.uid)}`, {
        body: aToken221(body),
      });
      expect(put.status, JSON.stringify(put.body)).to.be.oneOf([200, 201]);
    };
    await own({ uid: card, type: 'RFID' });
    await own({ uid: app, type: 'APP_USER', contract_id: contract });
    await own({ uid: pin, type: 'OTHER' });
    const status = async (idToken: string, type: string) =>
      ((await charger.call('Authorize', { idToken: { idToken, type } })) as { idTokenInfo: { status: string } })
        .idTokenInfo.status;
    const answers: Record<string, string> = {};
    for (const [name, idToken, type] of [
      ['card as a card', card, 'ISO14443'],
      ['card as an ISO15693 card', card, 'ISO15693'],
      ['card as a PIN', card, 'KeyCode'],
      ["card as an EV's MAC address", card, 'MacAddress'],
      ['app account as a card', app, 'ISO14443'],
      ['app account as Central', app, 'Central'],
      ['PIN as a PIN', pin, 'KeyCode'],
      ['PIN as a card', pin, 'ISO14443'],
      ['contract id as eMAID', contract, 'eMAID'],
      ['contract id as eMAID, no separators, lower case', contract.replaceAll('-', '').toLowerCase(), 'eMAID'],
      ['an eMAID no token has', 'NL-EVP-C99999999-X', 'eMAID'],
      ["an eMAID that is a card's uid", card, 'eMAID'],
      ["an eMAID that is an app account's uid", app, 'eMAID'],
    ] as const)
      answers[name] = await status(idToken, type);
    // every one was Accepted by uid alone, whatever its type, and the eMAID Invalid
    expect(answers).to.deep.equal({
      'card as a card': 'Accepted',
      'card as an ISO15693 card': 'Accepted',
      'card as a PIN': 'Invalid',
      "card as an EV's MAC address": 'Invalid',
      'app account as a card': 'Invalid',
      'app account as Central': 'Accepted',
      'PIN as a PIN': 'Accepted',
      'PIN as a card': 'Invalid',
      'contract id as eMAID': 'Accepted',
      'contract id as eMAID, no separators, lower case': 'Accepted',
      'an eMAID no token has': 'Invalid',
      // no token has it as its contract id: a card's or a PIN's uid, never an app account's
      "an eMAID that is a card's uid": 'Accepted',
      "an eMAID that is an app account's uid": 'Invalid',
    });
    // a 1.6 id tag has no type: its uid finds any token
    expect(await authorize16(charger16, app)).to.equal('Accepted');
  });

  it("a token's group_id goes to the charger: 1.6 parentIdTag, 2.0.1 groupIdToken (a card of the group may stop)", async () => {
    const member = uid();
    await world.pushToken(emsp, member, { whitelist: 'ALWAYS', group_id: 'FLEET-1' });
    const { charger } = await world.linkedCharger('ocpp1.6');
    // the strict client checks each answer against the version's schema
    const info16 = ((await charger.call('Authorize', { idTag: member })) as { idTagInfo: Json }).idTagInfo;
    expect(info16).to.include({ status: 'Accepted', parentIdTag: 'FLEET-1' });
    const cp = await world.chargePoint('ocpp2.0.1');
    const charger201 = await world.charger(cp, 'ocpp2.0.1');
    const info201 = (
      (await charger201.call('Authorize', { idToken: { idToken: member, type: 'ISO14443' } })) as { idTokenInfo: Json }
    ).idTokenInfo;
    expect(info201).to.deep.include({ status: 'Accepted', groupIdToken: { idToken: 'FLEET-1', type: 'Central' } });
    // a token without a group: none in the answer
    const alone = uid();
    await world.pushToken(emsp, alone, { whitelist: 'ALWAYS' });
    const plain = ((await charger.call('Authorize', { idTag: alone })) as { idTagInfo: Json }).idTagInfo;
    expect(plain).to.not.have.property('parentIdTag');
    // also when the tag is let in as a remote start of ours: was without its group
    const remote = await world.linkedCharger('ocpp1.6');
    remote.charger.handle('RemoteStartTransaction', () => Promise.resolve({ status: 'Accepted' }));
    const started = await world.api.request('POST', `/v1/charge-points/${remote.cp.id}/remote-start`, {
      body: { id_tag: member, connector_id: 1 },
    });
    expect(started.status, JSON.stringify(started.body)).to.equal(200);
    const start = (await remote.charger.call('StartTransaction', {
      connectorId: 1,
      idTag: member,
      meterStart: 0,
      timestamp: new Date().toISOString(),
    })) as { idTagInfo: Json };
    expect(start.idTagInfo).to.include({ status: 'Accepted', parentIdTag: 'FLEET-1' });
  });

  it('a tag the operator remote-started is Accepted though it is no token', async () => {
    const { cp, charger } = await world.linkedCharger('ocpp1.6');
    charger.handle('RemoteStartTransaction', () => Promise.resolve({ status: 'Accepted' }));
    const res = await world.api.request('POST', `/v1/charge-points/${cp.id}/remote-start`, {
      body: { id_tag: 'OPERATOR-TAG', connector_id: 1 },
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    await eventually(async () => {
      const start = (await charger.call('StartTransaction', {
        connectorId: 1,
        idTag: 'OPERATOR-TAG',
        meterStart: 0,
        timestamp: new Date().toISOString(),
      })) as { idTagInfo: { status: string } };
      return start.idTagInfo.status === 'Accepted' ? true : undefined;
    });
  });

  it("the end of a remote-started guest's transaction delivered again is answered as the first time (1.6 and 2.0.1)", async () => {
    const answers: string[] = [];
    for (const protocol of ['ocpp1.6', 'ocpp2.0.1'] as const) {
      const { cp, charger } = await world.linkedCharger(protocol);
      const guest = uid();
      let remoteStartId: number | undefined;
      charger.handle(protocol === 'ocpp1.6' ? 'RemoteStartTransaction' : 'RequestStartTransaction', ({ params }) => {
        remoteStartId = (params as { remoteStartId?: number }).remoteStartId;
        return Promise.resolve({ status: 'Accepted' });
      });
      const body = protocol === 'ocpp1.6' ? { id_tag: guest, connector_id: 1 } : { id_tag: guest, evse_id: 1 };
      const res = await world.api.request('POST', `/v1/charge-points/${cp.id}/remote-start?wait_ms=5000`, { body });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const at = new Date().toISOString();
      if (protocol === 'ocpp1.6') {
        const start = (await charger.call('StartTransaction', {
          connectorId: 1,
          idTag: guest,
          meterStart: 0,
          timestamp: at,
        })) as { transactionId: number; idTagInfo: Json };
        expect(start.idTagInfo.status).to.equal('Accepted');
        const stop = { transactionId: start.transactionId, meterStop: 900, timestamp: at, idTag: guest };
        for (let i = 0; i < 2; i++)
          answers.push(String(((await charger.call('StopTransaction', stop)) as { idTagInfo: Json }).idTagInfo.status));
      } else {
        const event = (eventType: string, seqNo: number, triggerReason: string) => ({
          eventType,
          timestamp: at,
          triggerReason,
          seqNo,
          transactionInfo: { transactionId: `TX-${guest}`, remoteStartId },
          evse: { id: 1, connectorId: 1 },
          idToken: { idToken: guest, type: 'Central' },
        });
        const started = (await charger.call('TransactionEvent', event('Started', 0, 'RemoteStart'))) as {
          idTokenInfo: Json;
        };
        expect(started.idTokenInfo.status).to.equal('Accepted');
        for (let i = 0; i < 2; i++)
          answers.push(
            String(
              ((await charger.call('TransactionEvent', event('Ended', 1, 'StopAuthorized'))) as { idTokenInfo: Json })
                .idTokenInfo.status,
            ),
          );
      }
    }
    // the second of each was Invalid, which the charger's cache then kept for the guest's tag
    expect(answers).to.deep.equal(['Accepted', 'Accepted', 'Accepted', 'Accepted']);
  });

  it('the end delivered again after its card was made not valid is Blocked, not Accepted for the cache', async () => {
    const { charger } = await world.linkedCharger('ocpp1.6');
    const card = uid();
    await world.pushToken(emsp, card, { whitelist: 'ALWAYS' });
    const at = new Date().toISOString();
    const start = (await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: card,
      meterStart: 0,
      timestamp: at,
    })) as {
      transactionId: number;
    };
    const stop = { transactionId: start.transactionId, meterStop: 500, timestamp: at, idTag: card };
    const stopped = async () => ((await charger.call('StopTransaction', stop)) as { idTagInfo: Json }).idTagInfo;
    expect((await stopped()).status).to.equal('Accepted');
    await world.pushToken(emsp, card, { valid: false, last_updated: new Date(Date.now() + 1000).toISOString() });
    // was Accepted with a new expiry: the retry put the blocked card back in the charger's cache
    expect(await stopped()).to.deep.equal({ status: 'Blocked' });
  });

  it("a remote start's tag that does not charge without asking is let in for that start only: the charger's cache drops it at once", async () => {
    const { cp, charger } = await world.linkedCharger('ocpp1.6');
    charger.handle('RemoteStartTransaction', () => Promise.resolve({ status: 'Accepted' }));
    const expiryAfterRemoteStart = async (tag: string): Promise<number> => {
      const res = await world.api.request('POST', `/v1/charge-points/${cp.id}/remote-start`, {
        body: { id_tag: tag, connector_id: 1 },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const info = await eventually(async () => {
        const answer = (await charger.call('Authorize', { idTag: tag })) as {
          idTagInfo: { status: string; expiryDate?: string };
        };
        return answer.idTagInfo.status === 'Accepted' ? answer.idTagInfo : undefined;
      });
      return Date.parse(String(info.expiryDate));
    };
    const never = uid();
    await world.pushToken(emsp, never, { whitelist: 'NEVER' });
    const blocked = uid();
    await world.pushToken(emsp, blocked, { valid: false });
    const always = uid();
    await world.pushToken(emsp, always, { whitelist: 'ALWAYS' });
    // were now + OCPP_AUTH_CACHE_S: the charger's cache then let the card in without asking
    for (const tag of [never, blocked, 'NO-SUCH-TOKEN'])
      expect(await expiryAfterRemoteStart(tag), tag).to.be.at.most(Date.now() + 1000);
    // a card that charges without asking is cached as its own decision would be
    expect(await expiryAfterRemoteStart(always)).to.be.above(Date.now() + 60_000);
  });

  it("an operator's remote start of a partner's card: billed to its eMSP only when the card charges without asking", async () => {
    const { cp, charger } = await world.linkedCharger('ocpp1.6');
    charger.handle('RemoteStartTransaction', () => Promise.resolve({ status: 'Accepted' }));
    const sessionsSince = (since: number) =>
      emsp.sim
        .receivedSince(since)
        .filter((r) => r.method === 'PUT' && r.path.includes('/sessions/'))
        .map((r) => r.body as Json);
    const operatorStart = async (card: string, connectorId: number): Promise<number> => {
      const since = emsp.sim.lastSeq;
      const res = await world.api.request('POST', `/v1/charge-points/${cp.id}/remote-start`, {
        body: { id_tag: card, connector_id: connectorId },
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(await start16(charger, connectorId, card)).to.equal('Accepted');
      return since;
    };
    const blocked = uid();
    await world.pushToken(emsp, blocked, { valid: false });
    emsp.sim.setAuthorization(blocked, 'BLOCKED');
    const before = await operatorStart(blocked, 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // was a session PUT to the eMSP with auth_method WHITELIST
    expect(sessionsSince(before)).to.deep.equal([]);
    const valid = uid();
    await world.pushToken(emsp, valid, { whitelist: 'ALWAYS' });
    const since = await operatorStart(valid, 1);
    const session = await eventually(async () => sessionsSince(since)[0]);
    expect(session).to.deep.include({ auth_method: 'WHITELIST' });
  });
});

describe('roaming: our tokens pushed to partner CPOs', function () {
  this.timeout(30_000);
  let world: RoamingWorld;

  before(async () => {
    world = await RoamingWorld.start();
  });
  after(async () => world.stop());

  it('a token of ours the operator creates or changes is PUT to every CPO, in its version', async () => {
    const cpo221 = await world.partner('2.2.1', 'CPO');
    const cpo211 = await world.partner('2.1.1', 'CPO');
    const uid = `O${randomUUID().slice(0, 8)}`.toUpperCase();
    const put = await world.api.request('PUT', `/v1/ocpi/tokens/NL/EVP/${uid}`, { body: aToken221({ uid }) });
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    const sent = (cpo: Emsp) =>
      eventually(async () =>
        cpo.sim.received.find(
          (r) => r.method === 'PUT' && r.path.includes(`/tokens/NL/EVP/${uid}`) && r.status === 200,
        ),
      );
    const to221 = await sent(cpo221);
    expect(to221.path).to.match(/\?type=RFID$/);
    expect(to221.body).to.deep.include({ uid, country_code: 'NL', party_id: 'EVP', valid: true });
    const to211 = await sent(cpo211);
    expect(to211.body).to.deep.include({ uid, auth_id: 'NL-EVP-C12345678' });
    expect(to211.body).not.to.have.property('country_code');
    // blocked later: the CPOs hear of it
    const since = cpo221.sim.lastSeq;
    await world.api.request('PUT', `/v1/ocpi/tokens/NL/EVP/${uid}`, { body: aToken221({ uid, valid: false }) });
    await eventually(async () =>
      cpo221.sim
        .receivedSince(since)
        .find((r) => r.method === 'PUT' && (r.body as Json | undefined)?.valid === false && r.status === 200),
    );
    expect(cpo221.sim.violations).to.deep.equal([]);
    expect(cpo211.sim.violations).to.deep.equal([]);
  });

  it('a CPO that registers, or registers again, is sent our tokens written meanwhile: one blocked while it was away', async () => {
    const uid = `C${randomUUID().slice(0, 8)}`.toUpperCase();
    const at = `/v1/ocpi/tokens/NL/EVP/${uid}`;
    expect((await world.api.request('PUT', at, { body: aToken221({ uid }) })).status).to.equal(200);
    const cpo = await world.partner('2.2.1', 'CPO');
    const putOf = (since: number, valid: boolean) =>
      eventually(
        async () =>
          cpo.sim
            .receivedSince(since)
            .find(
              (r) =>
                r.method === 'PUT' &&
                r.path.includes(`/tokens/NL/EVP/${uid}`) &&
                (r.body as Json | undefined)?.valid === valid &&
                r.status === 200,
            ),
        { timeoutMs: 10_000, what: `the PUT of ${uid} (valid ${valid})` },
      );
    // a token that was there before the CPO registered: it had nothing to authorize the card with
    await putOf(0, true);
    expect((await cpo.sim.unregister()).statusCode).to.equal(1000);
    // blocked while no link speaks for the CPO: nothing is queued for it
    expect((await world.api.request('PUT', at, { body: aToken221({ uid, valid: false }) })).status).to.equal(200);
    const since = cpo.sim.lastSeq;
    const again = await world.api.request('POST', '/v1/partners', { body: { ...cpo.sim.party, role: 'CPO' } });
    expect(again.status, JSON.stringify(again.body)).to.equal(201);
    const { versions_url, token } = again.body as { versions_url: string; token: string };
    expect((await cpo.sim.registerWith(versions_url, token)).answer.statusCode).to.equal(1000);
    // was: the CPO kept the card valid until it pulled our tokens
    await putOf(since, false);
    expect(cpo.sim.violations).to.deep.equal([]);
  });
});

describe('roaming: the local list is shared fairly', function () {
  this.timeout(60_000);
  let world: RoamingWorld;

  before(async () => {
    world = await RoamingWorld.start({ OCPP_LOCAL_LIST_MAX: '6' });
  });
  after(async () => world.stop());

  it("one eMSP's tokens, however many and however stamped, push neither ours nor another eMSP's out of a charger's list", async () => {
    const flooder = await world.emsp('2.2.1');
    const quiet = await world.emsp('2.2.1');
    const ours = world.unique('OURS').toUpperCase();
    expect(
      (await world.api.request('PUT', `/v1/ocpi/tokens/NL/EVP/${ours}`, { body: aToken221({ uid: ours }) })).status,
    ).to.be.within(200, 201);
    const quietCard = world.unique('QUIET').toUpperCase();
    await world.pushToken(quiet, quietCard, { whitelist: 'ALWAYS' });
    const quietCard2 = world.unique('QUIET').toUpperCase();
    await world.pushToken(quiet, quietCard2, { whitelist: 'ALWAYS' });
    // its newest tokens are ones the list leaves out: they must not use up its turns
    const ahead = { last_updated: '2099-01-01T00:00:00Z' };
    await world.pushToken(quiet, world.unique('NEVER').toUpperCase(), { whitelist: 'NEVER', ...ahead });
    await world.pushToken(quiet, ours, { whitelist: 'ALWAYS', valid: false, ...ahead });
    // ten cards stamped far ahead of every other token: the newest six of all, before
    for (let i = 0; i < 10; i++)
      await world.pushToken(flooder, world.unique('FLOOD').toUpperCase(), {
        whitelist: 'ALWAYS',
        last_updated: '2099-01-01T00:00:00Z',
      });
    const { cp, charger } = await world.linkedCharger('ocpp1.6');
    const sent: Array<{ localAuthorizationList?: Array<{ idTag: string }> }> = [];
    charger.handle('SendLocalList', ({ params }) => {
      sent.push(params as (typeof sent)[number]);
      return Promise.resolve({ status: 'Accepted' });
    });
    const sync = await world.api.request('POST', `/v1/charge-points/${cp.id}/sync-local-list`, {
      body: { full: true },
    });
    expect(sync.status, JSON.stringify(sync.body)).to.equal(200);
    const tags = sent.flatMap((m) => m.localAuthorizationList ?? []).map((e) => e.idTag);
    expect(tags).to.have.length(6);
    expect(tags).to.include.members([ours, quietCard, quietCard2]);
    expect(tags.filter((t) => t.startsWith('FLOOD'))).to.have.length(3);
  });
});
