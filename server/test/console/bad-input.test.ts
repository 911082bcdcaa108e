// Bad input gets the documented error and changes nothing, on every database: NUL characters (PostgreSQL stores none
// in text), LIKE wildcards and a trailing backslash in searches, numbers no column holds, hex strings, objects where a
// string belongs, Fastify's own refusals (malformed or over-long path parameters, bodies it cannot parse) in the
// console's envelope and the OpenAI shape, and the relay's `stream` that is not a boolean.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { registerAndLogin, setupAndLoginRoot } from './fixtures.js';
import { addChannel, addToken, addUser, channelsChanged, flushLogs, relayPost, setOptions } from '../relay/fixtures.js';
import { relayServices } from '../../src/relay/services.js';

const NUL = 'a\u0000b';
const REFUSED_NUL = { success: false, message: '请求参数中包含非法字符（\\u0000）' };
const REFUSED_NUMBER = { success: false, message: '数值超出范围' };

await describeEachDb('bad console input', (kind) => {
  let s: TestServer;
  let root: ConsoleClient;
  let user: Awaited<ReturnType<typeof registerAndLogin>>;
  let up: MockUpstream;

  beforeAll(async () => {
    s = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
    root = await setupAndLoginRoot(s);
    user = await registerAndLogin(s);
    up = await MockUpstream.start();
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  const count = async (table: 'tokens' | 'channels' | 'redemptions' | 'users') =>
    Number(
      (
        await s.ctx.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('refuses a NUL character in any text field or search with 400 and writes nothing', async () => {
    const before = {
      tokens: await count('tokens'),
      channels: await count('channels'),
      redemptions: await count('redemptions'),
      users: await count('users'),
    };
    const self = await s.ctx.db
      .selectFrom('users')
      .select(['display_name', 'quota'])
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    const writes: Array<[string, string, unknown]> = [
      ['POST', '/api/token/', { name: NUL }],
      ['POST', '/api/token/', { name: 'ok', model_limits: ['gpt-4', NUL] }],
      ['PUT', '/api/user/self', { display_name: NUL }],
      ['POST', '/api/user/register', { username: NUL, password: 'password123', password2: 'password123' }],
      ['POST', '/api/user/login', { username: NUL, password: 'password123' }],
      ['POST', '/api/user/topup', { key: NUL }],
    ];
    for (const [method, path, body] of writes) {
      const res = await user.client.request(method, path, body);
      expect([path, res.status, res.body]).toEqual([path, 400, REFUSED_NUL]);
    }
    const adminWrites: Array<[string, string, unknown]> = [
      [
        'POST',
        '/api/channel/',
        { mode: 'single', channel: { name: NUL, type: 1, key: 'k', models: 'gpt-4', group: 'default' } },
      ],
      ['POST', '/api/redemption/', { name: NUL, quota: 1, count: 1 }],
      ['POST', '/api/user/', { username: 'x' + NUL, password: 'password123' }],
      ['PUT', '/api/user/', { id: user.id, display_name: NUL }],
      ['PUT', '/api/option/', { key: 'SystemName', value: NUL }],
    ];
    for (const [method, path, body] of adminWrites) {
      const res = await root.request(method, path, body);
      expect([path, res.status, res.body]).toEqual([path, 400, REFUSED_NUL]);
    }
    const q = encodeURIComponent(NUL);
    for (const path of [
      `/api/user/search?keyword=${q}`,
      `/api/user/search?keyword=x&group=${q}`,
      `/api/token/search?keyword=${q}`,
      `/api/channel/search?keyword=${q}`,
      `/api/redemption/search?keyword=${q}`,
      `/api/log/?model_name=${q}`,
      `/api/log/?username=${q}`,
      `/api/log/stat?token_name=${q}`,
      `/api/log/search?keyword=${q}`,
      `/api/log/self/search?keyword=${q}`,
      `/api/data/?username=${q}`,
      `/api/log/token?key=sk-${q}`,
      `/api/mj/?mj_id=${q}`,
      `/api/task/self?task_id=${q}`,
    ]) {
      const res = await root.get(path);
      expect([path, res.status, res.body]).toEqual([path, 400, REFUSED_NUL]);
    }
    expect({
      tokens: await count('tokens'),
      channels: await count('channels'),
      redemptions: await count('redemptions'),
      users: await count('users'),
    }).toEqual(before);
    expect(
      await s.ctx.db
        .selectFrom('users')
        .select(['display_name', 'quota'])
        .where('id', '=', user.id)
        .executeTakeFirstOrThrow(),
    ).toEqual(self);
    expect(s.ctx.options.get('SystemName')).not.toContain('\u0000');
  });

  it('matches %, _ and \\ in searches literally, a trailing backslash included', async () => {
    const names = ['a_c', 'abc', 'x%y', 'xzy', 'end\\'];
    for (const name of names) expect((await user.client.post('/api/token/', { name })).body.success).toBe(true);
    const tokens = async (keyword: string) => {
      const res = await user.client.get(`/api/token/search?keyword=${encodeURIComponent(keyword)}`);
      expect(res.status).toBe(200);
      return (res.body.data as Array<{ name: string }>).map((t) => t.name).sort();
    };
    expect(await tokens('a_c')).toEqual(['a_c']);
    expect(await tokens('x%y')).toEqual(['x%y']);
    expect(await tokens('%')).toEqual(['x%y']);
    expect(await tokens('end\\')).toEqual(['end\\']);
    expect(await tokens('\\')).toEqual(['end\\']);

    for (const name of ['q_1', 'qx1', 'back\\']) {
      expect(
        (
          await root.post('/api/channel/', {
            mode: 'single',
            channel: { name, type: 1, key: `k-${name}`, models: 'gpt-4', group: 'default' },
          })
        ).body.success,
      ).toBe(true);
    }
    const channels = async (keyword: string) =>
      (
        (await root.get(`/api/channel/search?keyword=${encodeURIComponent(keyword)}`)).body.data as Array<{
          name: string;
        }>
      )
        .map((c) => c.name)
        .sort();
    expect(await channels('q_1')).toEqual(['q_1']);
    expect(await channels('back\\')).toEqual(['back\\']);

    for (const name of ['r_1', 'rx1'])
      expect((await root.post('/api/redemption/', { name, quota: 10, count: 1 })).body.success).toBe(true);
    const codes = async (keyword: string) =>
      (
        (await root.get(`/api/redemption/search?keyword=${encodeURIComponent(keyword)}`)).body.data.items as Array<{
          name: string;
        }>
      )
        .map((r) => r.name)
        .sort();
    expect(await codes('r_')).toEqual(['r_1']);
    expect(await codes('r\\')).toEqual([]);

    await root.put('/api/user/', { id: user.id, display_name: 'd_n' });
    const other = await registerAndLogin(s);
    await root.put('/api/user/', { id: other.id, display_name: 'dxn' });
    const users = async (keyword: string) =>
      (
        (await root.get(`/api/user/search?keyword=${encodeURIComponent(keyword)}`)).body.data.items as Array<{
          id: number;
        }>
      ).map((u) => u.id);
    expect(await users('d_n')).toEqual([user.id]);
    expect(await users('\\')).toEqual([]);

    const now = Math.floor(Date.now() / 1000);
    for (const [model, content] of [
      ['m_1', 'c_1 text'],
      ['mx1', 'cx1 text'],
    ])
      await s.ctx.logDb
        .insertInto('logs')
        .values({ user_id: user.id, created_at: now, type: 2, model_name: model, content, is_stream: false })
        .execute();
    const logs = async (query: string) =>
      ((await root.get(`/api/log/?${query}`)).body.data.items as Array<{ model_name: string }>)
        .map((l) => l.model_name)
        .sort();
    expect(await logs('model_name=m_1')).toEqual(['m_1']);
    expect(await logs(`model_name=${encodeURIComponent('m\\')}`)).toEqual([]);
    const search = async (keyword: string) =>
      (
        (await root.get(`/api/log/search?keyword=${encodeURIComponent(keyword)}`)).body.data as Array<{
          content: string;
        }>
      )
        .map((l) => l.content)
        .sort();
    expect(await search('c_1')).toEqual(['c_1 text']);
    expect(await search('c\\')).toEqual([]);
  });

  it('refuses numbers no column holds, hex strings and objects where a string belongs, and changes nothing', async () => {
    const before = {
      tokens: await count('tokens'),
      redemptions: await count('redemptions'),
      channels: await count('channels'),
    };
    const quota = (
      await s.ctx.db.selectFrom('users').select('quota').where('id', '=', user.id).executeTakeFirstOrThrow()
    ).quota;
    const big: Array<[ConsoleClient, string, string, unknown]> = [
      [user.client, 'POST', '/api/token/', { name: 'big', remain_quota: 1e308 }],
      [user.client, 'PUT', '/api/user/setting', { notify_type: 'email', quota_warning_threshold: 1e308 }],
      [user.client, 'POST', '/api/user/aff_transfer', { quota: 1e308 }],
      [root, 'PUT', '/api/user/', { id: user.id, quota: 1e308 }],
      [root, 'POST', '/api/redemption/', { name: 'big', quota: 1, count: 1e308 }],
      [
        root,
        'POST',
        '/api/channel/',
        { mode: 'single', channel: { name: 'big', type: 1e308, key: 'k', models: 'gpt-4', group: 'default' } },
      ],
      [
        root,
        'POST',
        '/api/channel/',
        {
          mode: 'single',
          channel: { name: 'big', type: 1, key: 'k', models: 'gpt-4', group: 'default', priority: 2 ** 60 },
        },
      ],
      [root, 'POST', '/api/channel/batch', { ids: [1e308] }],
      [root, 'PUT', '/api/option/', { key: 'QuotaPerUnit', value: 1e308 }],
    ];
    for (const [c, method, path, body] of big) {
      const res = await c.request(method, path, body);
      expect([path, res.status, res.body]).toEqual([path, 400, REFUSED_NUMBER]);
    }
    // numeric strings where the console sends them, but only decimal ones: not hex, not exponents
    const hex: Array<[ConsoleClient, string, string, unknown, string]> = [
      [root, 'PUT', '/api/user/', { id: user.id, quota: '0x10' }, '额度必须是整数'],
      [root, 'PUT', '/api/user/', { id: user.id, quota: '1e3' }, '额度必须是整数'],
      [user.client, 'POST', '/api/token/', { name: 'hex', remain_quota: '0x10' }, '额度必须是非负整数'],
      [root, 'POST', '/api/redemption/', { name: 'hex', quota: '0x10', count: 1 }, '兑换码额度必须是正整数'],
      [user.client, 'POST', '/api/user/aff_transfer', { quota: '0x10' }, '无效的参数'],
      [root, 'PUT', '/api/option/', { key: 'QuotaPerUnit', value: '0x10' }, 'QuotaPerUnit 的值必须是数字'],
      [
        user.client,
        'POST',
        '/api/token/',
        { name: 'obj', model_limits: { 'gpt-4': true } },
        'model_limits 必须是字符串或字符串列表',
      ],
    ];
    for (const [c, method, path, body, message] of hex) {
      const res = await c.request(method, path, body);
      expect([path, res.status < 500, res.body]).toEqual([path, true, { success: false, message }]);
    }
    expect({
      tokens: await count('tokens'),
      redemptions: await count('redemptions'),
      channels: await count('channels'),
    }).toEqual(before);
    expect(
      (await s.ctx.db.selectFrom('users').select('quota').where('id', '=', user.id).executeTakeFirstOrThrow()).quota,
    ).toBe(quota);
    expect(s.ctx.options.get('QuotaPerUnit')).toBe('500000');
    // the forms as the console sends them still work: a decimal string, a list of models
    expect((await root.put('/api/user/', { id: user.id, quota: String(quota + 5) })).body.success).toBe(true);
    const t = await user.client.post('/api/token/', {
      name: 'list',
      model_limits: ['gpt-4', 'gpt-4o'],
      remain_quota: '7',
    });
    expect(t.body.data).toMatchObject({ model_limits: 'gpt-4,gpt-4o', remain_quota: 7 });
  });

  it('keeps the consume log row and the dashboard bucket of a model whose name is longer than quota_data holds', async () => {
    const model = 'long-model-' + 'x'.repeat(100);
    await setOptions(s, { ModelRatio: { [model]: 1 }, DataExportEnabled: 'true' });
    const created = await root.post('/api/channel/', {
      mode: 'single',
      channel: { name: 'long-model', type: 1, key: 'k-lm', models: model, group: 'default', base_url: up.url },
    });
    expect(created.body.success).toBe(true);
    await channelsChanged(s);
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id, { unlimited: true });
    const res = await relayPost(s, '/v1/chat/completions', t.key, {
      model,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.status).toBe(200);
    await flushLogs(s);
    await relayServices(s.ctx).quotaData.flush();
    const charged =
      1_000_000 -
      Number(
        (await s.ctx.db.selectFrom('users').select('quota').where('id', '=', u.id).executeTakeFirstOrThrow()).quota,
      );
    expect(charged).toBeGreaterThan(0);
    const logs = await s.ctx.logDb
      .selectFrom('logs')
      .select(['model_name', 'quota'])
      .where('user_id', '=', u.id)
      .where('type', '=', 2)
      .execute();
    expect(logs.map((l) => [l.model_name, Number(l.quota)])).toEqual([[model, charged]]);
    const buckets = await s.ctx.db
      .selectFrom('quota_data')
      .select(['model_name', 'quota'])
      .where('user_id', '=', u.id)
      .execute();
    expect(buckets.map((b) => [b.model_name, Number(b.quota)])).toEqual([[model.slice(0, 64), charged]]);
  });

  it('answers Fastify’s own refusals in the console envelope on /api and the OpenAI shape on the relay', async () => {
    const bad = await root.get('/api/user/%E0%A4%A');
    expect([bad.status, bad.body]).toEqual([400, { success: false, message: '无效的请求路径' }]);
    expect(bad.headers.get('x-oneapi-request-id')).toBeTruthy();
    const long = await root.get(`/api/user/${'9'.repeat(10_000)}`);
    expect(long.status).toBeGreaterThanOrEqual(400);
    expect(long.status).toBeLessThan(500);
    expect(long.body).toEqual({ success: false, message: '请求路径参数过长' });
    const json = await fetch(`${s.url}/api/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"username":',
    });
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ success: false, message: expect.any(String) });
    const type = await fetch(`${s.url}/api/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: '<a/>',
    });
    expect(type.status).toBe(415);
    expect(await type.json()).toMatchObject({ success: false, message: expect.any(String) });

    const relay = await fetch(`${s.url}/v1/models/%E0%A4%A`, { headers: { authorization: 'Bearer sk-x' } });
    expect(relay.status).toBe(400);
    const body = (await relay.json()) as { error: { message: string; type: string } };
    expect(body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(body.error.message).toMatch(/^无效的请求路径 \(request id: /);
  });

  it('takes an empty body sent as JSON as no body (a DELETE from a client that always sets the type), and still refuses prototype poisoning', async () => {
    const up2 = await MockUpstream.start();
    try {
      const id = await addChannel(s, { type: 1, key: 'sk-empty-json', baseUrl: up2.url, models: ['gpt-4o-mini'] });
      const gone = await root.request('DELETE', `/api/channel/${id}`, undefined, {
        'content-type': 'application/json',
      });
      expect(gone.body, JSON.stringify(gone.body)).toMatchObject({ success: true });
      expect(gone.status).toBe(200);
      expect(
        await s.ctx.db.selectFrom('channels').select('id').where('id', '=', id).executeTakeFirst(),
      ).toBeUndefined();
    } finally {
      await up2.close();
    }
    const before = await count('tokens');
    const poisoned = await fetch(`${s.url}/api/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: user.client.cookie!, 'New-Api-User': String(user.id) },
      body: '{"name":"p","__proto__":{"unlimited_quota":true}}',
    });
    expect(poisoned.status).toBe(400);
    expect(await poisoned.json()).toMatchObject({ success: false });
    expect(await count('tokens')).toBe(before);
  });

  it('refuses a relay request whose stream is not a boolean, or whose model holds a NUL, with an OpenAI-shaped 400, before any charge', async () => {
    await setOptions(s, { ModelRatio: { 'mock-chat': 1 } });
    await addChannel(s, { baseUrl: up.url, models: ['mock-chat'] });
    await channelsChanged(s);
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id, { unlimited: true });
    const calls = up.requests.length;
    for (const stream of ['yes', 1, { on: true }]) {
      const res = await relayPost(s, '/v1/chat/completions', t.key, {
        model: 'mock-chat',
        stream,
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: { message: string; type: string; param: string } };
      expect(body.error).toMatchObject({ type: 'invalid_request_error', param: 'stream' });
    }
    // a NUL in the model name (it goes into the consume log) is refused the same way, even on a channel pinned by an
    // admin's token, which skips the model's routing
    const admin = await addUser(s, { quota: 1_000_000, role: 10 });
    const pinned = await addToken(s, admin.id, { unlimited: true });
    const channelId = (
      await s.ctx.db.selectFrom('channels').select('id').where('base_url', '=', up.url).executeTakeFirstOrThrow()
    ).id;
    // self-use mode prices any model, so without the check the pinned request went upstream and was charged
    await setOptions(s, { SelfUseModeEnabled: 'true' });
    for (const key of [`${pinned.key}-${channelId}`, t.key]) {
      const res = await relayPost(s, '/v1/chat/completions', key, {
        model: 'mock\u0000chat',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { param: string } }).error).toMatchObject({
        type: 'invalid_request_error',
        param: 'model',
      });
    }
    expect(up.requests.length).toBe(calls);
    expect(
      (await s.ctx.db.selectFrom('users').select('quota').where('id', '=', u.id).executeTakeFirstOrThrow()).quota,
    ).toBe(1_000_000);
    expect(
      (await s.ctx.db.selectFrom('users').select('quota').where('id', '=', admin.id).executeTakeFirstOrThrow()).quota,
    ).toBe(1_000_000);
    await setOptions(s, { SelfUseModeEnabled: 'false' });
    // a model name longer than the log's column: refused for a channel, and by the relay before any charge
    const tooLong = 'm'.repeat(192);
    const refused = await root.post('/api/channel/', {
      mode: 'single',
      channel: { name: 'long', type: 1, key: 'k-long', models: tooLong, group: 'default' },
    });
    expect(refused.body).toEqual({ success: false, message: `模型名称过长: ${tooLong}` });
    await setOptions(s, { SelfUseModeEnabled: 'true' });
    const long = await relayPost(s, '/v1/chat/completions', `${pinned.key}-${channelId}`, {
      model: tooLong,
      messages: [{ role: 'user', content: 'hi' }],
    });
    await setOptions(s, { SelfUseModeEnabled: 'false' });
    expect(long.status).toBe(400);
    expect(up.requests.length).toBe(calls);
    expect(
      (await s.ctx.db.selectFrom('users').select('quota').where('id', '=', admin.id).executeTakeFirstOrThrow()).quota,
    ).toBe(1_000_000);
    // a boolean (or null) goes through
    const okRes = await relayPost(s, '/v1/chat/completions', t.key, {
      model: 'mock-chat',
      stream: false,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(okRes.status).toBe(200);
  });
});
