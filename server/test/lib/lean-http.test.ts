// The lean HTTP front against real sockets: what it serves itself, what it hands to Node's server (and that Node then
// serves it exactly as without the front), framing, keep-alive, pipelining, timeouts and closing.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { LeanHttpFront } from '../../src/lib/lean-http/front.js';
import type { LeanResponse } from '../../src/lib/lean-http/response.js';

interface Fixture {
  server: http.Server;
  front: LeanHttpFront;
  port: number;
  /** responses the front's handler saw closed, and whether they had finished */
  closes: boolean[];
  /** what the front's `stopping` option answers */
  stopping: boolean;
}

let fixture: Fixture | null = null;

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
}

afterEach(async () => {
  if (!fixture) return;
  fixture.server.closeAllConnections();
  await new Promise((r) => fixture!.server.close(r));
  fixture = null;
});

/** `/fast` (and `/stream`, answered in chunks; `/slow`, answered after 300 ms) go to the front; Node answers the rest */
async function start(opts: { bodyLimit?: number } = {}): Promise<Fixture> {
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString();
      res.writeHead(200, { 'content-type': 'application/json', 'x-served-by': 'node' });
      res.end(JSON.stringify({ url: req.url, body, auth: req.headers.authorization ?? null }));
    });
  });
  const closes: boolean[] = [];
  const front = LeanHttpFront.install(server, {
    stopping: () => fixture?.stopping ?? false,
    isRoute: (url) => url === '/fast' || url === '/stream' || url === '/slow',
    bodyLimit: opts.bodyLimit ?? 1024 * 1024,
    handle: (req, res: LeanResponse) => {
      res.once('close', () => closes.push(res.writableFinished));
      const answer = JSON.stringify({
        url: req.url,
        body: req.body.toString(),
        auth: req.headers.authorization ?? null,
      });
      if (req.url === '/stream') {
        res.writeHead(200, { 'Content-Type': 'text/event-stream', 'x-served-by': 'lean' });
        res.write('data: 1\n\n');
        setTimeout(() => {
          if (res.destroyed) return;
          res.write('data: 2\n\n');
          res.end('data: [DONE]\n\n');
        }, 20);
        return;
      }
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(200, { 'Content-Type': 'application/json', 'x-served-by': 'lean' });
        res.end(answer);
      };
      if (req.url === '/slow') setTimeout(send, 300);
      else send();
    },
  });
  expect(front).not.toBeNull();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fixture = { server, front: front!, port: (server.address() as AddressInfo).port, closes, stopping: false };
  return fixture;
}

function post(path: string, body: string, extra = ''): string {
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-1\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

interface Parsed {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Reads raw HTTP/1.1 responses off a socket (Content-Length and chunked framing). */
class RawClient {
  readonly socket: net.Socket;
  private buf = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  ended = false;

  constructor(port: number) {
    this.socket = net.connect(port, '127.0.0.1');
    this.socket.on('data', (c: Buffer) => {
      this.buf = Buffer.concat([this.buf, c]);
      this.wake();
    });
    this.socket.on('close', () => {
      this.ended = true;
      this.wake();
    });
    this.socket.on('error', () => {});
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private more(): Promise<void> {
    if (this.ended) throw new Error(`connection closed; unread: ${JSON.stringify(this.buf.toString())}`);
    return new Promise((r) => this.waiters.push(r));
  }

  send(text: string | Buffer): void {
    this.socket.write(text);
  }

  async response(): Promise<Parsed> {
    let end: number;
    while ((end = this.buf.indexOf('\r\n\r\n')) < 0) await this.more();
    const lines = this.buf.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(lines[0].split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) {
      const i = l.indexOf(':');
      headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
    }
    this.buf = this.buf.subarray(end + 4);
    let body = '';
    if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length']);
      while (this.buf.length < n) await this.more();
      body = this.buf.subarray(0, n).toString();
      this.buf = this.buf.subarray(n);
    } else if (headers['transfer-encoding'] === 'chunked') {
      for (;;) {
        let le: number;
        while ((le = this.buf.indexOf('\r\n')) < 0) await this.more();
        const size = parseInt(this.buf.subarray(0, le).toString(), 16);
        while (this.buf.length < le + 2 + size + 2) await this.more();
        body += this.buf.subarray(le + 2, le + 2 + size).toString();
        this.buf = this.buf.subarray(le + 2 + size + 2);
        if (size === 0) break;
      }
    } else {
      await this.closed(); // HTTP/1.0: the body runs to the end of the connection
      body = this.buf.toString();
    }
    return { status, headers, body };
  }

  async closed(): Promise<void> {
    while (!this.ended) await new Promise<void>((r) => this.waiters.push(r));
  }
}

describe('lean HTTP front', () => {
  it('serves keep-alive requests to its routes itself, with Content-Length framing, Date and keep-alive headers', async () => {
    const f = await start();
    const c = new RawClient(f.port);
    c.send(post('/fast', '{"a":1}'));
    const r1 = await c.response();
    expect(r1.status).toBe(200);
    expect(r1.headers['x-served-by']).toBe('lean');
    expect(r1.headers['content-length']).toBe(String(Buffer.byteLength(r1.body)));
    expect(r1.headers.connection).toBe('keep-alive');
    expect(r1.headers['keep-alive']).toBe(`timeout=${Math.floor(f.server.keepAliveTimeout / 1000)}`);
    expect(Date.parse(r1.headers.date)).toBeGreaterThan(Date.now() - 5000);
    expect(JSON.parse(r1.body)).toEqual({ url: '/fast', body: '{"a":1}', auth: 'Bearer sk-1' });
    c.send(post('/fast', 'second'));
    expect(JSON.parse((await c.response()).body).body).toBe('second');
    expect(f.front.connections.size).toBe(1);
    c.socket.destroy();
  });

  it('assembles a head and body that arrive a byte at a time, and answers pipelined requests in order', async () => {
    const f = await start();
    const c = new RawClient(f.port);
    const bytes = Buffer.from(post('/fast', 'x'.repeat(300)));
    for (const b of bytes) {
      c.send(Buffer.from([b]));
      await new Promise((r) => setImmediate(r));
    }
    expect(JSON.parse((await c.response()).body).body).toBe('x'.repeat(300));
    // three at once: slow, fast, and one for Node's server; the answers keep the order of the requests
    c.send(post('/slow', 'one') + post('/fast', 'two') + post('/other', 'three'));
    const answers = [await c.response(), await c.response(), await c.response()];
    expect(answers.map((a) => [a.headers['x-served-by'], JSON.parse(a.body).body])).toEqual([
      ['lean', 'one'],
      ['lean', 'two'],
      ['node', 'three'],
    ]);
    // the connection is Node's from then on, for every route
    c.send(post('/fast', 'four'));
    expect((await c.response()).headers['x-served-by']).toBe('node');
    expect(f.front.connections.size).toBe(0);
    c.socket.destroy();
  });

  it.each([
    ['another route', post('/other', 'b')],
    ['another method', 'PUT /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nb'],
    ['HTTP/1.0', 'POST /fast HTTP/1.0\r\nHost: x\r\nContent-Length: 1\r\n\r\nb'],
    ['a chunked body', 'POST /fast HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nb\r\n0\r\n\r\n'],
    ['a duplicate header', post('/fast', 'b', 'Authorization: Bearer sk-2\r\n')],
    ['a query string', post('/fast?x=1', 'b')],
    ['a body over the limit', post('/fast', 'b'.repeat(2000))],
  ])('hands %s to Node’s server, which serves it', async (_name, request) => {
    const f = await start({ bodyLimit: 1000 });
    const c = new RawClient(f.port);
    c.send(request);
    const r = await c.response();
    expect(r.status).toBe(200);
    expect(r.headers['x-served-by']).toBe('node');
    expect(JSON.parse(r.body).body).toMatch(/^b+$/);
    c.socket.destroy();
  });

  it('leaves Expect: 100-continue to Node (the client gets its 100 and then the answer)', async () => {
    const f = await start();
    const res = await new Promise<{ status: number; body: string; continued: boolean }>((resolve, reject) => {
      let continued = false;
      const req = http.request(
        {
          port: f.port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/fast',
          headers: { expect: '100-continue', 'content-length': 2 },
        },
        (r) => {
          let body = '';
          r.on('data', (c) => (body += c));
          r.on('end', () => resolve({ status: r.statusCode!, body, continued }));
        },
      );
      req.on('continue', () => {
        continued = true;
        req.end('ok');
      });
      req.on('error', reject);
    });
    expect(res).toMatchObject({ status: 200, continued: true });
    expect(JSON.parse(res.body).body).toBe('ok');
  });

  it('leaves malformed requests to Node, which answers them with its 400 / 431 at once', async () => {
    const f = await start();
    const bad = new RawClient(f.port);
    bad.send('POST /fast HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\nContent-Length: 1\r\n\r\nb');
    expect((await bad.response()).status).toBe(400);
    const noHost = new RawClient(f.port);
    noHost.send('POST /fast HTTP/1.1\r\nContent-Length: 1\r\n\r\nb');
    expect((await noHost.response()).status).toBe(400);
    const big = new RawClient(f.port);
    big.send(`POST /fast HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\nContent-Length: 1\r\n\r\nb`);
    expect((await big.response()).status).toBe(431);
    // bare line feeds: no CRLF CRLF will ever come, so the front must not wait for one
    const lf = new RawClient(f.port);
    lf.send('POST /fast HTTP/1.1\nHost: x\nContent-Length: 1\n\nb');
    expect((await lf.response()).status).toBe(400);
    // not even a request line: Node's 400 without waiting for the rest of a head
    const junk = new RawClient(f.port);
    junk.send('HELLO');
    expect((await junk.response()).status).toBe(400);
    for (const c of [bad, noHost, big, lf, junk]) c.socket.destroy();
  });

  it('streams with chunked framing that Node’s HTTP client reads', async () => {
    const f = await start();
    const agent = new http.Agent({ keepAlive: true });
    const get = () =>
      new Promise<{ body: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
        const req = http.request({ port: f.port, host: '127.0.0.1', method: 'POST', path: '/stream', agent }, (r) => {
          let body = '';
          r.on('data', (c) => (body += c));
          r.on('end', () => resolve({ body, headers: r.headers }));
        });
        req.on('error', reject);
        req.end('{}');
      });
    const a = await get();
    expect(a.headers['transfer-encoding']).toBe('chunked');
    expect(a.headers['x-served-by']).toBe('lean');
    expect(a.body).toBe('data: 1\n\ndata: 2\n\ndata: [DONE]\n\n');
    // the same kept-alive socket again
    expect((await get()).body).toBe(a.body);
    expect(f.front.connections.size).toBe(1);
    agent.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(f.closes).toEqual([true, true]);
  });

  it('closes after the answer when the client asks for Connection: close', async () => {
    const f = await start();
    const c = new RawClient(f.port);
    c.send(post('/fast', 'b', 'Connection: close\r\n'));
    const r = await c.response();
    expect(r.headers.connection).toBe('close');
    await c.closed();
    await until(() => f.front.connections.size === 0);
  });

  it('tells the response that its client went away before the answer was out', async () => {
    const f = await start();
    const c = new RawClient(f.port);
    c.send(post('/slow', 'b'));
    await new Promise((r) => setTimeout(r, 50));
    c.socket.destroy();
    await new Promise((r) => setTimeout(r, 400));
    expect(f.closes).toEqual([false]);
    expect(f.front.connections.size).toBe(0);
  });

  it('closes idle connections on closeIdleConnections and lets server.close() finish after the request in flight', async () => {
    const f = await start();
    const idle = new RawClient(f.port);
    idle.send(post('/fast', 'b'));
    await idle.response();
    const busy = new RawClient(f.port);
    busy.send(post('/slow', 'b'));
    await new Promise((r) => setTimeout(r, 50));
    const closed = new Promise((r) => f.server.close(r));
    await idle.closed();
    // the request in flight is answered, with Connection: close once the front is stopping
    f.stopping = true;
    const r = await busy.response();
    expect(r.status).toBe(200);
    expect(r.headers.connection).toBe('close');
    await busy.closed();
    await closed;
    fixture = null;
  });

  it('closes a connection idle past the keep-alive timeout, and answers 408 to a head that never ends', async () => {
    const f = await start();
    f.server.keepAliveTimeout = 500;
    f.server.headersTimeout = 500;
    const idle = new RawClient(f.port);
    idle.send(post('/fast', 'b'));
    await idle.response();
    const partial = new RawClient(f.port);
    partial.send('POST /fast HTTP/1.1\r\nHost: x\r\n');
    const t0 = Date.now();
    await idle.closed();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
    expect((await partial.response()).status).toBe(408);
    await partial.closed();
  });
});

/**
 * The front against Node's server alone, request by request: the same status, and for an answered request the same
 * url, body and header map (the front's parse must be Node's wherever the front serves; everywhere else Node serves).
 */
describe('lean HTTP front parity with Node’s server', () => {
  const servers: http.Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  async function echoServer(withFront: boolean): Promise<number> {
    const echo = (served: string, url: string, headers: object, body: Buffer) =>
      JSON.stringify({ served, url, headers: { ...headers }, body: body.toString('latin1') });
    const server = http.createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => res.end(echo('node', req.url!, req.headers, Buffer.concat(parts))));
    });
    if (withFront) {
      LeanHttpFront.install(server, {
        isRoute: (url) => url === '/fast',
        bodyLimit: 1 << 20,
        handle: (req, res) => res.end(echo('lean', req.url, req.headers, req.body)),
      });
    }
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return (server.address() as AddressInfo).port;
  }

  /** status and echo of one raw request on a fresh connection; 'timeout' when nothing complete comes in 400 ms */
  async function ask(
    port: number,
    raw: Buffer,
  ): Promise<{ status: number | 'timeout'; echo?: { served: string; url: string; headers: object; body: string } }> {
    const c = new RawClient(port);
    c.send(raw);
    try {
      const r = await Promise.race([c.response(), new Promise<null>((res) => setTimeout(() => res(null), 400))]);
      if (!r) return { status: 'timeout' };
      let echo;
      try {
        echo = r.status === 200 ? JSON.parse(r.body) : undefined;
      } catch {
        echo = undefined;
      }
      return { status: r.status, echo };
    } catch {
      return { status: 'timeout' };
    } finally {
      c.socket.destroy();
    }
  }

  const req = (head: string, body = 'b') => Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(body)]);
  const ok = (extra: string, body = 'b') =>
    req(`POST /fast HTTP/1.1\r\nHost: x\r\n${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`, body);
  // [name, request, served by the front?]
  const cases: Array<[string, Buffer, boolean]> = [
    ['a plain request', ok('Authorization: Bearer sk-1\r\n'), true],
    ['values with surrounding spaces and tabs', ok('X-A: \t v 1 \t \r\n'), true],
    ['an empty value', ok('X-Empty:\r\n'), true],
    ['obs-text in a value', ok('X-Latin: caf\xe9\r\n'), true],
    ['names in any case', ok('AUTHORIZATION: Bearer sk-1\r\nx-Custom-HEADER: 1\r\n'), true],
    ['a long value', ok(`X-Long: ${'v'.repeat(8000)}\r\n`), true],
    ['an empty body', ok('', ''), true],
    ['leading zeros in Content-Length', req('POST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 001\r\n\r\n'), true],
    ['Connection: close', ok('Connection: close\r\n'), true],
    ['whitespace before a colon', ok('X-A : 1\r\n'), false],
    ['a folded header line', ok('X-A: 1\r\n  more\r\n'), false],
    ['a signed Content-Length', req('POST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: +1\r\n\r\n'), false],
    [
      'two Content-Length headers',
      req('POST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n'),
      false,
    ],
    [
      'Content-Length with chunked coding',
      req(
        'POST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n',
        '1\r\nb\r\n0\r\n\r\n',
      ),
      false,
    ],
    ['a lower-case method', req('post /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n'), false],
    ['two spaces in the request line', req('POST  /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n'), false],
    ['HTTP/1.2', req('POST /fast HTTP/1.2\r\nHost: x\r\nContent-Length: 1\r\n\r\n'), false],
    ['an absolute URI', req('POST http://x/fast HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n'), false],
    ['a NUL in a value', ok('X-A: a\x00b\r\n'), false],
    ['a DEL in a value', ok('X-A: a\x7fb\r\n'), false],
    ['a bad character in a name', ok('X@A: 1\r\n'), false],
    ['a duplicate header', ok('X-A: 1\r\nx-a: 2\r\n'), false],
    ['an empty line first', req('\r\nPOST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n'), false],
    ['more headers than Node keeps', ok(Array.from({ length: 2001 }, (_, i) => `h${i}:\r\n`).join('')), false],
    [
      'a body shorter than its Content-Length',
      req('POST /fast HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n'),
      false,
    ],
  ];

  it.each(cases)('%s', async (_name, raw, lean) => {
    const [withFront, nodeOnly] = [await echoServer(true), await echoServer(false)];
    const a = await ask(withFront, raw);
    const b = await ask(nodeOnly, raw);
    expect(a.status).toEqual(b.status);
    if (lean) expect(a.echo?.served).toBe('lean');
    if (a.echo || b.echo) {
      const { served: _a, ...restA } = a.echo!;
      const { served: _b, ...restB } = b.echo!;
      expect(restA).toEqual(restB);
    }
  });
});
