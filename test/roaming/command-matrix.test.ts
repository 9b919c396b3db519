import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createRPCError, type RPCClient } from 'ocpp-rpc';
import { eventually } from '../support/eventually.js';
import { aToken, aToken221 } from '../support/ocpi-builders.js';
import { RoamingWorld, type Emsp } from '../support/roaming-world.js';

type Json = Record<string, unknown>;

/**
 * Every command an eMSP may send us, in both OCPI versions, on chargers of both OCPP versions, with
 * each answer a charger can give: it accepts, it refuses, it says nothing (docs/ROAMING.md
 * "Commands"). The cases run side by side, each on its own charger.
 */
describe('roaming: command x OCPI version x OCPP version x charger answer', function () {
  this.timeout(60_000);
  let world: RoamingWorld;
  const emsps: Partial<Record<'2.2.1' | '2.1.1', Emsp>> = {};

  before(async () => {
    world = await RoamingWorld.start({ OCPI_COMMAND_TIMEOUT_S: '5' });
    emsps['2.2.1'] = await world.emsp('2.2.1');
    emsps['2.1.1'] = await world.emsp('2.1.1');
  });
  after(async () => world.stop());

  type Answer = 'accepts' | 'refuses' | 'silent';
  /** the OCPP action of each command on each version, and the charger's words for yes and no */
  const CALLS = {
    START_SESSION: {
      'ocpp1.6': { action: 'RemoteStartTransaction', yes: 'Accepted', no: 'Rejected' },
      'ocpp2.0.1': { action: 'RequestStartTransaction', yes: 'Accepted', no: 'Rejected' },
    },
    UNLOCK_CONNECTOR: {
      'ocpp1.6': { action: 'UnlockConnector', yes: 'Unlocked', no: 'UnlockFailed' },
      'ocpp2.0.1': { action: 'UnlockConnector', yes: 'Unlocked', no: 'UnlockFailed' },
    },
    RESERVE_NOW: {
      'ocpp1.6': { action: 'ReserveNow', yes: 'Accepted', no: 'Faulted' },
      'ocpp2.0.1': { action: 'ReserveNow', yes: 'Accepted', no: 'Faulted' },
    },
  } as const;
  /** what the eMSP gets for each answer, by OCPI version */
  const EXPECTED: Record<keyof typeof CALLS, Record<Answer, { '2.2.1': string; '2.1.1': string }>> = {
    START_SESSION: {
      accepts: { '2.2.1': 'ACCEPTED', '2.1.1': 'ACCEPTED' },
      refuses: { '2.2.1': 'REJECTED', '2.1.1': 'REJECTED' },
      silent: { '2.2.1': 'TIMEOUT', '2.1.1': 'TIMEOUT' },
    },
    UNLOCK_CONNECTOR: {
      accepts: { '2.2.1': 'ACCEPTED', '2.1.1': 'ACCEPTED' },
      refuses: { '2.2.1': 'FAILED', '2.1.1': 'REJECTED' },
      silent: { '2.2.1': 'TIMEOUT', '2.1.1': 'TIMEOUT' },
    },
    RESERVE_NOW: {
      accepts: { '2.2.1': 'ACCEPTED', '2.1.1': 'ACCEPTED' },
      refuses: { '2.2.1': 'EVSE_INOPERATIVE', '2.1.1': 'REJECTED' },
      silent: { '2.2.1': 'TIMEOUT', '2.1.1': 'TIMEOUT' },
    },
  };

  function answering(charger: RPCClient, action: string, status: string | undefined, seen: Json[]): void {
    charger.handle(action, ({ params }) => {
      seen.push(params as Json);
      return status === undefined ? new Promise(() => undefined) : Promise.resolve({ status });
    });
  }

  it('the charger gets the mapped call and the eMSP the mapped result, in all 36 cases', async () => {
    const cases: Array<Promise<string>> = [];
    for (const command of Object.keys(CALLS) as Array<keyof typeof CALLS>)
      for (const version of ['2.2.1', '2.1.1'] as const)
        for (const protocol of ['ocpp1.6', 'ocpp2.0.1'] as const)
          for (const answer of ['accepts', 'refuses', 'silent'] as const) {
            const e = emsps[version];
            if (!e) throw new Error('no eMSP');
            const call = CALLS[command][protocol];
            const { loc, charger } = await world.linkedCharger(protocol);
            const seen: Json[] = [];
            answering(
              charger,
              call.action,
              answer === 'silent' ? undefined : answer === 'accepts' ? call.yes : call.no,
              seen,
            );
            const uid = `M${randomUUID().slice(0, 8)}`.toUpperCase();
            const token =
              version === '2.2.1'
                ? aToken221({ uid, country_code: e.sim.party.country_code, party_id: e.sim.party.party_id })
                : aToken({ uid });
            const fields: Json =
              command === 'UNLOCK_CONNECTOR'
                ? { location_id: loc, evse_uid: 'E1', connector_id: '1' }
                : command === 'RESERVE_NOW'
                  ? {
                      token,
                      location_id: loc,
                      evse_uid: 'E1',
                      expiry_date: new Date(Date.now() + 600_000).toISOString(),
                      reservation_id: version === '2.2.1' ? `R-${uid}` : Math.floor(Math.random() * 1e6),
                    }
                  : { token, location_id: loc, evse_uid: 'E1' };
            const url = e.sim.responseUrl(version, command, randomUUID());
            const label = `${command} ${version} ${protocol} ${answer}`;
            cases.push(
              (async () => {
                const sent = await e.sim.call(
                  'POST',
                  'commands',
                  `/${command}`,
                  { response_url: url, ...fields },
                  {
                    ...(version === '2.2.1' ? { role: 'RECEIVER' as const } : {}),
                  },
                );
                expect((sent.data as Json).result, label).to.equal('ACCEPTED');
                const result = await eventually(
                  async () =>
                    e.sim.received.find((r) => r.method === 'POST' && url.endsWith(r.path) && r.status === 200),
                  { timeoutMs: 15_000, what: label },
                );
                expect((result.body as Json).result, label).to.equal(EXPECTED[command][answer][version]);
                expect(seen, label).to.have.length(1);
                // an RFID token is reserved as the card it is (it was Central: a charger comparing
                // the type turned the card away at its reserved EVSE)
                if (command === 'RESERVE_NOW' && protocol === 'ocpp2.0.1')
                  expect(seen[0]?.idToken, label).to.deep.equal({ idToken: uid, type: 'ISO14443' });
                return label;
              })(),
            );
          }
    const done = await Promise.all(cases);
    expect(done).to.have.length(36);
    expect(emsps['2.2.1']?.sim.violations).to.deep.equal([]);
    expect(emsps['2.1.1']?.sim.violations).to.deep.equal([]);
  });

  it('a charger that answers with a CALLERROR saying it does not do the action: NOT_SUPPORTED in both versions', async () => {
    const results: string[] = [];
    for (const code of ['NotSupported', 'NotImplemented', 'InternalError'])
      for (const version of ['2.2.1', '2.1.1'] as const) {
        const e = emsps[version];
        if (!e) throw new Error('no eMSP');
        const { loc, charger } = await world.linkedCharger('ocpp1.6');
        charger.handle('UnlockConnector', () => {
          throw createRPCError(code, `unlock: ${code}`);
        });
        const url = e.sim.responseUrl(version, 'UNLOCK_CONNECTOR', randomUUID());
        const body = { response_url: url, location_id: loc, evse_uid: 'E1', connector_id: '1' };
        const sent = await e.sim.call('POST', 'commands', '/UNLOCK_CONNECTOR', body, {
          ...(version === '2.2.1' ? { role: 'RECEIVER' as const } : {}),
        });
        expect((sent.data as Json).result).to.equal('ACCEPTED');
        const result = await eventually(
          async () => e.sim.received.find((r) => r.method === 'POST' && url.endsWith(r.path) && r.status === 200),
          { timeoutMs: 15_000, what: `${code} ${version}` },
        );
        results.push(`${code} ${version} ${String((result.body as Json).result)}`);
      }
    // were FAILED (2.2.1) and REJECTED (2.1.1): an eMSP retried what the charger can never do
    expect(results).to.deep.equal([
      'NotSupported 2.2.1 NOT_SUPPORTED',
      'NotSupported 2.1.1 NOT_SUPPORTED',
      'NotImplemented 2.2.1 NOT_SUPPORTED',
      'NotImplemented 2.1.1 NOT_SUPPORTED',
      'InternalError 2.2.1 FAILED',
      'InternalError 2.1.1 REJECTED',
    ]);
  });
});
