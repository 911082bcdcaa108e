// A lean HTTP/1.1 front for a few hot routes, in front of Node's HTTP server on the same listening socket.
//
// Why: Node's server builds an IncomingMessage and a ServerResponse (two streams) per request and runs both through
// its stream machinery; for a relay that does little else per request that is a large share of its CPU per request,
// much of what the 50-ms cell at 128 connections asks for (a bare `net` server against Node's:
// docs/perf/lean-http.md). This front parses only the common case itself (head.ts: `POST <route> HTTP/1.1`, a
// Content-Length body) and answers through LeanResponse. The first request on a connection that is anything else is
// handed, with every byte read so far, to Node's own connection handler, which keeps the connection from then on:
// other routes, chunked bodies, `Expect: 100-continue`, upgrades, malformed requests and their error answers all stay
// Node's. Requests on one connection are answered in order (pipelined ones wait for the answer before).
import { maxHeaderSize, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { headMayComplete, parseHead, type LeanHead } from './head.js';
import { LeanResponse, type ResponseOwner } from './response.js';

export interface LeanRequest extends LeanHead {
  body: Buffer;
  socket: Socket;
  /** what `admission.check` returned for this request */
  admitted: unknown;
}

/**
 * Decides on a request from its head alone, before a byte of its body is kept. `check` returns what the handler
 * gets as `req.admitted`, or a promise of it (the connection is not read meanwhile), and throws (or rejects) to refuse
 * the request: `refuse` then answers it, and its body is dropped as it arrives (an answer with `Connection: close`
 * closes the connection instead).
 */
export interface LeanAdmission {
  check: (head: LeanHead) => unknown;
  refuse: (err: unknown, head: LeanHead, res: LeanResponse) => void;
}

export interface LeanFrontOptions {
  isRoute: (url: string) => boolean;
  /** a larger body goes to Node's handler (which answers 413 for the relay routes) */
  bodyLimit: number;
  admission?: LeanAdmission;
  handle: (req: LeanRequest, res: LeanResponse) => void;
  /** the server is stopping: every answer carries `Connection: close` */
  stopping?: () => boolean;
}

// Node's limit (--max-http-header-size, 16 KB by default): a longer head goes to Node, which answers 431
const MAX_HEAD = maxHeaderSize;
const CRLFCRLF = Buffer.from('\r\n\r\n');
const LFLF = Buffer.from('\n\n');
const LFCRLF = Buffer.from('\n\r\n');
const POST = Buffer.from('POST ');
const SWEEP_MS = 1000;
/** pipelined bytes kept while a response is in flight before the socket stops being read */
const PIPELINE_BUFFER = 64 * 1024;
const EMPTY = Buffer.alloc(0);
/** how long a connection whose refused body is left unread stays open after the answer */
const LINGER_MS = 2000;

const enum State {
  /** between requests or reading a head */
  Head,
  Body,
  /** the request was handed to the handler; its response is not written out yet */
  Busy,
  /** handed to Node's server, or closed */
  Gone,
}

class Connection implements ResponseOwner {
  state = State.Head;
  /** bytes read and not parsed yet */
  pending: Buffer | null = null;
  head: LeanHead | null = null;
  bodyParts: Buffer[] = [];
  bodyBytes = 0;
  /** what the admission check gave the request being read */
  admitted: unknown = undefined;
  /** body bytes of a refused request still to arrive, dropped */
  skip = 0;
  /** when the connection last went idle, or when the request being read started */
  since = Date.now();
  res: LeanResponse | null = null;
  private closeAfterResponse = false;

  constructor(
    readonly socket: Socket,
    private readonly front: LeanHttpFront,
  ) {
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('close', this.onClose);
    socket.on('drain', this.onDrain);
    socket.on('error', noop); // 'close' follows
  }

  get keepAliveSec(): number {
    return Math.floor(this.front.server.keepAliveTimeout / 1000);
  }

  mustClose(): boolean {
    return this.closeAfterResponse || (this.front.opts.stopping?.() ?? false);
  }

  get idle(): boolean {
    return this.state === State.Head && this.pending === null;
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.skip !== 0) {
      if (chunk.length <= this.skip) {
        this.skip -= chunk.length;
        return;
      }
      chunk = chunk.subarray(this.skip);
      this.skip = 0;
    }
    if (this.state === State.Busy) {
      this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
      if (this.pending.length > PIPELINE_BUFFER) this.socket.pause();
      return;
    }
    if (this.state === State.Body) return this.addBody(chunk);
    if (this.state !== State.Head) return;
    if (this.pending === null) this.since = Date.now();
    this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.parse();
  };

  /** parses what is pending, in the Head state */
  private parse(): void {
    const buf = this.pending!;
    const end = buf.indexOf(CRLFCRLF);
    if (end < 0) {
      // Not one of ours as soon as that shows (another method, garbage, a byte no head of ours holds: Node answers
      // a corrupted head at once, where waiting here for its end could last until the head timeout), a head ended by
      // bare line feeds (it would never show CRLF CRLF), or too long: Node's parser decides what it is
      if (buf.compare(POST, 0, Math.min(POST.length, buf.length), 0, Math.min(POST.length, buf.length)) !== 0)
        return this.handOver();
      if (
        buf.length > MAX_HEAD ||
        buf.indexOf(LFLF) >= 0 ||
        buf.indexOf(LFCRLF) >= 0 ||
        !headMayComplete(buf, this.front.opts.isRoute)
      )
        this.handOver();
      return;
    }
    const head = end <= MAX_HEAD ? parseHead(buf, end, this.front.opts.isRoute) : null;
    if (!head || head.contentLength > this.front.opts.bodyLimit) return this.handOver();
    this.closeAfterResponse = head.close;
    const rest = buf.subarray(end + 4);
    this.pending = null;
    const admission = this.front.opts.admission;
    if (!admission) return this.readBody(head, undefined, rest);
    let admitted: unknown;
    try {
      admitted = admission.check(head);
    } catch (err) {
      return this.refuse(head, err, rest);
    }
    if (!(admitted instanceof Promise)) return this.readBody(head, admitted, rest);
    // the decision is being looked up: what arrives meanwhile waits unread (Busy keeps it, pausing past a bound)
    this.state = State.Busy;
    this.pending = rest.length ? rest : null;
    admitted.then(
      (value) => this.admissionDecided(head, true, value),
      (err) => this.admissionDecided(head, false, err),
    );
  }

  private admissionDecided(head: LeanHead, admitted: boolean, outcome: unknown): void {
    if (this.state !== State.Busy || this.res || this.socket.destroyed) return; // the connection went meanwhile
    const rest = this.pending ?? EMPTY;
    this.pending = null;
    if (this.socket.isPaused()) this.socket.resume();
    if (admitted) this.readBody(head, outcome, rest);
    else this.refuse(head, outcome, rest);
  }

  private readBody(head: LeanHead, admitted: unknown, rest: Buffer): void {
    this.head = head;
    this.admitted = admitted;
    this.bodyParts = [];
    this.bodyBytes = 0;
    this.state = State.Body;
    this.addBody(rest);
  }

  /** a request refused from its head: answered at once, its body dropped as it arrives (or the connection closed) */
  private refuse(head: LeanHead, err: unknown, rest: Buffer): void {
    this.state = State.Busy;
    if (rest.length > head.contentLength) this.pending = rest.subarray(head.contentLength);
    this.skip = head.contentLength - Math.min(rest.length, head.contentLength);
    const res = new LeanResponse(this.socket, this);
    this.res = res;
    this.front.opts.admission!.refuse(err, head, res);
  }

  private addBody(chunk: Buffer): void {
    const need = this.head!.contentLength - this.bodyBytes;
    if (chunk.length > need) {
      this.pending = chunk.subarray(need);
      chunk = chunk.subarray(0, need);
    }
    if (chunk.length) {
      this.bodyParts.push(chunk);
      this.bodyBytes += chunk.length;
    }
    if (this.bodyBytes < this.head!.contentLength) return;
    const parts = this.bodyParts;
    const body = parts.length === 1 ? parts[0] : Buffer.concat(parts, this.bodyBytes);
    this.bodyParts = [];
    this.state = State.Busy;
    const res = new LeanResponse(this.socket, this);
    this.res = res;
    const head = this.head!;
    this.head = null;
    const admitted = this.admitted;
    this.admitted = undefined;
    this.front.opts.handle({ ...head, body, socket: this.socket, admitted }, res);
  }

  responseEnded(res: LeanResponse): void {
    if (res !== this.res) return;
    this.res = null;
    if (res.closesConnection || this.socket.destroyed) {
      this.state = State.Gone;
      this.socket.end();
      if (this.skip !== 0) {
        // a refused body still on its way is not read at all; the connection goes once the client has had time to
        // read the answer (destroying it at once could reset it before)
        this.socket.pause();
        setTimeout(() => this.socket.destroy(), LINGER_MS).unref();
      }
      return;
    }
    this.state = State.Head;
    this.since = Date.now();
    if (this.pending) {
      // a pipelined request: parsed once the current call stack (the handler that just ended) is done
      setImmediate(() => {
        if (this.state !== State.Head || !this.pending) return;
        if (this.socket.isPaused()) this.socket.resume();
        this.since = Date.now();
        this.parse();
      });
    }
  }

  /** Node's server takes the connection over at a request boundary, with the bytes read so far */
  private handOver(): void {
    const socket = this.socket;
    this.state = State.Gone;
    this.detach();
    socket.pause();
    if (this.pending) socket.unshift(this.pending);
    this.pending = null;
    this.front.nodeConnection(socket);
    socket.resume();
  }

  private detach(): void {
    const socket = this.socket;
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('close', this.onClose);
    socket.off('drain', this.onDrain);
    socket.off('error', noop);
    this.front.connections.delete(this);
  }

  private readonly onEnd = (): void => {
    // the client will send nothing more. As Node's server (without httpAllowHalfOpen) does, a request in flight is
    // given up: its response sees `close` unfinished, and the relay takes its client-gone path (relay/attempt.ts).
    if (this.state === State.Head && this.pending === null) {
      this.state = State.Gone;
      this.socket.end();
    } else this.socket.destroy();
  };

  private readonly onClose = (): void => {
    this.state = State.Gone;
    this.front.connections.delete(this);
    const res = this.res;
    this.res = null;
    if (res) res.emitClose();
  };

  private readonly onDrain = (): void => {
    this.res?.emit('drain');
  };

  /** the periodic check: idle past the keep-alive timeout, or a request that takes too long to arrive */
  sweep(now: number): void {
    const server = this.front.server;
    if (this.state === State.Head && this.pending === null) {
      if (server.keepAliveTimeout > 0 && now - this.since > server.keepAliveTimeout) this.socket.destroy();
      return;
    }
    const limit =
      this.state === State.Head ? server.headersTimeout : this.state === State.Body ? server.requestTimeout : 0;
    if (limit > 0 && now - this.since > limit) {
      this.state = State.Gone;
      this.socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      this.socket.destroySoon();
    }
  }
}

function noop(): void {}

export class LeanHttpFront {
  readonly connections = new Set<Connection>();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    readonly server: Server,
    readonly opts: LeanFrontOptions,
    readonly nodeConnection: (socket: Socket) => void,
  ) {}

  /**
   * Puts the front before Node's connection handler, and makes the server's closeIdleConnections /
   * closeAllConnections (server.close() calls the first) reach the connections it holds. False when the server's
   * listeners are not the layout this knows (then nothing changes).
   */
  static install(server: Server, opts: LeanFrontOptions): LeanHttpFront | null {
    const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
    if (listeners.length !== 1) return null;
    const node = listeners[0];
    const front = new LeanHttpFront(server, opts, (socket) => node.call(server, socket));
    server.removeListener('connection', node);
    server.on('connection', (socket: Socket) => front.accept(socket));
    const closeIdle = server.closeIdleConnections.bind(server);
    const closeAll = server.closeAllConnections.bind(server);
    server.closeIdleConnections = () => {
      closeIdle();
      front.closeIdle();
    };
    server.closeAllConnections = () => {
      closeAll();
      front.closeAll();
    };
    server.once('close', () => front.stopSweeping());
    return front;
  }

  accept(socket: Socket): void {
    this.connections.add(new Connection(socket, this));
    if (!this.sweeper) {
      this.sweeper = setInterval(() => {
        const now = Date.now();
        for (const c of this.connections) c.sweep(now);
      }, SWEEP_MS);
      this.sweeper.unref();
    }
  }

  closeIdle(): void {
    for (const c of this.connections) {
      if (c.idle) {
        c.state = State.Gone;
        c.socket.destroy();
      }
    }
  }

  closeAll(): void {
    for (const c of this.connections) c.socket.destroy();
  }

  private stopSweeping(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }
}
