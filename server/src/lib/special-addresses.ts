// Addresses a request on a user's or root's behalf must never reach: the IANA IPv4 and IPv6 special-purpose address
// registries (RFC 6890 and its updates), whole, plus multicast and the old IPv6 site-local range. Several entries are
// "globally reachable" in the registry (AS112, AMT, 6to4 relays, the IETF protocol blocks); they are refused anyway:
// no webhook, image or discovery document lives there, and a conservative list cannot miss an internal service.
// IPv6 forms that carry an IPv4 address the network routes to (IPv4-mapped, the NAT64 well-known prefix, 6to4) are
// judged by that IPv4 address, so 64:ff9b::a9fe:a9fe is the cloud metadata address it translates to.
import { compileIpAllowList, ipAllowed, ipToBig, type IpMatcher } from './ip-match.js';

/** Every refused range, with what it is (the registry's name), in registry order. */
export const SPECIAL_PURPOSE_RANGES: ReadonlyArray<readonly [range: string, what: string]> = [
  ['0.0.0.0/8', '"this network", unspecified'],
  ['10.0.0.0/8', 'private use'],
  ['100.64.0.0/10', 'shared address space (carrier-grade NAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local, cloud metadata'],
  ['172.16.0.0/12', 'private use'],
  ['192.0.0.0/24', 'IETF protocol assignments (incl. NAT64 discovery, DS-Lite)'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['192.31.196.0/24', 'AS112-v4'],
  ['192.52.193.0/24', 'AMT'],
  ['192.88.99.0/24', 'deprecated 6to4 relay anycast'],
  ['192.168.0.0/16', 'private use'],
  ['192.175.48.0/24', 'direct delegation AS112 service'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved, and 255.255.255.255 limited broadcast'],
  ['::/96', 'unspecified, loopback, deprecated IPv4-compatible'],
  ['64:ff9b:1::/48', 'local-use IPv4/IPv6 translation (the operator maps it anywhere)'],
  ['100::/64', 'discard-only'],
  ['100:0:0:1::/64', 'dummy IPv6 prefix'],
  ['2001::/23', 'IETF protocol assignments (incl. Teredo 2001::/32, benchmarking, ORCHID)'],
  ['2001:db8::/32', 'documentation'],
  ['2620:4f:8000::/48', 'direct delegation AS112 service'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segment routing (SRv6) SIDs'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'deprecated site-local'],
  ['ff00::/8', 'multicast'],
];

const SPECIAL: IpMatcher = compileIpAllowList(SPECIAL_PURPOSE_RANGES.map(([range]) => range).join('\n'))!;

const NAT64_PREFIX = 0x0064ff9b_0000_0000_0000_0000n; // 64:ff9b::/96, upper 96 bits
const SIX_TO_FOUR = 0x2002n; // 2002::/16

/** The IPv4 address an IPv6 address carries and is routed to (NAT64 well-known prefix, 6to4), or null. */
function routedIpv4(n: bigint): bigint | null {
  if (n >> 32n === NAT64_PREFIX) return n & 0xffffffffn;
  if (n >> 112n === SIX_TO_FOUR) return (n >> 80n) & 0xffffffffn;
  return null;
}

const ipv4Text = (v: bigint) => [24n, 16n, 8n, 0n].map((s) => Number((v >> s) & 255n)).join('.');
/** eight groups, uncompressed: one text per address, so texts can be compared */
const ipv6Text = (v: bigint) =>
  Array.from({ length: 8 }, (_, i) => ((v >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':');

/** An address without brackets or an IPv6 zone (`[fe80::1%eth0]` → `fe80::1`). */
export function bareAddress(address: string): string {
  const unbracketed = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const zone = unbracketed.indexOf('%');
  return zone < 0 ? unbracketed : unbracketed.slice(0, zone);
}

/**
 * The forms an address reaches, each in one canonical text: itself, and the IPv4 address an IPv6 one is translated or
 * tunnelled to. IPv4-mapped addresses come back as IPv4 (ip-match.ts). Empty when `address` is not an address.
 */
export function reachedAddresses(address: string): string[] {
  const bare = bareAddress(address);
  const b = ipToBig(bare);
  if (!b) return [];
  if (!b.v6) return [ipv4Text(b.n)];
  const v4 = routedIpv4(b.n);
  return v4 === null ? [ipv6Text(b.n)] : [ipv6Text(b.n), ipv4Text(v4)];
}

/** Whether `address` (or the IPv4 address it carries) is in the special-purpose registries; a non-address is too. */
export function isSpecialPurposeAddress(address: string): boolean {
  const reached = reachedAddresses(address);
  return reached.length === 0 || reached.some((a) => ipAllowed(SPECIAL, a));
}
