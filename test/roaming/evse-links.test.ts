import { expect } from 'chai';
import { platformModules } from '../../src/modules.js';
import { aLocation, anEvse } from '../support/ocpi-builders.js';
import { API_KEY, OcpiApi } from '../support/ocpi-harness.js';
import {
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../support/platforms.js';

type Obj = Record<string, unknown>;

/**
 * EVSE links (docs/ROAMING.md): an operator says which EVSE of which of our OCPI locations each
 * OCPP EVSE of a charge point is, through /v1 as its tools would.
 */
describe('roaming: EVSE links between our chargers and our OCPI locations', function () {
  this.timeout(30_000);
  let env: TestEnvironment;
  let p: StartedPlatform;
  let api: OcpiApi;

  before(async () => {
    env = await embeddedEnvironment({ CSMS_API_KEY: API_KEY });
    p = await startPlatform(env, platformModules());
    api = new OcpiApi({
      mode: 'embedded',
      urls: [p.platform.url],
      partner: () => Promise.reject(new Error('none')),
      stop: async () => undefined,
    });
    const location = aLocation({ id: 'LINK-L1', evses: [anEvse({ uid: 'LINK-E1' }), anEvse({ uid: 'LINK-E2' })] });
    expect((await api.request('PUT', '/v1/ocpi/locations/LINK-L1', { body: location })).status).to.equal(200);
    for (const id of ['LINK-CP1', 'LINK-CP2'])
      expect((await api.request('POST', '/v1/charge-points', { body: { id, protocol: 'ocpp1.6' } })).status).to.equal(
        201,
      );
  });
  after(async () => {
    await p.stop();
    await env.cleanup();
  });

  const link = (cp: string, n: number | string, body: Obj) =>
    api.request('PUT', `/v1/charge-points/${cp}/evses/${n}`, { body });
  const codeOf = (body: Obj) => (body.error as { code?: string } | undefined)?.code;

  it('links an EVSE, shows it on the charge point, and unlinks it', async () => {
    const res = await link('LINK-CP1', 1, { location_id: 'LINK-L1', evse_uid: 'LINK-E1' });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body).to.deep.equal({
      charge_point_id: 'LINK-CP1',
      evse_number: 1,
      location_id: 'LINK-L1',
      evse_uid: 'LINK-E1',
    });
    const cp = await api.request('GET', '/v1/charge-points/LINK-CP1');
    expect(cp.body.evse_links).to.deep.equal([{ evse_number: 1, location_id: 'LINK-L1', evse_uid: 'LINK-E1' }]);

    const removed = await api.request('DELETE', '/v1/charge-points/LINK-CP1/evses/1');
    expect([removed.status, removed.body.evse_uid]).to.deep.equal([200, 'LINK-E1']);
    expect((await api.request('GET', '/v1/charge-points/LINK-CP1')).body.evse_links).to.deep.equal([]);
    const again = await api.request('DELETE', '/v1/charge-points/LINK-CP1/evses/1');
    expect([again.status, codeOf(again.body)]).to.deep.equal([404, 'link_not_found']);
  });

  it('answers 404 for an unknown charge point, location or EVSE uid, and 422 for an EVSE number below 1', async () => {
    const cases: Array<[string, number | string, Obj, number, string | undefined]> = [
      ['NOPE', 1, { location_id: 'LINK-L1', evse_uid: 'LINK-E1' }, 404, 'not_found'],
      ['LINK-CP1', 1, { location_id: 'NOPE', evse_uid: 'LINK-E1' }, 404, 'location_not_found'],
      ['LINK-CP1', 1, { location_id: 'LINK-L1', evse_uid: 'NOPE' }, 404, 'evse_not_found'],
      ['LINK-CP1', 0, { location_id: 'LINK-L1', evse_uid: 'LINK-E1' }, 422, undefined],
      ['LINK-CP1', 'x', { location_id: 'LINK-L1', evse_uid: 'LINK-E1' }, 422, undefined],
      ['LINK-CP1', 1, { location_id: 'LINK-L1' }, 422, undefined],
    ];
    for (const [cp, n, body, status, code] of cases) {
      const res = await link(cp, n, body);
      expect(res.status, `${cp} ${n} ${JSON.stringify(body)}`).to.equal(status);
      if (code) expect(codeOf(res.body)).to.equal(code);
    }
    expect((await api.request('PUT', '/v1/charge-points/LINK-CP1/evses/1', { bearer: false })).status).to.equal(401);
  });

  it('links one OCPI EVSE to one charger EVSE: another is 409 until it is moved or unlinked', async () => {
    expect((await link('LINK-CP1', 1, { location_id: 'LINK-L1', evse_uid: 'LINK-E1' })).status).to.equal(200);
    const taken = await link('LINK-CP2', 1, { location_id: 'LINK-L1', evse_uid: 'LINK-E1' });
    expect([taken.status, codeOf(taken.body)]).to.deep.equal([409, 'evse_linked_elsewhere']);
    // the same charger EVSE moves to the other OCPI EVSE: the first one is free again
    expect((await link('LINK-CP1', 1, { location_id: 'LINK-L1', evse_uid: 'LINK-E2' })).status).to.equal(200);
    expect((await link('LINK-CP2', 1, { location_id: 'LINK-L1', evse_uid: 'LINK-E1' })).status).to.equal(200);
    const cp1 = await api.request('GET', '/v1/charge-points/LINK-CP1');
    expect(cp1.body.evse_links).to.deep.equal([{ evse_number: 1, location_id: 'LINK-L1', evse_uid: 'LINK-E2' }]);
  });
});
