import { isIPv4, isIPv6 } from 'node:net';

/**
 * What kind of destination an IP address is, for the outbound destination policy
 * (PARTNER_URL_POLICY). A partner hands us URLs (versions URL, endpoint URLs, `Link` headers) and
 * we call them: without this check a partner or a caller with Token A could make us probe the
 * networks around our own process (docs/SECURITY.md, SSRF). Ranges from the IANA special-purpose
 * registries (RFC 6890 and its updates).
 */
export type AddressClass =
  | 'public'
  | 'loopback'
  /** RFC 1918, CGNAT 100.64/10 (RFC 6598), deprecated IPv6 site-local, local-use NAT64 */
  | 'private'
  | 'link-local'
  /** fc00::/7 (RFC 4193) */
  | 'unique-local'
  /** 0.0.0.0/8, :: — connecting to them reaches this host on most systems */
  | 'unspecified'
  | 'multicast'
  /** documentation, benchmarking, reserved-for-future-use, broadcast, IETF protocol ranges */
  | 'reserved';

export type DestinationPolicy = 'public' | 'loopback' | 'any';

/** Whether PARTNER_URL_POLICY lets us connect to an address of this class. */
export function policyAllows(policy: DestinationPolicy, cls: AddressClass): boolean {
  if (policy === 'any') return true;
  if (policy === 'loopback') return cls === 'public' || cls === 'loopback';
  return cls === 'public';
}

/** An IPv4 range: [base address as a number, prefix length, class]. */
type V4Range = readonly [number, number, AddressClass];

function v4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

// most specific first: the first match wins
const V4_RANGES: readonly V4Range[] = [
  [v4(0, 0, 0, 0), 8, 'unspecified'],
  [v4(10, 0, 0, 0), 8, 'private'],
  [v4(100, 64, 0, 0), 10, 'private'],
  [v4(127, 0, 0, 0), 8, 'loopback'],
  [v4(169, 254, 0, 0), 16, 'link-local'],
  [v4(172, 16, 0, 0), 12, 'private'],
  [v4(192, 0, 0, 0), 24, 'reserved'],
  [v4(192, 0, 2, 0), 24, 'reserved'],
  [v4(192, 88, 99, 0), 24, 'reserved'],
  [v4(192, 168, 0, 0), 16, 'private'],
  [v4(198, 18, 0, 0), 15, 'reserved'],
  [v4(198, 51, 100, 0), 24, 'reserved'],
  [v4(203, 0, 113, 0), 24, 'reserved'],
  [v4(224, 0, 0, 0), 4, 'multicast'],
  // 240/4 reserved, including 255.255.255.255 (broadcast)
  [v4(240, 0, 0, 0), 4, 'reserved'],
];

function inV4(addr: number, base: number, prefix: number): boolean {
  const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
  return (addr & mask) >>> 0 === base;
}

function classifyV4(addr: number): AddressClass {
  for (const [base, prefix, cls] of V4_RANGES) if (inV4(addr, base, prefix)) return cls;
  return 'public';
}

function parseV4(text: string): number {
  const [a = 0, b = 0, c = 0, d = 0] = text.split('.').map(Number);
  return v4(a, b, c, d);
}

/** The eight 16-bit groups of a valid IPv6 address (an embedded dotted IPv4 tail included). */
function parseV6(text: string): number[] {
  let s = text.replace(/%.*$/, ''); // a zone id (fe80::1%eth0) does not change the class
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(s)?.[1];
  if (tail) {
    const n = parseV4(tail);
    s = `${s.slice(0, -tail.length)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head = '', rest] = s.split('::');
  const left = head ? head.split(':') : [];
  const right = rest ? rest.split(':') : [];
  const zeros = rest === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((g) => parseInt(g, 16));
}

function classifyV6(g: readonly number[]): AddressClass {
  const at = (i: number): number => g[i] ?? 0;
  const embeddedV4 = (): number => ((at(6) << 16) | at(7)) >>> 0;
  const zeroUpTo = (n: number): boolean => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return 'unspecified';
  if (zeroUpTo(7) && at(7) === 1) return 'loopback';
  // ::ffff:a.b.c.d (IPv4-mapped): the socket reaches the IPv4 address
  if (zeroUpTo(5) && at(5) === 0xffff) return classifyV4(embeddedV4());
  // 64:ff9b::a.b.c.d (NAT64, RFC 6052): a translator forwards to the IPv4 address
  if (at(0) === 0x64 && at(1) === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return classifyV4(embeddedV4());
  // 64:ff9b:1::/48: local-use NAT64 (RFC 8215)
  if (at(0) === 0x64 && at(1) === 0xff9b && at(2) === 1) return 'private';
  // 2002:AABB:CCDD::/48 (6to4): a relay forwards to the IPv4 address AA.BB.CC.DD
  if (at(0) === 0x2002) return classifyV4(((at(1) << 16) | at(2)) >>> 0);
  if ((at(0) & 0xff00) === 0xff00) return 'multicast';
  if ((at(0) & 0xffc0) === 0xfe80) return 'link-local';
  if ((at(0) & 0xffc0) === 0xfec0) return 'private';
  if ((at(0) & 0xfe00) === 0xfc00) return 'unique-local';
  // 2001::/23 IETF protocol assignments (Teredo 2001::/32 among them), 2001:db8::/32 documentation
  if (at(0) === 0x2001 && (at(1) < 0x200 || at(1) === 0xdb8)) return 'reserved';
  // 3fff::/20 documentation (RFC 9637)
  if (at(0) === 0x3fff && at(1) < 0x1000) return 'reserved';
  // only 2000::/3 is global unicast; ::/96 IPv4-compatible, 100::/64 discard and the rest are not
  if ((at(0) & 0xe000) !== 0x2000) return 'reserved';
  return 'public';
}

/**
 * The class of an IP address given as text (IPv4 dotted, IPv6 with or without brackets), or
 * undefined when the text is not an IP address.
 */
export function classifyAddress(text: string): AddressClass | undefined {
  const ip = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (isIPv4(ip)) return classifyV4(parseV4(ip));
  if (isIPv6(ip)) return classifyV6(parseV6(ip));
  return undefined;
}
