// The response side of the lean HTTP front: the part of Node's ServerResponse the relay uses, written straight to the
// socket. Framing as Node does it: Content-Length when the whole body is given to end() before anything was written
// (or the caller set it), chunked transfer coding otherwise; `Date`, and `Connection` / `Keep-Alive` unless set.
import { EventEmitter } from 'node:events';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { hasCloseToken } from './head.js';
import { writeJoined } from './write.js';
import type { HttpResponse } from '../http-response.js';

/** How the connection learns that a response has been written out (or cannot be). */
export interface ResponseOwner {
  /** the final bytes were handed to the socket; `close`: the connection ends after them */
  responseEnded(res: LeanResponse): void;
  readonly keepAliveSec: number;
  /** the connection must close after this response (the client asked, or the server is stopping) */
  mustClose(): boolean;
}

const INVALID_VALUE = /[\r\n\0]/;
let dateText = '';
let dateUntil = 0;
function httpDate(): string {
  const now = Date.now();
  if (now >= dateUntil) {
    dateText = new Date(now).toUTCString();
    dateUntil = now - (now % 1000) + 1000;
  }
  return dateText;
}

function noBody(status: number): boolean {
  return status === 204 || status === 304 || (status >= 100 && status < 200);
}

export class LeanResponse extends EventEmitter implements HttpResponse {
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  private status = 200;
  private headers: Record<string, string> | null = null;
  private extra: Record<string, string> | null = null;
  /** head bytes handed to the socket */
  private started = false;
  private chunked = false;
  private closeAfter = false;
  private closed = false;

  constructor(
    private readonly socket: Socket,
    private readonly owner: ResponseOwner,
  ) {
    super();
  }

  get destroyed(): boolean {
    return this.socket.destroyed;
  }

  get writableNeedDrain(): boolean {
    return this.socket.writableNeedDrain;
  }

  setHeader(name: string, value: string): this {
    if (this.headersSent) throw new Error('Cannot set headers after they are sent to the client');
    (this.extra ??= {})[name] = value;
    return this;
  }

  writeHead(status: number, headers?: Record<string, string>): this {
    if (this.headersSent) throw new Error('Cannot write headers after they are sent to the client');
    this.status = status;
    this.headers = headers ?? null;
    this.headersSent = true;
    return this;
  }

  /** `bodyLength` ≥ 0: the whole body is known (Content-Length unless set); -1: chunked unless Content-Length is set */
  private head(bodyLength: number): string {
    let s = `HTTP/1.1 ${this.status} ${STATUS_CODES[this.status] ?? 'unknown'}\r\n`;
    let hasLength = false;
    let hasConnection = false;
    let hasDate = false;
    const close = this.owner.mustClose();
    for (const set of [this.headers, this.extra]) {
      if (!set) continue;
      for (const name in set) {
        const value = set[name];
        if (value === undefined) continue;
        const v = String(value);
        if (INVALID_VALUE.test(v)) throw new TypeError(`Invalid character in header content ["${name}"]`);
        const lower =
          name.length === 14 || name.length === 10 || name.length === 4 || name.length === 17 ? name.toLowerCase() : '';
        if (lower === 'content-length') hasLength = true;
        else if (lower === 'date') hasDate = true;
        else if (lower === 'connection') {
          hasConnection = true;
          if (close || hasCloseToken(v)) {
            this.closeAfter = true;
            s += 'Connection: close\r\n';
            continue;
          }
        } else if (lower === 'transfer-encoding') continue; // framing is ours
        s += `${name}: ${v}\r\n`;
      }
    }
    if (!hasDate) s += `Date: ${httpDate()}\r\n`;
    if (!hasConnection) {
      if (close) {
        this.closeAfter = true;
        s += 'Connection: close\r\n';
      } else {
        s += 'Connection: keep-alive\r\n';
        if (this.owner.keepAliveSec > 0) s += `Keep-Alive: timeout=${this.owner.keepAliveSec}\r\n`;
      }
    }
    if (noBody(this.status)) return s + '\r\n';
    if (!hasLength) {
      if (bodyLength >= 0) s += `Content-Length: ${bodyLength}\r\n`;
      else {
        this.chunked = true;
        s += 'Transfer-Encoding: chunked\r\n';
      }
    }
    return s + '\r\n';
  }

  write(chunk: Buffer | string): boolean {
    if (this.writableEnded || this.socket.destroyed) return false;
    if (!this.headersSent) this.writeHead(200);
    const body = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const head = this.started ? null : this.head(-1);
    this.started = true;
    const parts: Array<string | Buffer> = head ? [head] : [];
    if (body.length > 0 && !noBody(this.status)) this.pushBody(parts, body);
    return parts.length ? writeJoined(this.socket, parts) : true;
  }

  /** the body bytes, framed as one chunk of the chunked transfer coding when that is the framing */
  private pushBody(parts: Array<string | Buffer>, body: Buffer): void {
    if (this.chunked) parts.push(`${body.length.toString(16)}\r\n`, body, '\r\n');
    else parts.push(body);
  }

  end(chunk?: Buffer | string): this {
    if (this.writableEnded) return this;
    this.writableEnded = true;
    if (!this.headersSent) this.writeHead(200);
    const socket = this.socket;
    if (socket.destroyed) return this;
    const body =
      noBody(this.status) || chunk === undefined ? null : typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const head = this.started ? null : this.head(body ? body.length : 0);
    this.started = true;
    const parts: Array<string | Buffer> = head ? [head] : [];
    if (body && body.length) this.pushBody(parts, body);
    if (this.chunked) parts.push('0\r\n\r\n');
    writeJoined(socket, parts, this.onFinish);
    this.owner.responseEnded(this);
    return this;
  }

  /** the connection ends after this response */
  get closesConnection(): boolean {
    return this.closeAfter;
  }

  private readonly onFinish = (err?: Error | null): void => {
    if (!err) this.writableFinished = true;
    this.emitClose();
  };

  /** the socket closed (or the response finished): `close`, once */
  emitClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit('close');
  }

  destroy(error?: Error): this {
    this.socket.destroy(error);
    return this;
  }
}
