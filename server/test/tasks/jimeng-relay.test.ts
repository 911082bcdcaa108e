// Jimeng (type 51) through new-api's generic video routes and Jimeng's native `POST /jimeng/?Action=…&Version=…`,
// against a strict mock that recomputes Volcengine's HMAC-SHA256 signature by hand: each submit signed over the exact
// body, charged per call to the unit (user AND token, one consume row); polled with the req_key it was submitted
// with (in_queue: queued; generating: running; a 429 or an unknown status: unchanged, never a success; done: its
// video URL); a failure refunded once under two concurrent polls; a wrong secret answers Volcengine's refusal and
// charges nothing; the console creates a type-51 channel, which then takes tasks.
import { expect, it } from 'vitest';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { nowSec } from '../../src/lib/time.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { describeEachDb } from '../helpers/databases.js';
import { type TestServer } from '../helpers/server.js';
import { addChannel, channelsChanged, logsOf, setOptions } from '../relay/fixtures.js';
import { startJimengMock, type JimengMock } from './jimeng-mock.js';
import { videoWorld } from './video-world.js';

const AK = 'AKLTjimengaccess';
const SK = 'jimeng-secret-key==';
const T2V = 'jimeng_vgfm_t2v_l20';
const V30 = 'jimeng_v30';
const BAD = 'jimeng_wrong_secret';
const FROM_CONSOLE = 'jimeng_v30_pro';
const SUBMIT = '/jimeng/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31';
const GET_RESULT = '/jimeng/?Action=CVSync2AsyncGetResult&Version=2022-08-31';

await describeEachDb('jimeng relay', (kind) => {
  let mock: JimengMock;
  let channel: number;
  let s: TestServer;
  let root: ConsoleClient;
  const { caller, call, balances, taskRow } = videoWorld(kind, 'jimeng', async (server) => {
    s = server;
    root = new ConsoleClient(s.url);
    const pw = 'rootpass123';
    const setup = await root.post('/api/setup', { username: 'root', password: pw, confirmPassword: pw });
    expect(setup.body?.success, JSON.stringify(setup.body)).toBe(true);
    expect((await root.login('root', pw)).body?.success).toBe(true);
    mock = await startJimengMock(AK, SK);
    channel = await addChannel(s, { type: 51, key: `${AK}|${SK}`, baseUrl: mock.url, models: [T2V, V30] });
    await addChannel(s, { type: 51, key: `${AK}|not-the-secret`, baseUrl: mock.url, models: [BAD] });
    await setOptions(s, { ModelPrice: { [T2V]: 0.2, [V30]: 0.3, [BAD]: 0.1, [FROM_CONSOLE]: 0.4 } });
    return async () => {
      await mock?.close();
    };
  });

  it('a generic submit signed over its body: 0.2 × 500000 charged once; polled with its req_key to its video', async () => {
    const { user, token, key } = await caller();
    const r = await call(key, 'POST', '/v1/video/generations', {
      model: T2V,
      prompt: 'a paper boat on a river',
      duration: 5,
      metadata: { seed: 7, req_key: 'jimeng_v30_pro' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: 'video', model: T2V, status: 'queued' });
    expect(r.body.task_id).toMatch(/^task_[A-Za-z0-9]{32}$/);
    const sent = mock.calls.at(-1)!;
    expect(sent).toMatchObject({
      action: 'CVSync2AsyncSubmitTask',
      version: '2022-08-31',
      accessKey: AK,
      signed: true,
    });
    expect(sent.signedHeaders).toBe('x-content-sha256;x-date');
    // metadata cannot change the req_key that is charged
    expect(sent.body).toEqual({
      req_key: T2V,
      prompt: 'a paper boat on a river',
      seed: 7,
      frames: 121,
      aspect_ratio: '16:9',
    });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 100_000, token: 1_500_000 - 100_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name, Number(l.channel_id)])).toEqual([
      [2, 100_000, T2V, channel],
    ]);
    expect(logs[0].otherJson).toMatchObject({ is_task: true, task_id: r.body.task_id });
    const row = await taskRow(r.body.id);
    expect(row).toMatchObject({ platform: 'jimeng', action: 'textGenerate', quota: 100_000 });
    const jimengId = row.upstreamId.split(':')[1];
    expect(row.upstreamId).toBe(`${T2V}:${jimengId}`);

    const poll = async () => {
      const from = mock.calls.length;
      await pollTaskUpstreams(s.ctx, nowSec());
      return mock.calls.slice(from);
    };
    expect(await poll()).toContainEqual(
      expect.objectContaining({
        action: 'CVSync2AsyncGetResult',
        signed: true,
        body: { req_key: T2V, task_id: jimengId },
      }),
    );
    expect((await taskRow(r.body.id)).status).toBe('QUEUED');
    mock.states.set(jimengId, { status: 'generating' });
    await poll();
    expect((await taskRow(r.body.id)).status).toBe('IN_PROGRESS');
    mock.states.set(jimengId, { status: 'done', url: 'https://cdn.jimeng.test/v.mp4', http: 429 });
    await poll();
    expect((await taskRow(r.body.id)).status).toBe('IN_PROGRESS');
    mock.states.set(jimengId, { status: 'finished-ish', url: 'https://cdn.jimeng.test/v.mp4' });
    await poll();
    expect((await taskRow(r.body.id)).status).toBe('IN_PROGRESS');
    mock.states.set(jimengId, { status: 'done', url: 'https://cdn.jimeng.test/v.mp4' });
    await poll();
    const done = await call(key, 'GET', `/v1/video/generations/${r.body.id}`);
    expect(done.body).toMatchObject({
      code: 'success',
      data: { status: 'SUCCESS', platform: 'jimeng', result_url: 'https://cdn.jimeng.test/v.mp4', progress: '100%' },
    });
    expect(JSON.stringify(done.body)).not.toContain(SK);
    expect(JSON.stringify(done.body)).not.toContain(jimengId);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 100_000, token: 1_500_000 - 100_000 });
  });

  it("the native route: Jimeng's body and envelope, Jimeng 3.0's req_key by images, GetResult from the row", async () => {
    const { user, token, key } = await caller();
    const r = await call(key, 'POST', SUBMIT, {
      req_key: V30,
      prompt: 'the cat wakes up',
      image_urls: ['https://img.test/cat.png'],
      frames: 241,
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      code: 10000,
      message: 'Success',
      status: 10000,
      data: { task_id: expect.any(String) },
    });
    const publicId = r.body.data.task_id as string;
    expect(publicId).toMatch(/^task_/);
    expect(mock.calls.at(-1)!.body).toEqual({
      req_key: 'jimeng_i2v_first_v30',
      prompt: 'the cat wakes up',
      image_urls: ['https://img.test/cat.png'],
      seed: -1,
      frames: 241,
    });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 150_000, token: 1_500_000 - 150_000 });
    const row = await taskRow(publicId);
    expect(row).toMatchObject({ platform: 'jimeng', action: 'generate' });
    const jimengId = row.upstreamId.split(':')[1];

    const q = await call(key, 'POST', GET_RESULT, { task_id: publicId });
    expect(q.body).toMatchObject({ code: 10000, data: { status: 'in_queue', video_url: '' } });
    mock.states.set(jimengId, { status: 'done', url: 'https://cdn.jimeng.test/cat.mp4' });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(mock.calls).toContainEqual(
      expect.objectContaining({ body: { req_key: 'jimeng_i2v_first_v30', task_id: jimengId } }),
    );
    const got = await call(key, 'POST', GET_RESULT, { task_id: publicId });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({
      code: 10000,
      status: 10000,
      message: 'Success',
      data: { status: 'done', video_url: 'https://cdn.jimeng.test/cat.mp4' },
    });
    // refusals in Jimeng's envelope, before anything is charged or sent
    const calls = mock.calls.length;
    const refused = [
      await call(key, 'POST', SUBMIT, { req_key: V30, prompt: 'x', duration: 5 }),
      await call(key, 'POST', SUBMIT, { prompt: 'x' }),
      await call(key, 'POST', SUBMIT, { req_key: V30, prompt: 'x', frames: 100 }),
      await call(key, 'POST', '/jimeng/?Action=CVSync2AsyncSubmitTask&Version=2024-01-01', {
        req_key: V30,
        prompt: 'x',
      }),
      await call(key, 'POST', '/jimeng/?Action=CVProcess&Version=2022-08-31', { req_key: V30, prompt: 'x' }),
      await call(key, 'POST', GET_RESULT, { task_id: 'task_nothere' }),
    ];
    expect(refused.map((x) => [x.status, x.body.code])).toEqual([
      [400, 50200],
      [400, 50200],
      [400, 50200],
      [400, 50200],
      [400, 50200],
      [400, 50200],
    ]);
    expect(refused[0].body.message).toBe('unknown field duration');
    expect(mock.calls.length).toBe(calls);
    const other = await caller();
    expect((await call(other.key, 'POST', GET_RESULT, { task_id: publicId })).body.code).toBe(50200);
    const noToken = await fetch(`${s.url}${SUBMIT}`, { method: 'POST', body: '{}' });
    expect(noToken.status).toBe(401);
    expect(await noToken.json()).toMatchObject({ code: 50400, data: null });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 150_000, token: 1_500_000 - 150_000 });
  });

  it('a failed task is refunded once under two concurrent polls, an expired one too', async () => {
    const { user, token, key } = await caller();
    const one = await call(key, 'POST', '/v1/video/generations', { model: T2V, prompt: 'one' });
    const two = await call(key, 'POST', SUBMIT, { req_key: V30, prompt: 'two' });
    expect([one.status, two.status]).toEqual([200, 200]);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 250_000, token: 1_500_000 - 250_000 });
    const rowOne = await taskRow(one.body.id);
    const rowTwo = await taskRow(two.body.data.task_id);
    expect(rowTwo.upstreamId.startsWith('jimeng_t2v_v30:')).toBe(true);
    mock.states.set(rowOne.upstreamId.split(':')[1], { code: 50412 });
    mock.states.set(rowTwo.upstreamId.split(':')[1], { status: 'expired' });
    await Promise.all([pollTaskUpstreams(s.ctx, nowSec()), pollTaskUpstreams(s.ctx, nowSec())]);
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await taskRow(one.body.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'Post Img Risk Not Pass' });
    expect(await taskRow(two.body.data.task_id)).toMatchObject({ status: 'FAILURE', fail_reason: 'expired' });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota)]).sort()).toEqual([
      [2, 100_000],
      [2, 150_000],
      [6, 100_000],
      [6, 150_000],
    ]);
    const failed = await call(key, 'POST', GET_RESULT, { task_id: one.body.id });
    expect(failed.body).toMatchObject({ code: 50500, data: null, message: 'Post Img Risk Not Pass' });
    const expired = await call(key, 'POST', GET_RESULT, { task_id: two.body.data.task_id });
    expect(expired.body).toMatchObject({ code: 10000, data: { status: 'expired' } });
  });

  it("a wrong secret: Volcengine's refusal answered on both routes, nothing charged, no task", async () => {
    const { user, token, key } = await caller();
    const generic = await call(key, 'POST', '/v1/video/generations', { model: BAD, prompt: 'x' });
    expect(mock.calls.at(-1)).toMatchObject({ accessKey: AK, signed: false });
    expect(generic.status).toBe(502);
    expect(generic.body).toMatchObject({
      code: 'SignatureDoesNotMatch',
      message: 'The request signature we calculated does not match the signature you provided.',
    });
    const native = await call(key, 'POST', SUBMIT, { req_key: BAD, prompt: 'x' });
    expect(native.status).toBe(502);
    expect(native.body).toMatchObject({
      code: 50500,
      data: null,
      message: 'The request signature we calculated does not match the signature you provided.',
    });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 });
    expect(await logsOf(s, user.id)).toEqual([]);
    const rows = await s.ctx.db.selectFrom('tasks').select('id').where('user_id', '=', user.id).execute();
    expect(rows).toEqual([]);
  });

  it('the console creates a Jimeng channel (type 51 is no longer refused), which then takes tasks', async () => {
    const res = await root.post('/api/channel/', {
      name: 'jimeng',
      type: 51,
      key: `${AK}|${SK}`,
      base_url: mock.url,
      models: FROM_CONSOLE,
    });
    expect(res.body, JSON.stringify(res.body)).toMatchObject({ success: true });
    const { user, token, key } = await caller();
    await channelsChanged(s);
    const r = await call(key, 'POST', SUBMIT, { req_key: FROM_CONSOLE, prompt: 'from the console' });
    expect(r.body).toMatchObject({ code: 10000 });
    expect(mock.calls.at(-1)!.body).toMatchObject({ req_key: 'jimeng_ti2v_v30_pro' });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 200_000, token: 1_500_000 - 200_000 });
  });
});
