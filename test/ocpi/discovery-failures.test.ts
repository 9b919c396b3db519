import { expect } from 'chai';
import nock from 'nock';
import { credentials221 } from '../support/ocpi-builders.js';
import { OcpiApi, embeddedTarget, uniqueParty, type OcpiTarget } from '../support/ocpi-harness.js';

/**
 * A partner whose versions URL or version details cannot be used: the handshake answers the
 * OCPI codes (3001 unable to use the client's API, 3002 unsupported version) instead of hanging,
 * and Token A stays usable for a retry.
 */
describe('OCPI credentials: discovery failures (partners mocked with nock)', function () {
  this.timeout(30_000);
  let target: OcpiTarget;
  let api: OcpiApi;

  before(async () => {
    target = await embeddedTarget();
    api = new OcpiApi(target);
  });
  afterEach(() => nock.cleanAll());
  after(async () => target.stop());

  async function registerAgainst(versionsUrl: string): Promise<{ body: Record<string, unknown>; status: number; tokenA: string; party: { country_code: string; party_id: string } }> {
    const party = uniqueParty();
    const { token } = await api.onboard(party, 'CPO');
    const res = await api.request('POST', '/ocpi/emsp/2.2.1/credentials', { token, encoding: 'base64', body: credentials221(party, 'their-token', versionsUrl) });
    return { ...res, tokenA: token, party };
  }

  it('answers 3001 when the versions URL fails, and Token A still registers afterwards', async () => {
    nock('http://broken.test').get('/versions').reply(500, 'oops');
    const res = await registerAgainst('http://broken.test/versions');
    expect(res.status).to.equal(200);
    expect(res.body.status_code).to.equal(3001);
    expect(String(res.body.status_message)).to.match(/Unable to use the client's API/);

    nock('http://fixed.test')
      .get('/versions')
      .reply(200, { status_code: 1000, data: [{ version: '2.2.1', url: 'http://fixed.test/2.2.1' }] })
      .get('/2.2.1')
      .reply(200, { status_code: 1000, data: { version: '2.2.1', endpoints: [] } });
    const retry = await api.request('POST', '/ocpi/emsp/2.2.1/credentials', { token: res.tokenA, encoding: 'base64', body: credentials221(res.party, 'their-token', 'http://fixed.test/versions') });
    expect(retry.body.status_code).to.equal(1000);
  });

  it('answers 3002 when the partner supports none of our versions', async () => {
    nock('http://old.test').get('/versions').reply(200, { status_code: 1000, data: [{ version: '2.0', url: 'http://old.test/2.0' }] });
    const res = await registerAgainst('http://old.test/versions');
    expect(res.body.status_code).to.equal(3002);
  });

  it('answers 3001 when the version details are unreachable or not OCPI', async () => {
    nock('http://half.test')
      .get('/versions')
      .reply(200, { status_code: 1000, data: [{ version: '2.2.1', url: 'http://half.test/2.2.1' }] })
      .get('/2.2.1')
      .replyWithError('connection reset');
    expect((await registerAgainst('http://half.test/versions')).body.status_code).to.equal(3001);
    nock('http://html.test').get('/versions').reply(200, '<html>hello</html>');
    expect((await registerAgainst('http://html.test/versions')).body.status_code).to.equal(3001);
  });

  it('answers 3001 within the outbound timeout when the partner does not answer', async () => {
    nock('http://slow.test').get('/versions').delay(8000).reply(200, { status_code: 1000, data: [] });
    const res = await registerAgainst('http://slow.test/versions');
    expect(res.body.status_code).to.equal(3001);
    expect(String(res.body.status_message)).to.match(/no answer within 5000 ms/);
  });

  it('sends the partner its token base64-encoded on a 2.2.1 handshake', async () => {
    const seen: string[] = [];
    nock('http://seen.test')
      .get('/versions')
      .reply(function reply() {
        seen.push(String(this.req.headers.authorization));
        return [200, { status_code: 1000, data: [{ version: '2.2.1', url: 'http://seen.test/2.2.1' }] }];
      })
      .get('/2.2.1')
      .reply(200, { status_code: 1000, data: { version: '2.2.1', endpoints: [] } });
    const res = await registerAgainst('http://seen.test/versions');
    expect(res.body.status_code).to.equal(1000);
    expect(seen).to.deep.equal([`Token ${Buffer.from('their-token').toString('base64')}`]);
  });
});
