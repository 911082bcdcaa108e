// GET /api/pricing over a real server on SQLite: rows from enabled abilities, price vs ratio models, usable
// groups for anonymous and logged-in callers, the one-minute ability cache and its invalidation; video models charged
// per second marked `billing_unit: 'second'`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { registerAndLogin } from '../console/fixtures.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ kind: 'sqlite' });
  const rows = [
    { group: 'default', model: 'gpt-4o', channel_id: 1, enabled: true },
    { group: 'vip', model: 'gpt-4o', channel_id: 2, enabled: true },
    { group: 'default', model: 'gpt-4o', channel_id: 3, enabled: true },
    { group: 'default', model: 'dall-e-3', channel_id: 1, enabled: true },
    { group: 'default', model: 'mystery-model', channel_id: 1, enabled: true },
    { group: 'default', model: 'disabled-only', channel_id: 4, enabled: false },
  ];
  await server.ctx.db.insertInto('abilities').values(rows).execute();
});
afterAll(async () => server?.close());

describe('GET /api/pricing', () => {
  it('lists models of enabled abilities with their billing type, for an anonymous caller', async () => {
    const res = await new ConsoleClient(server.url).get('/api/pricing');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      message: '',
      data: [
        {
          model_name: 'dall-e-3',
          quota_type: 1,
          model_ratio: 0,
          model_price: 0.04,
          owner_by: '',
          completion_ratio: 0,
          enable_groups: ['default'],
          priced: true,
        },
        {
          model_name: 'gpt-4o',
          quota_type: 0,
          model_ratio: 1.25,
          model_price: 0,
          owner_by: '',
          completion_ratio: 4,
          enable_groups: ['default', 'vip'],
          priced: true,
        },
        {
          model_name: 'mystery-model',
          quota_type: 0,
          model_ratio: 37.5,
          model_price: 0,
          owner_by: '',
          completion_ratio: 1,
          enable_groups: ['default'],
          // no ratio of its own: shown with new-api's fallback 37.5, refused when called
          priced: false,
        },
      ],
      // svip has a ratio but is not a usable group, so it is filtered out
      group_ratio: { default: 1, vip: 1 },
      usable_group: { default: '默认分组', vip: 'vip分组' },
    });
  });

  it('adds the logged-in user’s own group to the usable groups and its ratio', async () => {
    const u = await registerAndLogin(server);
    await server.ctx.db.updateTable('users').set({ group: 'svip' }).where('id', '=', u.id).execute();
    await server.ctx.options.set('GroupRatio', JSON.stringify({ default: 1, vip: 1.2, svip: 0.8, hidden: 3 }));
    const res = await u.client.get('/api/pricing');
    expect(res.body.success).toBe(true);
    expect(res.body.usable_group).toEqual({ default: '默认分组', vip: 'vip分组', svip: '用户分组' });
    expect(res.body.group_ratio).toEqual({ default: 1, vip: 1.2, svip: 0.8 });
  });

  it('caches the ability scan until a channel change, but shows ratio edits at once', async () => {
    await server.ctx.db
      .insertInto('abilities')
      .values({ group: 'default', model: 'claude-3-opus-20240229', channel_id: 5, enabled: true })
      .execute();
    await server.ctx.options.set('ModelRatio', JSON.stringify({ 'gpt-4o': 2 }));
    const anon = new ConsoleClient(server.url);
    let res = await anon.get('/api/pricing');
    const names = (r: typeof res) => r.body.data.map((d: { model_name: string }) => d.model_name);
    expect(names(res)).not.toContain('claude-3-opus-20240229');
    expect(res.body.data.find((d: { model_name: string }) => d.model_name === 'gpt-4o').model_ratio).toBe(2);

    server.ctx.changes.publish({ kind: 'channels' });
    res = await anon.get('/api/pricing');
    expect(names(res)).toEqual(['claude-3-opus-20240229', 'dall-e-3', 'gpt-4o', 'mystery-model']);
    // the saved ModelRatio replaced the defaults, so claude is unpriced here
    expect(res.body.data[0]).toMatchObject({ quota_type: 0, model_ratio: 37.5, completion_ratio: 5 });
  });
});

describe('GET /api/pricing: per-second video models', () => {
  let videoServer: TestServer;
  beforeAll(async () => {
    videoServer = await startTestServer({ kind: 'sqlite' });
    const db = videoServer.ctx.db;
    // a Sora channel (type 55), an OpenAI channel (type 1) selling a Sora model and a chat one, a Kling channel (50)
    for (const [id, type, models] of [
      [10, 55, 'sora-2'],
      [11, 1, 'sora-2-pro,gpt-image-1,dall-e-3'],
      [12, 50, 'kling-v2'],
    ] as const)
      await db
        .insertInto('channels')
        .values({ id, type, name: `c${id}`, key: 'k', models, status: 1 })
        .execute();
    const abilities = [
      ['sora-2', 10],
      ['sora-2-pro', 11],
      ['gpt-image-1', 11],
      ['dall-e-3', 11],
      ['kling-v2', 12],
    ] as const;
    for (const [model, channel_id] of abilities)
      await db.insertInto('abilities').values({ group: 'default', model, channel_id, enabled: true }).execute();
    // kling-v2 has no price: refused when called, so never shown per second
    await videoServer.ctx.options.set(
      'ModelPrice',
      JSON.stringify({ 'sora-2': 0.1, 'sora-2-pro': 0.3, 'gpt-image-1': 0.05, 'dall-e-3': 0.04 }),
    );
  });
  afterAll(async () => videoServer?.close());

  it("marks a priced model a video platform charges per second, and keeps the others' rows as they were", async () => {
    const res = await new ConsoleClient(videoServer.url).get('/api/pricing');
    const byName = Object.fromEntries(res.body.data.map((r: { model_name: string }) => [r.model_name, r]));
    expect(byName['sora-2']).toEqual({
      model_name: 'sora-2',
      quota_type: 1,
      model_ratio: 0,
      model_price: 0.1,
      owner_by: '',
      completion_ratio: 0,
      enable_groups: ['default'],
      priced: true,
      billing_unit: 'second',
    });
    expect(byName['sora-2-pro']).toMatchObject({ quota_type: 1, model_price: 0.3, billing_unit: 'second' });
    // on the OpenAI channel the image models stay per call, and an unpriced Kling model per token (unpriced)
    expect(byName['gpt-image-1']).not.toHaveProperty('billing_unit');
    expect(byName['dall-e-3']).not.toHaveProperty('billing_unit');
    expect(byName['kling-v2']).toMatchObject({ quota_type: 0, priced: false });
    expect(byName['kling-v2']).not.toHaveProperty('billing_unit');
  });
});
