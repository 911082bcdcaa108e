// ModelRequestRateLimit on Redis (new-api-compat.md §10): new-api's keys rateLimit:MRRL:<uid> / rateLimit:MRRLS:<uid>
// with the window as TTL, one count shared by every node of a deployment (two gateways over one PostgreSQL database and
// one Redis here), the success limit counting successful requests only.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dbAvailable, redisAvailable, REDIS_URL } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, setOptions, relayPost } from './fixtures.js';

const MODEL = 'mrrl-model';
const ready = (await redisAvailable()) && (await dbAvailable('postgres'));

// skipped only where no Redis answers: these need a real Redis (CI starts one and fails without it)
describe.skipIf(!ready)('ModelRequestRateLimit on Redis, across nodes', () => {
  let a: TestServer;
  let b: TestServer;
  let up: MockUpstream;

  beforeAll(async () => {
    up = await MockUpstream.start();
    a = await startTestServer({ kind: 'postgres', env: { REDIS_CONN_STRING: REDIS_URL } });
    b = await startTestServer({
      database: a.database,
      redisPrefix: a.ctx.redisPrefix,
      env: { REDIS_CONN_STRING: REDIS_URL },
    });
    await addChannel(a, { baseUrl: up.url, models: [MODEL] });
    for (const s of [a, b]) {
      await setOptions(s, {
        ModelRatio: { [MODEL]: 1 },
        ModelRequestRateLimitEnabled: 'true',
        ModelRequestRateLimitDurationMinutes: '1',
      });
      await channelsChanged(s);
    }
  });
  afterAll(async () => {
    const keys = a ? await a.ctx.redis!.keys(`${a.ctx.redisPrefix}*`) : [];
    if (keys.length) await a.ctx.redis!.del(...keys);
    await b?.close();
    await a?.close(); // drops the shared database
    await up?.close();
  });

  const call = (s: TestServer, key: string) =>
    relayPost(s, '/v1/chat/completions', key, { model: MODEL, messages: [{ role: 'user', content: 'x' }] });

  it('counts the requests of one user on both nodes against one limit, in new-api keys with the window as TTL', async () => {
    for (const s of [a, b])
      await setOptions(s, { ModelRequestRateLimitCount: '3', ModelRequestRateLimitSuccessCount: '1000' });
    up.reset();
    const u = await addUser(a);
    const t = await addToken(a, u.id);
    const statuses = [];
    for (const s of [a, b, a, b]) statuses.push((await call(s, t.key)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = await call(a, t.key);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('1分钟内最多请求3次');
    expect(up.requests.length).toBe(3); // the refused requests never went upstream

    const redis = a.ctx.redis!;
    const key = `${a.ctx.redisPrefix}rateLimit:MRRL:${u.id}`;
    expect(await redis.llen(key)).toBe(3);
    const ttl = await redis.pttl(key);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    // successes are logged under MRRLS
    expect(await redis.llen(`${a.ctx.redisPrefix}rateLimit:MRRLS:${u.id}`)).toBe(3);

    // another user is not affected
    const other = await addUser(a);
    const t2 = await addToken(a, other.id);
    expect((await call(b, t2.key)).status).toBe(200);
  });

  it('limits successful requests separately, and failed ones do not count as successes', async () => {
    for (const s of [a, b])
      await setOptions(s, { ModelRequestRateLimitCount: '0', ModelRequestRateLimitSuccessCount: '2' });
    const u = await addUser(a);
    const t = await addToken(a, u.id);
    up.reset();
    up.behave = () => ({ kind: 'json', status: 500, body: { error: { message: 'boom', type: 'server_error' } } });
    expect((await call(a, t.key)).status).toBe(500);
    expect((await call(b, t.key)).status).toBe(500);
    up.reset();
    expect((await call(a, t.key)).status).toBe(200);
    expect((await call(b, t.key)).status).toBe(200);
    // a success is recorded once its answer has gone out: wait for both records before the third call (a race seen once)
    await vi.waitFor(async () =>
      expect(await a.ctx.redis!.llen(`${a.ctx.redisPrefix}rateLimit:MRRLS:${u.id}`)).toBe(2),
    );
    const refused = await call(a, t.key);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('1分钟内最多请求2次');
    // unlimited total: nothing is logged under MRRL
    expect(await a.ctx.redis!.exists(`${a.ctx.redisPrefix}rateLimit:MRRL:${u.id}`)).toBe(0);
  });

  it('lets exactly the limit through when requests race on both nodes (atomic check-and-record)', async () => {
    for (const s of [a, b])
      await setOptions(s, { ModelRequestRateLimitCount: '3', ModelRequestRateLimitSuccessCount: '1000' });
    up.reset();
    const u = await addUser(a);
    const t = await addToken(a, u.id);
    const statuses = (await Promise.all(Array.from({ length: 12 }, (_, i) => call(i % 2 ? a : b, t.key)))).map(
      (r) => r.status,
    );
    expect(statuses.filter((x) => x === 200)).toHaveLength(3);
    expect(statuses.filter((x) => x === 429)).toHaveLength(9);
  });
});
