import { expect } from 'chai';
import { LoginThrottle } from '../../src/ocpp/login-throttle.js';
import { stringWithNul } from '../../src/ocpp/text-guard.js';
import { jitteredRetryAfterS, routeUpgrade } from '../../src/ocpp/upgrade.js';

describe('OCPP edge rules (pure functions)', () => {
  it('routes /ocpp/<id> (query string and trailing slash ignored) and refuses every other upgrade target', () => {
    expect(routeUpgrade('/ocpp/CP-1')).to.deep.equal({ t: 'charger', id: 'CP-1' });
    expect(routeUpgrade('/ocpp/CP-1?version=1')).to.deep.equal({ t: 'charger', id: 'CP-1' });
    expect(routeUpgrade('/ocpp/CP-1/')).to.deep.equal({ t: 'charger', id: 'CP-1' });
    expect(routeUpgrade('/ocpp/CP%201')).to.deep.equal({ t: 'charger', id: 'CP 1' });
    for (const path of ['/ocpp//X', '/ocpp/', '/ocpp', '/ocpp/A/B', '/other', '/', '/ocpp/%E0%A4%A', '/ocpp/X#frag']) {
      expect(routeUpgrade(path), path).to.deep.equal({ t: 'refuse', status: 404 });
    }
    for (const target of ['*', 'http://elsewhere.example/ocpp/X', '', undefined]) {
      expect(routeUpgrade(target), String(target)).to.deep.equal({ t: 'refuse', status: 400 });
    }
  });

  it('spreads Retry-After over 10-30 s', () => {
    expect(jitteredRetryAfterS(() => 0)).to.equal(10);
    expect(jitteredRetryAfterS(() => 0.999999)).to.equal(30);
  });

  it('finds a NUL in any string or property name, at any depth, without recursion', () => {
    expect(stringWithNul({ idTag: 'TAG-1', n: 1, list: ['a', { b: null }] })).to.equal(undefined);
    expect(stringWithNul({ idTag: 'TAG\u0000' })).to.equal('/idTag');
    expect(stringWithNul({ meterValue: [{ sampledValue: [{ value: '1', unit: 'W\u0000h' }] }] })).to.equal(
      '/meterValue/0/sampledValue/0/unit',
    );
    expect(stringWithNul({ customData: { 'a/b\u0000': 1 } })).to.equal('/customData/a~1b\\u0000');
    let deep: unknown = 'x\u0000';
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    expect(stringWithNul(deep)).to.have.length.greaterThan(100_000);
  });

  describe('LoginThrottle', () => {
    function throttle(maxFailures = 3, capacity = 10_000) {
      const clock = { now: 1_000_000 };
      const t = new LoginThrottle({
        maxFailures,
        capacity,
        baseBackoffMs: 1000,
        maxBackoffMs: 60_000,
        forgetAfterMs: 600_000,
        now: () => clock.now,
      });
      return { t, clock };
    }

    it('refuses a key after maxFailures failures, for a back-off that doubles with each further failure up to the cap', () => {
      const { t, clock } = throttle(3);
      expect(t.failed(['id:A'])).to.deep.equal([]);
      expect(t.failed(['id:A'])).to.deep.equal([]);
      expect(t.retryAfterMs(['id:A'])).to.equal(0);
      expect(t.failed(['id:A'])).to.deep.equal([{ key: 'id:A', failures: 3, backoffMs: 1000 }]);
      expect(t.retryAfterMs(['id:A', 'address:X'])).to.equal(1000);
      const backoffs: number[] = [];
      for (let i = 0; i < 8; i += 1) {
        clock.now += t.retryAfterMs(['id:A']);
        backoffs.push(t.failed(['id:A'])[0]?.backoffMs ?? 0);
      }
      expect(backoffs).to.deep.equal([2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    });

    it('clears a key on success and forgets failures older than forgetAfterMs', () => {
      const { t, clock } = throttle(2);
      t.failed(['id:A', 'address:X']);
      t.succeeded('id:A');
      t.failed(['id:A', 'address:X']);
      expect(t.retryAfterMs(['id:A'])).to.equal(0);
      expect(t.retryAfterMs(['address:X'])).to.equal(1000);
      clock.now += 600_001;
      t.failed(['address:X']);
      expect(t.retryAfterMs(['address:X'])).to.equal(0);
    });

    it('stays within its capacity under a flood of random keys, forgetting the stalest first', () => {
      const { t } = throttle(1, 100);
      t.failed(['id:victim']);
      for (let i = 0; i < 50_000; i += 1) t.failed([`id:${i}`, `address:10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`]);
      expect(t.size).to.equal(100);
      expect(t.retryAfterMs(['id:victim'])).to.equal(0);
      expect(t.retryAfterMs(['id:49999'])).to.be.greaterThan(0);
    });
  });
});
