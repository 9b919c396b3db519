import { expect } from 'chai';
import type { RPCClient } from 'ocpp-rpc';
import { platformModules } from '../../src/modules.js';
import { aToken221 } from '../support/ocpi-builders.js';
import { eventually } from '../support/eventually.js';
import {
  embeddedEnvironment,
  startPlatform,
  type StartedPlatform,
  type TestEnvironment,
} from '../support/platforms.js';
import { strictCharger } from '../support/rpc-client.js';
import { API_KEY, apiClient, uniqueChargePointId, type RegisteredChargePoint } from './support/csms.js';
import { v16 } from './support/messages.js';

/**
 * The CSMS keeps connected chargers' local lists in sync by itself (docs/CSMS.md "Local
 * authorization list", OCPP_LOCAL_LIST_SYNC_S): a new charger gets the list, a token withdrawn
 * reaches it as a differential update, and a charger in sync is sent nothing.
 */
describe('local lists kept in sync by the CSMS (OCPP_LOCAL_LIST_SYNC_S)', function () {
  this.timeout(30_000);
  let env: TestEnvironment;
  let started: StartedPlatform;
  let api: ReturnType<typeof apiClient>;
  let charger: RPCClient | undefined;

  before(async () => {
    env = await embeddedEnvironment({ CSMS_API_KEY: API_KEY });
    started = await startPlatform(env, platformModules(), { overrides: { OCPP_LOCAL_LIST_SYNC_S: '1' } });
    api = apiClient(started.platform.url);
  });
  after(async () => {
    await charger?.close({ force: true }).catch(() => undefined);
    await started.stop();
    await env.cleanup();
  });

  it('sends a new charger the tokens, then only what changed, then nothing', async () => {
    const card = aToken221({ uid: `SYNC${Math.random().toString(36).slice(2, 10).toUpperCase()}` });
    const put = (t: Record<string, unknown>) => api('PUT', `/v1/ocpi/tokens/NL/EVP/${String(t.uid)}`, t);
    expect((await put(card)).status).to.be.oneOf([200, 201]);

    const registered = await api<RegisteredChargePoint>('POST', '/v1/charge-points', {
      id: uniqueChargePointId(),
      protocol: 'ocpp1.6',
    });
    charger = strictCharger(started.platform.url, registered.body, 'ocpp1.6');
    const lists: Array<{ listVersion: number; updateType: string; localAuthorizationList?: unknown[] }> = [];
    const held = new Map<string, string>();
    charger.handle('SendLocalList', ({ params }) => {
      const p = params as (typeof lists)[number] & {
        localAuthorizationList?: Array<{ idTag: string; idTagInfo?: { status: string } }>;
      };
      lists.push(p);
      if (p.updateType === 'Full') held.clear();
      for (const e of p.localAuthorizationList ?? [])
        if (e.idTagInfo) held.set(e.idTag, e.idTagInfo.status);
        else held.delete(e.idTag);
      return Promise.resolve({ status: 'Accepted' });
    });
    await charger.connect();
    await charger.call('BootNotification', v16.boot());

    await eventually(async () => (held.get(String(card.uid)) === 'Accepted' ? true : undefined));
    expect(lists[0]).to.include({ listVersion: 1, updateType: 'Full' });

    expect((await put({ ...card, valid: false, last_updated: new Date().toISOString() })).status).to.be.oneOf([
      200, 201,
    ]);
    await eventually(async () => (held.get(String(card.uid)) === 'Blocked' ? true : undefined));
    expect(lists.at(-1)).to.deep.equal({
      listVersion: 2,
      updateType: 'Differential',
      localAuthorizationList: [{ idTag: card.uid, idTagInfo: { status: 'Blocked' } }],
    });

    // the card back, in a group: offline too, another card of the group may stop its charge
    // (parentIdTag was left out of the list, though Authorize sent it)
    expect(
      (await put({ ...card, valid: true, group_id: 'FLEET-1', last_updated: new Date().toISOString() })).status,
    ).to.be.oneOf([200, 201]);
    await eventually(async () => (held.get(String(card.uid)) === 'Accepted' ? true : undefined));
    expect(lists.at(-1)).to.deep.equal({
      listVersion: 3,
      updateType: 'Differential',
      localAuthorizationList: [{ idTag: card.uid, idTagInfo: { status: 'Accepted', parentIdTag: 'FLEET-1' } }],
    });

    // in sync: the next sweeps send nothing
    const count = lists.length;
    await new Promise((r) => setTimeout(r, 2_500));
    expect(lists).to.have.length(count);
  });
});
