// IP lists of exact IPv4/IPv6 addresses and CIDR ranges, one entry per line (commas also accepted): token allow lists
// (new-api-compat.md §4.3 step 1) and TRUSTED_PROXIES. Compiled once (when a token is cached; at start), so a check is
// a few integer comparisons. Also: the client address of a request behind proxies (clientIpOf).
import { isIP } from 'node:net';

interface Range {
  v6: boolean;
  net: bigint;
  mask: bigint;
}

export interface IpMatcher {
  exact: Set<string>;
  ranges: Range[];
}

/** An address as a number (IPv4-mapped addresses written with a dotted tail count as IPv4); null if not an address. */
export function ipToBig(ip: string): { v6: boolean; n: bigint } | null {
  if (ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4) ip = ip.slice(7);
  const kind = isIP(ip);
  if (kind === 4) {
    const p = ip.split('.').map(Number);
    return { v6: false, n: BigInt(((p[0] << 24) >>> 0) + (p[1] << 16) + (p[2] << 8) + p[3]) };
  }
  if (kind === 6) {
    const [head, tail] = ip.split('::') as [string, string | undefined];
    const h = head ? head.split(':') : [];
    const t = tail !== undefined && tail ? tail.split(':') : [];
    // an embedded IPv4 tail counts as two groups
    const expand = (parts: string[]) =>
      parts.flatMap((x) => {
        if (x.includes('.')) {
          const q = x.split('.').map(Number);
          return [((q[0] << 8) | q[1]).toString(16), ((q[2] << 8) | q[3]).toString(16)];
        }
        return [x];
      });
    const hh = expand(h);
    const tt = expand(t);
    const groups = ip.includes('::') ? [...hh, ...Array(8 - hh.length - tt.length).fill('0'), ...tt] : hh;
    let n = 0n;
    for (const g of groups) n = (n << 16n) | BigInt(parseInt(g || '0', 16));
    // an IPv4-mapped address in hex form (::ffff:7f00:1) is the IPv4 address, as the dotted form above
    if (n >> 32n === 0xffffn) return { v6: false, n: n & 0xffffffffn };
    return { v6: true, n };
  }
  return null;
}

export function compileIpAllowList(raw: string | null | undefined): IpMatcher | null {
  const items = (raw ?? '')
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (!items.length) return null;
  const m: IpMatcher = { exact: new Set(), ranges: [] };
  for (const item of items) {
    const slash = item.indexOf('/');
    if (slash < 0) {
      const b = ipToBig(item);
      m.exact.add(b ? `${b.v6 ? 6 : 4}:${b.n}` : item);
      continue;
    }
    const address = item.slice(0, slash);
    const b = ipToBig(address);
    let bits = Number(item.slice(slash + 1));
    if (!b || !Number.isInteger(bits)) continue;
    // an IPv4-mapped range (::ffff:10.0.0.0/104) is compared as the IPv4 range it maps
    if (!b.v6 && address.includes(':')) bits -= 96;
    const width = b.v6 ? 128n : 32n;
    const len = BigInt(Math.max(0, Math.min(Number(width), bits)));
    const mask = len === 0n ? 0n : ((1n << len) - 1n) << (width - len);
    m.ranges.push({ v6: b.v6, net: b.n & mask, mask });
  }
  return m;
}

export function ipAllowed(m: IpMatcher, ip: string): boolean {
  const b = ipToBig(ip);
  if (!b) return m.exact.has(ip);
  if (m.exact.has(`${b.v6 ? 6 : 4}:${b.n}`)) return true;
  for (const r of m.ranges) if (r.v6 === b.v6 && (b.n & r.mask) === r.net) return true;
  return false;
}

/** Whether one list entry is an address or a CIDR range (what a token's allow list and TRUSTED_PROXIES accept). */
export function isIpEntry(entry: string): boolean {
  const [address, prefixText, extra] = entry.split('/');
  if (extra !== undefined) return false;
  const version = isIP(address);
  if (!version) return false;
  if (prefixText === undefined) return true;
  return /^\d{1,3}$/.test(prefixText) && Number(prefixText) <= (version === 4 ? 32 : 128);
}

/**
 * The client address of a request: the first address, from the socket's towards the left of X-Forwarded-For, that is
 * not a trusted proxy (proxy-addr's rule, which Fastify applies to `request.ip`). `trusted` null trusts every hop, as
 * new-api (gin's default) does: the left-most X-Forwarded-For entry wins, and a client that reaches the gateway
 * directly can claim any address (TRUSTED_PROXIES=*).
 */
export function clientIpOf(socketIp: string, xff: string | undefined, trusted: IpMatcher | null): string {
  if (!xff) return socketIp;
  if (!trusted) {
    const comma = xff.indexOf(',');
    return (comma < 0 ? xff : xff.slice(0, comma)).trim();
  }
  if (!ipAllowed(trusted, socketIp)) return socketIp;
  const hops = xff.split(',');
  let ip = socketIp;
  for (let i = hops.length - 1; i >= 0; i--) {
    ip = hops[i].trim();
    if (!ipAllowed(trusted, ip)) return ip;
  }
  return ip;
}

/**
 * The proxies trusted when TRUSTED_PROXIES is unset: loopback and private networks, where a reverse proxy in front of
 * the gateway runs (same host, same network). A client on a public address is taken at its socket's address whatever
 * it writes in X-Forwarded-For. IPv4-mapped IPv6 peers match their IPv4 ranges (ipToBig).
 */
export const DEFAULT_TRUSTED_PROXIES = [
  '127.0.0.0/8',
  '::1',
  '10.0.0.0/8',
  '172.16.0.0/12',
  '192.168.0.0/16',
  'fc00::/7',
];

/** TRUSTED_PROXIES compiled: the default list when unset, null (every hop trusted, as new-api) for `*`. */
export function proxyTrust(trustedProxies: string[]): IpMatcher | null {
  if (trustedProxies.includes('*')) return null;
  return compileIpAllowList((trustedProxies.length ? trustedProxies : DEFAULT_TRUSTED_PROXIES).join('\n'));
}
