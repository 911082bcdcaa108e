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
import net from 'node:net';
import tls from 'node:tls';
import { hasCloseToken, TOKEN } from './head.js';
import { writeJoined } from './write.js';
import type { ResponseSink } from '../response-sink.js';

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

/** Errors with the codes undici gives the same failures. */
export class LeanClientError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

const BAD_VALUE = /[\0-\x08\x0a-\x1f\x7f]/;
const PATH = /^\/[\x21-\x7e]*$/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: |$)/;
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
const MAX_CHUNK_LINE = 4096;
const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');

interface Origin {
  key: string;
  https: boolean;
  host: string;
  port: number;
  /** the Host header */
  hostHeader: string;
  idle: Conn[];
  /** connections open (busy or idle) */
  open: number;
  /** requests waiting for a connection, oldest first */
  queue: Active[];
  session?: Buffer;
}

const enum Phase {
  Head,
  Fixed,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  UntilClose,
  Done,
}

/**
 * One request in flight: what a retry on a new connection needs, and its deadlines. Once finished it lets go of the
 * handler, the request and its connection: an Active promoted to the old generation and dead there would otherwise
 * keep its whole request (the handler's buffers, the relay's state behind its callbacks) alive through every young
 * collection until the next full one. Measured in the relay before this: 380 KB promoted per scavenge instead of
 * ~60 KB, and a mark-compact every ~300 ms.
 */
class Active {
  conn: Conn | null = null;
  handler: ResponseSink | null;
  head: string;
  body: Buffer | null;
  finished = false;
  /** a response byte arrived: the request cannot be sent again */
  answered = false;
  /** the final response head arrived (the deadline is bodyTimeout's from then on) */
  gotHeaders = false;
  retried = false;
  deadline = 0;
  constructor(
    readonly client: LeanHttpClient,
    readonly origin: Origin,
    head: string,
    body: Buffer | null,
    handler: ResponseSink,
    readonly headersTimeout: number,
    readonly bodyTimeout: number,
  ) {
    this.head = head;
    this.body = body;
    this.handler = handler;
  }

  readonly abort = (err?: Error): void => {
    if (this.finished) return;
    const conn = this.conn;
    this.fail(err ?? new LeanClientError('Request aborted', 'UND_ERR_ABORTED'));
    conn?.destroy();
  };

  fail(err: Error): void {
    this.finish()?.onError(err);
  }

  /** Marks the request finished and lets go of everything it held; the handler, for its last callback. */
  finish(): ResponseSink | null {
    if (this.finished) return null;
    this.finished = true;
    this.client.untrack(this);
    if (!this.conn) this.client.unqueue(this);
    const h = this.handler;
    this.handler = null;
    this.conn = null;
    this.head = '';
    this.body = null;
    return h;
  }
}

/**
 * The read buffer of every plain-TCP upstream connection (net's `onread`): each read lands here and is copied out at
 * once, since the parser and the handlers keep what they are given. A socket's own reads allocate a 64-KB buffer per
 * read and go through the Readable machinery ('data' events), which costs more CPU per read of a small answer
 * (`node bench/socket-micro.mjs`: docs/perf/lean-http.md). TLS sockets read the usual way.
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

class Conn {
  readonly socket: net.Socket;
  active: Active | null = null;
  reused = false;
  idleUntil = 0;
  /** the server's Keep-Alive timeout hint in ms (0: none) */
  hintMs = 0;
  private dead = false;
  private buf: Buffer | null = null;
  private phase = Phase.Head;
  private remaining = 0;
  private keepAlive = true;
  private paused = false;
  /** the server ended its side (a body read until the close is then complete) */
  private eof = false;

  constructor(
    private readonly client: LeanHttpClient,
    readonly origin: Origin,
  ) {
    const s = origin.https
      ? tls.connect({
          ...client.tlsOptions,
          host: origin.host,
          port: origin.port,
          servername: net.isIP(origin.host) ? undefined : origin.host,
          session: origin.session,
          ALPNProtocols: ['http/1.1'],
        })
      : net.connect({ host: origin.host, port: origin.port, onread: { buffer: READ_BUFFER, callback: this.onRead } });
    this.socket = s;
    s.setNoDelay(true);
    if (origin.https) {
      s.on('session', (session: Buffer) => (origin.session = session));
      s.on('data', (d: Buffer) => this.onData(d));
    }
    s.on('end', () => this.onEnd());
    s.on('error', (err) => this.onClose(err));
    s.on('close', () => this.onClose(null));
  }

  send(a: Active): void {
    this.active = a;
    a.conn = this;
    this.phase = Phase.Head;
    this.buf = null;
    this.keepAlive = true;
    this.paused = false;
    this.hintMs = 0;
    a.deadline = a.headersTimeout > 0 ? Date.now() + a.headersTimeout : 0;
    const s = this.socket;
    if (a.body && a.body.length) writeJoined(s, [a.head, a.body]);
    else s.write(a.head, 'latin1');
  }

  destroy(): void {
    if (this.dead) return;
    this.dead = true;
    this.client.forget(this);
    this.socket.destroy();
    this.client.next(this.origin);
  }

  private readonly resume = (): void => {
    if (!this.paused || !this.active || this.active.finished) return;
    this.paused = false;
    this.socket.resume();
    this.parse();
  };

  /** a read into READ_BUFFER: its bytes, in a buffer of their own (from Node's pool when small) */
  private readonly onRead = (n: number): boolean => {
    const own = Buffer.allocUnsafe(n);
    READ_BUFFER.copy(own, 0, 0, n);
    this.onData(own);
    return true;
  };

  private onData(d: Buffer): void {
    const a = this.active;
    if (!a) return this.destroy(); // bytes nobody asked for: the connection cannot be trusted
    a.answered = true;
    this.buf = this.buf && this.buf.length ? Buffer.concat([this.buf, d]) : d;
    if (!this.paused) this.parse();
  }

  private onEnd(): void {
    this.eof = true;
    const a = this.active;
    // a body read until the close is complete (once what is buffered was delivered); anything else fails or is sent
    // again in onClose
    if (a && !a.finished && this.phase === Phase.UntilClose) {
      if (!this.paused) this.parse();
      return;
    }
    this.destroy();
  }

  private onClose(err: Error | null): void {
    const a = this.active;
    this.active = null;
    this.buf = null;
    this.destroy();
    if (!a || a.finished) return;
    if (this.reused && !a.answered && !a.retried) {
      // the server closed the kept connection as the request went out: once more on a new one
      a.retried = true;
      a.conn = null;
      this.client.resend(a);
      return;
    }
    a.fail(err ?? new LeanClientError('other side closed', 'UND_ERR_SOCKET'));
  }

  private failResponse(message: string): void {
    const a = this.active;
    this.active = null;
    this.buf = null;
    this.destroy();
    a?.fail(new LeanClientError(message, 'HPE_INVALID'));
  }

  private parse(): void {
    for (;;) {
      const a = this.active;
      if (!a || a.finished) return;
      const buf = this.buf;
      if (this.phase === Phase.Head) {
        if (!buf) return;
        const end = buf.indexOf(HEAD_END);
        if (end < 0) {
          if (buf.length > this.client.maxHeaderSize) this.failResponse('response head too large');
          return;
        }
        if (end > this.client.maxHeaderSize) return this.failResponse('response head too large');
        const head = buf.toString('latin1', 0, end);
        this.buf = buf.subarray(end + 4);
        if (!this.readHead(head, a)) return;
        continue;
      }
      if (this.phase === Phase.Done) return this.complete(a);
      if (!buf || !buf.length) {
        if (this.phase === Phase.UntilClose && this.eof) this.complete(a);
        return;
      }
      if (this.phase === Phase.Fixed || this.phase === Phase.ChunkData) {
        const n = Math.min(this.remaining, buf.length);
        const chunk = n === buf.length ? buf : buf.subarray(0, n);
        this.buf = n === buf.length ? null : buf.subarray(n);
        this.remaining -= n;
        if (this.remaining === 0) this.phase = this.phase === Phase.Fixed ? Phase.Done : Phase.ChunkDataEnd;
        if (!this.deliver(a, chunk)) return;
      } else if (this.phase === Phase.UntilClose) {
        this.buf = null;
        if (!this.deliver(a, buf)) return;
        if (this.eof) return this.complete(a);
      } else if (this.phase === Phase.ChunkDataEnd) {
        if (buf.length < 2) return;
        if (buf[0] !== 13 || buf[1] !== 10) return this.failResponse('invalid chunk end');
        this.buf = buf.subarray(2);
        this.phase = Phase.ChunkSize;
      } else {
        // ChunkSize or Trailers: one line
        const le = buf.indexOf(CRLF);
        if (le < 0) {
          if (buf.length > MAX_CHUNK_LINE) this.failResponse('chunk line too long');
          return;
        }
        const line = buf.toString('latin1', 0, le);
        this.buf = buf.subarray(le + 2);
        if (this.phase === Phase.Trailers) {
          if (line === '') this.phase = Phase.Done;
          continue;
        }
        const semi = line.indexOf(';');
        const hex = (semi < 0 ? line : line.slice(0, semi)).trim();
        if (!/^[0-9a-fA-F]{1,8}$/.test(hex)) return this.failResponse('invalid chunk size');
        const size = parseInt(hex, 16);
        if (size === 0) this.phase = Phase.Trailers;
        else {
          this.remaining = size;
          this.phase = Phase.ChunkData;
        }
      }
    }
  }

  /** false: the handler asked to pause (or the request ended meanwhile) */
  private deliver(a: Active, chunk: Buffer): boolean {
    if (a.bodyTimeout > 0) a.deadline = Date.now() + a.bodyTimeout;
    const more = a.handler!.onData(chunk);
    if (a.finished) return false;
    if (more === false) {
      this.paused = true;
      this.socket.pause();
      return false;
    }
    return true;
  }

  /** Reads a response head; false when the request failed. 1xx heads are skipped (the parser reads on). */
  private readHead(head: string, a: Active): boolean {
    const lines = head.split('\r\n');
    const m = STATUS_LINE.exec(lines[0]);
    if (!m) {
      this.failResponse('invalid status line');
      return false;
    }
    const http10 = m[1] === '0';
    const status = Number(m[2]);
    const raw: Buffer[] = [];
    let length = -1;
    let chunked = false;
    let connection = '';
    let keepAliveHint = '';
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i];
      const c = line.indexOf(':');
      if (c <= 0) {
        this.failResponse('invalid header line');
        return false;
      }
      const name = line.slice(0, c);
      const value = line.slice(c + 1).trim();
      if (!TOKEN.test(name)) {
        this.failResponse('invalid header name');
        return false;
      }
      raw.push(Buffer.from(name, 'latin1'), Buffer.from(value, 'latin1'));
      const lower = name.length >= 10 && name.length <= 17 ? name.toLowerCase() : '';
      if (lower === 'content-length') {
        if (!/^\d{1,15}$/.test(value) || (length >= 0 && length !== Number(value))) {
          this.failResponse('invalid content-length');
          return false;
        }
        length = Number(value);
      } else if (lower === 'transfer-encoding') chunked = /(?:^|,)\s*chunked\s*$/i.test(value);
      else if (lower === 'connection') connection = value.toLowerCase();
      else if (lower === 'keep-alive') keepAliveHint = value;
    }
    if (status < 200) return true; // 100 Continue, 103 Early Hints: the final response follows
    this.keepAlive = http10 ? /(?:^|,)\s*keep-alive\s*(?:,|$)/.test(connection) : !hasCloseToken(connection);
    const t = /timeout=(\d+)/i.exec(keepAliveHint);
    this.hintMs = t ? Number(t[1]) * 1000 : 0;
    if (chunked) this.phase = Phase.ChunkSize;
    else if (status === 204 || status === 304 || length === 0) this.phase = Phase.Done;
    else if (length > 0) {
      this.phase = Phase.Fixed;
      this.remaining = length;
    } else {
      this.phase = Phase.UntilClose;
      this.keepAlive = false;
    }
    a.gotHeaders = true;
    a.deadline = a.bodyTimeout > 0 ? Date.now() + a.bodyTimeout : 0;
    a.handler!.onHeaders(status, raw, this.resume);
    return !a.finished;
  }

  private complete(a: Active): void {
    this.active = null;
    const leftover = this.buf?.length;
    this.buf = null;
    const h = a.finish();
    if (this.keepAlive && !leftover && !this.dead) this.client.release(this);
    else this.destroy();
    h?.onEnd();
  }
}

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
