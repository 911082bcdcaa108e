// Channel types without an adaptor that speaks their vendor's protocol (Vertex AI, Claude, Gemini, …): the console
// refuses to create or edit them, and channels of such types already in the database (written by new-api) are never
// sent a request: before, a Vertex AI channel got an OpenAI request with its service-account JSON as a Bearer token.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { startConsole } from './fixture.js';
import { addChannel, addToken, addUser, channelsChanged, relayPost, setOptions, userRow } from '../relay/fixtures.js';

const VERTEX_KEY = JSON.stringify({
  type: 'service_account',
  project_id: 'p',
  private_key: '-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n',
});
const refusal = (name: string, type: number) =>
  `渠道类型 ${name}（${type}）暂不支持：本网关还没有该类型的适配器，不会向它转发请求`;

await describeEachDb('channel types without an adaptor', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let vertexUp: MockUpstream;
  let openaiUp: MockUpstream;

  beforeAll(async () => {
    ({ server, root } = await startConsole(kind));
    vertexUp = await MockUpstream.start();
    openaiUp = await MockUpstream.start();
    await setOptions(server, { ModelRatio: { 'gemini-1.5-pro-002': 1, 'shared-model': 1 } });
  });
  afterAll(async () => {
    await server?.close();
    await vertexUp?.close();
    await openaiUp?.close();
  });
  beforeEach(async () => {
    await server.ctx.db.deleteFrom('abilities').execute();
    await server.ctx.db.deleteFrom('channels').execute();
    await channelsChanged(server);
    vertexUp.reset();
    openaiUp.reset();
  });

  const channelRows = () => server.ctx.db.selectFrom('channels').selectAll().execute();

  it('refuses to create a Vertex AI, Claude or Gemini channel, naming the type, and saves nothing', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { type: 21, key: VERTEX_KEY, other: 'us-central1', models: 'gemini-1.5-pro-002' },
        refusal('知识库：AI Proxy', 21),
      ],
      [
        {
          mode: 'single',
          // new-api accepts type 21 but can never relay it (no adaptor): refused here as it is
          channel: { name: 'aiproxy', type: '21', key: 'sk-1', models: ['gpt-3.5-turbo'] },
        },
        refusal('知识库：AI Proxy', 21),
      ],
    ];
    for (const [body, message] of cases) {
      const res = await root.post(
        '/api/channel/',
        'channel' in body ? body : { name: 'x', base_url: vertexUp.url, ...body },
      );
      expect(res.body).toEqual({ success: false, message });
    }
    expect(await channelRows()).toEqual([]);
    expect(await server.ctx.db.selectFrom('abilities').selectAll().execute()).toEqual([]);
    // the OpenAI-compatible types are still accepted
    for (const type of [1, 8, 43, 48]) {
      const res = await root.post('/api/channel/', {
        name: `ok${type}`,
        type,
        key: 'sk-1',
        models: 'm',
        base_url: openaiUp.url,
      });
      expect(res.body.success, JSON.stringify(res.body)).toBe(true);
    }
  });

  it('refuses to switch a channel to such a type, and to edit one new-api wrote, but lets it be disabled', async () => {
    const created = await root.post('/api/channel/', {
      name: 'oa',
      type: 1,
      key: 'sk-1',
      models: 'gpt-4o',
      base_url: openaiUp.url,
    });
    const id = created.body.data.ids[0];
    const res = await root.put('/api/channel/', { id, type: 21, key: VERTEX_KEY, other: 'us-central1' });
    expect(res.body).toEqual({ success: false, message: refusal('知识库：AI Proxy', 21) });
    const row = await server.ctx.db
      .selectFrom('channels')
      .select(['type', 'key', 'other'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ type: 1, key: 'sk-1', other: '' });

    const vertexId = await addChannel(server, {
      type: 21,
      key: VERTEX_KEY,
      baseUrl: vertexUp.url,
      other: 'us-central1',
      models: ['gemini-1.5-pro-002'],
      status: 2,
    });
    const enable = await root.put('/api/channel/', { id: vertexId, status: 1 });
    expect(enable.body).toEqual({ success: false, message: refusal('知识库：AI Proxy', 21) });
    const rename = await root.put('/api/channel/', { id: vertexId, name: 'renamed', base_url: 'http://127.0.0.1:1' });
    expect(rename.body).toEqual({ success: false, message: refusal('知识库：AI Proxy', 21) });
    expect(
      await server.ctx.db
        .selectFrom('channels')
        .select(['status', 'base_url'])
        .where('id', '=', vertexId)
        .executeTakeFirstOrThrow(),
    ).toEqual({
      status: 2,
      base_url: vertexUp.url,
    });
    const disable = await root.put('/api/channel/', { id: vertexId, status: 2 });
    expect(disable.body.success, JSON.stringify(disable.body)).toBe(true);
    // nor can it be copied into a new channel
    const copy = await root.post(`/api/channel/copy/${vertexId}`);
    expect(copy.body).toEqual({ success: false, message: refusal('知识库：AI Proxy', 21) });
    expect(await channelRows()).toHaveLength(2);
  });

  it('never sends a request to a Vertex AI channel new-api wrote: another channel serves, or the caller gets a clear error', async () => {
    const vertexId = await addChannel(server, {
      type: 21,
      key: VERTEX_KEY,
      baseUrl: vertexUp.url,
      other: 'us-central1',
      models: ['gemini-1.5-pro-002', 'shared-model'],
      priority: 10,
    });
    await channelsChanged(server);
    const user = await addUser(server, { quota: 1_000_000 });
    const { key } = await addToken(server, user.id);

    // its only channel is the Vertex one: no channel, nothing charged
    const alone = await relayPost(server, '/v1/chat/completions', key, {
      model: 'gemini-1.5-pro-002',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(alone.status).toBe(503);
    const body = (await alone.json()) as { error: { message: string } };
    expect(body.error.message).toContain('gemini-1.5-pro-002');
    expect((await userRow(server, user.id)).quota).toBe(1_000_000);

    // an OpenAI channel of lower priority serves the model both offer
    await addChannel(server, {
      type: 1,
      key: 'sk-openai',
      baseUrl: openaiUp.url,
      models: ['shared-model'],
      priority: 0,
    });
    await channelsChanged(server);
    for (let i = 0; i < 3; i++) {
      const res = await relayPost(server, '/v1/chat/completions', key, {
        model: 'shared-model',
        messages: [{ role: 'user', content: 'hi' }],
      });
      expect(res.status).toBe(200);
    }
    expect(openaiUp.requests).toHaveLength(3);
    expect(openaiUp.requests[0].headers.authorization).toBe('Bearer sk-openai');

    // an admin pinning the Vertex channel (sk-<key>-<id>) gets the OpenAI error shape, not a request upstream
    const admin = await addUser(server, { role: 10, quota: 1_000_000 });
    const adminToken = await addToken(server, admin.id);
    const pinned = await relayPost(server, '/v1/chat/completions', `${adminToken.key}-${vertexId}`, {
      model: 'gemini-1.5-pro-002',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(pinned.status).toBe(400);
    const pinnedError = ((await pinned.json()) as { error: { message: string } }).error;
    expect(pinnedError.message).toContain(refusal('知识库：AI Proxy', 21));
    expect(pinnedError).toMatchObject({ type: 'new_api_error', code: 'channel_type_not_supported' });
    expect((await userRow(server, admin.id)).quota).toBe(1_000_000);

    // nor does the channel test reach it
    const test = await root.get(`/api/channel/test/${vertexId}`);
    expect(test.body).toMatchObject({ success: false, message: refusal('知识库：AI Proxy', 21) });
    // nor the model list, by id or with the key given in the form
    const models = await root.get(`/api/channel/fetch_models/${vertexId}`);
    expect(models.body).toEqual({ success: false, message: `获取模型列表失败: ${refusal('知识库：AI Proxy', 21)}` });
    const formModels = await root.post('/api/channel/fetch_models', {
      type: 21,
      base_url: vertexUp.url,
      key: VERTEX_KEY,
    });
    expect(formModels.body).toEqual({
      success: false,
      message: `获取模型列表失败: ${refusal('知识库：AI Proxy', 21)}`,
    });

    expect(vertexUp.requests).toEqual([]);
  });
});
