// The websocket transport (relay/transport/websocket.ts) against a real websocket server on 127.0.0.1: frames both
// ways, a refused handshake, the channel's CONNECT or SOCKS5 proxy, the handshake and idle timeouts, the client's departure,
// the SSRF guard, the per-origin connection cap; the ws-json framing; and a test provider streaming a chat answer over
// a websocket to an HTTP client, in OpenAI's and in Anthropic's format.
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ForbiddenAddressError, SafeFetch } from '../../src/lib/safe-fetch.js';
import { proxyOf } from '../../src/relay/channel-setting.js';
import { wsJsonFraming } from '../../src/relay/stream/ws-json.js';
import {
  UpgradeRefusedError,
  WebSocketTransport,
  type UpstreamSocket,
  type WsFrame,
} from '../../src/relay/transport/websocket.js';
import { startConnectProxy, type ConnectProxy } from '../helpers/connect-proxy.js';
import { startSocks5Proxy } from '../helpers/socks5-proxy.js';
import { MockWebSocketServer, type MockConnection } from '../helpers/mock-websocket.js';
import { streamChatOverWebsocket } from '../helpers/ws-chat-provider.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function mock(handler?: Parameters<typeof MockWebSocketServer.start>[0]): Promise<MockWebSocketServer> {
  const m = await MockWebSocketServer.start(handler);
  cleanups.push(() => m.close());
  return m;
}

const transport = (connections = 1024, guard: SafeFetch | null = null) =>
  new WebSocketTransport({ connections, guard });

const open = (t: WebSocketTransport, url: string, more: Partial<Parameters<WebSocketTransport['open']>[0]> = {}) =>
  t.open({ url, headers: { authorization: 'Bearer sk-ws' }, headersTimeout: 5_000, bodyTimeout: 5_000, ...more });

/** The next frame the socket receives (the socket's iterator, read one step). */
async function nextFrame(it: AsyncIterator<WsFrame>): Promise<WsFrame> {
  const r = await it.next();
  if (r.done) throw new Error('socket ended');
  return r.value;
}

/** What the socket's reading side ends with: null for a normal end, else the error. */
async function endOf(socket: UpstreamSocket): Promise<Error | null> {
  try {
    for await (const _ of socket) void _;
    return null;
  } catch (err) {
    return err as Error;
  }
}

/** A TCP server that accepts and never answers (a handshake that never completes). */
async function silentServer(): Promise<{ port: number; accepted: Socket[]; closedSockets: () => number }> {
  const accepted: Socket[] = [];
  let closed = 0;
  const server = net.createServer((s) => {
    accepted.push(s);
    // read (and drop) the handshake: a socket whose bytes are never read never sees its peer's end
    s.resume();
    s.on('close', () => closed++);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  cleanups.push(async () => {
    for (const s of accepted) s.destroy();
    await new Promise((r) => server.close(r));
  });
  return { port: (server.address() as AddressInfo).port, accepted, closedSockets: () => closed };
}

/** the CONNECT proxy, closed after the test */
async function connectProxy(): Promise<ConnectProxy> {
  const proxy = await startConnectProxy();
  cleanups.push(proxy.close);
  return proxy;
}

describe('websocket transport', () => {
  it('sends text and binary frames and receives them, with the request headers on the handshake', async () => {
    const m = await mock((c) => {
      c.ws.on('message', (data: Buffer, binary: boolean) =>
        c.ws.send(binary ? Buffer.from([...data].reverse()) : `echo:${data}`),
      );
    });
    const socket = await open(transport(), `${m.url}/v1/realtime?model=x`);
    const it = socket[Symbol.asyncIterator]();
    await socket.send('hello');
    expect(await nextFrame(it)).toEqual({ data: Buffer.from('echo:hello'), binary: false });
    await socket.send(Buffer.from([1, 2, 3]));
    expect(await nextFrame(it)).toEqual({ data: Buffer.from([3, 2, 1]), binary: true });

    const c = await m.connection(1);
    expect(c.path).toBe('/v1/realtime?model=x');
    expect(c.headers.authorization).toBe('Bearer sk-ws');
    expect(c.received.map((f) => f.binary)).toEqual([false, true]);

    socket.close();
    expect(await c.closed).toBe(1000);
    expect(await it.next()).toEqual({ done: true, value: undefined });
  });

  it('keeps frames that arrive before anyone reads them', async () => {
    const m = await mock((c) => {
      c.ws.send('{"n":1}');
      c.ws.send('{"n":2}');
      c.ws.close(1000);
    });
    const socket = await open(transport(), m.url);
    await socket.closed;
    const got: string[] = [];
    for await (const f of socket) got.push(f.data.toString());
    expect(got).toEqual(['{"n":1}', '{"n":2}']);
  });

  it('ends the reading side with an error when the upstream closes abnormally', async () => {
    const m = await mock((c) => c.ws.close(1011, 'overloaded'));
    const socket = await open(transport(), m.url);
    const err = await endOf(socket);
    expect(err?.message).toBe('upstream websocket closed with code 1011: overloaded');
  });

  it('reports a refused handshake with its status and body for the error parser', async () => {
    const m = await mock();
    m.refuse = { status: 401, body: '{"error":{"message":"bad key"}}' };
    const err = await open(transport(), m.url).catch((e: Error) => e);
    expect(err).toBeInstanceOf(UpgradeRefusedError);
    expect((err as UpgradeRefusedError).status).toBe(401);
    expect((err as UpgradeRefusedError).body.toString()).toBe('{"error":{"message":"bad key"}}');
  });

  it('goes through the channel proxy (HTTP CONNECT), its credentials sent to the proxy only', async () => {
    const m = await mock((c) => c.ws.on('message', (d: Buffer) => c.ws.send(`echo:${d}`)));
    const proxy = await connectProxy();
    const withAuth = `http://user:p%40ss@127.0.0.1:${proxy.port}`;
    // the same setting the HTTP transport reads (channel-setting.ts transportFor)
    const channelProxy = proxyOf({ setting: { proxy: ` ${withAuth} ` } } as never);
    expect(channelProxy).toBe(withAuth);
    const socket = await open(transport(), m.url, { proxy: channelProxy });
    const it = socket[Symbol.asyncIterator]();
    await socket.send('via proxy');
    expect((await nextFrame(it)).data.toString()).toBe('echo:via proxy');

    expect(proxy.tunnels).toEqual([
      { target: `127.0.0.1:${m.port}`, auth: `Basic ${Buffer.from('user:p@ss').toString('base64')}` },
    ]);
    const c = await m.connection(1);
    expect(c.headers['proxy-authorization']).toBeUndefined();
    expect(c.headers.authorization).toBe('Bearer sk-ws');
    socket.close();
    await c.closed;
  });

  it('goes through a SOCKS5 proxy, its username and password given to the proxy only', async () => {
    const m = await mock((c) => c.ws.on('message', (d: Buffer) => c.ws.send(`echo:${d}`)));
    const proxy = await startSocks5Proxy({ user: 'user', password: 'p@ss' });
    cleanups.push(proxy.close);
    const channelProxy = proxyOf({ setting: { proxy: `socks5://user:p%40ss@127.0.0.1:${proxy.port}` } } as never);
    const socket = await open(transport(), m.url, { proxy: channelProxy });
    const it = socket[Symbol.asyncIterator]();
    await socket.send('via socks');
    expect((await nextFrame(it)).data.toString()).toBe('echo:via socks');

    expect(proxy.tunnels).toEqual([{ target: `127.0.0.1:${m.port}`, user: 'user', password: 'p@ss' }]);
    const c = await m.connection(1);
    expect(c.headers.authorization).toBe('Bearer sk-ws');
    socket.close();
    await c.closed;
  });

  it('fails, never going direct, when the SOCKS5 proxy refuses its credentials', async () => {
    const m = await mock();
    const proxy = await startSocks5Proxy({ user: 'user', password: 'right' });
    cleanups.push(proxy.close);
    const err = await open(transport(), m.url, { proxy: `socks5://user:wrong@127.0.0.1:${proxy.port}` }).catch(
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(proxy.tunnels).toEqual([]);
    expect(m.tcpConnections).toBe(0);
  });

  it('counts the SOCKS5 handshake in headersTimeout: a proxy that never answers is given up', async () => {
    const m = await mock();
    const silent = await silentServer();
    const err = await open(transport(), m.url, {
      proxy: `socks5://127.0.0.1:${silent.port}`,
      headersTimeout: 150,
    }).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT' });
    expect(silent.accepted).toHaveLength(1);
    // the proxy connection is closed with the handshake
    await new Promise<void>((r) => (silent.accepted[0].destroyed ? r() : silent.accepted[0].once('close', () => r())));
    expect(m.tcpConnections).toBe(0);
  });

  it('refuses a proxy scheme it cannot tunnel with a clear error instead of going direct', async () => {
    const m = await mock();
    const err = await open(transport(), m.url, { proxy: 'socks4://127.0.0.1:1080' }).catch((e: Error) => e);
    expect((err as Error).message).toBe('websockets go through http(s) or socks5 proxies only, not socks4:');
    expect(m.tcpConnections).toBe(0);
  });

  it('gives up a handshake that takes longer than headersTimeout, and closes its connection', async () => {
    const silent = await silentServer();
    const t = transport();
    const started = Date.now();
    const err = await open(t, `ws://127.0.0.1:${silent.port}`, { headersTimeout: 150 }).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT', message: 'Headers Timeout Error' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(silent.accepted).toHaveLength(1);
    await new Promise<void>((r) => (silent.accepted[0].destroyed ? r() : silent.accepted[0].once('close', () => r())));
    expect(silent.closedSockets()).toBe(1);
    expect(t.active(`ws://127.0.0.1:${silent.port}`)).toBe(0);
  });

  it('counts the proxy tunnel in headersTimeout: a proxy that never answers CONNECT is given up', async () => {
    const m = await mock();
    const stalled: Socket[] = [];
    const server = http.createServer();
    server.on('connect', (_req: http.IncomingMessage, client: Socket) => {
      stalled.push(client);
      // read (and drop) what comes: a socket whose bytes are never read never sees its peer's end
      client.resume();
    });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    cleanups.push(async () => {
      for (const s of stalled) s.destroy();
      await new Promise((r) => server.close(r));
    });
    const proxy = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const err = await open(transport(), m.url, { proxy, headersTimeout: 150 }).catch((e: Error) => e);
    expect(err).toMatchObject({ code: 'UND_ERR_HEADERS_TIMEOUT' });
    expect(stalled).toHaveLength(1);
    // the tunnel's request is aborted with the handshake: the proxy sees its client's end
    await new Promise<void>((r) => (stalled[0].readableEnded ? r() : stalled[0].once('end', () => r())));
    expect(m.tcpConnections).toBe(0);
  });

  it('keeps many early frames in order, reading again once a reader comes', async () => {
    let allSent!: () => void;
    const sent = new Promise<void>((r) => (allSent = r));
    const m = await mock((c) => {
      for (let i = 0; i < 199; i++) c.ws.send(`{"n":${i}}`);
      c.ws.send('{"n":199}', () => allSent());
      c.ws.close(1000);
    });
    const socket = await open(transport(), m.url);
    await sent;
    const got: number[] = [];
    for await (const f of socket) got.push(JSON.parse(f.data.toString()).n);
    expect(got).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it('gives up an upstream silent for longer than bodyTimeout, and closes the socket', async () => {
    const m = await mock((c) => c.ws.send('{"first":true}'));
    const socket = await open(transport(), m.url, { bodyTimeout: 150 });
    const it = socket[Symbol.asyncIterator]();
    expect((await nextFrame(it)).data.toString()).toBe('{"first":true}');
    await expect(it.next()).rejects.toMatchObject({ code: 'UND_ERR_BODY_TIMEOUT', message: 'Body Timeout Error' });
    expect(await (await m.connection(1)).closed).toBe(1006);
  });

  it('closes the upstream socket when the client departs', async () => {
    const m = await mock((c) => c.ws.send('{"delta":"a"}'));
    const departure = new AbortController();
    const socket = await open(transport(), m.url, { signal: departure.signal });
    const it = socket[Symbol.asyncIterator]();
    await nextFrame(it);
    departure.abort();
    await expect(it.next()).rejects.toMatchObject({ code: 'ABORT_ERR' });
    const c = await m.connection(1);
    expect(await c.closed).toBe(1006);
  });

  it('does not open a socket for a client that departed while it waited', async () => {
    const m = await mock();
    const t = transport(1);
    const first = await open(t, m.url);
    const departure = new AbortController();
    const waiting = open(t, m.url, { signal: departure.signal });
    departure.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'ABORT_ERR' });
    first.close();
    await first.closed;
    expect(m.tcpConnections).toBe(1);
    expect(t.active(m.url)).toBe(0);
  });

  it('opens at most `connections` sockets per origin; the next opens when one closes', async () => {
    const m = await mock((c) => c.ws.on('message', (d: Buffer) => c.ws.send(d)));
    const t = transport(1);
    const first = await open(t, m.url);
    let secondOpened = false;
    const second = open(t, m.url).then((s) => {
      secondOpened = true;
      return s;
    });
    // a round trip on the first socket: the second has had every chance to connect by then
    const it = first[Symbol.asyncIterator]();
    await first.send('ping');
    await nextFrame(it);
    expect(secondOpened).toBe(false);
    expect(m.tcpConnections).toBe(1);
    expect(t.active(m.url)).toBe(1);

    first.close();
    const s2 = await second;
    expect(m.connections).toHaveLength(2);
    expect(m.maxOpen).toBe(1);
    s2.close();
    await s2.closed;
    expect(t.active(m.url)).toBe(0);
  });

  it('drops every socket when the gateway stops, and opens no new one', async () => {
    const m = await mock();
    const t = transport();
    const socket = await open(t, m.url);
    const ended = endOf(socket);
    await t.close();
    expect(await ended).toMatchObject({ message: 'the gateway is stopping' });
    expect(await (await m.connection(1)).closed).toBe(1006);
    await expect(open(t, m.url)).rejects.toMatchObject({ message: 'the websocket transport is closed' });
    expect(m.tcpConnections).toBe(1);
  });

  describe('with the SSRF guard on', () => {
    it('refuses a loopback address before connecting', async () => {
      const m = await mock();
      const err = await open(transport(1024, new SafeFetch({})), m.url).catch((e: Error) => e);
      expect(err).toBeInstanceOf(ForbiddenAddressError);
      expect(m.tcpConnections).toBe(0);
    });

    it('refuses a name that resolves to a private address, through a proxy too', async () => {
      const m = await mock();
      const proxy = await connectProxy();
      const guard = new SafeFetch({ resolve: async () => ['10.0.0.7'] });
      for (const via of [null, proxy.url]) {
        const err = await open(transport(1024, guard), `ws://upstream.example:${m.port}`, { proxy: via }).catch(
          (e: Error) => e,
        );
        expect(err).toBeInstanceOf(ForbiddenAddressError);
      }
      expect(proxy.tunnels).toEqual([]);
      expect(m.tcpConnections).toBe(0);
    });

    it('connects, to the checked address, when the test allowance treats the listener as public', async () => {
      const m = await mock((c) => c.ws.send('{"ok":true}'));
      const guard = new SafeFetch({
        resolve: async () => ['127.0.0.1'],
        treatAsPublic: (address, port) => address === '127.0.0.1' && port === m.port,
      });
      const socket = await open(transport(1024, guard), `ws://upstream.example:${m.port}/x`);
      const it = socket[Symbol.asyncIterator]();
      expect((await nextFrame(it)).data.toString()).toBe('{"ok":true}');
      expect((await m.connection(1)).headers.host).toBe(`upstream.example:${m.port}`);
      socket.close();
      await socket.closed;
    });
  });
});

describe('ws-json framing', () => {
  it('makes one event of each text frame, skips empty ones, refuses what is not JSON', () => {
    const f = wsJsonFraming();
    expect(f.push(Buffer.from('{"type":"delta","text":"é"}'))).toEqual([{ data: '{"type":"delta","text":"é"}' }]);
    expect(f.push(Buffer.from('  \n'))).toEqual([]);
    expect(f.push(Buffer.from('[1,2]'))).toEqual([{ data: '[1,2]' }]);
    expect(() => f.push(Buffer.from('data: {}'))).toThrow('upstream websocket frame is not JSON');
    expect(f.end()).toEqual([]);
  });
});

describe('a chat provider over a websocket (test provider)', () => {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: Record<string, number>) =>
    JSON.stringify({
      id: 'chatcmpl-up',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'ws-model',
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...(usage ? { usage } : {}),
    });

  /** the upstream: reads the request frame, answers "Hello there" in three chunks, then closes normally */
  const answering = (c: MockConnection) =>
    c.nextFrame().then(() => {
      c.ws.send(chunk({ role: 'assistant', content: 'Hello' }));
      c.ws.send(chunk({ content: ' there' }));
      c.ws.send(chunk({}, 'stop', { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }));
      c.ws.close(1000);
    });

  /** An HTTP server whose one route runs the provider, and the answer a client reads from it. */
  async function relay(run: (res: http.ServerResponse, signal: AbortSignal) => Promise<unknown>): Promise<string> {
    const server = http.createServer((req, res) => {
      const departure = new AbortController();
      res.once('close', () => departure.abort());
      void run(res, departure.signal).catch((err: Error) => res.writeHead(502).end(err.message));
    });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST' });
    return res.text();
  }

  it('streams the answer to an OpenAI client, with the request sent as a frame and the usage counted', async () => {
    const m = await mock(answering);
    let result: Awaited<ReturnType<typeof streamChatOverWebsocket>> | undefined;
    const text = await relay(async (res, signal) => {
      result = await streamChatOverWebsocket({
        transport: transport(),
        url: `${m.url}/v1/chat`,
        apiKey: 'sk-upstream',
        clientFormat: 'openai',
        body: { model: 'gpt-x', stream: true, messages: [{ role: 'user', content: 'hi' }] },
        model: 'ws-model',
        res,
        signal,
      });
    });
    const events = text
      .split('\n\n')
      .filter(Boolean)
      .map((e) => e.replace(/^data: /, ''));
    expect(events.at(-1)).toBe('[DONE]');
    const parsed = events.slice(0, -1).map((e) => JSON.parse(e));
    expect(parsed.map((e) => e.choices[0]?.delta?.content ?? '').join('')).toBe('Hello there');
    expect(parsed.at(-1).usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });

    const c = await m.connection(1);
    expect(c.headers.authorization).toBe('Bearer sk-upstream');
    const sent = JSON.parse(c.received[0].data.toString());
    expect(sent).toMatchObject({ model: 'ws-model', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(result).toMatchObject({ started: true, clientGone: false, error: null });
    expect(result!.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 2 });
  });

  it('closes the upstream socket when the HTTP client departs mid-stream', async () => {
    const m = await mock((c) => c.nextFrame().then(() => c.ws.send(chunk({ role: 'assistant', content: 'Hel' }))));
    let result: Awaited<ReturnType<typeof streamChatOverWebsocket>> | undefined;
    const settled = new Promise<void>((resolve) => {
      const server = http.createServer((_req, res) => {
        const departure = new AbortController();
        res.once('close', () => departure.abort());
        void streamChatOverWebsocket({
          transport: transport(),
          url: m.url,
          apiKey: 'sk-upstream',
          clientFormat: 'openai',
          body: { model: 'gpt-x', stream: true, messages: [{ role: 'user', content: 'hi' }] },
          model: 'ws-model',
          res,
          signal: departure.signal,
        }).then((r) => {
          result = r;
          resolve();
        });
      });
      server.listen(0, '127.0.0.1', () => {
        const port = (server.address() as AddressInfo).port;
        const client = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/' }, (res) => {
          // the first chunk reached the client: it leaves
          res.once('data', () => client.destroy());
        });
        client.on('error', () => undefined);
        client.end();
      });
      cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
    });
    const c = await m.connection(1);
    expect(await c.closed).toBe(1006);
    await settled;
    expect(result).toMatchObject({ started: true, clientGone: true });
  });

  it('streams the same upstream to an Anthropic client in its own events', async () => {
    const m = await mock(answering);
    const text = await relay((res, signal) =>
      streamChatOverWebsocket({
        transport: transport(),
        url: m.url,
        apiKey: 'sk-upstream',
        clientFormat: 'anthropic',
        body: { model: 'claude-x', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] },
        model: 'ws-model',
        res,
        signal,
      }),
    );
    const names = [...text.matchAll(/^event: (\S+)/gm)].map((x) => x[1]);
    expect(names[0]).toBe('message_start');
    expect(names.at(-1)).toBe('message_stop');
    const deltas = [...text.matchAll(/"text_delta","text":"([^"]*)"/g)].map((x) => x[1]).join('');
    expect(deltas).toBe('Hello there');
  });
});
