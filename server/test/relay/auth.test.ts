// TokenAuth and Distribute errors (new-api-compat.md §4.2, §4.3): statuses, messages and the OpenAI error shape.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, setOptions } from './fixtures.js';

describe('relay token auth', () => {
  let s: TestServer;
  let up: MockUpstream;
  let chId: number;

  beforeAll(async () => {
    s = await startTestServer();
    up = await MockUpstream.start();
    await setOptions(s, { ModelRatio: { 'm-a': 1, 'm-b': 1 } });
    chId = await addChannel(s, { baseUrl: up.url, models: ['m-a', 'm-b'], groups: ['default', 'vip'] });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  const call = async (
    auth: string | null,
    body: unknown = { model: 'm-a', messages: [{ role: 'user', content: 'x' }] },
    headers: Record<string, string> = {},
  ) => {
    const h: Record<string, string> = { 'content-type': 'application/json', ...headers };
    if (auth !== null) h.authorization = auth;
    const res = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: h, body: JSON.stringify(body) });
    const j = (await res.json()) as any;
    return {
      status: res.status,
      message: String(j.error?.message ?? '').replace(/ \(request id: [^)]+\)$/, ''),
      body: j,
    };
  };

  it('rejects missing and unknown keys with 401 in the OpenAI shape', async () => {
    const a = await call(null);
    expect(a.status).toBe(401);
    expect(a.message).toBe('未提供令牌');
    expect(a.body.error.type).toBe('new_api_error');
    expect(a.body.error.message).toMatch(/\(request id: \w+\)$/);
    const b = await call('Bearer sk-doesnotexist');
    expect(b.status).toBe(401);
    expect(b.message).toBe('无效的令牌');
  });

  it('accepts the key with or without sk- and with a lower-case bearer', async () => {
    const u = await addUser(s);
    const t = await addToken(s, u.id);
    expect((await call(`Bearer sk-${t.key}`)).status).toBe(200);
    expect((await call(`Bearer ${t.key}`)).status).toBe(200);
    expect((await call(`bearer sk-${t.key}`)).status).toBe(200);
  });

  it('maps token statuses, expiry and exhaustion to new-api messages', async () => {
    const u = await addUser(s);
    const exhausted = await addToken(s, u.id, { status: 4 });
    const r1 = await call(`Bearer sk-${exhausted.key}`);
    expect(r1.status).toBe(401);
    expect(r1.message).toBe(
      `该令牌额度已用尽 TokenStatusExhausted[sk-${exhausted.key.slice(0, 3)}***${exhausted.key.slice(-3)}]`,
    );
    const expired = await addToken(s, u.id, { status: 3 });
    expect((await call(`Bearer sk-${expired.key}`)).message).toBe('该令牌已过期');
    const disabled = await addToken(s, u.id, { status: 2 });
    expect((await call(`Bearer sk-${disabled.key}`)).message).toBe('该令牌状态不可用');
    const past = await addToken(s, u.id, { expired: Math.floor(Date.now() / 1000) - 10 });
    const r2 = await call(`Bearer sk-${past.key}`);
    expect(r2.status).toBe(401);
    expect(r2.message).toBe('该令牌已过期');
    // without Redis the row is marked expired (status 3), as new-api does
    await new Promise((r) => setTimeout(r, 100));
    const row = await s.ctx.db
      .selectFrom('tokens')
      .select('status')
      .where('id', '=', past.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe(3);
    const empty = await addToken(s, u.id, { unlimited: false, remain: 0 });
    const r3 = await call(`Bearer sk-${empty.key}`);
    expect(r3.status).toBe(401);
    expect(r3.message).toBe(
      `[sk-${empty.key.slice(0, 3)}***${empty.key.slice(-3)}] 该令牌额度已用尽 !token.UnlimitedQuota && token.RemainQuota = 0`,
    );
  });

  it('refuses banned users with 403', async () => {
    const u = await addUser(s, { status: 2 });
    const t = await addToken(s, u.id);
    const r = await call(`Bearer sk-${t.key}`);
    expect(r.status).toBe(403);
    expect(r.message).toBe('用户已被封禁');
  });

  it('lets only admins pick a channel with sk-<key>-<channelId>', async () => {
    const common = await addUser(s);
    const t1 = await addToken(s, common.id);
    const r = await call(`Bearer sk-${t1.key}-${chId}`);
    expect(r.status).toBe(403);
    expect(r.message).toBe('普通用户不支持指定渠道');
    const admin = await addUser(s, { role: 10 });
    const t2 = await addToken(s, admin.id);
    up.reset();
    expect((await call(`Bearer sk-${t2.key}-${chId}`)).status).toBe(200);
    expect(up.requests).toHaveLength(1);
  });

  it('enforces the IP allow list (exact and CIDR)', async () => {
    const u = await addUser(s);
    const ok1 = await addToken(s, u.id, { allowIps: '10.0.0.1\n127.0.0.1' });
    expect((await call(`Bearer sk-${ok1.key}`)).status).toBe(200);
    const ok2 = await addToken(s, u.id, { allowIps: '127.0.0.0/8' });
    expect((await call(`Bearer sk-${ok2.key}`)).status).toBe(200);
    const bad = await addToken(s, u.id, { allowIps: '10.0.0.0/8\n192.168.1.1' });
    const r = await call(`Bearer sk-${bad.key}`);
    expect(r.status).toBe(403);
    expect(r.message).toBe('您的 IP 不在令牌允许访问的列表中');
  });

  it('believes X-Forwarded-For from a loopback peer when TRUSTED_PROXIES is unset: the first hop not trusted', async () => {
    const u = await addUser(s);
    const t = await addToken(s, u.id, { allowIps: '203.0.113.7' });
    // the test client, on 127.0.0.1, is a reverse proxy on the same host
    expect((await call(`Bearer sk-${t.key}`, undefined, { 'x-forwarded-for': '203.0.113.7' })).status).toBe(200);
    // the client wrote the allowed address itself; the proxy appended its real, public one (new-api took the first)
    expect(
      (await call(`Bearer sk-${t.key}`, undefined, { 'x-forwarded-for': '203.0.113.7, 198.51.100.9' })).status,
    ).toBe(403);
    expect((await call(`Bearer sk-${t.key}`, undefined, { 'x-forwarded-for': '198.51.100.9' })).status).toBe(403);
  });

  it('applies token group rules and model limits', async () => {
    const u = await addUser(s);
    const g1 = await addToken(s, u.id, { group: 'nosuch' });
    const r1 = await call(`Bearer sk-${g1.key}`);
    expect(r1.status).toBe(403);
    expect(r1.message).toBe('令牌分组 nosuch 已被禁用');
    await setOptions(s, { UserUsableGroups: { default: '默认分组', vip: 'vip分组', old: '旧' } });
    const g2 = await addToken(s, u.id, { group: 'old' });
    const r2 = await call(`Bearer sk-${g2.key}`);
    expect(r2.status).toBe(403);
    expect(r2.message).toBe('分组 old 已被弃用');
    const lim = await addToken(s, u.id, { modelLimits: 'm-b' });
    const r3 = await call(`Bearer sk-${lim.key}`);
    expect(r3.status).toBe(403);
    expect(r3.message).toBe('该令牌无权访问模型 m-a');
    expect(
      (await call(`Bearer sk-${lim.key}`, { model: 'm-b', messages: [{ role: 'user', content: 'x' }] })).status,
    ).toBe(200);
  });

  it('sees token edits at once through change events', async () => {
    const u = await addUser(s);
    const t = await addToken(s, u.id);
    expect((await call(`Bearer sk-${t.key}`)).status).toBe(200);
    await s.ctx.db.updateTable('tokens').set({ status: 2 }).where('id', '=', t.id).execute();
    s.ctx.changes.publish({ kind: 'token', id: t.id, key: t.key, userId: u.id });
    expect((await call(`Bearer sk-${t.key}`)).message).toBe('该令牌状态不可用');
    await s.ctx.db.updateTable('users').set({ status: 2 }).where('id', '=', u.id).execute();
    await s.ctx.db.updateTable('tokens').set({ status: 1 }).where('id', '=', t.id).execute();
    s.ctx.changes.publish({ kind: 'token', userId: u.id });
    s.ctx.changes.publish({ kind: 'user', id: u.id });
    expect((await call(`Bearer sk-${t.key}`)).message).toBe('用户已被封禁');
  });

  it('refuses a request whose reservation exceeds the balance with 403', async () => {
    const u = await addUser(s, { quota: 100 });
    const t = await addToken(s, u.id);
    const r = await call(`Bearer sk-${t.key}`, {
      model: 'm-a',
      max_tokens: 1000,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(r.status).toBe(403);
    expect(r.message).toMatch(/^chat pre-consumed quota failed, user quota: .*, need quota: /);
    expect(r.body.error.code).toBe('insufficient_user_quota');
    const zero = await addUser(s, { quota: 0 });
    const t0 = await addToken(s, zero.id);
    const r0 = await call(`Bearer sk-${t0.key}`);
    expect(r0.status).toBe(403);
    expect(r0.message).toBe('user quota is not enough');
    const lt = await addToken(s, u.id, { unlimited: false, remain: 50 });
    const r2 = await call(`Bearer sk-${lt.key}`, {
      model: 'm-a',
      max_tokens: 60,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(r2.status).toBe(403);
    expect(r2.body.error.code).toBe('pre_consume_token_quota_failed');
    // nothing was taken
    const row = await s.ctx.db.selectFrom('users').select('quota').where('id', '=', u.id).executeTakeFirstOrThrow();
    expect(row.quota).toBe(100);
  });

  it('answers CORS preflight and adds CORS headers', async () => {
    const res = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: { origin: 'https://x.example', 'access-control-request-method': 'POST' },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://x.example');
    const r = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { origin: 'https://x.example' },
      body: '{}',
    });
    expect(r.headers.get('access-control-allow-origin')).toBe('https://x.example');
  });
});

describe('client address behind TRUSTED_PROXIES', () => {
  let s: TestServer;
  let up: MockUpstream;

  beforeAll(async () => {
    // the test client, on 127.0.0.1, plays the proxy
    s = await startTestServer({ env: { TRUSTED_PROXIES: '127.0.0.1/32, 10.0.0.0/8' } });
    up = await MockUpstream.start();
    await setOptions(s, { ModelRatio: { 'm-a': 1 } });
    await addChannel(s, { baseUrl: up.url, models: ['m-a'] });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  // the relay's fast path (exact route) and Fastify's request.ip (the same route with a query string) agree
  for (const path of ['/v1/chat/completions', '/v1/chat/completions?via=fastify']) {
    it(`believes only trusted hops' X-Forwarded-For (${path})`, async () => {
      const u = await addUser(s);
      const t = await addToken(s, u.id, { allowIps: '203.0.113.7' });
      const status = async (xff?: string) =>
        (
          await fetch(`${s.url}${path}`, {
            method: 'POST',
            headers: {
              authorization: `Bearer sk-${t.key}`,
              'content-type': 'application/json',
              ...(xff ? { 'x-forwarded-for': xff } : {}),
            },
            body: JSON.stringify({ model: 'm-a', messages: [{ role: 'user', content: 'x' }] }),
          })
        ).status;
      expect(await status('203.0.113.7')).toBe(200);
      // through a second trusted proxy
      expect(await status('203.0.113.7, 10.1.2.3')).toBe(200);
      // a client that wrote the allowed address itself: the proxy appended its real one, which is not trusted
      expect(await status('203.0.113.7, 198.51.100.9')).toBe(403);
      // no header: the proxy itself is the client
      expect(await status()).toBe(403);
    });
  }
});
