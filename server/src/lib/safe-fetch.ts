// Requests to URLs that users choose (the low-balance webhook, images a relay request links to): never to this host, its network or reserved addresses.
// A user who could make the gateway POST to 127.0.0.1, 10.x or 169.254.169.254 would reach services that trust the
// gateway's network position (admin ports, cloud metadata). The check sits in the socket opener of a dedicated undici
// Agent: the name is resolved once, every address it resolves to must be public, and the socket is opened to the
// checked address itself, so a name that answers differently a moment later (DNS rebinding) cannot slip through.
// Redirects are never followed (undici's request does not follow them), so a public target cannot bounce the POST
// inward. Channel probes are not made here: admins point channels at private hosts on purpose.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Dispatcher, buildConnector as BuildConnector } from 'undici';
import { compileIpAllowList, ipAllowed, ipToBig, type IpMatcher } from './ip-match.js';
import { Agent, buildConnector } from './undici.js';

const FORBIDDEN: IpMatcher = compileIpAllowList(
  [
    '0.0.0.0/8', // "this network", unspecified
    '10.0.0.0/8',
    '100.64.0.0/10', // carrier-grade NAT
    '127.0.0.0/8',
    '169.254.0.0/16', // link-local, cloud metadata
    '172.16.0.0/12',
    '192.0.0.0/24', // IETF protocol assignments
    '192.168.0.0/16',
    '198.18.0.0/15', // benchmarking networks, used inside some data centres
    '224.0.0.0/4', // multicast
    '240.0.0.0/4', // reserved, and 255.255.255.255
    '::/128',
    '::1/128',
    '100::/64', // discard-only
    '64:ff9b:1::/48', // local-use NAT64
    'fc00::/7', // unique-local
    'fec0::/10', // old site-local
    'fe80::/10', // link-local
    'ff00::/8', // multicast
  ].join('\n'),
)!;

const NAT64_PREFIX = 0x0064ff9b_0000_0000_0000_0000n; // 64:ff9b::/96, upper 96 bits
const SIX_TO_FOUR = 0x2002n; // 2002::/16

/** The IPv4 address an IPv6 address carries and is routed to (mapped, compatible, NAT64, 6to4), or null. */
function embeddedIpv4(n: bigint): bigint | null {
  const upper = n >> 32n;
  if (upper === 0n || upper === 0xffffn || upper === NAT64_PREFIX) return n & 0xffffffffn;
  if (n >> 112n === SIX_TO_FOUR) return (n >> 80n) & 0xffffffffn;
  return null;
}

const ipv4Text = (v: bigint) => [24n, 16n, 8n, 0n].map((s) => Number((v >> s) & 255n)).join('.');

/**
 * Whether a user-chosen URL must not reach this address: loopback, private, link-local, unique-local, multicast,
 * unspecified or reserved, in IPv4 or IPv6, IPv6 forms that carry an IPv4 address judged by that address. Anything
 * that is not an address is refused too.
 */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const b = ipToBig(bare);
  if (!b) return true;
  if (b.v6) {
    const v4 = embeddedIpv4(b.n);
    if (v4 !== null) return ipAllowed(FORBIDDEN, ipv4Text(v4));
  }
  return ipAllowed(FORBIDDEN, bare);
}

export type Resolver = (hostname: string) => Promise<string[]>;

export interface AddressPolicy {
  /** name → addresses; the system resolver (getaddrinfo, every address) unless given */
  resolve?: Resolver;
  /**
   * Tests only: lets a local listener stand for a public host (production never sets it). Asked for forbidden
   * addresses only.
   */
  treatAsPublic?: (address: string, port: number) => boolean;
}

/** a resolver that hangs (unreachable DNS servers) must not hold a settings save or a notice for long */
const RESOLVE_TIMEOUT_MS = 5_000;

function withTimeout<T>(p: Promise<T>, ms: number, hostname: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`resolving ${hostname} timed out`)), ms);
    timer.unref();
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

const systemResolver: Resolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export class ForbiddenAddressError extends Error {
  readonly code = 'ERR_FORBIDDEN_ADDRESS';
  constructor(hostname: string, address: string) {
    super(`${hostname} resolves to ${address}, a local, private or reserved address`);
  }
}

export type UrlVerdict = 'ok' | 'forbidden' | 'unresolved' | 'invalid';

const defaultPort = (protocol: string) => (protocol === 'https:' ? 443 : 80);

export class SafeFetch {
  private agentInstance: Agent | null = null;

  /** Replaced by tests only (see AddressPolicy); read at every connection. */
  constructor(public policy: AddressPolicy = {}) {}

  /** Every address `hostname` resolves to, each checked; throws ForbiddenAddressError if any is forbidden. */
  async addressesOf(hostname: string, port: number): Promise<string[]> {
    const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
    const addresses = isIP(bare)
      ? [bare]
      : await withTimeout((this.policy.resolve ?? systemResolver)(bare), RESOLVE_TIMEOUT_MS, bare);
    if (!addresses.length) throw new Error(`${bare} has no address`);
    const treatAsPublic = this.policy.treatAsPublic;
    for (const a of addresses)
      if (isForbiddenAddress(a) && !treatAsPublic?.(a, port)) throw new ForbiddenAddressError(bare, a);
    return addresses;
  }

  /**
   * The save-time check of a URL: 'forbidden' when it names or resolves to a forbidden address, 'unresolved' when
   * the name does not resolve now (it is checked again when used), 'invalid' when it is not an http(s) URL.
   */
  async check(url: string): Promise<UrlVerdict> {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return 'invalid';
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') return 'invalid';
    try {
      await this.addressesOf(u.hostname, Number(u.port) || defaultPort(u.protocol));
      return 'ok';
    } catch (err) {
      return err instanceof ForbiddenAddressError ? 'forbidden' : 'unresolved';
    }
  }

  /** POSTs `body`; resolves with the status once the answer is read (and dropped). Never follows a redirect. */
  async post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<number> {
    const u = new URL(url);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error(`unsupported URL scheme ${u.protocol}`);
    const res = await this.agent().request({
      origin: u.origin,
      path: `${u.pathname}${u.search}`,
      method: 'POST',
      headers,
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    await res.body.dump();
    return res.statusCode;
  }

  /**
   * GETs `url` and hands back the answer with its body unread: the caller reads it (within its own size limit) or
   * dumps it. Never follows a redirect; `timeoutMs` bounds the whole exchange, the body included.
   */
  async get(url: string, headers: Record<string, string>, timeoutMs: number): Promise<Dispatcher.ResponseData> {
    const u = new URL(url);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error(`unsupported URL scheme ${u.protocol}`);
    return this.agent().request({
      origin: u.origin,
      path: `${u.pathname}${u.search}`,
      method: 'GET',
      headers,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
  }

  close(): Promise<void> {
    const a = this.agentInstance;
    this.agentInstance = null;
    return a ? a.close().catch(() => undefined) : Promise.resolve();
  }

  private agent(): Dispatcher {
    if (this.agentInstance) return this.agentInstance;
    const open = buildConnector({ timeout: 10_000 });
    const connect: BuildConnector.connector = (opts, callback) => {
      const bare = opts.hostname.startsWith('[') ? opts.hostname.slice(1, -1) : opts.hostname;
      this.addressesOf(bare, Number(opts.port) || defaultPort(opts.protocol)).then(
        // the socket goes to the address just checked; TLS still verifies the certificate against the name
        ([address]) =>
          open(
            { ...opts, hostname: address, servername: opts.servername || (isIP(bare) ? undefined : bare) },
            callback,
          ),
        (err: Error) => callback(err, null),
      );
    };
    this.agentInstance = new Agent({ connect, keepAliveTimeout: 10_000, connections: 16 });
    return this.agentInstance;
  }
}

/** what the client needs of the application: closing with it */
interface Closable {
  onClose(fn: () => Promise<void> | void): void;
}

const perContext = new WeakMap<Closable, SafeFetch>();

/**
 * The instance's client for user-chosen URLs (webhook save check and delivery, remote images the relay inlines),
 * closed with the instance.
 */
export function userUrlFetch(ctx: Closable): SafeFetch {
  let f = perContext.get(ctx);
  if (!f) {
    const created = new SafeFetch();
    perContext.set(ctx, created);
    ctx.onClose(() => created.close());
    f = created;
  }
  return f;
}
