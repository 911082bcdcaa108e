// Memory an anonymous client can make the gateway spend. A caller is authenticated from the request's head before a
// body byte is read (relay: the token; console: session or access token); routes anyone may call read at most 64 KB;
// gzip bodies are inflated only for an authenticated caller and only up to the body limit. Measured on a real process:
// gzip bombs (60 KB that inflate to 60 MB) and 60 MB plain bodies, 20 at a time, raise its RSS by less than one body.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { once } from 'node:events';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { spawnGateway, type GatewayProcess } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, setOptions } from './fixtures.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { setupAndLoginRoot } from '../console/fixtures.js';

const MB = 1024 * 1024;
const BOMB = gzipSync(Buffer.alloc(60 * MB, 0x20), { level: 9 });
const LARGE = Buffer.alloc(60 * MB, 0x20);

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * Status of one request, sent as a plain HTTP/1.1 client that keeps reading while it writes (curl, browsers): the
 * answer counts as soon as it arrives, even while the body is still being sent; 0 when the connection ended without
 * one. (undici's request gives up on an answer that arrives before the whole body is written.)
 */
function post(url: string, body: Buffer, headers: Record<string, string>, method = 'POST'): Promise<number> {
  const { hostname, port, pathname, search } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let received = '';
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const m = /^HTTP\/1\.1 (\d{3}) /.exec(received);
      resolve(m ? Number(m[1]) : 0);
    };
    const timer = setTimeout(settle, 60_000);
    socket.on('data', (c: Buffer) => {
      received += c.toString('latin1');
      if (received.includes('\r\n\r\n')) settle();
    });
    socket.on('error', () => undefined); // a reset once the answer is in: 'close' settles
    socket.on('close', settle);
    socket.on('connect', () => {
      const all = {
        host: 'gateway',
        'content-type': 'application/json',
        'content-length': String(body.length),
        ...headers,
      };
      const head = Object.entries(all)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.write(`${method} ${pathname}${search} HTTP/1.1\r\n${head}\r\n`);
      socket.write(body);
    });
  });
}

const LEAN_ROUTE = '/v1/chat/completions';

/**
 * Every request got `status`. Node's server (every route but the lean front's) answers a large body it will not read
 * with `Connection: close` and closes at once, as Fastify does for its own 413: a client still sending may then see
 * the connection reset before it reads the answer (0). The lean front keeps the connection open, unread, for a moment
 * after the answer, so its answers always arrive.
 */
function refused(statuses: number[], status: number, mayReset: boolean): boolean {
  return statuses.every((s) => s === status || (mayReset && s === 0));
}

// Linux only: the process's memory is read from /proc, which other systems lack
describe.skipIf(process.platform !== 'linux')('memory spent on anonymous requests (real process)', () => {
  let database: TestDatabase;
  let gw: GatewayProcess;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    // the login rate limit would answer most of them 429 before their size is looked at
    gw = await spawnGateway(database, { CRITICAL_RATE_LIMIT_ENABLE: 'false' });
  });
  afterAll(async () => {
    if (gw && gw.child.exitCode === null) {
      gw.child.kill('SIGTERM');
      await once(gw.child, 'exit');
    }
    await database?.drop();
  });

  it('answers 401, 413 (or 501) to gzip bombs and 60 MB bodies without reading them into memory', async () => {
    expect(BOMB.length).toBeLessThan(64 * 1024);
    const pid = gw.child.pid!;
    // routes that need a caller: the relay's lean front, its Fastify routes, the playground, console routes
    const needCaller = [
      '/v1/chat/completions',
      '/v1/chat/completions?via=fastify',
      '/v1/moderations',
      '/pg/chat/completions',
      '/api/token/',
      '/api/option/',
    ];
    // routes anyone may call, and a path that does not exist
    const anonymous = [
      '/api/user/login',
      '/api/user/register',
      '/api/setup',
      '/api/user/epay/notify',
      '/api/no-such-route',
    ];
    // relay paths the gateway does not serve: 501 from the head
    const unserved = ['/v1/files', '/v1/images/variations'];
    const method = (path: string) => (path === '/api/option/' ? 'PUT' : 'POST');
    // a forged relay key; no console credentials (an unknown access token is answered 200 success:false, as new-api)
    const credentials = (path: string): Record<string, string> =>
      path.startsWith('/v1/') ? { authorization: 'Bearer sk-forged' } : {};
    // the most any one wave of 20 raised the process's memory above where that wave began: reading (or inflating) a
    // single body would add 60 MB; what the waves leave behind is garbage V8 collects when it chooses, so the growth
    // summed over all waves depends on when it did and is bounded only loosely below
    let worstWave = 0;
    let peak = 0;
    const wave = async (path: string, body: Buffer, headers: Record<string, string>) => {
      const start = rssOf(pid);
      peak = start;
      const statuses = await Promise.all(
        Array.from({ length: 20 }, () => post(gw.url + path, body, { ...credentials(path), ...headers }, method(path))),
      );
      worstWave = Math.max(worstWave, Math.max(peak, rssOf(pid)) - start);
      return statuses;
    };

    // the same requests with small bodies first: lazy initialisation and connection handling are not what is measured
    for (const path of [...needCaller, ...anonymous, ...unserved]) await wave(path, Buffer.from('{}'), {});
    await new Promise((r) => setTimeout(r, 500));
    const before = rssOf(pid);
    worstWave = 0;
    let highest = before;
    const sampler = setInterval(() => {
      const rss = rssOf(pid);
      peak = Math.max(peak, rss);
      highest = Math.max(highest, rss);
    }, 10);
    const unexpected: Array<[string, number[]]> = [];
    try {
      for (const path of needCaller) {
        for (const [what, body, headers] of [
          ['gzip bomb', BOMB, { 'content-encoding': 'gzip' }],
          ['60 MB', LARGE, {}],
        ] as const) {
          const statuses = await wave(path, body, headers);
          if (!refused(statuses, 401, body === LARGE && path !== LEAN_ROUTE))
            unexpected.push([`${what} ${path}`, statuses]);
        }
      }
      for (const path of anonymous) {
        const statuses = await wave(path, LARGE, {});
        if (!refused(statuses, 413, true)) unexpected.push([`60 MB ${path}`, statuses]);
      }
      for (const path of unserved) {
        const statuses = await wave(path, LARGE, {});
        if (!refused(statuses, 501, true)) unexpected.push([`60 MB ${path}`, statuses]);
      }
    } finally {
      clearInterval(sampler);
    }
    highest = Math.max(highest, rssOf(pid));
    expect(unexpected).toEqual([]);
    expect(worstWave).toBeLessThan(30 * MB);
    expect(highest - before).toBeLessThan(100 * MB);
  }, 180_000);
});

/** Raw HTTP/1.1 exchange on one connection: writes `data`, returns what came back once `done` says it is all. */
async function exchange(
  url: string,
  data: Buffer | string,
  done: (text: string) => boolean,
  timeoutMs = 10_000,
): Promise<{ text: string; closed: boolean }> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await once(socket, 'connect');
  let received = Buffer.alloc(0);
  let text = '';
  let closed = false;
  socket.on('data', (c: Buffer) => {
    received = Buffer.concat([received, c]);
    text = received.toString('utf8');
  });
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  socket.write(data);
  const until = Date.now() + timeoutMs;
  while (!done(text) && !closed && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50));
  socket.destroy();
  return { text, closed };
}

const chatHead = (path: string, key: string, length: number, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk-${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`;

// the lean front, and Node's server with the relay's `request` hook
for (const lean of ['true', 'false'])
  describe(`authentication before the body (in process, LEAN_HTTP=${lean})`, () => {
    let s: TestServer;
    let up: MockUpstream;
    let key: string;

    beforeAll(async () => {
      s = await startTestServer({ env: { LEAN_HTTP: lean } });
      up = await MockUpstream.start();
      await setOptions(s, { ModelRatio: { 'm-a': 1 } });
      await addChannel(s, { baseUrl: up.url, models: ['m-a'] });
      await channelsChanged(s);
      const u = await addUser(s);
      key = (await addToken(s, u.id)).key;
    });
    afterAll(async () => {
      await s?.close();
      await up?.close();
    });

    const chat = JSON.stringify({ model: 'm-a', messages: [{ role: 'user', content: 'x' }] });

    it('answers a forged key at once, drops its small body and serves the next request on the connection', async () => {
      for (const path of ['/v1/chat/completions', '/v1/chat/completions?via=fastify']) {
        // the refused request's body arrives with the next request right behind it
        const refused = chatHead(path, 'forged', chat.length) + chat;
        const good = chatHead(path, key, chat.length) + chat;
        const { text } = await exchange(
          s.url,
          refused + good,
          (t) => (t.match(/HTTP\/1\.1 /g) ?? []).length >= 2 && t.includes('chat.completion'),
        );
        const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
        expect(statuses, text).toEqual([401, 200]);
        expect(text).toContain('无效的令牌');
      }
    });

    it('answers a forged key before a large body is sent, and closes the connection after the answer', async () => {
      for (const path of ['/v1/chat/completions', '/v1/chat/completions?via=fastify', '/v1/moderations']) {
        // only the head goes out: the answer must not wait for the 10 MB announced
        const { text } = await exchange(s.url, chatHead(path, 'forged', 10 * MB), (t) => t.includes('\r\n\r\n{'));
        expect(text, path).toMatch(/^HTTP\/1\.1 401 /);
        expect(text.toLowerCase(), path).toContain('connection: close');
        expect(text).toContain('"type":"new_api_error"');
      }
    });

    it('waits for a token that is not cached yet without reading the body, then serves it', async () => {
      const u = await addUser(s);
      const fresh = (await addToken(s, u.id)).key;
      const half = Math.floor(chat.length / 2);
      const { hostname, port } = new URL(s.url);
      const socket = net.connect(Number(port), hostname);
      await once(socket, 'connect');
      let text = '';
      socket.on('data', (c: Buffer) => (text += c.toString()));
      socket.write(chatHead('/v1/chat/completions', fresh, chat.length) + chat.slice(0, half));
      await new Promise((r) => setTimeout(r, 50));
      socket.write(chat.slice(half));
      const until = Date.now() + 10_000;
      while (!text.includes('chat.completion') && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
      socket.destroy();
      expect(text).toMatch(/^HTTP\/1\.1 200 /);
    });

    it('inflates a gzip body of an authenticated caller up to the body limit only: 413 past it', async () => {
      const bomb = gzipSync(Buffer.alloc(65 * MB, 0x20), { level: 9 });
      for (const path of ['/v1/chat/completions', '/v1/chat/completions?via=fastify']) {
        const res = await request(`${s.url}${path}`, {
          method: 'POST',
          headers: {
            authorization: `Bearer sk-${key}`,
            'content-type': 'application/json',
            'content-encoding': 'gzip',
          },
          body: bomb,
        });
        const body = (await res.body.json()) as { error: { message: string } };
        expect(res.statusCode, path).toBe(413);
        expect(body.error.message).toMatch(/too large/);
      }
    });

    it('console: anonymous routes read at most 64 KB; signed-in routes authenticate first and take larger bodies', async () => {
      const root = await setupAndLoginRoot(s);
      const big = { username: 'x'.repeat(100 * 1024), password: 'password123' };
      const anon = await new ConsoleClient(s.url).post('/api/user/login', big);
      expect(anon.status).toBe(413);
      expect(anon.body.success).toBe(false);
      // no session: the same 401 as before, whatever the body
      const refused = await new ConsoleClient(s.url).put('/api/user/self', { display_name: 'y'.repeat(100 * 1024) });
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ success: false, message: '无权进行此操作，未登录且未提供 access token' });
      // signed in: a body past the anonymous limit is read and handled by the route
      const signedIn = await root.put('/api/user/self', { display_name: 'y'.repeat(100 * 1024) });
      expect(signedIn.status).toBe(200);
      expect(typeof signedIn.body.success).toBe('boolean');
    });
  });
