// Token and user caches in the real Redis: keys under ctx.redisPrefix with an explicit TTL = SYNC_FREQUENCY (new-api's
// zero-TTL bug fixed), invalidation through change events, and exact billing on this path too; and a Redis that goes
// away (behind a TCP proxy the test cuts) and comes back.
import { createHash } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisAvailable, REDIS_URL } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  client,
  logsOf,
  setOptions,
  tokenRow,
  userRow,
  relayPost,
  waitFor,
} from './fixtures.js';

/** A TCP proxy to the test Redis that can be cut (connections dropped, new ones refused) and restored on its port. */
class RedisProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  async up(): Promise<void> {
    const target = new URL(REDIS_URL);
    const server = net.createServer((c) => {
      const r = net.connect(Number(target.port || 6379), target.hostname);
      for (const sock of [c, r]) {
        this.sockets.add(sock);
        sock.on('close', () => this.sockets.delete(sock));
        sock.on('error', () => undefined);
      }
      c.pipe(r).pipe(c);
      c.on('close', () => r.destroy());
      r.on('close', () => c.destroy());
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', () => resolve()));
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const sock of this.sockets) sock.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

// skipped only where no Redis answers: these need a real Redis (CI starts one and fails without it)
describe.skipIf(!(await redisAvailable()))('relay caches on Redis', () => {
  let s: TestServer;
  let up: MockUpstream;

  beforeAll(async () => {
    s = await startTestServer({ env: { REDIS_CONN_STRING: REDIS_URL, SYNC_FREQUENCY: '120' } });
    up = await MockUpstream.start();
    await setOptions(s, { ModelRatio: { 'rd-model': 2 }, CompletionRatio: { 'rd-model': 1 } });
    await addChannel(s, { baseUrl: up.url, models: ['rd-model'] });
    await channelsChanged(s);
  });
  afterAll(async () => {
    const keys = await s.ctx.redis!.keys(`${s.ctx.redisPrefix}*`);
    if (keys.length) await s.ctx.redis!.del(...keys);
    await s?.close();
    await up?.close();
  });

  it('caches tokens and users in Redis with an explicit TTL and bills exactly', async () => {
    const redis = s.ctx.redis!;
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id, { unlimited: false, remain: 100_000 });
    await client(s, t.key).chat.completions.create({ model: 'rd-model', messages: [{ role: 'user', content: 'x' }] });
    const tk = `${s.ctx.redisPrefix}token:${createHash('sha256').update(t.key).digest('hex')}`;
    const uk = `${s.ctx.redisPrefix}user:${u.id}`;
    expect(await redis.exists(tk)).toBe(1);
    expect(await redis.exists(uk)).toBe(1);
    const ttl = await redis.ttl(tk);
    expect(ttl).toBeGreaterThan(100);
    expect(ttl).toBeLessThanOrEqual(120);
    expect(await redis.ttl(uk)).toBeGreaterThan(100);
    // (11 + 7) × 2 = 36
    const [l] = await logsOf(s, u.id);
    expect(l.quota).toBe(36);
    expect((await userRow(s, u.id)).quota).toBe(1_000_000 - 36);
    expect((await tokenRow(s, t.id)).remain_quota).toBe(100_000 - 36);
    // the cached remain_quota follows the charge
    expect(Number(await redis.hget(tk, 'remain_quota'))).toBe(100_000 - 36);
  });

  it('drops cached rows on change events', async () => {
    const u = await addUser(s);
    const t = await addToken(s, u.id);
    const call = () =>
      relayPost(s, '/v1/chat/completions', t.key, { model: 'rd-model', messages: [{ role: 'user', content: 'x' }] });
    expect((await call()).status).toBe(200);
    await s.ctx.db.updateTable('tokens').set({ status: 2 }).where('id', '=', t.id).execute();
    s.ctx.changes.publish({ kind: 'token', id: t.id });
    await new Promise((r) => setTimeout(r, 100));
    const r = await call();
    expect(r.status).toBe(401);
    await s.ctx.db.updateTable('tokens').set({ status: 1 }).where('id', '=', t.id).execute();
    await s.ctx.db.updateTable('users').set({ status: 2 }).where('id', '=', u.id).execute();
    s.ctx.changes.publish({ kind: 'token', key: t.key });
    s.ctx.changes.publish({ kind: 'user', id: u.id });
    await new Promise((r) => setTimeout(r, 100));
    expect((await call()).status).toBe(403);
  });
});

// skipped only where no Redis answers: these need a real Redis (CI starts one and fails without it)
describe.skipIf(!(await redisAvailable()))('relay while Redis is down', () => {
  it('reads tokens and users from the database, bills exactly, and caches in Redis again once it is back', async () => {
    const proxy = new RedisProxy();
    await proxy.up();
    const url = new URL(REDIS_URL);
    url.host = `127.0.0.1:${proxy.port}`;
    const s = await startTestServer({ env: { REDIS_CONN_STRING: url.toString(), SYNC_FREQUENCY: '120' } });
    const up = await MockUpstream.start();
    const redis = s.ctx.redis!;
    try {
      await setOptions(s, {
        ModelRatio: { 'rd-model': 2 },
        CompletionRatio: { 'rd-model': 1 },
        ModelRequestRateLimitEnabled: 'true',
        ModelRequestRateLimitCount: '100',
      });
      await addChannel(s, { baseUrl: up.url, models: ['rd-model'] });
      await channelsChanged(s);
      const u = await addUser(s, { quota: 1_000_000 });
      const t = await addToken(s, u.id, { unlimited: false, remain: 100_000 });
      const call = (key: string) =>
        relayPost(s, '/v1/chat/completions', key, { model: 'rd-model', messages: [{ role: 'user', content: 'x' }] });
      const tokenKey = (key: string) => `${s.ctx.redisPrefix}token:${createHash('sha256').update(key).digest('hex')}`;
      expect((await call(t.key)).status).toBe(200);
      expect(await redis.exists(tokenKey(t.key))).toBe(1);
      const doomed = await addToken(s, u.id);
      expect((await call(doomed.key)).status).toBe(200);

      await proxy.down();
      await waitFor(() => redis.status !== 'ready');
      // (11 + 7) × 2 = 36 a request, the token and the user read from the database
      const t0 = Date.now();
      for (let i = 0; i < 3; i++) expect((await call(t.key)).status).toBe(200);
      // not held up by the reconnection attempts
      expect(Date.now() - t0).toBeLessThan(2000);
      const fresh = await addToken(s, u.id);
      expect((await call(fresh.key)).status).toBe(200);
      // a token disabled during the outage is refused at once: the database is the truth meanwhile
      await s.ctx.db.updateTable('tokens').set({ status: 2 }).where('id', '=', doomed.id).execute();
      expect((await call(doomed.key)).status).toBe(401);
      // (logsOf writes the queued settlements first)
      expect(await logsOf(s, u.id)).toHaveLength(6);
      expect((await userRow(s, u.id)).quota).toBe(1_000_000 - 6 * 36);
      expect((await tokenRow(s, t.id)).remain_quota).toBe(100_000 - 4 * 36);

      await proxy.up();
      await waitFor(() => redis.status === 'ready', 10_000);
      // its entry from before the outage, which the change could not delete, is gone with the rest
      await waitFor(async () => (await redis.exists(tokenKey(t.key))) === 0);
      expect((await call(doomed.key)).status).toBe(401);
      const later = await addToken(s, u.id);
      expect((await call(later.key)).status).toBe(200);
      expect(await redis.exists(tokenKey(later.key))).toBe(1);
    } finally {
      const keys = await redis.keys(`${s.ctx.redisPrefix}*`).catch(() => []);
      if (keys.length) await redis.del(...keys);
      await s.close();
      await up.close();
      await proxy.down();
    }
  }, 30_000);
});
