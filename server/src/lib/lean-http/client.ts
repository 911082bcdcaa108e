// A lean HTTP/1.1 client for the relay's upstream calls: the counterpart of front.ts on the other side of the relay.
// undici's Client runs a general HTTP machine per request (a Request object with its validations, llhttp in
// WebAssembly calling back into JS for every header, its queue, timers and kResume rounds through setImmediate); the
// relay only needs keep-alive POSTs with a body in hand and a response delivered as it arrives, and skipping the rest
// takes a good share of the CPU per request off the bench's stack floor, JSON and streamed: docs/perf/lean-http.md.
//
// It takes the common case only and says so (`dispatch` returns false): the caller then uses undici. Taken: http: and
// https: origins without a proxy, a plain header object whose names are tokens and whose values hold no control
// characters, a path of visible ASCII, a Buffer or string body, no Expect / Upgrade / Transfer-Encoding request
// headers. Responses: HTTP/1.0 and 1.1, 1xx skipped, bodies framed by Content-Length, chunked encoding (trailers
// read and dropped) or the end of the connection; anything malformed fails the request (an error, as undici's
// would) and the connection is dropped. The response goes to the project's ResponseSink (lib/response-sink.ts), as
// relay/upstream-call.ts implements it.
//
// Connections are kept per origin (most recently used first) for keepAliveTimeout, or one second less than the
// server's `Keep-Alive: timeout=` hint. At most `connections` are open per origin, as undici's pool caps them; further
// requests wait in the origin's queue for the next free connection. An origin without connections is forgotten, so
// the map holds only the origins in use. A request whose reused connection closes before any byte of a response
// arrived (the server dropped the idle connection as the request went out) is sent once more on a new connection,
// as Go's and undici's clients do. headersTimeout runs from the request's write to the end of the response head,
// bodyTimeout between body chunks (both checked every 250 ms by one timer while requests are active).
import type tls from 'node:tls';
import { TOKEN } from './head.js';
import type { ResponseSink } from '../response-sink.js';
import { Active, Conn, LeanClientError, type Origin } from './client-connection.js';

export { LeanClientError };

export interface LeanRequest {
  origin?: string | URL;
  path: string;
  method: string;
  headers?: unknown;
  body?: unknown;
  headersTimeout?: number | null;
  bodyTimeout?: number | null;
  upgrade?: unknown;
}

export interface LeanClientOptions {
  /** ms an idle connection is kept (the server's Keep-Alive hint can shorten it) */
  keepAliveTimeout: number;
  /** most connections open to one origin (undici's pool has the same cap); further requests queue */
  connections?: number;
  /** longest response head in bytes */
  maxHeaderSize?: number;
  /** extra TLS options for https: origins (e.g. a `ca`); certificates are verified as Node's defaults do */
  tls?: tls.ConnectionOptions;
}

const BAD_VALUE = /[\0-\x08\x0a-\x1f\x7f]/;
const PATH = /^\/[\x21-\x7e]*$/;
/** request headers this client writes itself, or whose presence sends the request to undici */
const OWN = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'expect',
  'upgrade',
  'te',
  'proxy-connection',
]);
const HANDS_OVER = new Set(['transfer-encoding', 'expect', 'upgrade']);
const SWEEP_MS = 250;
/** undici's pool setting (lib/undici.ts UPSTREAM_POOL) */
const DEFAULT_CONNECTIONS = 1024;

export class LeanHttpClient {
  readonly maxHeaderSize: number;
  readonly tlsOptions: tls.ConnectionOptions | undefined;
  readonly connections: number;
  private readonly origins = new Map<string, Origin>();
  private readonly active = new Set<Active>();
  private readonly conns = new Set<Conn>();
  private sweeper: NodeJS.Timeout | null = null;
  private closed = false;
  private destroyed = false;

  constructor(private readonly opts: LeanClientOptions) {
    this.maxHeaderSize = opts.maxHeaderSize ?? 64 * 1024;
    this.connections = opts.connections ?? DEFAULT_CONNECTIONS;
    this.tlsOptions = opts.tls;
  }

  /**
   * Sends the request if it is one this client takes (see the file's head) and returns true; false leaves it to the
   * caller (undici), untouched. The sink then gets onStart at once, and its other callbacks as the response comes.
   */
  dispatch(req: LeanRequest, handler: ResponseSink): boolean {
    if (this.closed || req.upgrade) return false;
    const origin = this.originOf(req.origin);
    if (!origin || !PATH.test(req.path) || !TOKEN.test(req.method)) return false;
    const body =
      typeof req.body === 'string'
        ? Buffer.from(req.body)
        : Buffer.isBuffer(req.body)
          ? req.body
          : req.body == null
            ? null
            : undefined;
    if (body === undefined) return false;
    const headers = req.headers;
    if (headers != null && (typeof headers !== 'object' || Array.isArray(headers))) return false;
    let head = `${req.method} ${req.path} HTTP/1.1\r\n`;
    let host = origin.hostHeader;
    for (const [name, value] of Object.entries((headers ?? {}) as Record<string, unknown>)) {
      if (value === undefined) continue;
      if (typeof value !== 'string' || !TOKEN.test(name) || BAD_VALUE.test(value)) return false;
      const lower = name.toLowerCase();
      if (OWN.has(lower)) {
        if (HANDS_OVER.has(lower)) return false;
        if (lower === 'host') host = value;
        continue;
      }
      head += `${name}: ${value}\r\n`;
    }
    head = `${head}host: ${host}\r\nconnection: keep-alive\r\n${body || req.method === 'POST' || req.method === 'PUT' ? `content-length: ${body ? body.length : 0}\r\n` : ''}\r\n`;
    const a = new Active(this, origin, head, body, handler, req.headersTimeout ?? 300_000, req.bodyTimeout ?? 300_000);
    this.active.add(a);
    this.startSweep();
    handler.onStart(a.abort);
    if (a.finished) return true; // aborted in onStart
    let conn = origin.idle.pop();
    while (conn && (conn.idleUntil < Date.now() || conn.socket.destroyed || conn.socket.readableEnded)) {
      conn.destroy();
      conn = origin.idle.pop();
    }
    if (conn) conn.send(a);
    else if (origin.open < this.connections) this.connect(origin).send(a);
    else origin.queue.push(a);
    return true;
  }

  /** origins with open connections or waiting requests (the others are forgotten) */
  get originCount(): number {
    return this.origins.size;
  }

  /** Closes the idle connections and takes no more requests (those in flight run to their end). */
  close(): void {
    this.closed = true;
    for (const o of this.origins.values()) for (const c of o.idle.splice(0)) c.destroy();
  }

  /** Ends everything: idle and busy connections (their requests fail). */
  destroy(): void {
    this.close();
    this.destroyed = true;
    for (const c of [...this.conns]) c.destroy();
  }

  // ---- for Conn / Active
  connect(origin: Origin): Conn {
    if (origin.open++ === 0 && !this.origins.has(origin.key)) this.origins.set(origin.key, origin);
    const c = new Conn(this, origin);
    this.conns.add(c);
    return c;
  }

  /** A connection closed: the next waiting request of its origin gets a new one. */
  next(origin: Origin): void {
    if (this.destroyed) {
      for (const a of origin.queue.splice(0))
        a.fail(new LeanClientError('The client is destroyed', 'UND_ERR_DESTROYED'));
      return;
    }
    const a = origin.queue.shift();
    if (a) this.connect(origin).send(a);
  }

  /** A request whose connection closed before any answer: on a new connection, or first in the queue at the cap. */
  resend(a: Active): void {
    const origin = a.origin;
    if (this.destroyed) a.fail(new LeanClientError('The client is destroyed', 'UND_ERR_DESTROYED'));
    else if (origin.open < this.connections) this.connect(origin).send(a);
    else {
      a.deadline = 0;
      origin.queue.unshift(a);
    }
  }

  /** a request that waited for a connection ended (aborted) */
  unqueue(a: Active): void {
    const q = a.origin.queue;
    const i = q.indexOf(a);
    if (i < 0) return;
    q.splice(i, 1);
    if (!q.length && !a.origin.open) this.origins.delete(a.origin.key);
  }

  release(conn: Conn): void {
    const waiting = conn.origin.queue.shift();
    if (waiting) {
      // straight on to the next waiting request; it may meet the same race as any reuse (see onClose)
      conn.reused = true;
      return conn.send(waiting);
    }
    if (this.closed) return conn.destroy();
    const keep =
      conn.hintMs > 0 ? Math.min(this.opts.keepAliveTimeout, conn.hintMs - 1000) : this.opts.keepAliveTimeout;
    if (keep <= 0) return conn.destroy();
    conn.reused = true;
    conn.idleUntil = Date.now() + keep;
    conn.origin.idle.push(conn);
    this.startSweep();
  }

  forget(conn: Conn): void {
    this.conns.delete(conn);
    const origin = conn.origin;
    const idle = origin.idle;
    const i = idle.indexOf(conn);
    if (i >= 0) idle.splice(i, 1);
    if (--origin.open === 0 && !origin.queue.length && this.origins.get(origin.key) === origin)
      this.origins.delete(origin.key);
  }

  untrack(a: Active): void {
    this.active.delete(a);
  }

  private originOf(o: string | URL | undefined): Origin | null {
    if (!o) return null;
    const key = typeof o === 'string' ? o : o.origin;
    const origin = this.origins.get(key);
    if (origin) return origin;
    let url: URL;
    try {
      url = typeof o === 'string' ? new URL(o) : o;
    } catch {
      return null;
    }
    const https = url.protocol === 'https:';
    if ((!https && url.protocol !== 'http:') || url.username || url.password) return null;
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    // entered in the map by its first connection (connect), so that a request that is refused leaves nothing behind
    return {
      key,
      https,
      host,
      port: Number(url.port) || (https ? 443 : 80),
      hostHeader: url.host,
      idle: [],
      open: 0,
      queue: [],
    };
  }

  private startSweep(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(this.sweep, SWEEP_MS);
    this.sweeper.unref();
  }

  private readonly sweep = (): void => {
    const now = Date.now();
    for (const a of this.active) {
      if (a.deadline && a.deadline <= now) {
        const conn = a.conn;
        a.fail(
          a.gotHeaders
            ? new LeanClientError('Body Timeout Error', 'UND_ERR_BODY_TIMEOUT')
            : new LeanClientError('Headers Timeout Error', 'UND_ERR_HEADERS_TIMEOUT'),
        );
        conn?.destroy();
      }
    }
    let idle = 0;
    for (const o of this.origins.values()) {
      for (let i = o.idle.length - 1; i >= 0; i--) if (o.idle[i].idleUntil <= now) o.idle[i].destroy();
      idle += o.idle.length;
    }
    if (!this.active.size && !idle && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  };
}
