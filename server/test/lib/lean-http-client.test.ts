// The lean upstream client against a raw TCP server that scripts each response byte by byte: framing (length,
// chunked, until the close), keep-alive and its limits, the retry of a request whose kept connection was closed,
// timeouts, backpressure, aborts, and what it leaves to undici.
import https from 'node:https';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { LeanHttpClient } from '../../src/lib/lean-http/client.js';
import type { ResponseSink } from '../../src/lib/response-sink.js';
import { UPSTREAM_POOL } from '../../src/lib/undici.js';

interface Received {
  /** the connection's number (0, 1, …) */
  conn: number;
  head: string;
  body: string;
}

/** Answers each complete request with `answer(request, index)`: bytes written in `parts` (with `gapMs` between). */
interface Script {
  answer(r: Received, i: number, socket: net.Socket): { parts: string[]; gapMs?: number; close?: boolean } | null;
}

interface Upstream {
  origin: string;
  received: Received[];
  sockets: net.Socket[];
  close(): Promise<void>;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function upstream(script: Script): Promise<Upstream> {
  const received: Received[] = [];
  const sockets: net.Socket[] = [];
  const server = net.createServer((socket) => {
    const conn = sockets.push(socket) - 1;
    let buf = Buffer.alloc(0);
    socket.on('data', async (d) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.toString('latin1', 0, end);
        const len = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        const r = { conn, head, body: buf.toString('utf8', end + 4, end + 4 + len) };
        buf = buf.subarray(end + 4 + len);
        received.push(r);
        const a = script.answer(r, received.length - 1, socket);
        if (!a) continue;
        for (const p of a.parts) {
          if (socket.destroyed) return;
          socket.write(p);
          if (a.gapMs) await new Promise((res) => setTimeout(res, a.gapMs));
        }
        if (a.close) socket.end();
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const up: Upstream = {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    sockets,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
  cleanups.push(up.close);
  return up;
}

function client(keepAliveTimeout = 30_000): LeanHttpClient {
  const c = new LeanHttpClient({ keepAliveTimeout });
  cleanups.push(() => c.destroy());
  return c;
}

interface Outcome {
  status: number;
  headers: Record<string, string>;
  body: string;
  chunks: number;
  error: (Error & { code?: string }) | null;
  completed: boolean;
}

/** Sends one request and collects what the handler is told, as the relay's UpstreamCall would be. */
function send(
  c: LeanHttpClient,
  origin: string,
  opts: {
    body?: string;
    headers?: Record<string, string>;
    headersTimeout?: number;
    bodyTimeout?: number;
    onData?: (chunk: Buffer, o: Outcome) => boolean;
  } = {},
): { taken: boolean; done: Promise<Outcome>; abort: () => void; resume: () => void } {
  const o: Outcome = { status: 0, headers: {}, body: '', chunks: 0, error: null, completed: false };
  let abort: (err?: Error) => void = () => {};
  let resume = () => {};
  let finish!: () => void;
  const done = new Promise<Outcome>((r) => (finish = () => r(o)));
  const handler: ResponseSink = {
    onStart: (a) => (abort = a),
    onHeaders(status, raw, res) {
      o.status = status;
      resume = res;
      for (let i = 0; i < raw.length; i += 2)
        o.headers[raw[i].toString('latin1').toLowerCase()] = raw[i + 1].toString('latin1');
      return true;
    },
    onData(chunk) {
      o.body += chunk.toString();
      o.chunks++;
      return opts.onData ? opts.onData(chunk, o) : true;
    },
    onEnd() {
      o.completed = true;
      finish();
    },
    onError(err) {
      o.error = err;
      finish();
    },
  };
  const taken = c.dispatch(
    {
      origin,
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { 'content-type': 'application/json', ...opts.headers },
      body: Buffer.from(opts.body ?? '{"a":1}'),
      headersTimeout: opts.headersTimeout,
      bodyTimeout: opts.bodyTimeout,
    },
    handler,
  );
  return { taken, done, abort: () => abort(), resume: () => resume() };
}

const json = (body: string, extra = '') =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
const bytes = (s: string) => s.split('');

describe('lean HTTP client', () => {
  it('sends the request once, with its headers, and reads a Content-Length body delivered a byte at a time', async () => {
    const up = await upstream({ answer: () => ({ parts: bytes(json('{"ok":true}', 'x-extra: 1\r\n')) }) });
    const r = send(client(), up.origin, { body: '{"model":"m"}', headers: { authorization: 'Bearer k' } });
    expect(r.taken).toBe(true);
    const o = await r.done;
    expect(o).toMatchObject({ status: 200, body: '{"ok":true}', completed: true, error: null });
    expect(o.headers).toMatchObject({ 'content-type': 'application/json', 'x-extra': '1' });
    expect(up.received).toHaveLength(1);
    expect(up.received[0].body).toBe('{"model":"m"}');
    expect(up.received[0].head).toMatch(/^POST \/v1\/chat\/completions HTTP\/1\.1\r\n/);
    expect(up.received[0].head).toMatch(/\r\nauthorization: Bearer k\r\n/);
    expect(up.received[0].head).toMatch(new RegExp(`\\r\\nhost: ${up.origin.slice(7)}\\r\\n`));
    expect(up.received[0].head).toMatch(/\r\ncontent-length: 13(\r\n|$)/);
  });

  it('reads chunked bodies as they come (extensions, trailers, byte-at-a-time framing) and keeps the connection', async () => {
    const chunked =
      'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n6;ext=1\r\ndata: \r\n3\r\nabc\r\n0\r\nx-trailer: t\r\n\r\n';
    const up = await upstream({ answer: (_r, i) => ({ parts: i === 0 ? bytes(chunked) : [chunked] }) });
    const c = client();
    const first = await send(c, up.origin).done;
    expect(first).toMatchObject({ status: 200, body: 'data: abc', completed: true, error: null });
    const second = await send(c, up.origin).done;
    expect(second).toMatchObject({ body: 'data: abc', completed: true });
    // both on the one kept connection
    expect(up.received.map((r) => r.conn)).toEqual([0, 0]);
  });

  it('reads a body without length until the close, and then opens a new connection', async () => {
    const up = await upstream({
      answer: () => ({
        parts: ['HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\n', 'part one, ', 'part two'],
        gapMs: 20,
        close: true,
      }),
    });
    const c = client();
    expect(await send(c, up.origin).done).toMatchObject({ body: 'part one, part two', completed: true, error: null });
    expect(await send(c, up.origin).done).toMatchObject({ body: 'part one, part two', completed: true });
    expect(up.received.map((r) => r.conn)).toEqual([0, 1]);
  });

  it('does not keep a connection the server closes (Connection: close, HTTP/1.0) and skips 1xx heads', async () => {
    const up = await upstream({
      answer: (_r, i) => ({
        parts: [
          i === 0
            ? `HTTP/1.1 100 Continue\r\n\r\n${json('{}', 'connection: close\r\n')}`
            : i === 1
              ? 'HTTP/1.0 200 OK\r\ncontent-length: 2\r\n\r\nok'
              : json('[]'),
        ],
      }),
    });
    const c = client();
    expect(await send(c, up.origin).done).toMatchObject({ status: 200, body: '{}', completed: true });
    expect(await send(c, up.origin).done).toMatchObject({ status: 200, body: 'ok', completed: true });
    expect(await send(c, up.origin).done).toMatchObject({ body: '[]', completed: true });
    expect(up.received.map((r) => r.conn)).toEqual([0, 1, 2]);
  });

  it("keeps a connection no longer than the server's Keep-Alive hint (less a second) or its own timeout", async () => {
    const up = await upstream({ answer: () => ({ parts: [json('{}', 'keep-alive: timeout=1\r\n')] }) });
    const c = client();
    await send(c, up.origin).done;
    await send(c, up.origin).done;
    expect(up.received.map((r) => r.conn)).toEqual([0, 1]); // a 1-s hint leaves nothing to keep

    const up2 = await upstream({ answer: () => ({ parts: [json('{}')] }) });
    const short = client(100);
    await send(short, up2.origin).done;
    await send(short, up2.origin).done;
    await new Promise((r) => setTimeout(r, 400));
    await send(short, up2.origin).done;
    expect(up2.received.map((r) => r.conn)).toEqual([0, 0, 1]);
  });

  it('sends a request again, once, when its kept connection closes before any answer; not when an answer began', async () => {
    // the server drops the kept connection without answering the second request (it had timed it out)
    const up = await upstream({
      answer: (_r, i, socket) => {
        if (i === 1) {
          socket.destroy();
          return null;
        }
        return { parts: [json(`{"n":${i}}`)] };
      },
    });
    const c = client();
    expect((await send(c, up.origin).done).body).toBe('{"n":0}');
    const again = await send(c, up.origin).done;
    expect(again).toMatchObject({ body: '{"n":2}', completed: true, error: null });
    expect(up.received.map((r) => r.conn)).toEqual([0, 0, 1]);

    // an answer cut after its first bytes is an error, never sent twice
    const cut = await upstream({
      answer: (_r, i, socket) => {
        if (i === 1) {
          socket.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc');
          setTimeout(() => socket.destroy(), 20);
          return null;
        }
        return { parts: [json('{}')] };
      },
    });
    const c2 = client();
    await send(c2, cut.origin).done;
    const failed = await send(c2, cut.origin).done;
    expect(failed.completed).toBe(false);
    expect(failed.body).toBe('abc');
    expect(failed.error?.code).toBe('UND_ERR_SOCKET');
    expect(cut.received).toHaveLength(2);
  });

  it('fails a connection refused, malformed responses, and oversized heads with an error and no retry', async () => {
    const c = client();
    const refused = await send(c, 'http://127.0.0.1:1').done;
    expect(refused.error).toBeTruthy();
    expect(refused.status).toBe(0);

    for (const bad of [
      'HTTP/2 200 OK\r\n\r\n',
      'HTTP/1.1 200 OK\r\nbad header\r\n\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
      `HTTP/1.1 200 OK\r\nx: ${'a'.repeat(70_000)}\r\n\r\n`,
    ]) {
      const up = await upstream({ answer: () => ({ parts: [bad] }) });
      const o = await send(c, up.origin).done;
      expect(o.completed).toBe(false);
      expect(o.error).toBeTruthy();
      expect(up.received).toHaveLength(1);
    }
  });

  it('times out a response head (headersTimeout) and a silent body (bodyTimeout)', async () => {
    const up = await upstream({
      answer: (_r, i) =>
        i === 0 ? null : { parts: ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n', '2\r\nhi\r\n'] },
    });
    const c = client();
    const t0 = Date.now();
    const head = await send(c, up.origin, { headersTimeout: 300 }).done;
    expect(head.error?.code).toBe('UND_ERR_HEADERS_TIMEOUT');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    const body = await send(c, up.origin, { bodyTimeout: 300 }).done;
    expect(body).toMatchObject({ status: 200, body: 'hi', completed: false });
    expect(body.error?.code).toBe('UND_ERR_BODY_TIMEOUT');
  });

  it('stops reading while the handler says so and reads on when resumed', async () => {
    const up = await upstream({
      answer: () => ({
        parts: [
          'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n',
          '1\r\na\r\n',
          '1\r\nb\r\n',
          '1\r\nc\r\n0\r\n\r\n',
        ],
        gapMs: 30,
      }),
    });
    let paused = false;
    const r = send(client(), up.origin, {
      onData: (chunk) => {
        if (chunk.toString() === 'a') paused = true;
        return !paused;
      },
    });
    await new Promise((res) => setTimeout(res, 200));
    // everything was sent meanwhile, but only the first chunk was delivered
    expect(paused).toBe(true);
    const seen = await Promise.race([
      r.done.then((o) => o.body),
      new Promise((res) => setTimeout(() => res('pending'), 10)),
    ]);
    expect(seen).toBe('pending');
    paused = false;
    r.resume();
    expect(await r.done).toMatchObject({ body: 'abc', completed: true });
  });

  it('aborts a request in flight: the handler gets the error and the connection is closed', async () => {
    const up = await upstream({
      answer: () => ({ parts: ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n', '1\r\na\r\n'] }),
    });
    const r = send(client(), up.origin);
    await new Promise((res) => setTimeout(res, 50));
    r.abort();
    const o = await r.done;
    expect(o.body).toBe('a');
    expect(o.error?.code).toBe('UND_ERR_ABORTED');
    await new Promise((res) => setTimeout(res, 50));
    expect(up.sockets[0].destroyed || up.sockets[0].readableEnded).toBe(true);
  });

  it('speaks TLS to https: origins, verifies the certificate, and keeps the connection', async () => {
    const fixture = (f: string) => readFileSync(new URL(`../fixtures/tls/${f}`, import.meta.url));
    const cert = fixture('localhost-cert.pem');
    const server = https.createServer({ key: fixture('localhost-key.pem'), cert }, (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => res.end(JSON.stringify({ body, host: req.headers.host, port: req.socket.remotePort })));
    });
    await new Promise<void>((r) => server.listen(0, 'localhost', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    cleanups.push(() => server.closeAllConnections());
    const origin = `https://localhost:${(server.address() as AddressInfo).port}`;
    const trusting = new LeanHttpClient({ keepAliveTimeout: 30_000, tls: { ca: cert } });
    cleanups.push(() => trusting.destroy());
    const a = await send(trusting, origin, { body: '{"n":1}' }).done;
    const b = await send(trusting, origin, { body: '{"n":2}' }).done;
    expect(a).toMatchObject({ status: 200, completed: true });
    expect(JSON.parse(a.body)).toMatchObject({ body: '{"n":1}', host: origin.slice(8) });
    expect(JSON.parse(b.body).body).toBe('{"n":2}');
    expect(JSON.parse(b.body).port).toBe(JSON.parse(a.body).port);
    // without the CA the self-signed certificate is refused, as Node's defaults do
    const refused = await send(client(), origin).done;
    expect(refused.completed).toBe(false);
    expect(refused.error?.message).toMatch(/self[- ]signed/);
  });

  it('leaves to undici what it does not take, untouched', async () => {
    const up = await upstream({ answer: () => ({ parts: [json('{}')] }) });
    const c = client();
    expect(send(c, up.origin, { headers: { 'x-bad': 'a\r\nb' } }).taken).toBe(false);
    expect(send(c, up.origin, { headers: { expect: '100-continue' } }).taken).toBe(false);
    expect(send(c, up.origin, { headers: { 'transfer-encoding': 'chunked' } }).taken).toBe(false);
    expect(send(c, 'ftp://127.0.0.1:21').taken).toBe(false);
    expect(send(c, 'http://user:pw@127.0.0.1:80').taken).toBe(false);
    const h: ResponseSink = { onStart() {}, onHeaders() {}, onData: () => true, onEnd() {}, onError() {} };
    expect(c.dispatch({ origin: up.origin, path: '/a b', method: 'POST', body: Buffer.alloc(0) }, h)).toBe(false);
    expect(
      c.dispatch({ origin: up.origin, path: '/a', method: 'POST', headers: ['a', 'b'], body: Buffer.alloc(0) }, h),
    ).toBe(false);
    expect(c.dispatch({ origin: up.origin, path: '/a', method: 'POST', body: { stream: true } }, h)).toBe(false);
    await new Promise((res) => setTimeout(res, 30));
    expect(up.received).toHaveLength(0);
  });
});

describe('lean HTTP client: connections per origin', () => {
  it('opens at most `connections` per origin; the others wait in order and go out on the connections freed', async () => {
    const held: Array<{ socket: net.Socket; i: number }> = [];
    const up = await upstream({
      answer: (_r, i, socket) => {
        held.push({ socket, i });
        return null;
      },
    });
    const c = new LeanHttpClient({ keepAliveTimeout: 30_000, connections: 2 });
    cleanups.push(() => c.destroy());
    const sent = [0, 1, 2, 3, 4].map((n) => send(c, up.origin, { body: `{"n":${n}}` }));
    expect(sent.every((r) => r.taken)).toBe(true);
    // an aborted waiting request leaves the queue without going out
    sent[3].abort();
    expect((await sent[3].done).error?.message).toBe('Request aborted');
    await waitFor(() => held.length === 2);
    await new Promise((r) => setTimeout(r, 100));
    expect(up.sockets).toHaveLength(2);
    expect(up.received.map((r) => r.body)).toEqual(['{"n":0}', '{"n":1}']);
    // each answer frees its connection for the next waiting request, oldest first
    for (let k = 0; k < 3; k++) {
      const h = held[k];
      h.socket.write(json(`{"answer":${k}}`));
      await waitFor(() => held.length === Math.min(k + 3, 4));
    }
    held[3].socket.write(json('{"answer":3}'));
    const outcomes = await Promise.all(sent.map((r) => r.done));
    expect(outcomes.map((o) => o.completed)).toEqual([true, true, true, false, true]);
    expect(up.sockets).toHaveLength(2);
    expect(up.received.map((r) => r.body)).toEqual(['{"n":0}', '{"n":1}', '{"n":2}', '{"n":4}']);
  });

  it('defaults to the cap of the undici pool', () => {
    expect(client().connections).toBe(UPSTREAM_POOL.connections);
  });

  it('forgets an origin once its last connection has closed', async () => {
    const c = client(30_000);
    const ups = await Promise.all(
      [0, 1, 2].map(() => upstream({ answer: () => ({ parts: [json('{}', 'connection: close\r\n')] }) })),
    );
    for (const up of ups) expect(await send(c, up.origin).done).toMatchObject({ completed: true });
    await waitFor(() => c.originCount === 0);
    // kept connections keep their origin until they close
    const kept = await upstream({ answer: () => ({ parts: [json('{}')] }) });
    expect(await send(c, kept.origin).done).toMatchObject({ completed: true });
    expect(c.originCount).toBe(1);
    for (const s of kept.sockets) s.destroy();
    await waitFor(() => c.originCount === 0);
    // and a forgotten origin is served again as a new one
    expect(await send(c, kept.origin).done).toMatchObject({ body: '{}', completed: true });
  });
});

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
