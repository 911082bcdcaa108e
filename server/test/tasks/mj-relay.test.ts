// Midjourney through the gateway against the strict midjourney-proxy mock, on every database: each submit route with
// its price charged to the unit to the user AND the token with one consume row (or nothing charged), each submit code
// as new-api (1; 21 with properties; 22 rewritten to 1, charged; 23/24 not charged; 3 disabling the channel when
// automatic disabling is on; a local 429 as code 30), follow-ups pinned to the origin task's channel, the drawing
// options, and reads that only ever show the caller's own tasks.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { MjProxyMock } from '../helpers/mj-proxy-mock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged, flushLogs, logsOf, setOptions } from '../relay/fixtures.js';

const SECRET = 'mj-channel-secret';
const MJ_MODELS = [
  'mj_imagine',
  'mj_variation',
  'mj_reroll',
  'mj_blend',
  'mj_upscale',
  'mj_describe',
  'mj_zoom',
  'mj_shorten',
  'mj_modal',
  'mj_inpaint',
  'mj_custom_zoom',
  'mj_high_variation',
  'mj_low_variation',
  'mj_pan',
  'mj_upload',
  'mj_video',
  'mj_edits',
  'swap_face',
];

await describeEachDb('midjourney relay', (kind) => {
  let tdb: TestDatabase;
  let s: TestServer;
  let mock: MjProxyMock;
  let other: MjProxyMock;
  let channelId: number;
  beforeAll(async () => {
    tdb = await createTestDatabase(kind);
    s = await startTestServer({ database: tdb });
    mock = await MjProxyMock.start({ secret: SECRET });
    other = await MjProxyMock.start({ secret: 'other-secret' });
    channelId = await addChannel(s, { type: 5, key: SECRET, baseUrl: mock.url, models: MJ_MODELS, priority: 10 });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await mock?.close();
    await other?.close();
    await tdb?.drop();
  });

  async function caller(quota = 2_000_000, remain = 1_000_000) {
    const user = await addUser(s, { quota });
    const token = await addToken(s, user.id, { remain, unlimited: false, name: 'draw' });
    return { user, token };
  }

  async function balances(userId: number, tokenId: number) {
    await flushLogs(s);
    const u = await s.ctx.db.selectFrom('users').select(['quota']).where('id', '=', userId).executeTakeFirstOrThrow();
    const t = await s.ctx.db
      .selectFrom('tokens')
      .select(['remain_quota', 'used_quota'])
      .where('id', '=', tokenId)
      .executeTakeFirstOrThrow();
    return { quota: Number(u.quota), remain: Number(t.remain_quota), tokenUsed: Number(t.used_quota) };
  }

  async function call(method: 'GET' | 'POST', path: string, key: string, body?: unknown, secretHeader = false) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (secretHeader) headers['mj-api-secret'] = `sk-${key}`;
    else headers.authorization = `Bearer sk-${key}`;
    const res = await fetch(`${s.url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.status, body: json };
  }

  const rowOf = (mjId: string) =>
    s.ctx.db.selectFrom('midjourneys').selectAll().where('mj_id', '=', mjId).orderBy('id', 'desc').executeTakeFirst();

  async function succeeded(mjId: string) {
    await s.ctx.db
      .updateTable('midjourneys')
      .set({ status: 'SUCCESS', progress: '100%' })
      .where('mj_id', '=', mjId)
      .execute();
  }

  it('IMAGINE: reserved, sent with the channel secret only, charged 50000 to user and token, one consume row', async () => {
    const { user, token } = await caller();
    const before = mock.requests.length;
    const r = await call('POST', '/mj/submit/imagine', token.key, {
      prompt: 'a cat --fast',
      notifyHook: 'http://client.example/hook',
      accountFilter: { channelId: 'x' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ code: 1, description: '提交成功', result: expect.stringMatching(/^\d+$/) });
    const sent = mock.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.path).toBe('/mj/submit/imagine');
    expect(sent[0]!.headers['mj-api-secret']).toBe(SECRET);
    expect(sent[0]!.headers.authorization).toBeUndefined();
    // the drawing options are off: notifyHook and accountFilter dropped, the prompt as given
    expect(sent[0]!.body).toEqual({ prompt: 'a cat --fast' });
    expect(mock.violations).toEqual([]);
    expect(await balances(user.id, token.id)).toEqual({ quota: 1_950_000, remain: 950_000, tokenUsed: 50_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name, Number(l.token_id), Number(l.channel_id)])).toEqual([
      [2, 50_000, 'mj_imagine', token.id, channelId],
    ]);
    expect(JSON.parse(logs[0]!.other)).toMatchObject({ is_task: true, task_id: r.body.result });
    const row = await rowOf(r.body.result);
    expect(row).toMatchObject({ action: 'IMAGINE', prompt: 'a cat --fast', status: '', progress: '0%', code: 1 });
    expect(Number(row!.quota)).toBe(50_000);
    expect(Number(row!.user_id)).toBe(user.id);
    expect(Number(row!.channel_id)).toBe(channelId);

    // reads: the caller's own task, in new-api's MidjourneyDto shape
    const f = await call('GET', `/mj/task/${r.body.result}/fetch`, token.key);
    expect(f.status).toBe(200);
    expect(f.body).toMatchObject({ id: r.body.result, action: 'IMAGINE', prompt: 'a cat --fast', progress: '0%' });
    const l = await call('POST', '/mj/task/list-by-condition', token.key, { ids: [r.body.result, '999'] });
    expect(l.status).toBe(200);
    expect(l.body.map((t: { id: string }) => t.id)).toEqual([r.body.result]);
    const seed = await call('GET', `/mj/task/${r.body.result}/image-seed`, token.key);
    expect(seed).toEqual({ status: 200, body: { code: 1, description: '成功', result: `seed-${r.body.result}` } });

    // another user reads nothing of it, and cannot act on it
    const them = await caller();
    expect(await call('GET', `/mj/task/${r.body.result}/fetch`, them.token.key)).toEqual({
      status: 400,
      body: { description: 'task_no_found ', type: 'upstream_error', code: 4 },
    });
    expect(await call('POST', '/mj/task/list-by-condition', them.token.key, { ids: [r.body.result] })).toEqual({
      status: 200,
      body: [],
    });
    expect((await call('GET', `/mj/task/${r.body.result}/image-seed`, them.token.key)).status).toBe(400);
    await succeeded(r.body.result);
    const sentBefore = mock.requests.length;
    const theirs = await call('POST', '/mj/submit/change', them.token.key, {
      taskId: r.body.result,
      action: 'UPSCALE',
      index: 1,
    });
    expect(theirs).toEqual({ status: 400, body: { description: 'task_not_found ', type: 'upstream_error', code: 4 } });
    expect(mock.requests.length).toBe(sentBefore);
    expect(await balances(them.user.id, them.token.id)).toEqual({ quota: 2_000_000, remain: 1_000_000, tokenUsed: 0 });
  });

  it('the mj-api-secret header authenticates, and a /mj-<mode> prefix reaches the upstream as /mj', async () => {
    const { user, token } = await caller();
    const before = mock.requests.length;
    const r = await call('POST', '/mj-relax/mj/submit/imagine', token.key, { prompt: 'slow' }, true);
    expect(r.status).toBe(200);
    expect(r.body.code).toBe(1);
    expect(mock.requests.slice(before).map((q) => q.path)).toEqual(['/mj/submit/imagine']);
    expect((await balances(user.id, token.id)).quota).toBe(1_950_000);
    const bad = await call('POST', '/mj/submit/imagine', 'nobody-key', { prompt: 'x' });
    expect(bad.status).toBe(401);
    expect(bad.body).toMatchObject({ type: 'upstream_error', code: 4 });
  });

  it('every submit route: its action and price, the origin channel for follow-ups', async () => {
    const { user, token } = await caller(10_000_000, 5_000_000);
    const origin = (await call('POST', '/mj/submit/imagine', token.key, { prompt: 'origin' })).body.result as string;
    await succeeded(origin);
    let spent = 50_000;
    const cases: [string, Record<string, unknown>, string, number][] = [
      ['/mj/submit/change', { taskId: origin, action: 'UPSCALE', index: 2 }, 'UPSCALE', 25_000],
      ['/mj/submit/change', { taskId: origin, action: 'REROLL' }, 'REROLL', 50_000],
      ['/mj/submit/simple-change', { content: `${origin} V3` }, 'VARIATION', 50_000],
      ['/mj/submit/describe', { base64: 'data:image/png;base64,AAAA' }, 'DESCRIBE', 25_000],
      ['/mj/submit/blend', { base64Array: ['data:a', 'data:b'] }, 'BLEND', 50_000],
      ['/mj/submit/action', { taskId: origin, customId: `MJ::JOB::upsample::1::${origin}` }, 'UPSCALE', 25_000],
      ['/mj/submit/action', { taskId: origin, customId: `MJ::Inpaint::1::${origin}::SOLO` }, 'INPAINT', 0],
      ['/mj/submit/modal', { taskId: origin, prompt: 'fill' }, 'MODAL', 50_000],
      ['/mj/submit/shorten', { prompt: 'a long prompt' }, 'SHORTEN', 50_000],
      ['/mj/submit/video', { taskId: origin, prompt: 'move' }, 'VIDEO', 400_000],
      ['/mj/submit/edits', { prompt: 'edit', image: 'data:x' }, 'EDITS', 50_000],
      ['/mj/insight-face/swap', { sourceBase64: 'data:s', targetBase64: 'data:t' }, 'SWAP_FACE', 25_000],
    ];
    for (const [path, body, action, price] of cases) {
      const r = await call('POST', path, token.key, body);
      expect(r.status, path).toBe(200);
      expect(r.body.code, path).toBe(1);
      const row = await rowOf(r.body.result);
      expect(row?.action, path).toBe(action);
      expect(Number(row?.quota), path).toBe(price);
      if (body.taskId) expect(row?.prompt, path).toBe('origin');
      spent += price;
      expect((await balances(user.id, token.id)).quota, path).toBe(10_000_000 - spent);
    }
    // upload: a list of URLs as its result, no task to follow, the row stored finished
    const up = await call('POST', '/mj/submit/upload-discord-images', token.key, { base64Array: ['data:a'] });
    expect(up.status).toBe(200);
    expect(up.body).toMatchObject({ code: 1, result: [expect.stringContaining('/image/upload-0.png')] });
    spent += 25_000;
    expect(await balances(user.id, token.id)).toEqual({
      quota: 10_000_000 - spent,
      remain: 5_000_000 - spent,
      tokenUsed: spent,
    });
    const charged = (await logsOf(s, user.id)).filter((l) => l.type === 2);
    // INPAINT is not charged: no row for it
    expect(charged).toHaveLength(cases.length + 1);
    expect(charged.reduce((a, l) => a + Number(l.quota), 0)).toBe(spent);
  });

  it('a follow-up goes to the origin channel even when a heavier channel serves the model now', async () => {
    const { token } = await caller();
    const origin = (await call('POST', '/mj/submit/imagine', token.key, { prompt: 'pinned' })).body.result as string;
    await succeeded(origin);
    // a new channel of a higher priority takes every new imagine from here on
    const second = await addChannel(s, {
      type: 2,
      key: 'other-secret',
      baseUrl: other.url,
      models: MJ_MODELS,
      priority: 100,
    });
    await channelsChanged(s);
    try {
      const before = mock.requests.length;
      const r = await call('POST', '/mj/submit/change', token.key, { taskId: origin, action: 'VARIATION', index: 1 });
      expect(r.body.code).toBe(1);
      expect(mock.requests.slice(before).map((q) => q.path)).toEqual(['/mj/submit/change']);
      expect(Number((await rowOf(r.body.result))?.channel_id)).toBe(channelId);
      const fresh = await call('POST', '/mj/submit/imagine', token.key, { prompt: 'new' });
      expect(Number((await rowOf(fresh.body.result))?.channel_id)).toBe(second);
      // the origin must have succeeded (MjActionCheckSuccessEnabled, on by default)
      const pending = fresh.body.result as string;
      const refused = await call('POST', '/mj/submit/change', token.key, {
        taskId: pending,
        action: 'UPSCALE',
        index: 1,
      });
      expect(refused).toEqual({
        status: 400,
        body: { description: 'task_status_not_success ', type: 'upstream_error', code: 4 },
      });
      await setOptions(s, { MjActionCheckSuccessEnabled: 'false' });
      const allowed = await call('POST', '/mj/submit/change', token.key, {
        taskId: pending,
        action: 'UPSCALE',
        index: 1,
      });
      expect(allowed.body.code).toBe(1);
    } finally {
      await setOptions(s, { MjActionCheckSuccessEnabled: 'true' });
      await s.ctx.db.updateTable('channels').set({ status: 2 }).where('id', '=', second).execute();
      await s.ctx.db.updateTable('abilities').set({ enabled: false }).where('channel_id', '=', second).execute();
      await channelsChanged(s);
    }
  });

  it('codes 21 and 22 are charged and answered as 1; 23 and 24 are not charged; the rows say so', async () => {
    const { user, token } = await caller();
    mock.scriptSubmit(
      { code: 21, properties: { status: 'SUCCESS', imageUrl: 'https://cdn.example/done.png' } },
      { code: 22 },
      { code: 23 },
      { code: 24 },
    );
    const r21 = await call('POST', '/mj/submit/imagine', token.key, { prompt: 'again' });
    expect(r21.status).toBe(200);
    expect(r21.body).toMatchObject({ code: 1, description: '任务已存在' });
    expect(await rowOf(r21.body.result)).toMatchObject({
      status: 'SUCCESS',
      progress: '100%',
      image_url: 'https://cdn.example/done.png',
      code: 21,
    });
    const r22 = await call('POST', '/mj/submit/imagine', token.key, { prompt: 'queued' });
    expect(r22.body).toMatchObject({ code: 1, description: '排队中，前面还有1个任务' });
    expect((await balances(user.id, token.id)).quota).toBe(2_000_000 - 100_000);
    const r23 = await call('POST', '/mj/submit/imagine', token.key, { prompt: 'full' });
    expect(r23).toMatchObject({ status: 200, body: { code: 23, description: '队列已满，请稍后尝试' } });
    expect(await rowOf(r23.body.result)).toMatchObject({ status: 'FAILURE', fail_reason: '队列已满，请稍后尝试' });
    expect(Number((await rowOf(r23.body.result))?.quota)).toBe(0);
    const r24 = await call('POST', '/mj/submit/imagine', token.key, { prompt: 'banned' });
    expect(r24).toMatchObject({ status: 200, body: { code: 24, result: null } });
    expect(await balances(user.id, token.id)).toEqual({ quota: 1_900_000, remain: 900_000, tokenUsed: 100_000 });
    expect((await logsOf(s, user.id)).map((l) => [l.type, Number(l.quota)])).toEqual([
      [2, 50_000],
      [2, 50_000],
    ]);
  });

  it('code 3 disables the channel when automatic disabling is on, and charges nothing', async () => {
    const { user, token } = await caller();
    const ch = await addChannel(s, {
      type: 2,
      key: 'other-secret',
      baseUrl: other.url,
      models: ['mj_imagine'],
      priority: 1000,
    });
    await channelsChanged(s);
    try {
      other.scriptSubmit({ code: 3 }, { code: 3 });
      await setOptions(s, { AutomaticDisableChannelEnabled: 'false' });
      const kept = await call('POST', '/mj/submit/imagine', token.key, { prompt: 'x' });
      expect(kept.body).toMatchObject({ code: 3 });
      const status = async () =>
        Number(
          (await s.ctx.db.selectFrom('channels').select('status').where('id', '=', ch).executeTakeFirstOrThrow())
            .status,
        );
      expect(await status()).toBe(1);
      await setOptions(s, { AutomaticDisableChannelEnabled: 'true' });
      const off = await call('POST', '/mj/submit/imagine', token.key, { prompt: 'x' });
      expect(off.body).toMatchObject({ code: 3, description: '无可用的账号实例' });
      expect(await status()).toBe(3);
      expect(await balances(user.id, token.id)).toEqual({ quota: 2_000_000, remain: 1_000_000, tokenUsed: 0 });
      expect(await logsOf(s, user.id)).toEqual([]);
    } finally {
      await setOptions(s, { AutomaticDisableChannelEnabled: 'false' });
      await s.ctx.db.updateTable('channels').set({ status: 2 }).where('id', '=', ch).execute();
      await s.ctx.db.updateTable('abilities').set({ enabled: false }).where('channel_id', '=', ch).execute();
      await channelsChanged(s);
    }
  });

  it('the reservation comes first: a balance short of the price sends nothing; a local 429 is code 30', async () => {
    const poor = await caller(40_000, 1_000_000);
    const before = mock.requests.length;
    const r = await call('POST', '/mj/submit/imagine', poor.token.key, { prompt: 'x' });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ type: 'upstream_error', code: 4 });
    expect(mock.requests.length).toBe(before);
    expect(await balances(poor.user.id, poor.token.id)).toEqual({ quota: 40_000, remain: 1_000_000, tokenUsed: 0 });

    const { user, token } = await caller();
    await setOptions(s, { ModelRequestRateLimitEnabled: 'true', ModelRequestRateLimitCount: '1' });
    try {
      expect((await call('POST', '/mj/submit/imagine', token.key, { prompt: 'one' })).body.code).toBe(1);
      const second = await call('POST', '/mj/submit/imagine', token.key, { prompt: 'two' });
      expect(second.status).toBe(429);
      expect(second.body.code).toBe(30);
      expect(second.body.description).toContain('当前分组负载已饱和');
    } finally {
      await setOptions(s, { ModelRequestRateLimitEnabled: 'false', ModelRequestRateLimitCount: '0' });
    }
    expect((await balances(user.id, token.id)).quota).toBe(1_950_000);
  });

  it('bad requests: new-api descriptions, nothing sent or charged', async () => {
    const { user, token } = await caller();
    const before = mock.requests.length;
    const cases: [string, unknown, string][] = [
      ['/mj/submit/imagine', {}, 'prompt_is_required '],
      ['/mj/submit/imagine', '{oops', 'bind_request_body_failed '],
      ['/mj/submit/change', { taskId: '1', action: 'ZOOM', index: 1 }, 'unknown_action '],
      ['/mj/submit/simple-change', { content: 'nonsense' }, 'content_parse_failed '],
      ['/mj/submit/action', { taskId: '1', customId: 'MJ::JOB::upsample' }, 'index_parse_failed '],
    ];
    for (const [path, body, description] of cases) {
      const r = await call('POST', path, token.key, body);
      expect(r, path).toEqual({ status: 400, body: { description, type: 'upstream_error', code: 4 } });
    }
    expect(mock.requests.length).toBe(before);
    expect(await balances(user.id, token.id)).toEqual({ quota: 2_000_000, remain: 1_000_000, tokenUsed: 0 });
    expect((await call('POST', '/mj/submit/nothing', token.key, {})).status).toBe(404);
  });

  it('MjModeClearEnabled and MjAccountFilterEnabled change what is sent', async () => {
    const { token } = await caller();
    await setOptions(s, { MjModeClearEnabled: 'true' });
    try {
      const before = mock.requests.length;
      await call('POST', '/mj/submit/imagine', token.key, { prompt: 'a dog --relax --v 6', accountFilter: { a: 1 } });
      expect(mock.requests[before]!.body).toEqual({ prompt: 'a dog  --v 6' });
    } finally {
      await setOptions(s, { MjModeClearEnabled: 'false' });
    }
  });
});
