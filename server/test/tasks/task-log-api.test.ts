// GET /api/mj/{,self} and /api/task/{,self}: filters, paging, a user's own rows only, admin rows with channel and
// username, tasks.private_data never in a body (only its result_url), bad input as {success:false,message}; a finished
// video's result URL and the console's content stream of a Sora video (the caller's own, with the channel's key).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { addUser, startConsole } from '../channels/fixture.js';

const SECRET = 'sk-upstream-secret-never-shown';

await describeEachDb('drawing log and task log API', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let alice: { client: ConsoleClient; id: number; username: string };
  let bob: { client: ConsoleClient; id: number; username: string };
  let chId: number;
  const T = 1_760_000_000; // seconds; the drawing log stores milliseconds

  beforeAll(async () => {
    ({ server, root } = await startConsole(kind));
    alice = await addUser(server);
    bob = await addUser(server);
    const ch = await root.post('/api/channel/', { name: 'mj-one', key: 'k', models: 'gpt-4o' });
    chId = ch.body.data.id;
    const mj = (user: number, mjId: string, at: number, extra: Record<string, unknown> = {}) => ({
      user_id: user,
      mj_id: mjId,
      action: 'IMAGINE',
      prompt: `a cat ${mjId}`,
      submit_time: at * 1000,
      finish_time: at * 1000 + 30_000,
      status: 'SUCCESS',
      progress: '100%',
      image_url: `https://cdn.example/${mjId}.png`,
      channel_id: chId,
      quota: 50_000,
      ...extra,
    });
    // one row a statement: SQLite has no DEFAULT for a column one row of a multi-row VALUES leaves out
    for (const row of [
      mj(alice.id, 'mj-a1', T),
      mj(alice.id, 'mj-a2', T + 100, {
        action: 'UPSCALE',
        status: 'FAILURE',
        fail_reason: 'banned prompt',
        channel_id: 999,
      }),
      mj(bob.id, 'mj-b1', T + 200, {
        video_url: 'https://cdn.example/v.mp4',
        video_urls: '[{"url":"https://cdn.example/v.mp4"}]',
      }),
    ])
      await server.ctx.db.insertInto('midjourneys').values(row).execute();
    const task = (user: number, taskId: string, at: number, extra: Record<string, unknown> = {}) => ({
      user_id: user,
      task_id: taskId,
      platform: 'suno',
      action: 'MUSIC',
      status: 'SUCCESS',
      progress: '100%',
      submit_time: at,
      finish_time: at + 90,
      created_at: at,
      updated_at: at + 90,
      channel_id: chId,
      quota: 100_000,
      group: 'default',
      properties: '{"origin_model_name":"suno_music"}',
      data: '[{"id":"clip-1"}]',
      private_data: JSON.stringify({
        key: SECRET,
        upstream_task_id: 'up-1',
        result_url: `https://cdn.example/${taskId}.mp3`,
      }),
      ...extra,
    });
    for (const row of [
      task(alice.id, 'task_a1', T),
      task(alice.id, 'task_a2', T + 100, { action: 'LYRICS', status: 'FAILURE', fail_reason: 'upstream said no' }),
      task(bob.id, 'task_b1', T + 200, { platform: '50', action: 'generate', status: 'IN_PROGRESS', progress: '40%' }),
    ])
      await server.ctx.db.insertInto('tasks').values(row).execute();
  });
  afterAll(async () => server?.close());

  const ids = (body: any, key: string) => (body.data.items as any[]).map((r) => r[key]);

  it('drawing log, admin: every row newest first with username and channel name, filters and pages', async () => {
    const all = await root.get('/api/mj/?p=1&page_size=10');
    expect(all.body).toMatchObject({ success: true, data: { total: 3, page: 1, page_size: 10 } });
    expect(ids(all.body, 'mj_id')).toEqual(['mj-b1', 'mj-a2', 'mj-a1']);
    const b1 = all.body.data.items[0];
    expect(b1).toMatchObject({
      user_id: bob.id,
      username: bob.username,
      channel_id: chId,
      channel_name: 'mj-one',
      video_url: 'https://cdn.example/v.mp4',
      submit_time: (T + 200) * 1000,
      quota: 50_000,
      // MjForwardUrlEnabled is on by default: the gateway's own image route
      image_url: 'http://localhost:3000/mj/image/mj-b1',
    });
    expect(all.body.data.items[1].channel_name).toBe('');

    const q = async (qs: string) => ids((await root.get(`/api/mj/?${qs}`)).body, 'mj_id');
    expect(await q('p=2&page_size=2')).toEqual(['mj-a1']);
    expect(await q('p=0&page_size=2')).toEqual(['mj-b1', 'mj-a2']);
    expect(await q(`channel_id=${chId}`)).toEqual(['mj-b1', 'mj-a1']);
    expect(await q('mj_id=mj-a2')).toEqual(['mj-a2']);
    expect(await q('status=FAILURE')).toEqual(['mj-a2']);
    expect(await q('action=IMAGINE')).toEqual(['mj-b1', 'mj-a1']);
    expect(await q(`user_id=${alice.id}`)).toEqual(['mj-a2', 'mj-a1']);
    expect(await q(`start_timestamp=${(T + 50) * 1000}&end_timestamp=${(T + 150) * 1000}`)).toEqual(['mj-a2']);
  });

  it('drawing log: the upstream URL when MjForwardUrlEnabled is off', async () => {
    expect((await root.put('/api/option/', { key: 'MjForwardUrlEnabled', value: 'false' })).body.success).toBe(true);
    try {
      const res = await alice.client.get('/api/mj/self?mj_id=mj-a1');
      expect(res.body.data.items[0].image_url).toBe('https://cdn.example/mj-a1.png');
    } finally {
      await root.put('/api/option/', { key: 'MjForwardUrlEnabled', value: 'true' });
    }
  });

  it('drawing log, self: own rows only, whatever channel_id or user_id asks; no username', async () => {
    const res = await alice.client.get(`/api/mj/self/?p=1&page_size=10&user_id=${bob.id}`);
    expect(res.body.data.total).toBe(2);
    expect(ids(res.body, 'mj_id')).toEqual(['mj-a2', 'mj-a1']);
    expect(res.body.data.items[0]).toMatchObject({
      fail_reason: 'banned prompt',
      prompt: 'a cat mj-a2',
      status: 'FAILURE',
    });
    expect(res.body.data.items[0].username).toBeUndefined();
    expect((await alice.client.get('/api/mj/self?mj_id=mj-b1')).body.data).toMatchObject({ total: 0, items: [] });
    // the admin list is refused to a user
    expect((await alice.client.get('/api/mj/')).body.success).toBe(false);
  });

  it('task log, admin: rows with username and result_url, never private_data; filters and pages', async () => {
    const all = await root.get('/api/task/?p=1&page_size=10');
    expect(all.body).toMatchObject({ success: true, data: { total: 3, page: 1, page_size: 10 } });
    expect(ids(all.body, 'task_id')).toEqual(['task_b1', 'task_a2', 'task_a1']);
    expect(JSON.stringify(all.body)).not.toContain(SECRET);
    expect(JSON.stringify(all.body)).not.toContain('private_data');
    expect(JSON.stringify(all.body)).not.toContain('up-1');
    expect(all.body.data.items[2]).toMatchObject({
      task_id: 'task_a1',
      username: alice.username,
      channel_name: 'mj-one',
      result_url: 'https://cdn.example/task_a1.mp3',
      properties: { origin_model_name: 'suno_music' },
      data: [{ id: 'clip-1' }],
      submit_time: T,
      finish_time: T + 90,
      quota: 100_000,
    });
    const q = async (qs: string) => ids((await root.get(`/api/task/?${qs}`)).body, 'task_id');
    expect(await q('platform=suno')).toEqual(['task_a2', 'task_a1']);
    expect(await q('action=LYRICS')).toEqual(['task_a2']);
    expect(await q('status=IN_PROGRESS')).toEqual(['task_b1']);
    expect(await q('task_id=task_a1')).toEqual(['task_a1']);
    expect(await q(`channel_id=${chId}`)).toHaveLength(3);
    expect(await q('channel_id=999')).toEqual([]);
    expect(await q(`start_timestamp=${T + 50}&end_timestamp=${T + 250}`)).toEqual(['task_b1', 'task_a2']);
    expect(await q('p=2&page_size=2')).toEqual(['task_a1']);
  });

  it('task log, self: own rows only, no username, no private_data', async () => {
    const res = await bob.client.get(`/api/task/self?p=1&page_size=10&user_id=${alice.id}&channel_id=999`);
    expect(res.body.data).toMatchObject({ total: 1, page: 1, page_size: 10 });
    expect(res.body.data.items[0]).toMatchObject({ task_id: 'task_b1', progress: '40%', platform: '50' });
    expect(res.body.data.items[0].username).toBeUndefined();
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
    expect((await bob.client.get('/api/task/self?task_id=task_a1')).body.data.total).toBe(0);
    expect((await bob.client.get('/api/task/')).body.success).toBe(false);
    // page_size is capped at 100
    expect((await bob.client.get('/api/task/self?page_size=500')).body.data.page_size).toBe(100);
  });

  it('bad input answers {success:false,message}', async () => {
    for (const url of [
      '/api/task/self?start_timestamp=yesterday',
      '/api/task/self?status=' + 'S'.repeat(21),
      `/api/mj/self?end_timestamp=1e9`,
      `/api/task/self?task_id=${'x'.repeat(200)}`,
    ]) {
      const res = await alice.client.get(url);
      expect(res.body, url).toEqual({ success: false, message: '参数错误' });
    }
    expect((await root.get('/api/task/?channel_id=-1')).body).toEqual({ success: false, message: '参数错误' });
    expect((await root.get('/api/task/?channel_id=x')).body).toEqual({ success: false, message: '参数错误' });
    expect((await alice.client.get(`/api/mj/self?start_timestamp=2000&end_timestamp=1000`)).body).toEqual({
      success: false,
      message: '开始时间不能晚于结束时间',
    });
  });
});

await describeEachDb('task log: finished videos', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let alice: { client: ConsoleClient; id: number; username: string };
  let bob: { client: ConsoleClient; id: number; username: string };
  let upstream: Server;
  const seen: Array<{ url: string; auth: string; range: string }> = [];
  const T = 1_760_000_000;
  const KEY = 'sk-sora-channel-key';

  beforeAll(async () => {
    upstream = createServer((req, res) => {
      seen.push({ url: req.url ?? '', auth: String(req.headers.authorization), range: String(req.headers.range) });
      if (req.url !== '/v1/videos/up-sora/content') return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': '9', 'set-cookie': 'up=1' });
      res.end('MP4-BYTES');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    ({ server, root } = await startConsole(kind));
    alice = await addUser(server);
    bob = await addUser(server);
    const ch = await root.post('/api/channel/', { name: 'sora', type: 1, key: KEY, base_url: base, models: 'sora-2' });
    expect(ch.body.success, JSON.stringify(ch.body)).toBe(true);
    const task = (taskId: string, platform: string, extra: Record<string, unknown> = {}) => ({
      user_id: alice.id,
      task_id: taskId,
      platform,
      action: 'generate',
      status: 'SUCCESS',
      progress: '100%',
      submit_time: T,
      finish_time: T + 120,
      created_at: T,
      updated_at: T + 120,
      channel_id: ch.body.data.id,
      quota: 400_000,
      group: 'default',
      properties: JSON.stringify({ input: 'a cat', model: 'sora-2', seconds: '8', size: '720x1280' }),
      data: '{}',
      private_data: JSON.stringify({ key: SECRET, upstream_task_id: 'up-sora' }),
      ...extra,
    });
    for (const row of [
      task('task_sora', 'sora'),
      task('task_sora_run', 'sora', { status: 'IN_PROGRESS', finish_time: 0, progress: '30%' }),
      task('task_kling', 'kling', {
        data: JSON.stringify({ task_result: { videos: [{ url: 'https://cdn.kling.example/v.mp4', duration: '5' }] } }),
        private_data: JSON.stringify({ upstream_task_id: 'up-kling' }),
      }),
      task('task_song', 'suno', { action: 'MUSIC', data: '[]' }),
    ])
      await server.ctx.db.insertInto('tasks').values(row).execute();
  });
  afterAll(async () => {
    await server?.close();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  it('a finished video has its result URL and the console content route, an unfinished one neither', async () => {
    const res = await alice.client.get('/api/task/self?p=1&page_size=10');
    const byId = Object.fromEntries((res.body.data.items as any[]).map((r) => [r.task_id, r]));
    expect(byId.task_sora).toMatchObject({
      result_url: '/v1/videos/task_sora/content',
      content_url: '/api/task/self/task_sora/content',
      properties: { seconds: '8', size: '720x1280' },
      quota: 400_000,
    });
    expect(byId.task_sora_run).toMatchObject({ result_url: '', content_url: '' });
    // every video platform's result is played through the gateway (the upstream's address may need its key)
    expect(byId.task_kling).toMatchObject({
      result_url: 'https://cdn.kling.example/v.mp4',
      content_url: '/api/task/self/task_kling/content',
    });
    expect(byId.task_song).toMatchObject({ content_url: '' });
    expect(JSON.stringify(res.body)).not.toContain(KEY);
    expect(JSON.stringify(res.body)).not.toContain('up-sora');
    const admin = await root.get('/api/task/?task_id=task_sora');
    expect(admin.body.data.items[0].content_url).toBe('/api/task/task_sora/content');
  });

  it("the content route streams the caller's own finished Sora video with the channel's key", async () => {
    seen.length = 0;
    const res = await alice.client.get('/api/task/self/task_sora/content', { range: 'bytes=0-' });
    expect(res.status).toBe(200);
    expect(res.body).toBe('MP4-BYTES');
    expect(res.headers.get('content-type')).toBe('video/mp4');
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(seen).toEqual([{ url: '/v1/videos/up-sora/content', auth: `Bearer ${KEY}`, range: 'bytes=0-' }]);
    // the admin's route reads anyone's
    expect((await root.get('/api/task/task_sora/content')).body).toBe('MP4-BYTES');
  });

  it("another user's, an unfinished or a non-video task is not found; a user may not use the admin route", async () => {
    seen.length = 0;
    for (const [client, url] of [
      [bob.client, '/api/task/self/task_sora/content'],
      [alice.client, '/api/task/self/task_sora_run/content'],
      [alice.client, '/api/task/self/task_song/content'],
    ] as const) {
      const res = await client.get(url);
      expect(res.status, url).toBe(404);
      expect(res.body).toEqual({ success: false, message: '任务不存在' });
    }
    expect((await alice.client.get('/api/task/task_sora/content')).body.success).toBe(false);
    expect(seen).toEqual([]);
  });
});
