import { expect } from 'chai';
import { throttledAddress } from '../../src/ocpp/upgrade.js';
import { LoginThrottle } from '../../src/ocpp/login-throttle.js';

/**
 * The back-off on failed authentications (src/gateway/auth-failures.ts, docs/SECURITY.md
 * "Guessing credentials"): which address a failure counts against, and what a success takes off.
 * The gateway's behaviour over HTTP: test/embedded/gateway-hardening.test.ts.
 */
describe('auth failures: the address a failure counts against', () => {
  it('an IPv4 address as it is, with a port a proxy wrote left out', () => {
    expect(throttledAddress('203.0.113.7', '10.0.0.1')).to.equal('203.0.113.7');
    expect(throttledAddress('203.0.113.7:51000', '10.0.0.1')).to.equal('203.0.113.7');
  });

  it('an IPv4-mapped IPv6 address as the IPv4 one, however it is written', () => {
    for (const written of [
      '::ffff:5.5.5.5',
      '0:0:0:0:0:ffff:5.5.5.5',
      '0000:0000:0000:0000:0000:FFFF:5.5.5.5',
      '::ffff:505:505',
    ])
      expect(throttledAddress(written, undefined), written).to.equal('5.5.5.5');
  });

  it('an IPv6 address as its /64, however it is written, with brackets, a port or a zone', () => {
    for (const written of [
      '2001:db8:1:2::1',
      '2001:0db8:0001:0002:0000:0000:0000:0009',
      '2001:DB8:1:2:ffff::3',
      '[2001:db8:1:2::5]:443',
      '[2001:db8:1:2::5]',
      '2001:db8:1:2::1%eth0',
    ])
      expect(throttledAddress(written, undefined), written).to.equal('2001:db8:1:2::/64');
    expect(throttledAddress('::1', undefined)).to.equal('0:0:0:0::/64');
    expect(throttledAddress('2001:db8:1:3::1', undefined)).to.equal('2001:db8:1:3::/64');
  });

  it('an entry that is no address as the peer, and never as itself', () => {
    expect(throttledAddress(`junk-${'x'.repeat(15_000)}`, '127.0.0.1')).to.equal('127.0.0.1');
    expect(throttledAddress('999.1.1.1', '::ffff:127.0.0.1')).to.equal('127.0.0.1');
    expect(throttledAddress('not-an-address', undefined)).to.equal('unknown');
  });
});

describe('auth failures: what a success takes off', () => {
  it('one failure, not the count: four guesses and one real request, over and over, reach the limit', () => {
    const throttle = new LoginThrottle({ maxFailures: 5 });
    let rounds = 0;
    const open = () => throttle.retryAfterMs(['k']) === 0;
    while (open() && rounds < 100) {
      for (let guess = 0; guess < 4 && open(); guess++) throttle.failed(['k']);
      if (open()) throttle.forgive('k', 1);
      rounds++;
    }
    // was never: a success cleared the whole count
    expect(rounds).to.equal(2);

    const steady = new LoginThrottle({ maxFailures: 5 });
    for (let i = 0; i < 1000; i++) {
      if (i % 2 === 0) steady.failed(['k']);
      else steady.forgive('k', 1);
    }
    expect(steady.retryAfterMs(['k'])).to.equal(0);
  });
});
