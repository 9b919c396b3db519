import { expect } from 'chai';
import { byteSize } from '../../config/byte-size.js';
import { classifyAddress, policyAllows, type AddressClass } from '../../src/ocpi/client/address-class.js';
import { jsonNestingExceeds } from '../../src/json-depth.js';

/** The destination classifier behind PARTNER_URL_POLICY (issue 7, SSRF through the handshake). */
describe('outbound destinations: address classes', () => {
  const cases: Array<[string, AddressClass | undefined]> = [
    // IPv4
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['100.128.0.1', 'public'],
    ['169.254.169.254', 'link-local'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    // IPv6
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fdff:ffff::1', 'unique-local'],
    ['fec0::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'reserved'],
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4001:80b::200e', 'public'],
    ['100::1', 'reserved'],
    ['::2', 'reserved'],
    // IPv4 inside IPv6: the embedded address decides
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['[::ffff:10.1.2.3]', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:0.0.0.0', 'unspecified'],
    ['::ffff:8.8.8.8', 'public'],
    ['0:0:0:0:0:ffff:c0a8:101', 'private'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::808:808', 'public'],
    ['64:ff9b:1::1', 'private'],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:0808:0808::1', 'public'],
    // not addresses
    ['localhost', undefined],
    ['example.com', undefined],
    ['127.0.0.1.nip.io', undefined],
    ['256.1.1.1', undefined],
  ];
  for (const [address, cls] of cases) {
    it(`${address} is ${cls ?? 'not an IP address'}`, () => {
      expect(classifyAddress(address)).to.equal(cls);
    });
  }

  it('public allows public addresses only; loopback adds loopback; any allows everything', () => {
    const all: AddressClass[] = [
      'public',
      'loopback',
      'private',
      'link-local',
      'unique-local',
      'unspecified',
      'multicast',
      'reserved',
    ];
    expect(all.filter((c) => policyAllows('public', c))).to.deep.equal(['public']);
    expect(all.filter((c) => policyAllows('loopback', c))).to.deep.equal(['public', 'loopback']);
    expect(all.filter((c) => policyAllows('any', c))).to.deep.equal(all);
  });
});

describe('size settings', () => {
  it('reads b, kb and mb as the body parser does (powers of 1024)', () => {
    expect(byteSize('512b')).to.equal(512);
    expect(byteSize('4kb')).to.equal(4096);
    expect(byteSize('4mb')).to.equal(4 * 1024 * 1024);
    expect(() => byteSize('4gb')).to.throw(/not a size/);
  });
});

describe('nesting depth of a partner reply', () => {
  const deeper = (text: string, max: number) => jsonNestingExceeds(Buffer.from(text), max);

  it('counts arrays and objects, not brackets inside strings or escaped quotes', () => {
    expect(deeper('{"a": [1, {"b": []}]}', 4)).to.equal(false);
    expect(deeper('{"a": [1, {"b": []}]}', 3)).to.equal(true);
    expect(deeper('{"a": "[[[[{{{{"}', 1)).to.equal(false);
    expect(deeper('{"a": "\\"[[[["}', 1)).to.equal(false);
    expect(deeper('{"a": "\\\\", "b": [[[]]]}', 3)).to.equal(true);
    expect(deeper(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 64)).to.equal(true);
  });
});
