import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import { eventually } from '../support/eventually.js';
import { aToken, aToken221 } from '../support/ocpi-builders.js';
import type { OcpiAnswer, RecordedRequest } from '../support/ocpi-simulator.js';
import { RoamingWorld, type Emsp } from '../support/roaming-world.js';

type Json = Record<string, unknown>;

/**
 * Partners' commands on our chargers (docs/ROAMING.md "Commands"): an eMSP that discovered us
 * sends a command to the commands endpoint our version details list; an ocpp-rpc charger gets the
 * OCPP call and answers; the eMSP gets the result at its response_url, through the outbox.
 */
describe('roaming: OCPI commands carried out on our chargers', function () {
  this.timeout(60_000);
  let world: RoamingWorld;
  let emsp221: Emsp;
  let emsp211: Emsp;

  before(async () => {
    world = await RoamingWorld.start({ OCPI_COMMAND_TIMEOUT_S: '5' });
    emsp221 = await world.emsp('2.2.1');
    emsp211 = await world.emsp('2.1.1');
  });
  after(async () => world.stop());

  /** The eMSP sends `command` to our commands Receiver; answers our reply and the response_url it gave. */
  async function send(
    e: Emsp,
    command: string,
    fields: Json,
    url = e.sim.responseUrl(e.version, command, randomUUID()),
  ): Promise<{ answer: OcpiAnswer; url: string }> {
    const answer = await e.sim.call(
      'POST',
      'commands',
      `/${command}`,
      { response_url: url, ...fields },
      {
        ...(e.version === '2.2.1' ? { role: 'RECEIVER' as const } : {}),
      },
    );
    expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
    return { answer, url };
  }

  /** The result POSTed to `url`, once it came with HTTP 200 from the eMSP. */
  const resultAt = (e: Emsp, url: string): Promise<RecordedRequest> =>
    eventually(
      async () => e.sim.received.find((r) => r.method === 'POST' && url.endsWith(r.path) && r.status === 200),
      { timeoutMs: 15_000, what: `the result at ${url}` },
    );

  const tokenOf = (e: Emsp, uid: string): Json =>
    e.version === '2.2.1'
      ? aToken221({ uid, country_code: e.sim.party.country_code, party_id: e.sim.party.party_id })
      : aToken({ uid });

  /** emsp221's RESERVE_NOW `id` of `uid`'s token at EVSE E1 of `loc`, held for `forMs` (15 minutes). */
  const reserveNow = (loc: string, uid: string, id: string, forMs = 15 * 60_000) =>
    send(emsp221, 'RESERVE_NOW', {
      token: tokenOf(emsp221, uid),
      expiry_date: new Date(Date.now() + forMs).toISOString(),
      reservation_id: id,
      location_id: loc,
      evse_uid: 'E1',
    });

  /** Every result emsp221 took at `url` (HTTP 200), in order. */
  const resultsAt = (url: string): RecordedRequest[] =>
    emsp221.sim.received.filter((r) => r.method === 'POST' && url.endsWith(r.path) && r.status === 200);

  /**
   * A 1.6 charger that holds its answer to RemoteStartTransaction until `answerStart` is called,
   * and answers UnlockConnector Unlocked, recording each.
   */
  function holdsStartRecordsUnlocks(charger: RPCClient): { answerStart: (v: Json) => void; unlocks: Json[] } {
    let release: (v: Json) => void = () => undefined;
    charger.handle('RemoteStartTransaction', () => new Promise<Json>((resolve) => (release = resolve)));
    const unlocks: Json[] = [];
    charger.handle('UnlockConnector', ({ params }) => {
      unlocks.push(params as Json);
      return Promise.resolve({ status: 'Unlocked' });
    });
    return { answerStart: (v) => release(v), unlocks };
  }

  /** A 1.6 charger that answers RemoteStartTransaction with `status` and records the idTag. */
  function answersStart(charger: RPCClient, status: string, seen: string[]): void {
    charger.handle('RemoteStartTransaction', ({ params }) => {
      seen.push(String((params as { idTag: string }).idTag));
      return Promise.resolve({ status });
    });
  }

  for (const version of ['2.2.1', '2.1.1'] as const) {
    it(`${version}: START_SESSION is ACCEPTED, the charger gets RemoteStartTransaction, the result arrives`, async () => {
      const e = version === '2.2.1' ? emsp221 : emsp211;
      const { loc, charger } = await world.linkedCharger('ocpp1.6');
      const seen: string[] = [];
      answersStart(charger, 'Accepted', seen);
      const uid = `T${Date.now().toString(36)}`.toUpperCase();
      const { answer, url } = await send(e, 'START_SESSION', {
        token: tokenOf(e, uid),
        location_id: loc,
        evse_uid: 'E1',
      });
      expect((answer.data as Json).result).to.equal('ACCEPTED');
      if (version === '2.2.1') expect((answer.data as Json).timeout).to.equal(5);
      const result = await resultAt(e, url);
      expect(result.body).to.deep.equal({ result: 'ACCEPTED' });
      expect(seen).to.deep.equal([uid]);
      expect(result.tokenForm).to.equal(version === '2.2.1' ? 'base64' : 'raw');
      expect(e.sim.violations).to.deep.equal([]);
    });
  }

  it('a charger that refuses the start: the result is REJECTED, and the operator sees why', async () => {
    const { loc, cp, charger } = await world.linkedCharger('ocpp1.6');
    answersStart(charger, 'Rejected', []);
    const { answer, url } = await send(emsp221, 'START_SESSION', {
      token: tokenOf(emsp221, 'TOK-REFUSED'),
      location_id: loc,
      evse_uid: 'E1',
    });
    expect((answer.data as Json).result).to.equal('ACCEPTED');
    expect((await resultAt(emsp221, url)).body).to.deep.equal({ result: 'REJECTED' });

    // the operator's view: the command, its charger, the charger's answer and the result sent
    const seen = await world.api.request('GET', '/v1/received-commands?limit=1000');
    expect(seen.status).to.equal(200);
    const mine = (seen.body.value as Json[]).find((c) => c.charge_point_id === cp.id);
    expect(mine).to.deep.include({
      command: 'START_SESSION',
      version: '2.2.1',
      status: 'settled',
      charger_status: 'Rejected',
      result: 'REJECTED',
    });
    const { country_code, party_id } = emsp221.sim.party;
    expect(mine?.partner).to.deep.equal({ id: emsp221.id, country_code, party_id });
    expect(Number(seen.headers.get('x-total-count'))).to.equal((seen.body.value as Json[]).length);
    expect((await world.api.request('GET', '/v1/received-commands?limit=1001')).status).to.equal(422);
  });

  it('a charger that does not answer: the result is TIMEOUT after the timeout we gave', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    charger.handle('RemoteStartTransaction', () => new Promise(() => undefined));
    const started = Date.now();
    const { url } = await send(emsp221, 'START_SESSION', {
      token: tokenOf(emsp221, 'TOK-SILENT'),
      location_id: loc,
      evse_uid: 'E1',
    });
    expect((await resultAt(emsp221, url)).body).to.deep.equal({ result: 'TIMEOUT' });
    expect(Date.now() - started).to.be.at.least(4_500);
  });

  it('a START_SESSION that timed out lets its token in on its EVSE, unless the eMSP made the token not valid since', async () => {
    /** a START_SESSION of `uid` (stored as `stored` before) that a charger of its own never answers */
    const timedOut = async (uid: string, stored: Json): Promise<RPCClient> => {
      const { loc, charger } = await world.linkedCharger('ocpp1.6');
      charger.handle('RemoteStartTransaction', () => new Promise(() => undefined));
      await world.pushToken(emsp221, uid, stored);
      const { url } = await send(emsp221, 'START_SESSION', {
        token: tokenOf(emsp221, uid),
        location_id: loc,
        evse_uid: 'E1',
      });
      expect((await resultAt(emsp221, url)).body).to.deep.equal({ result: 'TIMEOUT' });
      return charger;
    };
    const authorize = async (charger: RPCClient, uid: string): Promise<string> =>
      ((await charger.call('Authorize', { idTag: uid })) as { idTagInfo: { status: string } }).idTagInfo.status;
    const [kept, blocked] = [world.unique('TK'), world.unique('TB')];
    const [keptAt, blockedAt] = await Promise.all([timedOut(kept, { valid: false }), timedOut(blocked, {})]);
    // the charger may have taken the start after all; a token not valid before the command (an
    // app user's) is the command's word
    expect(await authorize(keptAt, kept)).to.equal('Accepted');
    // blocked after the command: was Accepted as "a remote start we sent", and billed as COMMAND
    await world.pushToken(emsp221, blocked, { valid: false, last_updated: new Date(Date.now() + 1000).toISOString() });
    expect(await authorize(blockedAt, blocked)).to.equal('Blocked');
  });

  it('an offline charger, an EVSE not linked: REJECTED at once, with the reason; an unknown location: 2003', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    await charger.close({ force: true });
    await eventually(async () => {
      const { answer } = await send(emsp221, 'START_SESSION', {
        token: tokenOf(emsp221, 'TOK-OFF'),
        location_id: loc,
        evse_uid: 'E1',
      });
      const data = answer.data as { result: string; message?: Array<{ text: string }> };
      return data.result === 'REJECTED' && /offline/.test(data.message?.[0]?.text ?? '') ? true : undefined;
    });
    const other = world.unique('LOC-');
    await world.location(other, ['E1']);
    const notLinked = await send(emsp221, 'START_SESSION', {
      token: tokenOf(emsp221, 'TOK-X'),
      location_id: other,
      evse_uid: 'E1',
    });
    expect(notLinked.answer.data).to.deep.include({ result: 'REJECTED', timeout: 0 });
    // a 2.1.1 CommandResponse carries no reason: an unknown location is 2003, as OCPI's example has it
    const unknown = await send(emsp211, 'START_SESSION', { token: tokenOf(emsp211, 'TOK-Y'), location_id: 'NOPE' });
    expect(unknown.answer.statusCode).to.equal(2003);
    expect(unknown.answer.data).to.equal(undefined);
  });

  it('2.2.1: a START_SESSION token of a party the eMSP does not speak for is 2001; the charger gets nothing', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    const seen: string[] = [];
    answersStart(charger, 'Accepted', seen);
    const answer = await emsp221.sim.call(
      'POST',
      'commands',
      '/START_SESSION',
      {
        response_url: emsp221.sim.responseUrl('2.2.1', 'START_SESSION', randomUUID()),
        token: aToken221({ uid: 'FOREIGN-1', country_code: 'FR', party_id: 'ZZZ' }),
        location_id: loc,
        evse_uid: 'E1',
      },
      { role: 'RECEIVER' },
    );
    // nobody would be billed for it: the CDR of a session goes to the token's eMSP
    expect(answer.statusCode).to.equal(2001);
    expect(JSON.stringify(answer.body)).to.contain('identity_mismatch');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen).to.deep.equal([]);
  });

  it('a command still queued when its TIMEOUT went to the eMSP is not sent to the charger later', async () => {
    const { loc, cp, charger } = await world.linkedCharger('ocpp1.6');
    // the charger holds its answer to an operator's call (30 s call timeout) until the partner's
    // command behind it timed out, then answers it
    let answerClear: (v: Json) => void = () => undefined;
    charger.handle('ClearCache', () => new Promise<Json>((resolve) => (answerClear = resolve)));
    const { unlocks } = holdsStartRecordsUnlocks(charger);
    await world.api.request('POST', `/v1/charge-points/${cp.id}/clear-cache?wait_ms=0`, { body: {} });
    const unlock = await send(emsp221, 'UNLOCK_CONNECTOR', { location_id: loc, evse_uid: 'E1', connector_id: '1' });
    expect((unlock.answer.data as Json).result).to.equal('ACCEPTED');
    expect((await resultAt(emsp221, unlock.url)).body).to.deep.equal({ result: 'TIMEOUT' });
    answerClear({ status: 'Accepted' });
    // the unlock was dropped from the queue, and the operator sees why
    const record = await eventually(async () => {
      const view = await world.api.request('GET', `/v1/charge-points/${cp.id}`);
      return ((view.body as Json).commands as Json[]).find((c) => c.kind === 'unlock' && c.status === 'expired');
    });
    expect(record).to.include({ kind: 'unlock', status: 'expired' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(unlocks).to.deep.equal([]);
  });

  it("a partner's command timed out: the one queued behind it, due 0.4 s later, is FAILED, not sent", async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    const { unlocks } = holdsStartRecordsUnlocks(charger);
    const start = await send(emsp221, 'START_SESSION', {
      token: tokenOf(emsp221, 'TOK-HELD'),
      location_id: loc,
      evse_uid: 'E1',
    });
    // the unlock's deadline 0.4 s after the start's: the queue moves at the start's deadline, too
    // near the unlock's own for an answer to count (with no gap, a busy machine's late timer could
    // let the unlock expire in the queue first: TIMEOUT, not sent either)
    await new Promise((resolve) => setTimeout(resolve, 400));
    const unlock = await send(emsp221, 'UNLOCK_CONNECTOR', { location_id: loc, evse_uid: 'E1', connector_id: '1' });
    expect((await resultAt(emsp221, start.url)).body).to.deep.equal({ result: 'TIMEOUT' });
    expect((await resultAt(emsp221, unlock.url)).body).to.deep.equal({ result: 'FAILED' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(unlocks).to.deep.equal([]);
  });

  it('a queued command whose deadline is too near for an answer to count is not sent: FAILED before the deadline', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    const { answerStart, unlocks } = holdsStartRecordsUnlocks(charger);
    await send(emsp221, 'START_SESSION', { token: tokenOf(emsp221, 'TOK-NEAR'), location_id: loc, evse_uid: 'E1' });
    const queuedAt = Date.now();
    const unlock = await send(emsp221, 'UNLOCK_CONNECTOR', { location_id: loc, evse_uid: 'E1', connector_id: '1' });
    // the queue moves 0.7 s before the unlock's 5 s deadline, inside the last quarter it keeps
    // for the answer; it was sent then (a charger 13 ms from its deadline unlocked, the eMSP
    // was told TIMEOUT)
    await new Promise((resolve) => setTimeout(resolve, 4_300 - (Date.now() - queuedAt)));
    answerStart({ status: 'Accepted' });
    const result = await resultAt(emsp221, unlock.url);
    expect(result.body).to.deep.equal({ result: 'FAILED' });
    expect(Date.now() - queuedAt).to.be.below(5_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(unlocks).to.deep.equal([]);
  });

  it('a charger whose queue is full: a partner command is REJECTED at once, saying why', async () => {
    const { loc, cp, charger } = await world.linkedCharger('ocpp1.6');
    charger.handle('ClearCache', () => new Promise(() => undefined));
    for (let i = 0; i < 100; i++)
      await world.api.request('POST', `/v1/charge-points/${cp.id}/clear-cache?wait_ms=0`, { body: {} });
    const unlock = await send(emsp221, 'UNLOCK_CONNECTOR', { location_id: loc, evse_uid: 'E1', connector_id: '1' });
    // was ACCEPTED and queued behind every call before it, however many
    expect(unlock.answer.data).to.deep.include({ result: 'REJECTED', timeout: 0 });
    expect(JSON.stringify(unlock.answer.data)).to.include('calls already wait for this charger');
  });

  it('the result reaches an eMSP whose response_url answered 503 twice', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    // the charger answers a moment later: the eMSP's outage is set up by then
    charger.handle(
      'RemoteStartTransaction',
      () => new Promise((resolve) => setTimeout(() => resolve({ status: 'Accepted' }), 300)),
    );
    const since = emsp221.sim.lastSeq;
    const { url } = await send(emsp221, 'START_SESSION', {
      token: tokenOf(emsp221, 'TOK-RETRY'),
      location_id: loc,
      evse_uid: 'E1',
    });
    emsp221.sim.failNext(2, 503);
    await resultAt(emsp221, url);
    const posts = emsp221.sim.receivedSince(since).filter((r) => r.method === 'POST' && url.endsWith(r.path));
    expect(posts.map((r) => r.status)).to.deep.equal([503, 503, 200]);
  });

  it('2.0.1: UNLOCK_CONNECTOR reaches UnlockConnector with the EVSE and connector; Unlocked is ACCEPTED, UnlockFailed FAILED', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp2.0.1');
    const calls: Json[] = [];
    let answer = 'Unlocked';
    charger.handle('UnlockConnector', ({ params }) => {
      calls.push(params as Json);
      return Promise.resolve({ status: answer });
    });
    const first = await send(emsp221, 'UNLOCK_CONNECTOR', { location_id: loc, evse_uid: 'E1', connector_id: '1' });
    expect((first.answer.data as Json).result).to.equal('ACCEPTED');
    expect((await resultAt(emsp221, first.url)).body).to.deep.equal({ result: 'ACCEPTED' });
    expect(calls).to.deep.equal([{ evseId: 1, connectorId: 1 }]);
    answer = 'UnlockFailed';
    const second = await send(emsp221, 'UNLOCK_CONNECTOR', { location_id: loc, evse_uid: 'E1', connector_id: '1' });
    expect((await resultAt(emsp221, second.url)).body).to.deep.equal({ result: 'FAILED' });
  });

  it("UNLOCK_CONNECTOR on an EVSE where another eMSP's driver charges is REJECTED; the charger gets nothing, the driver's own eMSP may", async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    const unlocks: Json[] = [];
    charger.handle('UnlockConnector', ({ params }) => {
      unlocks.push(params as Json);
      return Promise.resolve({ status: 'Unlocked' });
    });
    const uid = world.unique('DRV').toUpperCase();
    await world.pushToken(emsp211, uid);
    const authorized = (await charger.call('Authorize', { idTag: uid })) as { idTagInfo: { status: string } };
    expect(authorized.idTagInfo.status).to.equal('Accepted');
    await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: uid,
      meterStart: 0,
      timestamp: new Date().toISOString(),
    });
    // OCPP ends the transaction on an unlock: another eMSP would stop this driver's charge
    const foreign = await send(emsp221, 'UNLOCK_CONNECTOR', { location_id: loc, evse_uid: 'E1', connector_id: '1' });
    expect(foreign.answer.data).to.deep.include({ result: 'REJECTED', timeout: 0 });
    expect(JSON.stringify(foreign.answer.data)).to.contain('not yours');
    const own = await send(emsp211, 'UNLOCK_CONNECTOR', { location_id: loc, evse_uid: 'E1', connector_id: '1' });
    expect(own.answer.data).to.deep.equal({ result: 'ACCEPTED' });
    expect((await resultAt(emsp211, own.url)).body).to.deep.equal({ result: 'ACCEPTED' });
    expect(unlocks).to.deep.equal([{ connectorId: 1 }]);
  });

  it('two commands given one response_url: each result reaches it, also while the first is retried', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp2.0.1');
    const answers = ['Unlocked', 'UnlockFailed'];
    charger.handle('UnlockConnector', () => Promise.resolve({ status: answers.shift() ?? 'Unlocked' }));
    const since = emsp221.sim.lastSeq;
    const shared = emsp221.sim.responseUrl('2.2.1', 'UNLOCK_CONNECTOR', 'callback');
    emsp221.sim.failNext(3, 503);
    await send(emsp221, 'UNLOCK_CONNECTOR', { location_id: loc, evse_uid: 'E1', connector_id: '1' }, shared);
    await send(emsp221, 'UNLOCK_CONNECTOR', { location_id: loc, evse_uid: 'E1', connector_id: '1' }, shared);
    // was one outbox row for the URL: the second result replaced the first, which never came
    const delivered = await eventually(
      async () => {
        const ok = emsp221.sim
          .receivedSince(since)
          .filter((r) => r.method === 'POST' && shared.endsWith(r.path) && r.status === 200);
        return ok.length >= 2 ? ok : undefined;
      },
      { timeoutMs: 15_000, what: 'two results at the shared response_url' },
    );
    expect(delivered.map((r) => (r.body as Json).result).sort()).to.deep.equal(['ACCEPTED', 'FAILED']);
  });

  it('2.1.1: a result 2.1.1 does not have (FAILED) is REJECTED there', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    charger.handle('UnlockConnector', () => Promise.resolve({ status: 'UnlockFailed' }));
    const { url } = await send(emsp211, 'UNLOCK_CONNECTOR', { location_id: loc, evse_uid: 'E1', connector_id: '1' });
    expect((await resultAt(emsp211, url)).body).to.deep.equal({ result: 'REJECTED' });
  });

  it('2.2.1: RESERVE_NOW reaches ReserveNow with an OCPP id; CANCEL_RESERVATION cancels that id; a start with it consumes it', async () => {
    const { loc, cp, charger } = await world.linkedCharger('ocpp1.6');
    const reserves: Json[] = [];
    const cancels: Json[] = [];
    let reserveAnswer = 'Accepted';
    charger.handle('ReserveNow', ({ params }) => {
      reserves.push(params as Json);
      return Promise.resolve({ status: reserveAnswer });
    });
    charger.handle('CancelReservation', ({ params }) => {
      cancels.push(params as Json);
      return Promise.resolve({ status: 'Accepted' });
    });
    const expiry = new Date(Date.now() + 15 * 60_000).toISOString();
    const uid = `R${Date.now().toString(36)}`.toUpperCase();
    const reserve = (id: string) =>
      send(emsp221, 'RESERVE_NOW', {
        token: tokenOf(emsp221, uid),
        expiry_date: expiry,
        reservation_id: id,
        location_id: loc,
        evse_uid: 'E1',
      });
    const first = await reserve('RES-1');
    expect((first.answer.data as Json).result).to.equal('ACCEPTED');
    expect((await resultAt(emsp221, first.url)).body).to.deep.equal({ result: 'ACCEPTED' });
    const ocppId = reserves[0]?.reservationId;
    expect(reserves[0]).to.deep.include({ connectorId: 1, idTag: uid });
    expect(ocppId).to.be.a('number');
    // the same OCPI id again: the same OCPP id (the charger replaces the reservation)
    const again = await reserve('RES-1');
    await resultAt(emsp221, again.url);
    expect(reserves[1]?.reservationId).to.equal(ocppId);
    const held = await world.api.request('GET', `/v1/charge-points/${cp.id}`);
    expect((held.body.reservations as Json[]).map((r) => r.reservation_id)).to.deep.equal([ocppId]);

    const cancel = await send(emsp221, 'CANCEL_RESERVATION', { reservation_id: 'RES-1' });
    expect((cancel.answer.data as Json).result).to.equal('ACCEPTED');
    expect((await resultAt(emsp221, cancel.url)).body).to.deep.equal({ result: 'ACCEPTED' });
    expect(cancels).to.deep.equal([{ reservationId: ocppId }]);
    const unknown = await send(emsp221, 'CANCEL_RESERVATION', { reservation_id: 'NO-SUCH' });
    expect(unknown.answer.data).to.deep.include({ result: 'REJECTED', timeout: 0 });

    // a new reservation, used by the start
    const second = await reserve('RES-2');
    await resultAt(emsp221, second.url);
    const id2 = reserves.at(-1)?.reservationId;
    await charger.call('StartTransaction', {
      connectorId: 1,
      idTag: uid,
      meterStart: 0,
      reservationId: id2,
      timestamp: new Date().toISOString(),
    });
    const after = await world.api.request('GET', `/v1/charge-points/${cp.id}`);
    expect(after.body.reservations).to.deep.equal([]);

    reserveAnswer = 'Occupied';
    const busy = await reserve('RES-3');
    expect((await resultAt(emsp221, busy.url)).body).to.deep.equal({ result: 'EVSE_OCCUPIED' });
  });

  it("2.2.1: the operator's cancel of a partner's reservation tells the partner CANCELED_RESERVATION at its RESERVE_NOW's URL", async () => {
    const { loc, cp, charger } = await world.linkedCharger('ocpp1.6');
    const reserves: Json[] = [];
    charger.handle('ReserveNow', ({ params }) => {
      reserves.push(params as Json);
      return Promise.resolve({ status: 'Accepted' });
    });
    charger.handle('CancelReservation', () => Promise.resolve({ status: 'Accepted' }));
    const uid = `K${Date.now().toString(36)}`.toUpperCase();
    const reserve = (id: string) => reserveNow(loc, uid, id);
    const made = await reserve(`OP-${uid}`);
    expect((await resultAt(emsp221, made.url)).body).to.deep.equal({ result: 'ACCEPTED' });
    const cancelled = await world.api.request('POST', `/v1/charge-points/${cp.id}/cancel-reservation`, {
      body: { reservation_id: reserves[0]?.reservationId },
    });
    expect(cancelled.status, JSON.stringify(cancelled.body)).to.equal(200);
    // was nothing: the eMSP went on believing its driver had the EVSE
    await eventually(async () => (resultsAt(made.url).length === 2 ? true : undefined), {
      what: 'CANCELED_RESERVATION at the RESERVE_NOW response_url',
    });
    expect(resultsAt(made.url).map((r) => r.body)).to.deep.equal([
      { result: 'ACCEPTED' },
      { result: 'CANCELED_RESERVATION' },
    ]);

    // the partner's own CANCEL_RESERVATION gets its own result, and nothing at the RESERVE_NOW's URL
    const again = await reserve(`OWN-${uid}`);
    expect((await resultAt(emsp221, again.url)).body).to.deep.equal({ result: 'ACCEPTED' });
    const own = await send(emsp221, 'CANCEL_RESERVATION', { reservation_id: `OWN-${uid}` });
    expect((await resultAt(emsp221, own.url)).body).to.deep.equal({ result: 'ACCEPTED' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(resultsAt(again.url)).to.have.length(1);
  });

  it("2.2.1: a 2.0.1 charger's ReservationStatusUpdate Removed tells the partner CANCELED_RESERVATION; Expired tells nothing", async () => {
    const { loc, cp, charger } = await world.linkedCharger('ocpp2.0.1');
    const reserves: Json[] = [];
    charger.handle('ReserveNow', ({ params }) => {
      reserves.push(params as Json);
      return Promise.resolve({ status: 'Accepted' });
    });
    const uid = `Q${Date.now().toString(36)}`.toUpperCase();
    const reserve = (id: string) => reserveNow(loc, uid, id);
    const removed = await reserve(`RM-${uid}`);
    expect((await resultAt(emsp221, removed.url)).body).to.deep.equal({ result: 'ACCEPTED' });
    await charger.call('ReservationStatusUpdate', {
      reservationId: reserves[0]?.id,
      reservationUpdateStatus: 'Removed',
    });
    // was nothing: the eMSP went on believing its driver had the EVSE
    await eventually(async () => (resultsAt(removed.url).length === 2 ? true : undefined), {
      what: 'CANCELED_RESERVATION at the RESERVE_NOW response_url',
    });
    expect(resultsAt(removed.url).map((r) => r.body)).to.deep.equal([
      { result: 'ACCEPTED' },
      { result: 'CANCELED_RESERVATION' },
    ]);
    const held = await world.api.request('GET', `/v1/charge-points/${cp.id}`);
    expect(held.body.reservations).to.deep.equal([]);

    // OCPI has no result for a reservation that ran out
    const expired = await reserve(`EX-${uid}`);
    expect((await resultAt(emsp221, expired.url)).body).to.deep.equal({ result: 'ACCEPTED' });
    await charger.call('ReservationStatusUpdate', {
      reservationId: reserves[1]?.id,
      reservationUpdateStatus: 'Expired',
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(resultsAt(expired.url)).to.have.length(1);

    // nor one the charger calls Removed after its expiry: it ran out (was CANCELED_RESERVATION)
    const short = await reserveNow(loc, uid, `SH-${uid}`, 1_500);
    expect((await resultAt(emsp221, short.url)).body).to.deep.equal({ result: 'ACCEPTED' });
    await new Promise((resolve) => setTimeout(resolve, 1_800));
    await charger.call('ReservationStatusUpdate', {
      reservationId: reserves[2]?.id,
      reservationUpdateStatus: 'Removed',
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(resultsAt(short.url)).to.have.length(1);
  });

  it('2.2.1: a RESERVE_NOW with the id of a reservation held at another location is REJECTED; the first stays cancellable', async () => {
    const first = await world.linkedCharger('ocpp1.6');
    const other = await world.linkedCharger('ocpp1.6');
    const reserves: Json[] = [];
    const cancels: Json[] = [];
    for (const { charger } of [first, other]) {
      charger.handle('ReserveNow', ({ params }) => {
        reserves.push(params as Json);
        return Promise.resolve({ status: 'Accepted' });
      });
      charger.handle('CancelReservation', ({ params }) => {
        cancels.push(params as Json);
        return Promise.resolve({ status: 'Accepted' });
      });
    }
    const uid = `M${Date.now().toString(36)}`.toUpperCase();
    const reserve = (loc: string) =>
      send(emsp221, 'RESERVE_NOW', {
        token: tokenOf(emsp221, uid),
        expiry_date: new Date(Date.now() + 15 * 60_000).toISOString(),
        reservation_id: `MOVE-${uid}`,
        location_id: loc,
        evse_uid: 'E1',
      });
    const made = await reserve(first.loc);
    expect((await resultAt(emsp221, made.url)).body).to.deep.equal({ result: 'ACCEPTED' });
    // was ACCEPTED: the id moved to the other charger, and the first reservation, still held by
    // its charger, could no longer be cancelled
    const moved = await reserve(other.loc);
    expect(moved.answer.data).to.deep.include({ result: 'REJECTED', timeout: 0 });
    expect(reserves).to.have.length(1);
    const cancel = await send(emsp221, 'CANCEL_RESERVATION', { reservation_id: `MOVE-${uid}` });
    expect((await resultAt(emsp221, cancel.url)).body).to.deep.equal({ result: 'ACCEPTED' });
    expect(cancels).to.deep.equal([{ reservationId: reserves[0]?.reservationId }]);
    // once its charger let it go (cancelled, refused, expired, used), the id may go elsewhere
    const now = await reserve(other.loc);
    expect((await resultAt(emsp221, now.url)).body).to.deep.equal({ result: 'ACCEPTED' });
    expect(reserves).to.have.length(2);
  });

  it('2.1.1: RESERVE_NOW with its integer id on a 2.0.1 charger reaches ReserveNow with the EVSE', async () => {
    const { loc, charger } = await world.linkedCharger('ocpp2.0.1');
    const reserves: Json[] = [];
    charger.handle('ReserveNow', ({ params }) => {
      reserves.push(params as Json);
      return Promise.resolve({ status: 'Accepted' });
    });
    const { answer, url } = await send(emsp211, 'RESERVE_NOW', {
      token: tokenOf(emsp211, 'TOK-R211'),
      expiry_date: new Date(Date.now() + 600_000).toISOString(),
      reservation_id: 42,
      location_id: loc,
      evse_uid: 'E1',
    });
    expect(answer.data).to.deep.equal({ result: 'ACCEPTED' });
    expect((await resultAt(emsp211, url)).body).to.deep.equal({ result: 'ACCEPTED' });
    expect(reserves[0]).to.deep.include({ evseId: 1 });
    expect((reserves[0]?.idToken as Json).idToken).to.equal('TOK-R211');
  });
});

describe('roaming: a partner command waits for the charger until the timeout the partner was given', function () {
  this.timeout(30_000);
  let world: RoamingWorld;

  // the charger's calls time out after 1 s here; a partner's command was given 5 s
  before(async () => {
    world = await RoamingWorld.start({ OCPI_COMMAND_TIMEOUT_S: '5' }, { callTimeoutMs: 1_000 });
  });
  after(async () => world.stop());

  it('an answer after the call timeout but within the command timeout is the result; none in time is TIMEOUT', async () => {
    const emsp = await world.emsp('2.2.1');
    const { loc, charger } = await world.linkedCharger('ocpp1.6');
    let answers = 0;
    charger.handle('UnlockConnector', async () => {
      answers += 1;
      // the first answer comes after 2.5 s, the second never in time
      await new Promise((resolve) => setTimeout(resolve, answers === 1 ? 2_500 : 8_000));
      return { status: 'Unlocked' };
    });
    const unlock = async (): Promise<{ result: unknown; after: number }> => {
      const url = emsp.sim.responseUrl('2.2.1', 'UNLOCK_CONNECTOR', randomUUID());
      const sent = Date.now();
      const answer = await emsp.sim.call(
        'POST',
        'commands',
        '/UNLOCK_CONNECTOR',
        { response_url: url, location_id: loc, evse_uid: 'E1', connector_id: '1' },
        { role: 'RECEIVER' },
      );
      expect((answer.body as Json).data).to.deep.include({ result: 'ACCEPTED', timeout: 5 });
      const result = await eventually(
        async () => emsp.sim.received.find((r) => r.method === 'POST' && url.endsWith(r.path) && r.status === 200),
        { timeoutMs: 10_000, what: `the result at ${url}` },
      );
      return { result: result.body, after: Date.now() - sent };
    };
    const answered = await unlock();
    expect(answered.result).to.deep.equal({ result: 'ACCEPTED' });
    expect(answered.after).to.be.at.least(2_400);
    const silent = await unlock();
    expect(silent.result).to.deep.equal({ result: 'TIMEOUT' });
    expect(silent.after).to.be.at.least(4_500);
  });
});

describe('roaming: a partner command holds the charger no longer than the timeout the partner was given', function () {
  this.timeout(30_000);
  let world: RoamingWorld;

  // the charger's calls time out after 12 s here; a partner's command was given 5 s
  before(async () => {
    world = await RoamingWorld.start({ OCPI_COMMAND_TIMEOUT_S: '5' }, { callTimeoutMs: 12_000 });
  });
  after(async () => world.stop());

  it("after the partner's TIMEOUT, the next call in the charger's queue goes out at once", async () => {
    const emsp = await world.emsp('2.2.1');
    const { loc, cp, charger } = await world.linkedCharger('ocpp1.6');
    charger.handle('UnlockConnector', () => new Promise(() => undefined));
    let clearedAt = 0;
    charger.handle('ClearCache', async () => {
      clearedAt = Date.now();
      return { status: 'Accepted' };
    });
    const url = emsp.sim.responseUrl('2.2.1', 'UNLOCK_CONNECTOR', randomUUID());
    const sent = Date.now();
    await emsp.sim.call(
      'POST',
      'commands',
      '/UNLOCK_CONNECTOR',
      { response_url: url, location_id: loc, evse_uid: 'E1', connector_id: '1' },
      { role: 'RECEIVER' },
    );
    // the operator's call waits behind the partner's
    const queued = await world.api.request('POST', `/v1/charge-points/${cp.id}/clear-cache?wait_ms=0`, { body: {} });
    expect(queued.status).to.equal(200);
    const result = await eventually(
      async () => emsp.sim.received.find((r) => r.method === 'POST' && url.endsWith(r.path) && r.status === 200),
      { timeoutMs: 10_000, what: `the result at ${url}` },
    );
    expect(result.body).to.deep.equal({ result: 'TIMEOUT' });
    await eventually(async () => clearedAt || undefined, { timeoutMs: 4_000, what: 'the ClearCache call' });
    // was sent at the 12 s call timeout, 7 s after the partner was told TIMEOUT
    expect(clearedAt - sent).to.be.within(4_000, 8_000);
  });
});
