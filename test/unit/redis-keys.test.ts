import { expect } from 'chai';
import { RedisKeys } from '../../src/runtime/cluster/redis-keys.js';

/**
 * The key names are a contract with processes of the previous release sharing the same Redis
 * during a rolling upgrade (docs/ARCHITECTURE.md): a renamed key splits the cluster in two.
 */
describe('Redis key names', () => {
  it('keep the names running clusters use', () => {
    const k = new RedisKeys('evp');
    expect([
      k.clusterChannel(),
      k.live(),
      k.hosts(),
      k.epoch(),
      k.lease(17),
      k.pin('charge-point/CP-1'),
      k.inbox('host-42-abc'),
      k.ocpiInvalidation(),
      k.csmsEvents(),
      k.csmsEventListeners(),
    ]).to.deep.equal([
      'evp:cluster',
      'evp:live',
      'evp:hosts',
      'evp:epoch',
      'evp:lease:17',
      'evp:pin:charge-point/CP-1',
      'evp:inbox:host-42-abc',
      'evp:ocpi:invalidate',
      'evp:csms:events',
      'evp:csms:listeners',
    ]);
  });
});
