// Requests to URLs that users (or root, for them) choose: the low-balance webhook, images a relay request links to,
// OAuth discovery documents. Never to this host, its network or reserved addresses: a user who could make the gateway
// POST to 127.0.0.1, 10.x, 169.254.169.254 or the host's own public address would reach services that trust the
// gateway's network position (admin ports, cloud metadata). Refused: the IANA special-purpose registries whole
// (special-addresses.ts) and every address of this host's interfaces (host-addresses.ts). The check sits in the socket
// opener of a dedicated undici Agent: the name is resolved once, every address it resolves to must be allowed, and the
// socket is opened to the checked address itself, so a name that answers differently a moment later (DNS rebinding)
// cannot slip through. Redirects are never followed (undici's request does not follow them), so a public target cannot
// bounce the POST inward. With root's worker (WorkerUrl) the target is checked here, then handed to the worker, and the
// worker's own address goes through the same socket check: the rules hold for whatever the gateway dials.
// Channel probes are not made here: admins point channels at private hosts on purpose.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Dispatcher, buildConnector as BuildConnector } from 'undici';
import { HostAddresses, thisHost, type InterfaceLister } from './host-addresses.js';
import { bareAddress, isSpecialPurposeAddress } from './special-addresses.js';
import { loadUndici } from './undici.js';

/**
 * Whether a user-chosen URL must not reach this address: anything in the IANA special-purpose registries (loopback,
 * private, link-local, documentation, benchmarking, reserved, multicast, …; lib/special-addresses.ts), any address of
 * this host's own interfaces (lib/host-addresses.ts), IPv6 forms that carry an IPv4 address judged by that address.
 * Anything that is not an address is refused too.
 */
export function isForbiddenAddress(address: string, host: HostAddresses = thisHost): boolean {
  return isSpecialPurposeAddress(address) || host.has(address);
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
  /**
   * Tests only: this host's interfaces (os.networkInterfaces unless given). Their addresses are refused whatever
   * treatAsPublic says: a listener on this host is never a public host.
   */
  interfaces?: InterfaceLister;
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
    super(`${hostname} resolves to ${address}, a local, private or reserved address, or one of this host's`);
  }
}

export type UrlVerdict = 'ok' | 'forbidden' | 'unresolved' | 'invalid';

/**
 * Root's request relay (options WorkerUrl and WorkerValidKey), as new-api uses it: every request for a user-chosen URL
 * is POSTed to the worker as JSON `{url, key, method?, headers?, body?}` (a GET leaves out method, a JSON body is
 * embedded as JSON), and the worker's answer stands for the target's.
 */
export interface FetchWorker {
  url: string;
  key: string;
}

interface OutboundRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

function httpUrl(url: string): URL {
  const u = new URL(url);
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error(`unsupported URL scheme ${u.protocol}`);
  return u;
}

/** new-api's WorkerRequest, field for field and in its order; `body` must be JSON (Go's json.RawMessage). */
export function workerPayload(request: OutboundRequest, key: string): string {
  const fields: Record<string, unknown> = { url: request.url, key };
  if (request.method !== 'GET') fields.method = request.method;
  if (Object.keys(request.headers).length) fields.headers = request.headers;
  const head = JSON.stringify(fields);
  if (request.body === undefined || request.body === '') return head;
  JSON.parse(request.body); // throws on a body the worker could not take
  return `${head.slice(0, -1)},"body":${request.body}}`;
}

const defaultPort = (protocol: string) => (protocol === 'https:' ? 443 : 80);

export class SafeFetch {
  private agentInstance: Dispatcher | null = null;
  private injectedHost: HostAddresses | null = null;

  constructor(
    /** Replaced by tests only (see AddressPolicy); read at every connection. */
    public policy: AddressPolicy = {},
    /** root's worker, read at every request; null: requests go straight to their target */
    private readonly worker: () => FetchWorker | null = () => null,
  ) {}

  /** Every address `hostname` resolves to, each checked; throws ForbiddenAddressError if any is forbidden. */
  async addressesOf(hostname: string, port: number): Promise<string[]> {
    const bare = bareAddress(hostname);
    const addresses = isIP(bare)
      ? [bare]
      : await withTimeout((this.policy.resolve ?? systemResolver)(bare), RESOLVE_TIMEOUT_MS, bare);
    if (!addresses.length) throw new Error(`${bare} has no address`);
    const { treatAsPublic } = this.policy;
    const host = this.hostAddresses();
    for (const a of addresses)
      if (host.has(a) || (isSpecialPurposeAddress(a) && !treatAsPublic?.(a, port)))
        throw new ForbiddenAddressError(bare, a);
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

  /**
   * POSTs `body` (JSON when a worker carries it); resolves with the status once the answer is read (and dropped).
   * Never follows a redirect.
   */
  async post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<number> {
    const res = await this.send({ url, method: 'POST', headers, body }, timeoutMs);
    await res.body.dump();
    return res.statusCode;
  }

  /**
   * GETs `url` and hands back the answer with its body unread: the caller reads it (within its own size limit) or
   * dumps it. Never follows a redirect; `timeoutMs` bounds the whole exchange, the body included; `idleMs`, when
   * given, bounds the wait for the headers and each silence of the body (a long video's stream).
   */
  get(
    url: string,
    headers: Record<string, string>,
    timeoutMs: number,
    idleMs?: number,
  ): Promise<Dispatcher.ResponseData> {
    return this.send({ url, method: 'GET', headers }, timeoutMs, idleMs);
  }

  /** Whether requests go through root's worker now (WorkerUrl set). */
  usesWorker(): boolean {
    return this.worker() !== null;
  }

  /**
   * Straight to the target, or, with a worker, to the worker carrying the target (after the target's own check: the
   * worker would reach whatever the gateway hands it, so a private target is refused here, not there).
   */
  private async send(request: OutboundRequest, timeoutMs: number, idleMs?: number): Promise<Dispatcher.ResponseData> {
    const target = httpUrl(request.url);
    const worker = this.worker();
    if (!worker) return this.dispatch(target, request, timeoutMs, idleMs);
    await this.addressesOf(target.hostname, Number(target.port) || defaultPort(target.protocol));
    const workerUrl = httpUrl(worker.url.endsWith('/') ? worker.url : `${worker.url}/`);
    const payload = workerPayload(request, worker.key);
    const headers = { 'content-type': 'application/json' };
    return this.dispatch(workerUrl, { url: workerUrl.href, method: 'POST', headers, body: payload }, timeoutMs, idleMs);
  }

  /** One request through the guarded agent: the address check runs when the socket opens. */
  private async dispatch(
    u: URL,
    request: OutboundRequest,
    timeoutMs: number,
    idleMs = timeoutMs,
  ): Promise<Dispatcher.ResponseData> {
    return (await this.agent()).request({
      origin: u.origin,
      path: `${u.pathname}${u.search}`,
      method: request.method,
      headers: request.headers,
      body: request.body,
      headersTimeout: idleMs,
      bodyTimeout: idleMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
  }

  private hostAddresses(): HostAddresses {
    const list = this.policy.interfaces;
    if (!list) return thisHost;
    if (this.injectedHost?.list !== list) this.injectedHost = new HostAddresses(list);
    return this.injectedHost;
  }

  close(): Promise<void> {
    const a = this.agentInstance;
    this.agentInstance = null;
    return a ? a.close().catch(() => undefined) : Promise.resolve();
  }

  /** The guarded agent, made (undici imported: lib/undici.ts) with the first request. */
  private async agent(): Promise<Dispatcher> {
    if (this.agentInstance) return this.agentInstance;
    const { Agent, buildConnector } = await loadUndici();
    // another request may have made it while undici loaded
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

/** what the client needs of the application: closing with it, and the worker options */
interface Closable {
  onClose(fn: () => Promise<void> | void): void;
  options: { get(key: string): string };
}

/** The worker root configured (WorkerUrl, WorkerValidKey), or null when WorkerUrl is empty. */
export function configuredWorker(options: Closable['options']): FetchWorker | null {
  const url = options.get('WorkerUrl').trim();
  return url ? { url, key: options.get('WorkerValidKey') } : null;
}

const perContext = new WeakMap<Closable, SafeFetch>();

/**
 * The instance's client for user-chosen URLs (webhook save check and delivery, remote images the relay inlines, OAuth
 * discovery), through root's worker when one is set, closed with the instance.
 */
export function userUrlFetch(ctx: Closable): SafeFetch {
  let f = perContext.get(ctx);
  if (!f) {
    const created = new SafeFetch({}, () => configuredWorker(ctx.options));
    perContext.set(ctx, created);
    ctx.onClose(() => created.close());
    f = created;
  }
  return f;
}
