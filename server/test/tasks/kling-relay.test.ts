// Kling (type 50) and new-api's generic video routes through the gateway against a strict Kling mock: raw HTTP in
// new-api's shapes (POST /v1/video/generations, the native /kling/v1/videos/* routes, GET by task id). The JWT each
// call carries is verified with the channel's secret (claims and expiry); a wrong secret is Kling's 401 and charges
// nothing. A submit is charged per call to the unit (user AND token, one consume row); the poller maps Kling's
// statuses (a 429 or an unknown status leaves the task running, never a success); a failure is refunded once;
// another user's task does not exist; a Sora model on the generic route goes to the Sora channel.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { nowSec } from '../../src/lib/time.js';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged, flushLogs, logsOf, setOptions } from '../relay/fixtures.js';
import { startKlingMock, type KlingMock } from './kling-mock.js';
import { startVideoMock, type VideoMock } from './video-mock.js';

const PAIR = 'ak-gateway|sk-secret-of-gateway';
const WRONG = 'ak-gateway|not-the-secret';
const RELAY_KEY = 'sk-downstream-newapi-token';
const SORA_KEY = 'sora-generic-key';
/** 0.2 USD a call: 100 000 units at QuotaPerUnit 500 000 */
const PRICE = 0.2;
const CHARGE = 100_000;

await describeEachDb('kling relay', (kind) => {
  let tdb: TestDatabase;
  let s: TestServer;
  let mock: KlingMock;
  let sora: VideoMock;
  let klingChannel: number;
  beforeAll(async () => {
    tdb = await createTestDatabase(kind);
    s = await startTestServer({ database: tdb });
    mock = await startKlingMock([PAIR], [RELAY_KEY]);
    sora = await startVideoMock([SORA_KEY]);
    klingChannel = await addChannel(s, {
      type: 50,
      key: PAIR,
      baseUrl: mock.url,
      models: ['kling-v1', 'kling-v2-master', 'kling-unpriced'],
    });
    await addChannel(s, { type: 50, key: WRONG, baseUrl: mock.url, models: ['kling-wrong'] });
    await addChannel(s, { type: 50, key: RELAY_KEY, baseUrl: mock.url, models: ['kling-relay'] });
    await addChannel(s, { type: 55, key: SORA_KEY, baseUrl: sora.url, models: ['sora-2'] });
    await setOptions(s, {
      ModelPrice: {
        'kling-v1': PRICE,
        'kling-v2-master': PRICE,
        'kling-wrong': PRICE,
        'kling-relay': PRICE,
        'sora-2': 0.1,
      },
    });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await mock?.close();
    await sora?.close();
    await tdb?.drop();
  });

  async function caller() {
    const user = await addUser(s, { quota: 1_000_000 });
    const token = await addToken(s, user.id, { remain: 800_000, unlimited: false, name: 'films' });
    return { user, token, key: `sk-${token.key}` };
  }

  async function call(key: string, method: string, path: string, body?: unknown) {
    const res = await fetch(`${s.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  async function balances(userId: number, tokenId: number) {
    await flushLogs(s);
    const u = await s.ctx.db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow();
    const t = await s.ctx.db
      .selectFrom('tokens')
      .select('remain_quota')
      .where('id', '=', tokenId)
      .executeTakeFirstOrThrow();
    return { user: Number(u.quota), token: Number(t.remain_quota) };
  }

  async function taskRow(publicId: string) {
    const row = await s.ctx.db
      .selectFrom('tasks')
      .selectAll()
      .where('task_id', '=', publicId)
      .executeTakeFirstOrThrow();
    return { ...row, upstreamId: (JSON.parse(row.private_data) as { upstream_task_id: string }).upstream_task_id };
  }

  it('generic text2video: a verified JWT, Kling payload, charged per call to the unit, answered with the public id', async () => {
    const { user, token, key } = await caller();
    const calls = mock.calls.length;
    const r = await call(key, 'POST', '/v1/video/generations', {
      model: 'kling-v1',
      prompt: 'a fox in snow',
      size: '1280x720',
      duration: 10,
      metadata: { negative_prompt: 'blur', model_name: 'kling-v2-master', camera_control: { type: 'simple' } },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: 'video', model: 'kling-v1', status: 'queued', progress: 0 });
    expect(r.body.id).toMatch(/^task_[A-Za-z0-9]{32}$/);
    expect(r.body.task_id).toBe(r.body.id);
    expect(JSON.stringify(r.body)).not.toContain('kling_up_');
    const sent = mock.calls.slice(calls);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ method: 'POST', path: '/v1/videos/text2video', userAgent: 'kling-sdk/1.0' });
    expect(sent[0].claims).toMatchObject({ iss: 'ak-gateway' });
    // the metadata adds Kling's own fields but never changes the priced model
    expect(sent[0].body).toMatchObject({
      model_name: 'kling-v1',
      model: 'kling-v1',
      prompt: 'a fox in snow',
      duration: '10',
      mode: 'std',
      aspect_ratio: '16:9',
      negative_prompt: 'blur',
      camera_control: { type: 'simple' },
    });
    expect(await balances(user.id, token.id)).toEqual({ user: 1_000_000 - CHARGE, token: 800_000 - CHARGE });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name, Number(l.channel_id)])).toEqual([
      [2, CHARGE, 'kling-v1', klingChannel],
    ]);
    expect(logs[0].otherJson).toMatchObject({ is_task: true, task_id: r.body.id });
    const row = await taskRow(r.body.id);
    expect(row).toMatchObject({
      platform: 'kling',
      action: 'textGenerate',
      status: 'NOT_START',
      upstreamId: 'kling_up_' + row.upstreamId.slice(9),
    });
    expect(Number(row.quota)).toBe(CHARGE);
  });

  it('native image2video and its GET; polled to success with the video URL; nothing refunded', async () => {
    const { user, token, key } = await caller();
    const r = await call(key, 'POST', '/kling/v1/videos/image2video', {
      model_name: 'kling-v2-master',
      prompt: 'the fox runs',
      image: 'https://img.test/fox.png',
      mode: 'pro',
      duration: '5',
    });
    expect(r.status).toBe(200);
    const id = r.body.task_id as string;
    const row = await taskRow(id);
    expect(row).toMatchObject({ platform: 'kling', action: 'generate' });
    expect(mock.calls.at(-1)).toMatchObject({ path: '/v1/videos/image2video' });
    expect(mock.calls.at(-1)!.body).toMatchObject({
      model_name: 'kling-v2-master',
      image: 'https://img.test/fox.png',
      mode: 'pro',
    });

    const fetched = await call(key, 'GET', `/kling/v1/videos/image2video/${id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toMatchObject({
      code: 'success',
      data: { task_id: id, status: 'NOT_START', action: 'generate' },
    });

    mock.states.set(row.upstreamId, { status: 'processing' });
    // tasks left running by earlier cases are polled in the same pass, in no set order
    const polledFrom = mock.calls.length;
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(id)).status).toBe('IN_PROGRESS');
    // the fetch went to the action's own path
    expect(mock.calls.slice(polledFrom)).toContainEqual(
      expect.objectContaining({ method: 'GET', path: `/v1/videos/image2video/${row.upstreamId}` }),
    );
    // a 429 and a status Kling does not define leave it running
    mock.states.set(row.upstreamId, { status: 'succeed', http: 429 });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(id)).status).toBe('IN_PROGRESS');
    mock.states.set(row.upstreamId, { status: 'finished' });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(id)).status).toBe('IN_PROGRESS');

    mock.states.set(row.upstreamId, { status: 'succeed', url: 'https://cdn.test/fox.mp4', finalUnits: '1' });
    await pollTaskUpstreams(s.ctx, nowSec());
    const done = await call(key, 'GET', `/v1/video/generations/${id}`);
    expect(done.body).toMatchObject({
      code: 'success',
      data: {
        task_id: id,
        status: 'SUCCESS',
        progress: '100%',
        result_url: 'https://cdn.test/fox.mp4',
        platform: 'kling',
      },
    });
    expect(JSON.stringify(done.body)).not.toContain('upstream_task_id');
    expect(await balances(user.id, token.id)).toEqual({ user: 1_000_000 - CHARGE, token: 800_000 - CHARGE });
    expect((await logsOf(s, user.id)).map((l) => l.type)).toEqual([2]);
  });

  it('a failed task is refunded once to the user and the token, with one refund row', async () => {
    const { user, token, key } = await caller();
    const r = await call(key, 'POST', '/v1/video/generations', { model: 'kling-v1', prompt: 'doomed' });
    const row = await taskRow(r.body.task_id);
    mock.states.set(row.upstreamId, { status: 'failed', msg: 'content risk' });
    await Promise.all([pollTaskUpstreams(s.ctx, nowSec()), pollTaskUpstreams(s.ctx, nowSec())]);
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await taskRow(r.body.task_id)).toMatchObject({ status: 'FAILURE', fail_reason: 'content risk' });
    expect(await balances(user.id, token.id)).toEqual({ user: 1_000_000, token: 800_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota)])).toEqual([
      [2, CHARGE],
      [6, CHARGE],
    ]);
    const fetched = await call(key, 'GET', `/v1/video/generations/${r.body.task_id}`);
    expect(fetched.body.data).toMatchObject({ status: 'FAILURE', fail_reason: 'content risk', result_url: '' });
  });

  it("another user's task does not exist", async () => {
    const a = await caller();
    const b = await caller();
    const r = await call(a.key, 'POST', '/v1/video/generations', { model: 'kling-v1', prompt: 'mine' });
    for (const path of [`/v1/video/generations/${r.body.task_id}`, `/kling/v1/videos/text2video/${r.body.task_id}`]) {
      const other = await call(b.key, 'GET', path);
      expect(other.status).toBe(400);
      expect(other.body).toMatchObject({ code: 'task_not_exist', data: null });
    }
  });

  it("a wrong secret is Kling's 401: the client gets a 502 and keeps its quota, no task is written", async () => {
    const { user, token, key } = await caller();
    const before = await s.ctx.db.selectFrom('tasks').select('id').where('user_id', '=', user.id).execute();
    const r = await call(key, 'POST', '/v1/video/generations', { model: 'kling-wrong', prompt: 'x' });
    expect(r.status).toBe(502);
    expect(r.body).toMatchObject({ message: 'Authorization failed' });
    expect(mock.calls.at(-1)!.claims).toBeNull();
    expect(await balances(user.id, token.id)).toEqual({ user: 1_000_000, token: 800_000 });
    expect(await s.ctx.db.selectFrom('tasks').select('id').where('user_id', '=', user.id).execute()).toEqual(before);
  });

  it("a key without '|' is another new-api's token: sent as it is, on its /kling paths", async () => {
    const { key } = await caller();
    const r = await call(key, 'POST', '/v1/video/generations', { model: 'kling-relay', prompt: 'relayed' });
    expect(r.status).toBe(200);
    expect(mock.calls.at(-1)).toMatchObject({ path: '/kling/v1/videos/text2video', auth: `Bearer ${RELAY_KEY}` });
    const row = await taskRow(r.body.task_id);
    mock.states.set(row.upstreamId, { status: 'processing' });
    await pollTaskUpstreams(s.ctx, nowSec());
    const polled = mock.calls.filter((c) => c.method === 'GET' && c.path.endsWith(`/${row.upstreamId}`));
    expect(polled.map((c) => [c.path, c.auth])).toEqual([
      [`/kling/v1/videos/text2video/${row.upstreamId}`, `Bearer ${RELAY_KEY}`],
    ]);
    expect((await taskRow(r.body.task_id)).status).toBe('IN_PROGRESS');
  });

  it('bad input changes nothing: no prompt, a bad duration, mode, image or metadata, no model, no price', async () => {
    const { user, token, key } = await caller();
    const calls = mock.calls.length;
    for (const body of [
      { model: 'kling-v1' },
      { model: 'kling-v1', prompt: 'x', duration: 7 },
      { model: 'kling-v1', prompt: 'x', mode: 'ultra' },
      { model: 'kling-v1', prompt: 'x', seconds: 6 },
      { model: 'kling-v1', prompt: 'x', image: 42 },
      { model: 'kling-v1', prompt: 'x', metadata: 'nope' },
      { prompt: 'no model' },
    ]) {
      const r = await call(key, 'POST', '/v1/video/generations', body);
      expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), 400]);
    }
    // a model without a price is refused before anything is sent
    const unpriced = await call(key, 'POST', '/v1/video/generations', { model: 'kling-unpriced', prompt: 'x' });
    expect(unpriced.status).toBe(500);
    expect(unpriced.body).toMatchObject({ code: 'model_price_error' });
    expect(mock.calls.length).toBe(calls);
    expect(await balances(user.id, token.id)).toEqual({ user: 1_000_000, token: 800_000 });
  });

  it('the generic route takes a Sora model to the Sora channel', async () => {
    const { user, key } = await caller();
    const r = await call(key, 'POST', '/v1/video/generations', { model: 'sora-2', prompt: 'a kite', seconds: 4 });
    expect(r.status).toBe(200);
    expect(sora.calls.at(-1)).toMatchObject({ method: 'POST', path: '/v1/videos', auth: `Bearer ${SORA_KEY}` });
    const row = await taskRow(r.body.task_id);
    expect(row).toMatchObject({ platform: 'sora' });
    sora.states.set(row.upstreamId, { status: 'completed' });
    await pollTaskUpstreams(s.ctx, nowSec());
    const fetched = await call(key, 'GET', `/v1/video/generations/${r.body.task_id}`);
    expect(fetched.body.data).toMatchObject({
      platform: 'sora',
      status: 'SUCCESS',
      result_url: `/v1/videos/${r.body.task_id}/content`,
    });
    // 0.1 × 500000 × 4 s
    expect((await logsOf(s, user.id)).map((l) => Number(l.quota))).toEqual([200_000]);
  });
});
