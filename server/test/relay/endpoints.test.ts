// The other relay endpoints on the same machinery: completions, embeddings (+ engines path), model lists, billing
// dashboard, /api/log/token, gzip bodies, Azure URLs, pass-through, param_override; and the channel probe API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, client, logsOf, setOptions, waitFor } from './fixtures.js';
import { upstreamModelsUrl } from '../../src/relay/channel-probe.js';

describe('relay endpoints', () => {
  let s: TestServer;
  let up: MockUpstream;
  let key: string;
  let userId: number;
  let adminHeaders: Record<string, string>;

  beforeAll(async () => {
    s = await startTestServer();
    up = await MockUpstream.start();
    await setOptions(s, {
      ModelRatio: {
        'e-chat': 1,
        'e-embed': 0.5,
        'gpt-3.5-turbo-instruct': 1,
        'az.model-1': 1,
        'pt-model': 1,
        'po-model': 1,
      },
    });
    await addChannel(s, { baseUrl: up.url, models: ['e-chat', 'e-embed', 'gpt-3.5-turbo-instruct'] });
    await addChannel(s, { type: 3, baseUrl: up.url, models: ['az.model-1'], key: 'azure-key', other: '2024-06-01' });
    await addChannel(s, { baseUrl: up.url, models: ['po-model'], paramOverride: { temperature: 0.1, extra: 'x' } });
    await channelsChanged(s);
    const u = await addUser(s, { quota: 10_000_000 });
    userId = u.id;
    key = (await addToken(s, u.id, { unlimited: false, remain: 5_000_000 })).key;
    const admin = await addUser(s, { role: 100, username: 'rootish' });
    await s.ctx.db
      .updateTable('users')
      .set({ access_token: 'admin-access-token' })
      .where('id', '=', admin.id)
      .execute();
    adminHeaders = { authorization: 'admin-access-token', 'new-api-user': String(admin.id) };
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  it('relays completions and embeddings (also /v1/engines/:model/embeddings) and bills them', async () => {
    up.reset();
    const c = client(s, key);
    const comp = await c.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say ok' });
    expect(comp.choices[0].text).toBe('ok');
    expect(up.requests[0].path).toBe('/v1/completions');
    const emb = await c.embeddings.create({ model: 'e-embed', input: 'hello', encoding_format: 'float' });
    expect(emb.data[0].embedding).toEqual([0.1, 0.2]);
    const res = await fetch(`${s.url}/v1/engines/e-embed/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: 'hello' }),
    });
    expect(res.status).toBe(200);
    expect(up.requests[2].body.model).toBe('e-embed');
    const logs = await logsOf(s, userId);
    const embLogs = logs.filter((l) => l.model_name === 'e-embed');
    expect(embLogs).toHaveLength(2);
    // 4 prompt tokens × 0.5
    expect(embLogs[0].quota).toBe(2);
    expect(embLogs[0].completion_tokens).toBe(0);
  });

  it('relays the legacy /v1/edits (instruction required) and bills its usage', async () => {
    up.reset();
    up.behave = (req) => ({
      kind: 'json',
      body: {
        object: 'edit',
        created: 1,
        choices: [{ index: 0, text: 'fixed' }],
        usage: { prompt_tokens: 25, completion_tokens: 5, total_tokens: 30 },
        model: req.body.model,
      },
    });
    const missing = await fetch(`${s.url}/v1/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'e-chat', input: 'teh' }),
    });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as any).error).toMatchObject({ code: 'invalid_text_request' });
    expect(up.requests).toHaveLength(0);
    const before = (await logsOf(s, userId)).length;
    const r = await fetch(`${s.url}/v1/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'e-chat', input: 'teh', instruction: 'fix the spelling' }),
    });
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).choices[0].text).toBe('fixed');
    expect(up.requests[0].path).toBe('/v1/edits');
    const logs = await logsOf(s, userId);
    expect(logs).toHaveLength(before + 1);
    // (25 + 5 × completion ratio 1) × model ratio 1
    expect(logs.at(-1)).toMatchObject({ model_name: 'e-chat', prompt_tokens: 25, completion_tokens: 5, quota: 30 });
  });

  it('applies the o-series rules (effort suffix, max_completion_tokens, developer role) and logs reasoning_effort', async () => {
    up.reset();
    await setOptions(s, {
      ModelRatio: {
        'e-chat': 1,
        'e-embed': 0.5,
        'gpt-3.5-turbo-instruct': 1,
        'az.model-1': 1,
        'pt-model': 1,
        'po-model': 1,
        'o3-mini': 1,
        'o3-mini-high': 1,
      },
    });
    const id = await addChannel(s, { baseUrl: up.url, models: ['o3-mini-high'] });
    await channelsChanged(s);
    await client(s, key).chat.completions.create({
      model: 'o3-mini-high',
      max_tokens: 50,
      temperature: 0.3,
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hi' },
      ],
    });
    const b = up.requests[0].body;
    expect(b.model).toBe('o3-mini');
    expect(b.reasoning_effort).toBe('high');
    expect(b.max_completion_tokens).toBe(50);
    expect(b.max_tokens).toBeUndefined();
    expect(b.temperature).toBeUndefined();
    expect(b.messages[0].role).toBe('developer');
    const l = (await logsOf(s, userId)).at(-1)!;
    expect(l.model_name).toBe('o3-mini-high');
    expect(l.otherJson.reasoning_effort).toBe('high');
    expect(l.otherJson.is_model_mapped).toBeUndefined();
    expect(l.channel_id).toBe(id);
  });

  it('accepts gzip request bodies', async () => {
    up.reset();
    const res = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ model: 'e-chat', messages: [{ role: 'user', content: 'zip' }] })),
    });
    expect(res.status).toBe(200);
    expect(up.requests[0].body.messages[0].content).toBe('zip');
  });

  it('builds Azure deployment URLs with api-key', async () => {
    up.reset();
    await client(s, key).chat.completions.create({ model: 'az.model-1', messages: [{ role: 'user', content: 'a' }] });
    expect(up.requests[0].path).toBe('/openai/deployments/azmodel-1/chat/completions?api-version=2024-06-01');
    expect(up.requests[0].headers['api-key']).toBe('azure-key');
    expect(up.requests[0].headers.authorization).toBeUndefined();
  });

  it('applies param_override, and forwards raw bytes in pass-through mode', async () => {
    up.reset();
    await client(s, key).chat.completions.create({
      model: 'po-model',
      messages: [{ role: 'user', content: 'a' }],
      temperature: 0.9,
    });
    expect(up.requests[0].body.temperature).toBe(0.1);
    expect(up.requests[0].body.extra).toBe('x');
    await setOptions(s, { 'global.pass_through_request_enabled': 'true' });
    const raw = '{"model":"po-model","messages":[{"role":"user","content":"a"}],"temperature":0.9,"stream":false}';
    await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: raw,
    });
    await setOptions(s, { 'global.pass_through_request_enabled': 'false' });
    expect(up.requests[1].raw).toBe(raw);
  });

  it('lists models for the token (group models, or the token limits)', async () => {
    const list = await client(s, key).models.list();
    const ids = list.data.map((m) => m.id).sort();
    expect(ids).toEqual(
      ['az.model-1', 'e-chat', 'e-embed', 'gpt-3.5-turbo-instruct', 'o3-mini-high', 'po-model'].sort(),
    );
    const limited = await addToken(s, userId, { modelLimits: 'e-chat' });
    const r = await fetch(`${s.url}/v1/models`, { headers: { authorization: `Bearer sk-${limited.key}` } });
    const j = (await r.json()) as any;
    expect(j.success).toBe(true);
    expect(j.data.map((m: { id: string }) => m.id)).toEqual(['e-chat']);
    expect(j.data[0]).toMatchObject({ object: 'model', created: 1626777600 });
    const one = await fetch(`${s.url}/v1/models/nonexistent-xyz`, { headers: { authorization: `Bearer sk-${key}` } });
    expect(one.status).toBe(200);
    expect(((await one.json()) as any).error.code).toBe('model_not_found');
  });

  it('answers the OpenAI billing endpoints', async () => {
    await logsOf(s, userId);
    const sub = await fetch(`${s.url}/v1/dashboard/billing/subscription`, {
      headers: { authorization: `Bearer sk-${key}` },
    });
    const j = (await sub.json()) as any;
    expect(j.object).toBe('billing_subscription');
    // DisplayTokenStatEnabled: remain + used of the token, in USD
    const tok = await s.ctx.db
      .selectFrom('tokens')
      .select(['remain_quota', 'used_quota'])
      .where('key', '=', key)
      .executeTakeFirstOrThrow();
    expect(j.hard_limit_usd).toBeCloseTo((tok.remain_quota + tok.used_quota) / 500000, 9);
    const usage = (await (
      await fetch(`${s.url}/dashboard/billing/usage`, { headers: { authorization: `Bearer sk-${key}` } })
    ).json()) as any;
    expect(usage.object).toBe('list');
    expect(usage.total_usage).toBeCloseTo((tok.used_quota / 500000) * 100, 9);

    // access_until: the token's expiry with the token's figures, none with the user's (as new-api)
    const expiring = await addToken(s, userId, { expired: 4_000_000_000 });
    const subOf = async () =>
      (await (
        await fetch(`${s.url}/dashboard/billing/subscription`, {
          headers: { authorization: `Bearer sk-${expiring.key}` },
        })
      ).json()) as any;
    expect((await subOf()).access_until).toBe(4_000_000_000);
    await setOptions(s, { DisplayTokenStatEnabled: 'false' });
    try {
      const byUser = await subOf();
      const user = await s.ctx.db
        .selectFrom('users')
        .select(['quota', 'used_quota'])
        .where('id', '=', userId)
        .executeTakeFirstOrThrow();
      expect(byUser.hard_limit_usd).toBeCloseTo((user.quota + user.used_quota) / 500000, 9);
      expect(byUser.access_until).toBe(0);
    } finally {
      await setOptions(s, { DisplayTokenStatEnabled: 'true' });
    }
  });

  it('returns a token’s logs on /api/log/token without auth, with CORS', async () => {
    const r = await fetch(`${s.url}/api/log/token?key=sk-${key}`, { headers: { origin: 'https://a.example' } });
    expect(r.headers.get('access-control-allow-origin')).toBe('https://a.example');
    const j = (await r.json()) as any;
    expect(j.success).toBe(true);
    expect(j.data.length).toBeGreaterThan(0);
    // the owner's view of user logs (new-api-compat.md §3.5): `channel` (not channel_id), no channel name, id % 1024,
    // no admin_info
    const row = await s.ctx.logDb
      .selectFrom('logs')
      .selectAll()
      .where('token_id', '=', j.data[0].token_id)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(j.data[0]).toMatchObject({
      id: row.id % 1024,
      channel: row.channel_id,
      channel_name: '',
      quota: row.quota,
      model_name: row.model_name,
    });
    expect(j.data[0].channel_id).toBeUndefined();
    expect(JSON.parse(j.data[0].other).admin_info).toBeUndefined();
  });

  it('tests a channel (no charge, test log), fetches its models, and updates its balance', async () => {
    up.reset();
    const id = await addChannel(s, { baseUrl: up.url, models: ['e-chat'], name: 'probe-me' });
    await channelsChanged(s);
    const before = await s.ctx.db
      .selectFrom('users')
      .select('quota')
      .where('username', '=', 'rootish')
      .executeTakeFirstOrThrow();
    const r = (await (await fetch(`${s.url}/api/channel/test/${id}`, { headers: adminHeaders })).json()) as any;
    expect(r.success).toBe(true);
    expect(typeof r.time).toBe('number');
    expect(up.requests[0].body).toMatchObject({ model: 'e-chat', max_tokens: 10 });
    const row = await s.ctx.db
      .selectFrom('channels')
      .select(['test_time', 'response_time'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.test_time).toBeGreaterThan(0);
    const after = await s.ctx.db
      .selectFrom('users')
      .select('quota')
      .where('username', '=', 'rootish')
      .executeTakeFirstOrThrow();
    expect(after.quota).toBe(before.quota);
    const models = (await (
      await fetch(`${s.url}/api/channel/fetch_models/${id}`, { headers: adminHeaders })
    ).json()) as any;
    expect(models).toEqual({ success: true, message: '', data: ['up-a', 'up-b'] });
    const posted = (await (
      await fetch(`${s.url}/api/channel/fetch_models`, {
        method: 'POST',
        headers: { ...adminHeaders, 'content-type': 'application/json' },
        body: JSON.stringify({ base_url: up.url, type: 1, key: 'k' }),
      })
    ).json()) as any;
    expect(posted.data).toEqual(['up-a', 'up-b']);
    // new-api answers this POST with 400 / 500 on errors, still enveloped (new-api-compat.md §3.1)
    const noKey = await fetch(`${s.url}/api/channel/fetch_models`, {
      method: 'POST',
      headers: { ...adminHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ base_url: up.url, type: 1 }),
    });
    expect(noKey.status).toBe(400);
    expect(await noKey.json()).toEqual({ success: false, message: 'key 不能为空' });
    const down = await fetch(`${s.url}/api/channel/fetch_models`, {
      method: 'POST',
      headers: { ...adminHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ base_url: 'http://127.0.0.1:1', type: 1, key: 'k' }),
    });
    expect(down.status).toBe(500);
    expect(((await down.json()) as any).message).toMatch(/^获取模型列表失败: /);
    up.behave = (req) =>
      req.path.includes('subscription')
        ? { kind: 'json', body: { hard_limit_usd: 20 } }
        : { kind: 'json', body: { total_usage: 550 } };
    // with the trailing slash, as new-api's console calls it
    const bal = (await (
      await fetch(`${s.url}/api/channel/update_balance/${id}/`, { headers: adminHeaders })
    ).json()) as any;
    expect(bal).toEqual({ success: true, message: '', balance: 14.5 });
    const azure = (await s.ctx.db.selectFrom('channels').select('id').where('type', '=', 3).executeTakeFirstOrThrow())
      .id;
    const nb = (await (
      await fetch(`${s.url}/api/channel/update_balance/${azure}`, { headers: adminHeaders })
    ).json()) as any;
    expect(nb).toEqual({ success: false, message: '尚未实现' });
    const anon = (await (await fetch(`${s.url}/api/channel/test/${id}`)).json()) as any;
    expect(anon.success).toBe(false);
  });

  it('fetches the models of a custom channel whose base URL is a whole chat URL from its /models sibling', async () => {
    up.reset();
    const id = await addChannel(s, { type: 8, baseUrl: `${up.url}/v1/chat/completions`, models: ['custom-m'] });
    await channelsChanged(s);
    const r = (await (await fetch(`${s.url}/api/channel/fetch_models/${id}`, { headers: adminHeaders })).json()) as any;
    expect(r).toEqual({ success: true, message: '', data: ['up-a', 'up-b'] });
    expect(up.requests.at(-1)!.path).toBe('/v1/models');
    expect(upstreamModelsUrl(1, 'https://api.openai.com')).toBe('https://api.openai.com/v1/models');
    expect(upstreamModelsUrl(24, 'https://g.example')).toBe('https://g.example/v1beta/models?pageSize=1000');
    expect(upstreamModelsUrl(17, 'https://dashscope.aliyuncs.com')).toBe(
      'https://dashscope.aliyuncs.com/compatible-mode/v1/models',
    );
  });

  it('updates the balance of OpenRouter, Moonshot, DeepSeek and SiliconFlow channels from their own endpoints', async () => {
    up.reset();
    up.behave = (req) => {
      if (req.path === '/api/v1/credits')
        return { kind: 'json', body: { data: { total_credits: 20, total_usage: 4.25 } } };
      if (req.path === '/v1/users/me/balance')
        return {
          kind: 'json',
          body: {
            code: 0,
            status: true,
            scode: '0x0',
            data: { available_balance: 73, voucher_balance: 0, cash_balance: 73 },
          },
        };
      if (req.path === '/user/balance')
        return {
          kind: 'json',
          body: {
            is_available: true,
            balance_infos: [
              { currency: 'USD', total_balance: '1.00' },
              { currency: 'CNY', total_balance: '110.50' },
            ],
          },
        };
      if (req.path === '/v1/user/info')
        return { kind: 'json', body: { code: 20000, message: 'OK', data: { totalBalance: '8.8' } } };
      return { kind: 'json', status: 404, body: {} };
    };
    const balanceOf = async (type: number, baseUrl: string) => {
      const id = await addChannel(s, { type, baseUrl, models: [`bal-${type}`] });
      await channelsChanged(s);
      const r = (await (
        await fetch(`${s.url}/api/channel/update_balance/${id}`, { headers: adminHeaders })
      ).json()) as any;
      const row = await s.ctx.db
        .selectFrom('channels')
        .select(['balance', 'balance_updated_time'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      if (r.success) expect(row.balance).toBeCloseTo(r.balance, 9);
      return r;
    };
    // OpenRouter's default base URL ends in /api: the credits path is not doubled
    expect(await balanceOf(20, `${up.url}/api`)).toEqual({ success: true, message: '', balance: 15.75 });
    expect(up.requests.at(-1)!.path).toBe('/api/v1/credits');
    // Moonshot reports CNY: divided by the Price option (7.3)
    expect((await balanceOf(25, up.url)).balance).toBeCloseTo(10, 9);
    // DeepSeek: the CNY entry, wherever it is in the list
    expect((await balanceOf(43, up.url)).balance).toBe(110.5);
    expect((await balanceOf(40, up.url)).balance).toBe(8.8);
    expect(up.requests.every((r) => r.headers.authorization === 'Bearer sk-upstream')).toBe(true);
  });

  it('updating all balances disables an enabled channel left with none (余额不足), unless it opted out of auto-disable', async () => {
    up.reset();
    up.behave = (req) =>
      req.path === '/user/balance'
        ? {
            kind: 'json',
            body: {
              balance_infos: [
                { currency: 'CNY', total_balance: req.headers.authorization === 'Bearer k-full' ? '5.00' : '0.00' },
              ],
            },
          }
        : { kind: 'json', status: 404, body: {} };
    const empty = await addChannel(s, { type: 43, baseUrl: up.url, models: ['ds-1'], key: 'k-empty' });
    const full = await addChannel(s, { type: 43, baseUrl: up.url, models: ['ds-1'], key: 'k-full' });
    const kept = await addChannel(s, { type: 43, baseUrl: up.url, models: ['ds-1'], key: 'k-empty', autoBan: 0 });
    await channelsChanged(s);
    const r = (await (await fetch(`${s.url}/api/channel/update_balance`, { headers: adminHeaders })).json()) as any;
    expect(r.success).toBe(true);
    const rows = await s.ctx.db
      .selectFrom('channels')
      .select(['id', 'status', 'balance', 'other_info'])
      .where('id', 'in', [empty, full, kept])
      .orderBy('id')
      .execute();
    expect(rows.map((x) => [x.status, x.balance])).toEqual([
      [3, 0],
      [1, 5],
      [1, 0],
    ]);
    expect(JSON.parse(rows[0].other_info).status_reason).toBe('余额不足');
  });

  it('test-all disables a failing channel and re-enables it when it recovers', async () => {
    up.reset();
    await setOptions(s, { AutomaticDisableChannelEnabled: 'true', AutomaticEnableChannelEnabled: 'true' });
    const id = await addChannel(s, { baseUrl: up.url, models: ['e-chat'], key: 'k-flaky', name: 'flaky' });
    await channelsChanged(s);
    up.behave = (req) =>
      req.headers.authorization === 'Bearer k-flaky'
        ? { kind: 'json', status: 401, body: { error: { message: 'invalid key', type: 'authentication_error' } } }
        : {
            kind: 'json',
            body: {
              id: 'x',
              object: 'chat.completion',
              choices: [{ index: 0, message: { role: 'assistant', content: 'ok' } }],
              usage: { prompt_tokens: 1, completion_tokens: 1 },
            },
          };
    const r = (await (await fetch(`${s.url}/api/channel/test`, { headers: adminHeaders })).json()) as any;
    expect(r.success).toBe(true);
    const status = async () =>
      (await s.ctx.db.selectFrom('channels').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
    await waitFor(async () => (await status()) === 3, 10_000);
    up.reset();
    await waitFor(
      async () =>
        ((await (await fetch(`${s.url}/api/channel/test`, { headers: adminHeaders })).json()) as any).success === true,
      10_000,
    );
    await waitFor(async () => (await status()) === 1, 10_000);
    await setOptions(s, { AutomaticDisableChannelEnabled: 'false', AutomaticEnableChannelEnabled: 'false' });
  });
});
