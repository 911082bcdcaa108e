// One upstream connection of the lean HTTP client (client.ts): writing a request and parsing its response.
import net from 'node:net';
import tls from 'node:tls';
import { hasCloseToken, TOKEN } from './head.js';
import { writeJoined } from './write.js';
import type { ResponseSink } from '../response-sink.js';
import type { LeanHttpClient } from './client.js';

/** Errors with the codes undici gives the same failures. */
export class LeanClientError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: |$)/;
const MAX_CHUNK_LINE = 4096;
const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');

export interface Origin {
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
export class Active {
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

export class Conn {
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
