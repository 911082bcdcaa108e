// Upstream websockets (iFlytek Spark, realtime APIs), beside the HTTP transport and under its rules: the channel's
// proxy (http(s) CONNECT or SOCKS5, transport/connect-tunnel.ts), headersTimeout for the opening handshake and bodyTimeout
// between received frames (undici's meanings and error codes, so the relay reports them as it reports HTTP ones), at
// most `connections` sockets per origin at once (later ones wait their turn, as undici's pool queues requests),
// closed when the client departs (signal), and, when the transport has a guard (lib/safe-fetch.ts's addressesOf), an
// upstream whose name resolves to a private, loopback or link-local address is refused before any connection; the
// socket then goes to the checked address itself, so a name that answers differently a moment later cannot slip in.
// `ws` is imported with the first socket: the relay does not load it at start.
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { ClientRequest, IncomingMessage } from 'node:http';
import type WebSocket from 'ws';
import type { SafeFetch } from '../../lib/safe-fetch.js';
import type { UpstreamStream } from '../stream/pump.js';
import { connectTunnel } from './connect-tunnel.js';

type WsModule = typeof import('ws');
let wsModule: Promise<WsModule> | null = null;
/** `ws`, imported once, on the first socket. */
const loadWs = (): Promise<WsModule> => (wsModule ??= import('ws'));

/** The SSRF check of lib/safe-fetch.ts: every address a name resolves to, or ForbiddenAddressError. */
export type AddressGuard = Pick<SafeFetch, 'addressesOf'>;

export interface WebSocketTransportOptions {
  /** most sockets open at once to one origin (the HTTP pool's `connections`: lib/undici.ts UPSTREAM_POOL) */
  connections: number;
  /** refuse upstreams that resolve to forbidden addresses (user-chosen URLs); none for admins' channel URLs */
  guard?: AddressGuard | null;
}

export interface WebSocketRequest {
  /** ws:// or wss:// */
  url: string;
  headers: Record<string, string>;
  protocols?: string[];
  /** the channel's proxy (channel-setting.ts proxyOf): an http(s):// CONNECT or socks5(h):// proxy, or none */
  proxy?: string | null;
  /** ms from the connection's start to the end of the opening handshake; 0: none */
  headersTimeout: number;
  /** ms allowed between two received frames; 0: none */
  bodyTimeout: number;
  /** the client departed: the socket is closed (or never opened) */
  signal?: AbortSignal;
}

export interface WsFrame {
  data: Buffer;
  binary: boolean;
}

/** A failure of the socket, with undici's code where undici has one (timeouts) */
export class UpstreamSocketError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** The upstream answered the opening handshake with something other than 101: its status and (bounded) body. */
export class UpgradeRefusedError extends Error {
  readonly code = 'ERR_WS_UPGRADE_REFUSED';
  constructor(
    readonly status: number,
    readonly body: Buffer,
  ) {
    super(`upstream refused the websocket with status ${status}`);
  }
}

/** frames kept for a reader still to come before the socket stops reading */
const EARLY_FRAMES = 64;

/** how much of a refused handshake's answer is kept for the provider's error parser */
const REFUSAL_BODY_LIMIT = 64 * 1024;

const headersTimeoutError = () => new UpstreamSocketError('Headers Timeout Error', 'UND_ERR_HEADERS_TIMEOUT');
const bodyTimeoutError = () => new UpstreamSocketError('Body Timeout Error', 'UND_ERR_BODY_TIMEOUT');
const departedError = () => new UpstreamSocketError('the client went away', 'ABORT_ERR');

/** Per-origin count of open sockets and the openings waiting for one to close. */
class OriginSlots {
  private readonly byOrigin = new Map<string, { active: number; waiting: (() => void)[] }>();

  constructor(private readonly limit: number) {}

  /** Resolves once a socket to `origin` may open; rejects if `signal` aborts first. */
  acquire(origin: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(departedError());
    let o = this.byOrigin.get(origin);
    if (!o) this.byOrigin.set(origin, (o = { active: 0, waiting: [] }));
    if (o.active < this.limit) {
      o.active++;
      return Promise.resolve();
    }
    const entry = o;
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const i = entry.waiting.indexOf(go);
        if (i >= 0) entry.waiting.splice(i, 1);
        reject(departedError());
      };
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      entry.waiting.push(go);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** One socket to `origin` closed: its slot goes to the first waiting opening, else is freed. */
  release(origin: string): void {
    const o = this.byOrigin.get(origin);
    if (!o) return;
    const next = o.waiting.shift();
    if (next) return next();
    o.active--;
    if (o.active === 0) this.byOrigin.delete(origin);
  }

  /** sockets open to `origin` now */
  active(origin: string): number {
    return this.byOrigin.get(origin)?.active ?? 0;
  }
}

export class WebSocketTransport {
  private readonly slots: OriginSlots;
  private readonly guard: AddressGuard | null;
  /** the sockets open or opening, for close() */
  private readonly live = new Set<UpstreamSocket>();
  private isClosed = false;

  constructor(o: WebSocketTransportOptions) {
    this.slots = new OriginSlots(o.connections);
    this.guard = o.guard ?? null;
  }

  /** sockets open (or opening) to the origin of `url` */
  active(url: string): number {
    return this.slots.active(new URL(url).origin);
  }

  /** Opens a socket: resolves once the handshake is done, rejects on refusal, timeout, departure or error. */
  async open(req: WebSocketRequest): Promise<UpstreamSocket> {
    const u = new URL(req.url);
    if (u.protocol !== 'ws:' && u.protocol !== 'wss:') throw new Error(`not a websocket URL: ${u.protocol}`);
    if (req.signal?.aborted) throw departedError();
    if (this.isClosed) throw new UpstreamSocketError('the websocket transport is closed', 'ERR_WS_CLOSED');
    const { WebSocket } = await loadWs();
    await this.slots.acquire(u.origin, req.signal);
    let socket: UpstreamSocket;
    try {
      // departed, or the gateway began stopping, while it waited for its turn
      if (req.signal?.aborted) throw departedError();
      if (this.isClosed) throw new UpstreamSocketError('the websocket transport is closed', 'ERR_WS_CLOSED');
      socket = new UpstreamSocket(WebSocket, u, req, this.guard);
    } catch (err) {
      this.slots.release(u.origin);
      throw err;
    }
    this.live.add(socket);
    void socket.closed.then(() => {
      this.live.delete(socket);
      this.slots.release(u.origin);
    });
    await socket.opened;
    return socket;
  }

  /** The gateway stops: every socket is dropped (their readers end with an error) and no new one opens. */
  async close(): Promise<void> {
    this.isClosed = true;
    const all = [...this.live];
    for (const s of all) s.destroy(new UpstreamSocketError('the gateway is stopping', 'ERR_WS_CLOSED'));
    await Promise.all(all.map((s) => s.closed));
  }
}

/**
 * One upstream websocket. Received frames are read either with consume (stream(), for the stream pumps) or with
 * `for await` (not both); those that arrive before a reader are kept for it.
 */
export class UpstreamSocket implements AsyncIterable<WsFrame> {
  /** resolves on the completed handshake */
  readonly opened: Promise<void>;
  /** resolves once the socket is closed, however it ended */
  readonly closed: Promise<void>;

  private readonly ws: WebSocket;
  /** aborts a connection still being dialled (proxy tunnel, name check) */
  private readonly dialing = new AbortController();
  private failure: Error | null = null;
  private isOpen = false;
  private handshakeTimer: NodeJS.Timeout | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly idleMs: number;
  private paused = false;
  /** paused because frames came before any reader (EARLY_FRAMES) */
  private heldForReader = false;
  private readonly early: WsFrame[] = [];
  private onFrame: ((f: WsFrame) => void) | null = null;
  private onEnd: ((err: Error | null) => void) | null = null;
  /** how the socket ended (null: normally), once it has */
  private ending: { err: Error | null } | null = null;
  private readonly removeAbort: () => void;

  constructor(WebSocketClass: WsModule['WebSocket'], url: URL, req: WebSocketRequest, guard: AddressGuard | null) {
    this.idleMs = req.bodyTimeout;
    const secure = url.protocol === 'wss:';
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const port = Number(url.port) || (secure ? 443 : 80);
    const proxy = req.proxy?.trim() || null;
    const signal = this.dialing.signal;
    // Node's client request waits for a connection handed to this callback (its documented async form)
    const createConnection = (_opts: unknown, oncreate: (err: Error | null, socket?: Socket) => void) => {
      dial(host, port, secure, proxy, guard, signal).then(
        (s) => oncreate(null, s),
        (err: Error) => oncreate(err),
      );
      return undefined;
    };

    let settleOpen!: (err: Error | null) => void;
    this.opened = new Promise<void>((resolve, reject) => {
      settleOpen = (err) => (err ? reject(err) : resolve());
    });
    // a failed opening is told through `opened`; `closed` only says when the socket is done
    this.opened.catch(() => undefined);

    this.ws = new WebSocketClass(url, req.protocols ?? [], {
      headers: req.headers,
      createConnection: createConnection as unknown as WebSocket.ClientOptions['createConnection'],
      perMessageDeflate: false,
      followRedirects: false,
    });

    if (req.headersTimeout > 0) {
      this.handshakeTimer = setTimeout(() => this.fail(headersTimeoutError()), req.headersTimeout);
    }
    const onAbort = () => this.fail(departedError());
    req.signal?.addEventListener('abort', onAbort, { once: true });
    this.removeAbort = () => req.signal?.removeEventListener('abort', onAbort);

    this.ws.on('unexpected-response', (request: ClientRequest, res: IncomingMessage) => {
      readBounded(res).then((body) => {
        this.fail(new UpgradeRefusedError(res.statusCode ?? 0, body));
        request.destroy();
      });
    });
    this.ws.on('open', () => {
      this.isOpen = true;
      this.clearHandshakeTimer();
      this.armIdleTimer();
      settleOpen(null);
    });
    this.ws.on('message', (data: Buffer, binary: boolean) => {
      this.idleTimer?.refresh();
      const frame = { data, binary };
      if (this.onFrame) this.onFrame(frame);
      // nobody reads yet: a bounded few are kept, then the socket's reading waits for the reader
      else if (this.early.push(frame) >= EARLY_FRAMES && !this.paused) {
        this.heldForReader = true;
        this.pause();
      }
    });
    // the reason is kept by fail(); 'close' follows every error
    this.ws.on('error', (err: Error) => {
      this.failure ??= err;
    });
    this.closed = new Promise<void>((resolve) => {
      this.ws.once('close', (code: number, reason: Buffer) => {
        this.clearHandshakeTimer();
        if (this.idleTimer) clearTimeout(this.idleTimer);
        this.removeAbort();
        this.dialing.abort();
        let err = this.failure;
        if (!err && code !== 1000 && code !== 1005) {
          const why = reason.toString('utf8');
          err = new UpstreamSocketError(
            `upstream websocket closed with code ${code}${why ? `: ${why}` : ''}`,
            'ERR_WS_CLOSED',
          );
        }
        if (!this.isOpen)
          settleOpen(err ?? new UpstreamSocketError('upstream websocket closed while opening', 'ERR_WS_CLOSED'));
        this.ending = { err };
        this.onEnd?.(err);
        resolve();
      });
    });
  }

  /** Sends one frame: a string as text, a Buffer as binary; resolves once it is written. */
  send(data: string | Buffer): Promise<void> {
    if (!this.isOpen || this.ending || this.ws.readyState !== this.ws.OPEN) {
      return Promise.reject(new UpstreamSocketError('upstream websocket is not open', 'ERR_WS_NOT_OPEN'));
    }
    return new Promise<void>((resolve, reject) => {
      this.ws.send(data, { binary: typeof data !== 'string' }, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** Ends the conversation with a close frame; the reading side then ends normally. */
  close(code = 1000, reason = ''): void {
    if (this.isOpen) this.ws.close(code, reason);
    else this.ws.terminate();
  }

  /** Drops the connection at once (the client departed, the reader gave up); the reading side ends with `err`. */
  destroy(err: Error = departedError()): void {
    this.fail(err);
  }

  /** Frames in, as the stream pumps read an upstream body (relay/stream/pump.ts): each frame's payload one chunk. */
  stream(): UpstreamStream {
    return {
      consume: (onChunk, onEnd) => this.consume((f) => onChunk(f.data), onEnd),
      pause: () => this.pause(),
      resume: () => this.resume(),
      destroy: () => this.destroy(),
    };
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WsFrame> {
    const queue: WsFrame[] = [];
    let end: { err: Error | null } | null = null;
    let wake: (() => void) | null = null;
    this.consume(
      (f) => {
        queue.push(f);
        // a reader that falls behind stops the socket's reading rather than piling frames up
        if (queue.length >= 64) this.pause();
        wake?.();
      },
      (err) => {
        end = { err };
        wake?.();
      },
    );
    try {
      for (;;) {
        const f = queue.shift();
        if (f) {
          if (queue.length < 16) this.resume();
          yield f;
          continue;
        }
        const done = end as { err: Error | null } | null;
        if (done) {
          if (done.err) throw done.err;
          return;
        }
        await new Promise<void>((r) => (wake = r));
        wake = null;
      }
    } finally {
      // a reader that stops early (break, throw) leaves nothing open behind it
      if (!end) this.destroy();
    }
  }

  private consume(onFrame: (f: WsFrame) => void, onEnd: (err: Error | null) => void): void {
    if (this.onFrame) throw new Error('the socket is already being read');
    this.onFrame = onFrame;
    // frames arrive from socket reads, never during this loop: the reader's own pause() in it stands
    if (this.heldForReader) {
      this.heldForReader = false;
      this.resume();
    }
    for (const f of this.early.splice(0)) onFrame(f);
    if (this.ending) onEnd(this.ending.err);
    else this.onEnd = onEnd;
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.ws.pause();
    // a reader that holds the stream is not the upstream's silence
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.ws.resume();
    if (this.isOpen && !this.ending) this.armIdleTimer();
  }

  /** bodyTimeout, counted from now */
  private armIdleTimer(): void {
    if (this.idleMs <= 0) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.fail(bodyTimeoutError()), this.idleMs);
  }

  private clearHandshakeTimer(): void {
    if (this.handshakeTimer) clearTimeout(this.handshakeTimer);
    this.handshakeTimer = null;
  }

  /** Ends the socket with `err` (the first reason given wins). */
  private fail(err: Error): void {
    if (this.ending) return;
    this.failure ??= err;
    this.dialing.abort();
    this.ws.terminate();
  }
}

/** The connection under the websocket: the name checked (guard), through the proxy's tunnel or straight, TLS on top. */
async function dial(
  host: string,
  port: number,
  secure: boolean,
  proxy: string | null,
  guard: AddressGuard | null,
  signal: AbortSignal,
): Promise<Socket> {
  const address = guard ? (await guard.addressesOf(host, port))[0] : host;
  if (signal.aborted) throw departedError();
  const servername = isIP(host) ? undefined : host;
  if (proxy) {
    const tunnel = await connectTunnel(proxy, address, port, signal);
    return secure ? tlsConnect({ socket: tunnel, servername, ALPNProtocols: ['http/1.1'] }) : tunnel;
  }
  return secure
    ? tlsConnect({ host: address, port, servername, ALPNProtocols: ['http/1.1'] })
    : netConnect({ host: address, port });
}

/** A refused handshake's answer body, up to REFUSAL_BODY_LIMIT bytes. */
function readBounded(res: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let size = 0;
    const done = () => resolve(Buffer.concat(parts));
    res.on('data', (b: Buffer) => {
      if (size >= REFUSAL_BODY_LIMIT) return;
      parts.push(b.subarray(0, REFUSAL_BODY_LIMIT - size));
      size += b.length;
      if (size >= REFUSAL_BODY_LIMIT) {
        res.destroy();
        done();
      }
    });
    res.once('end', done);
    res.once('error', done);
    res.once('close', done);
  });
}
