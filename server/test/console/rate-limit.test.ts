import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { describeEachDb, REDIS_URL, redisAvailable } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MemoryRateLimiter } from '../../src/lib/rate-limit.js';

describe('sliding-log limiter', () => {
  it('lets N requests through per window and frees a slot when the oldest leaves the window', () => {
    const l = new MemoryRateLimiter();
    try {
      const t0 = 1_000_000;
      expect([0, 1, 2].map((i) => l.hitSync('k', 3, 10, t0 + i))).toEqual([true, true, true]);
      expect(l.hitSync('k', 3, 10, t0 + 5_000)).toBe(false);
      expect(l.hitSync('other', 3, 10, t0 + 5_000)).toBe(true);
      expect(l.hitSync('k', 3, 10, t0 + 10_000)).toBe(true); // the first request is 10 s old now
      expect(l.hitSync('k', 3, 10, t0 + 10_000)).toBe(false);
      expect(l.hitSync('k', 3, 10, t0 + 10_002)).toBe(true);
    } finally {
      l.stop();
    }
  });
});

const LIMIT_ENV = {
  CRITICAL_RATE_LIMIT: '3',
  CRITICAL_RATE_LIMIT_DURATION: '600',
  GLOBAL_API_RATE_LIMIT_ENABLE: 'true',
  GLOBAL_API_RATE_LIMIT: '8',
  GLOBAL_API_RATE_LIMIT_DURATION: '600',
};

async function exerciseLimits(server: TestServer) {
  const login = () =>
    fetch(server.url + '/api/user/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'nobody', password: 'password123' }),
    });
  for (let i = 0; i < 3; i++) expect((await login()).status).toBe(200);
  const limited = await login();
  expect(limited.status).toBe(429);
  expect(await limited.text()).toBe('');
  // the other critical routes share the CT budget
  expect((await fetch(server.url + '/api/reset_password?email=a@b.com')).status).toBe(429);
  expect(
    (
      await fetch(server.url + '/api/user/register', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      })
    ).status,
  ).toBe(429);

  // GA has seen 6 requests; 2 more pass, then every /api route is refused
  expect((await fetch(server.url + '/api/status')).status).toBe(200);
  expect((await fetch(server.url + '/api/status')).status).toBe(200);
  const ga = await fetch(server.url + '/api/status');
  expect(ga.status).toBe(429);
  expect(await ga.text()).toBe('');
  expect(ga.headers.get('x-oneapi-request-id')).toBeTruthy();
}

await describeEachDb('rate limits (memory)', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ kind, env: LIMIT_ENV });
  });
  afterAll(async () => server?.close());

  it('answers a bare 429 once CriticalRateLimit and GlobalAPIRateLimit are used up', async () => {
    await exerciseLimits(server);
  });
});

describe.skipIf(!(await redisAvailable()))('rate limits (Redis)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ kind: 'sqlite', env: { ...LIMIT_ENV, REDIS_CONN_STRING: REDIS_URL } });
  });
  afterAll(async () => {
    if (server) {
      const r = new Redis(REDIS_URL);
      const keys = await r.keys(`${server.ctx.redisPrefix}*`);
      if (keys.length) await r.del(...keys);
      await r.quit();
      await server.close();
    }
  });

  it('keeps the sliding logs in Redis under the instance prefix', async () => {
    await exerciseLimits(server);
    const r = new Redis(REDIS_URL);
    try {
      const keys = await r.keys(`${server.ctx.redisPrefix}rateLimit:*`);
      expect(keys.some((k) => k.includes('rateLimit:CT'))).toBe(true);
      expect(keys.some((k) => k.includes('rateLimit:GA'))).toBe(true);
      const ct = keys.find((k) => k.includes('rateLimit:CT'))!;
      expect(await r.llen(ct)).toBe(3);
      expect(await r.pttl(ct)).toBeGreaterThan(0);
    } finally {
      await r.quit();
    }
  });
});
