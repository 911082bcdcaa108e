// The SSRF guard's address rules (lib/special-addresses.ts, lib/host-addresses.ts, issue 39 point 5): every range of the
// IANA IPv4 and IPv6 special-purpose registries is refused (an address inside, one just outside allowed), IPv6 forms
// that carry an IPv4 address are judged by it, and every address of this host's own interfaces is refused, whatever
// range it is in. No connection is made here: a URL's check resolves and judges, it does not dial.
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HOST_ADDRESSES_REFRESH_MS, HostAddresses } from '../../src/lib/host-addresses.js';
import { SafeFetch, isForbiddenAddress } from '../../src/lib/safe-fetch.js';
import { isSpecialPurposeAddress, SPECIAL_PURPOSE_RANGES } from '../../src/lib/special-addresses.js';

/** [range, an address inside, addresses just outside (on either side, where the neighbour is not refused too)] */
const CASES: Array<[string, string[], string[]]> = [
  ['0.0.0.0/8', ['0.0.0.0', '0.255.255.255'], ['1.0.0.0']],
  ['10.0.0.0/8', ['10.0.0.0', '10.255.255.255'], ['9.255.255.255', '11.0.0.0']],
  ['100.64.0.0/10', ['100.64.0.0', '100.127.255.255'], ['100.63.255.255', '100.128.0.0']],
  ['127.0.0.0/8', ['127.0.0.1', '127.255.255.254'], ['126.255.255.255', '128.0.0.0']],
  ['169.254.0.0/16', ['169.254.169.254'], ['169.253.255.255', '169.255.0.0']],
  ['172.16.0.0/12', ['172.16.0.0', '172.31.255.255'], ['172.15.255.255', '172.32.0.0']],
  ['192.0.0.0/24', ['192.0.0.0', '192.0.0.170', '192.0.0.255'], ['191.255.255.255', '192.0.1.0']],
  ['192.0.2.0/24', ['192.0.2.0', '192.0.2.2', '192.0.2.255'], ['192.0.1.255', '192.0.3.0']],
  ['192.31.196.0/24', ['192.31.196.1'], ['192.31.195.255', '192.31.197.0']],
  ['192.52.193.0/24', ['192.52.193.1'], ['192.52.192.255', '192.52.194.0']],
  ['192.88.99.0/24', ['192.88.99.1'], ['192.88.98.255', '192.88.100.0']],
  ['192.168.0.0/16', ['192.168.0.1', '192.168.255.255'], ['192.167.255.255', '192.169.0.0']],
  ['192.175.48.0/24', ['192.175.48.42'], ['192.175.47.255', '192.175.49.0']],
  ['198.18.0.0/15', ['198.18.0.0', '198.19.255.255'], ['198.17.255.255', '198.20.0.0']],
  ['198.51.100.0/24', ['198.51.100.0', '198.51.100.255'], ['198.51.99.255', '198.51.101.0']],
  ['203.0.113.0/24', ['203.0.113.0', '203.0.113.255'], ['203.0.112.255', '203.0.114.0']],
  ['224.0.0.0/4', ['224.0.0.1', '239.255.255.250'], ['223.255.255.255']],
  ['240.0.0.0/4', ['240.0.0.1', '255.255.255.254', '255.255.255.255'], []],
  ['::/96', ['::', '::1', '::127.0.0.1', '::8.8.8.8', '::ffff:ffff'], ['::1:0:0']],
  ['64:ff9b:1::/48', ['64:ff9b:1::808:808', '64:ff9b:1:ffff::1'], ['64:ff9b:0:1::808:808', '64:ff9b:2::1']],
  ['100::/64', ['100::', '100::ffff:ffff:ffff:ffff'], ['ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff']],
  ['100:0:0:1::/64', ['100:0:0:1::5'], ['100:0:0:2::']],
  [
    '2001::/23',
    ['2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:1::1', '2001:2::1', '2001:20::1', '2001:1ff:ffff::1'],
    ['2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '2001:200::'],
  ],
  ['2001:db8::/32', ['2001:db8::', '2001:db8:ffff:ffff::1'], ['2001:db7:ffff::1', '2001:db9::']],
  ['2620:4f:8000::/48', ['2620:4f:8000::1'], ['2620:4f:7fff:ffff::1', '2620:4f:8001::']],
  ['3fff::/20', ['3fff::', '3fff:fff:ffff::1'], ['3ffe:ffff::1', '3fff:1000::']],
  ['5f00::/16', ['5f00::1', '5f00:ffff::1'], ['5eff:ffff::1', '5f01::']],
  ['fc00::/7', ['fc00::', 'fd12:3456:789a::1', 'fdff:ffff::1'], ['fbff:ffff::1', 'fe00::']],
  ['fe80::/10', ['fe80::1', 'fe80::1%eth0', 'febf:ffff::1'], ['fe7f:ffff::1']],
  ['fec0::/10', ['fec0::1', 'feff:ffff::1'], []],
  ['ff00::/8', ['ff02::1', 'ffff:ffff::1'], []],
];

describe('special-purpose addresses', () => {
  it('lists every range once, and the table covers each one', () => {
    const listed = SPECIAL_PURPOSE_RANGES.map(([range]) => range);
    expect(new Set(listed).size).toBe(listed.length);
    expect(CASES.map(([range]) => range).sort()).toEqual([...listed].sort());
  });

  // through the guard's own entry point (safe-fetch.ts), which also refuses this host's addresses (none of these)
  it.each(CASES)('%s: the addresses inside are refused, those just outside are not', (_range, inside, outside) => {
    expect(inside.filter((a) => !isForbiddenAddress(a))).toEqual([]);
    expect(outside.filter((a) => isForbiddenAddress(a))).toEqual([]);
  });

  it('judges IPv4-mapped, NAT64 (64:ff9b::/96) and 6to4 (2002::/16) addresses by the IPv4 address they carry', () => {
    const refused = [
      // documentation, benchmarking and AS112 ranges in every carrying form, dotted and hex
      '::ffff:192.0.2.2',
      '::ffff:c000:202',
      '::ffff:198.51.100.7',
      '::ffff:203.0.113.9',
      '::ffff:198.18.0.1',
      '::ffff:192.175.48.1',
      '64:ff9b::192.0.2.2',
      '64:ff9b::c000:202',
      '64:ff9b::cb00:7109',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b::7f00:1',
      '2002:c000:202::1',
      '2002:cb00:7109::1',
      '2002:a9fe:a9fe::1',
      '2002:7f00:1::1',
    ];
    const allowed = [
      '::ffff:8.8.8.8',
      '::ffff:808:808',
      '64:ff9b::8.8.8.8',
      '64:ff9b::808:808',
      '2002:808:808::1',
      '2606:4700:4700::1111',
    ];
    expect(refused.filter((a) => !isForbiddenAddress(a))).toEqual([]);
    expect(allowed.filter((a) => isForbiddenAddress(a))).toEqual([]);
  });

  it('refuses what is not an address', () => {
    for (const a of ['', 'localhost', 'example.com', '1.2.3', '::g']) expect(isSpecialPurposeAddress(a), a).toBe(true);
  });
});

const iface = (address: string, internal = false): NetworkInterfaceInfo =>
  address.includes(':')
    ? {
        address,
        netmask: 'ffff:ffff:ffff:ffff::',
        family: 'IPv6',
        mac: '02:00:00:00:00:01',
        internal,
        cidr: null,
        scopeid: 0,
      }
    : { address, netmask: '255.255.255.0', family: 'IPv4', mac: '02:00:00:00:00:01', internal, cidr: null };

/** A host with a public IPv4 and IPv6 address on eth0 and a public VIP on its loopback interface (LVS-DR). */
const PUBLIC_HOST = () => ({
  lo: [iface('127.0.0.1', true), iface('::1', true), iface('8.8.4.4', true)],
  eth0: [iface('93.184.216.34'), iface('2606:2800:220:1:248:1893:25c8:1946'), iface('fe80::1')],
});

describe("this host's own addresses", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('are refused in every form, public or not; the neighbours are not', () => {
    const host = new HostAddresses(PUBLIC_HOST);
    const refused = [
      '93.184.216.34',
      '::ffff:93.184.216.34',
      '::ffff:5db8:d822',
      '64:ff9b::5db8:d822',
      '2002:5db8:d822::1',
      '2606:2800:220:1:248:1893:25c8:1946',
      '2606:2800:0220:0001:0248:1893:25c8:1946',
      '[2606:2800:220:1:248:1893:25c8:1946]',
      '8.8.4.4',
    ];
    expect(refused.filter((a) => !isForbiddenAddress(a, host))).toEqual([]);
    const allowed = ['93.184.216.35', '2606:2800:220:1:248:1893:25c8:1947', '8.8.8.8'];
    expect(allowed.filter((a) => isForbiddenAddress(a, host))).toEqual([]);
  });

  it("are this machine's real interfaces by default, every non-loopback address refused", () => {
    const own = Object.values(networkInterfaces())
      .flat()
      .filter((i) => i && !i.internal)
      .map((i) => i!.address);
    expect(own.filter((a) => !isForbiddenAddress(a))).toEqual([]);
  });

  it('are read once per refresh interval, not per check, and a new address counts after it', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    let reads = 0;
    let addresses = ['93.184.216.34'];
    const host = new HostAddresses(() => (reads++, { eth0: addresses.map((a) => iface(a)) }));
    for (let i = 0; i < 1000; i++) expect(host.has('93.184.216.34')).toBe(true);
    expect(reads).toBe(1);
    addresses = ['93.184.216.34', '1.2.3.4'];
    vi.advanceTimersByTime(HOST_ADDRESSES_REFRESH_MS + 1);
    expect(host.has('1.2.3.4')).toBe(true);
    expect(reads).toBe(2);
  });

  it('are refused by the URL check by address and by name, and the test-only public override does not lift it', async () => {
    const f = new SafeFetch({
      resolve: async (name) => ({ 'self.test': ['93.184.216.34'], 'other.test': ['8.8.8.8'] })[name] ?? [],
      treatAsPublic: () => true,
      interfaces: PUBLIC_HOST,
    });
    try {
      expect(await f.check('https://93.184.216.34/hook')).toBe('forbidden');
      expect(await f.check('https://[::ffff:93.184.216.34]/hook')).toBe('forbidden');
      expect(await f.check('https://[64:ff9b::5db8:d822]/hook')).toBe('forbidden');
      expect(await f.check('https://[2606:2800:220:1:248:1893:25c8:1946]:8443/hook')).toBe('forbidden');
      expect(await f.check('https://self.test/hook')).toBe('forbidden');
      expect(await f.check('https://other.test/hook')).toBe('ok');
    } finally {
      await f.close();
    }
  });
});
