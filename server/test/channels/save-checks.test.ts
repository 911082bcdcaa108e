// Saves that would leave a channel unusable are refused (issue 41): Azure, custom and Xinference without an http(s)
// base URL, a Vertex AI key that is no service-account key file, an out-of-range thinking budget share. And test-all
// goes on past a channel whose test throws.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { startConsole } from './fixture.js';
import { addChannel, channelsChanged, setOptions, waitFor } from '../relay/fixtures.js';

const VERTEX_KEY = JSON.stringify({
  type: 'service_account',
  project_id: 'p',
  private_key_id: 'k1',
  private_key: '-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n',
  client_email: 'relay@p.iam.gserviceaccount.com',
});

await describeEachDb('channel save checks and test-all', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let up: MockUpstream;

  beforeAll(async () => {
    ({ server, root } = await startConsole(kind));
    up = await MockUpstream.start();
    await setOptions(server, { ModelRatio: { 'ok-model': 1, 'az-model': 1 } });
  });
  afterAll(async () => {
    await server?.close();
    await up?.close();
  });
  beforeEach(async () => {
    await server.ctx.db.deleteFrom('abilities').execute();
    await server.ctx.db.deleteFrom('channels').execute();
    await channelsChanged(server);
    up.reset();
  });

  const channelRows = () => server.ctx.db.selectFrom('channels').selectAll().orderBy('id').execute();
  const NO_BASE_URL = '该渠道类型必须填写代理地址（Base URL）';
  const BAD_BASE_URL = '代理地址（Base URL）必须是以 http:// 或 https:// 开头的合法地址';

  it('refuses Azure, custom and Xinference channels without an http(s) base URL, in every create form', async () => {
    for (const type of [3, 8, 47]) {
      const base = { name: `t${type}`, type, key: 'sk-1\nsk-2', models: 'm', other: type === 3 ? '2024-06-01' : '' };
      const cases: Array<[Record<string, unknown>, string]> = [
        [base, NO_BASE_URL],
        [{ ...base, base_url: '' }, NO_BASE_URL],
        [{ ...base, base_url: '   ' }, NO_BASE_URL],
        [{ ...base, base_url: 'upstream.example' }, BAD_BASE_URL],
        [{ ...base, base_url: 'ftp://upstream.example' }, BAD_BASE_URL],
        [{ mode: 'batch', channel: { ...base, base_url: '' } }, NO_BASE_URL],
        [{ mode: 'single', channel: { ...base, base_url: 'javascript:alert(1)' } }, BAD_BASE_URL],
      ];
      for (const [body, message] of cases) {
        const res = await root.post('/api/channel/', body);
        expect(res.body, `${type} ${JSON.stringify(body)}`).toEqual({ success: false, message });
      }
    }
    expect(await channelRows()).toEqual([]);
    expect(await server.ctx.db.selectFrom('abilities').selectAll().execute()).toEqual([]);
    // with a base URL they are created (one channel per key line), and other types still need none
    for (const type of [3, 8, 47]) {
      const res = await root.post('/api/channel/', {
        mode: 'batch',
        channel: { name: `ok${type}`, type, key: 'sk-1\nsk-2', models: 'm', base_url: 'https://upstream.example/' },
      });
      expect(res.body.success, JSON.stringify(res.body)).toBe(true);
    }
    expect((await root.post('/api/channel/', { name: 'oa', type: 1, key: 'sk', models: 'm' })).body.success).toBe(true);
    const rows = await channelRows();
    expect(rows.map((r) => [r.type, r.base_url])).toEqual([
      [3, 'https://upstream.example'],
      [3, 'https://upstream.example'],
      [8, 'https://upstream.example'],
      [8, 'https://upstream.example'],
      [47, 'https://upstream.example'],
      [47, 'https://upstream.example'],
      [1, ''],
    ]);
  });

  it('refuses an edit that empties the base URL of such a channel or switches to such a type without one', async () => {
    const created = await root.post('/api/channel/', {
      name: 'custom',
      type: 8,
      key: 'sk-1',
      models: 'm',
      base_url: 'http://127.0.0.1:9',
    });
    const id = created.body.data.ids[0];
    const openai = (await root.post('/api/channel/', { name: 'oa', type: 1, key: 'sk', models: 'm' })).body.data.ids[0];
    const refused: Array<[Record<string, unknown>, string]> = [
      [{ id, base_url: '' }, NO_BASE_URL],
      [{ id, name: 'renamed', base_url: 'not a url' }, BAD_BASE_URL],
      [{ id: openai, type: 3 }, NO_BASE_URL],
      [{ id: openai, type: 47, base_url: 'file:///etc/passwd' }, BAD_BASE_URL],
    ];
    for (const [body, message] of refused) {
      expect((await root.put('/api/channel/', body)).body, JSON.stringify(body)).toEqual({ success: false, message });
    }
    expect((await channelRows()).map((r) => [r.name, r.type, r.base_url])).toEqual([
      ['custom', 8, 'http://127.0.0.1:9'],
      ['oa', 1, ''],
    ]);
    // edits of other fields, a new base URL and a switch with one go through
    expect((await root.put('/api/channel/', { id, priority: 5 })).body.success).toBe(true);
    expect((await root.put('/api/channel/', { id, base_url: 'https://other.example' })).body.success).toBe(true);
    const sw = await root.put('/api/channel/', { id: openai, type: 3, base_url: 'https://az.example', other: '2024' });
    expect(sw.body.success, JSON.stringify(sw.body)).toBe(true);
    expect((await channelRows()).map((r) => [r.name, r.type, r.base_url, r.priority])).toEqual([
      ['custom', 8, 'https://other.example', 5],
      ['oa', 3, 'https://az.example', 0],
    ]);
  });

  it('refuses a Vertex AI key that is not a service-account key file, on create and on edit', async () => {
    const sa = JSON.parse(VERTEX_KEY) as Record<string, string>;
    const without = (f: string) => JSON.stringify({ ...sa, [f]: undefined });
    const cases: Array<[string, string]> = [
      ['{}', 'Vertex AI 密钥缺少字段：project_id, private_key_id, private_key, client_email'],
      ['not json', 'Vertex AI 密钥必须是合法的 JSON 格式（服务账号密钥文件）'],
      ['[1]', 'Vertex AI 密钥必须是服务账号密钥文件的 JSON 对象'],
      [without('client_email'), 'Vertex AI 密钥缺少字段：client_email'],
      [without('private_key'), 'Vertex AI 密钥缺少字段：private_key'],
      [JSON.stringify({ ...sa, type: 'authorized_user' }), 'Vertex AI 密钥的 type 必须是 service_account'],
      [JSON.stringify({ ...sa, private_key: 'abc' }), 'Vertex AI 密钥的 private_key 不是 PEM 格式的私钥'],
    ];
    for (const [key, message] of cases) {
      const res = await root.post('/api/channel/', {
        name: 'vx',
        type: 41,
        key,
        other: 'us-central1',
        models: 'gemini-1.5-pro-002',
      });
      expect(res.body, key).toEqual({ success: false, message });
    }
    expect(await channelRows()).toEqual([]);
    const created = await root.post('/api/channel/', {
      name: 'vx',
      type: 41,
      key: VERTEX_KEY,
      other: 'us-central1',
      models: 'gemini-1.5-pro-002',
    });
    expect(created.body.success, JSON.stringify(created.body)).toBe(true);
    const id = created.body.data.ids[0];
    expect((await root.put('/api/channel/', { id, key: '{}' })).body).toEqual({ success: false, message: cases[0][1] });
    // switching an OpenAI channel to Vertex AI checks the key it keeps
    const oa = (await root.post('/api/channel/', { name: 'oa', type: 1, key: 'sk-x', models: 'm' })).body.data.ids[0];
    expect((await root.put('/api/channel/', { id: oa, type: 41, other: 'us-central1' })).body).toEqual({
      success: false,
      message: 'Vertex AI 密钥必须是合法的 JSON 格式（服务账号密钥文件）',
    });
    expect((await channelRows()).map((r) => [r.type, r.key])).toEqual([
      [41, VERTEX_KEY],
      [1, 'sk-x'],
    ]);
    expect((await root.put('/api/channel/', { id, name: 'vx2' })).body.success).toBe(true);
  });

  it('refuses a thinking budget share outside 0 < p < 1 and keeps the stored one', async () => {
    for (const key of [
      'claude.thinking_adapter_budget_tokens_percentage',
      'gemini.thinking_adapter_budget_tokens_percentage',
    ]) {
      const before = server.ctx.options.get(key);
      for (const value of ['0', '-0.5', '1', '1.5', '80', 'abc', '']) {
        const res = await root.put('/api/option/', { key, value });
        expect(res.body.success, `${key}=${value}`).toBe(false);
        expect(res.body.message).toMatch(new RegExp(`^${key.replace(/\./g, '\\.')} 的值必须`));
      }
      expect((await root.put('/api/option/', { key, value: 1 })).body).toEqual({
        success: false,
        message: `${key} 的值必须大于 0 且小于 1`,
      });
      expect(server.ctx.options.get(key)).toBe(before);
      const row = await server.ctx.db.selectFrom('options').select('value').where('key', '=', key).executeTakeFirst();
      expect(row?.value ?? before).toBe(before);
      expect((await root.put('/api/option/', { key, value: 0.5 })).body.success).toBe(true);
      expect(server.ctx.options.get(key)).toBe('0.5');
      await root.put('/api/option/', { key, value: before });
    }
  });

  it('test-all goes on past a channel whose test throws, recording it as that channel’s failed test', async () => {
    await setOptions(server, { AutomaticDisableChannelEnabled: 'true', AutomaticEnableChannelEnabled: 'true' });
    // saved before the base URL check (or by new-api): its request cannot be built (Invalid URL)
    const broken = await addChannel(server, {
      type: 3,
      baseUrl: '',
      models: ['az-model'],
      key: 'az-key',
      other: '2024',
    });
    const healthy = await addChannel(server, { baseUrl: up.url, models: ['ok-model'], key: 'k-ok' });
    const recovered = await addChannel(server, { baseUrl: up.url, models: ['ok-model'], key: 'k-back', status: 3 });
    await channelsChanged(server);
    const res = await root.get('/api/channel/test');
    expect(res.body).toEqual({ success: true, message: '' });
    const row = (id: number) =>
      server.ctx.db
        .selectFrom('channels')
        .select(['status', 'test_time', 'response_time'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    await waitFor(async () => (await row(recovered)).test_time > 0, 10_000);
    expect(await row(healthy)).toMatchObject({ status: 1 });
    expect((await row(healthy)).test_time).toBeGreaterThan(0);
    // the recovered, automatically disabled channel answered: re-enabled, its abilities on again
    expect((await row(recovered)).status).toBe(1);
    const abilities = await server.ctx.db
      .selectFrom('abilities')
      .select('enabled')
      .where('channel_id', '=', recovered)
      .execute();
    expect(abilities.map((a) => Boolean(a.enabled))).toEqual([true]);
    // the broken one's failure is its own failed test: tested, not disabled (nothing upstream said so)
    const b = await row(broken);
    expect(b.test_time).toBeGreaterThan(0);
    expect(b.response_time).toBe(0);
    expect(b.status).toBe(1);
    expect(up.requests.map((r) => r.headers.authorization).sort()).toEqual(['Bearer k-back', 'Bearer k-ok']);
    // a single test of the broken channel answers the failure instead of a 500
    const single = await root.get(`/api/channel/test/${broken}`);
    expect(single.status).toBe(200);
    expect(single.body).toMatchObject({ success: false, time: 0 });
    expect(single.body.message).toMatch(/Invalid URL/i);
    await setOptions(server, { AutomaticDisableChannelEnabled: 'false', AutomaticEnableChannelEnabled: 'false' });
  });
});
