// Token and user caches in the real Redis: keys under ctx.redisPrefix with an explicit TTL = SYNC_FREQUENCY (new-api's
// zero-TTL bug fixed), invalidation through change events, and exact billing on this path too.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisAvailable, REDIS_URL } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, client, logsOf, setOptions, tokenRow, userRow, relayPost } from './fixtures.js';

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
