// Alibaba's Wan on an Ali channel (type 17) through new-api's generic video routes against a strict DashScope mock:
// the submit is an asynchronous video synthesis (`X-DashScope-Async: enable`, the key as a bearer), charged for its
// seconds × new-api's resolution ratio to the unit (user AND token, one consume row); the task polled (PENDING:
// queued; RUNNING: running; a 429: unchanged; an unknown status never a success; SUCCEEDED: its video); FAILED and
// CANCELED refunded once under two concurrent polls; bad input refused before charging; another user's task does
// not exist.
import { expect, it } from 'vitest';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { nowSec } from '../../src/lib/time.js';
import { describeEachDb } from '../helpers/databases.js';
import { type TestServer } from '../helpers/server.js';
import { addChannel, logsOf, setOptions } from '../relay/fixtures.js';
import { startWanMock, type WanMock } from './wan-mock.js';
import { videoWorld } from './video-world.js';

const KEY = 'dashscope-api-key';
const T2V = 'wan2.5-t2v-preview';
const I2V = 'wan2.2-i2v-flash';

await describeEachDb('wan relay', (kind) => {
  let mock: WanMock;
  let channel: number;
  let s: TestServer;
  const { caller, call, balances, taskRow } = videoWorld(kind, 'wan', async (server) => {
    s = server;
    mock = await startWanMock(KEY);
    channel = await addChannel(s, { type: 17, key: KEY, baseUrl: mock.url, models: [T2V, I2V] });
    await setOptions(s, { ModelPrice: { [T2V]: 0.03, [I2V]: 0.02 } });
    return async () => {
      await mock?.close();
    };
  });

  it('1080P text to video for 10 s: 0.03 × 500000 × 10 × 3.333333 = 499999 charged; polled to its video', async () => {
    const { user, token, key } = await caller();
    const r = await call(key, 'POST', '/v1/video/generations', {
      model: T2V,
      prompt: 'a kite over the sea',
      size: '1920x1080',
      seconds: '10',
      metadata: { model: I2V, input: { negative_prompt: 'rain' }, parameters: { seed: 42, audio: true } },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: 'video', model: T2V, status: 'queued' });
    const sent = mock.calls.at(-1)!;
    expect(sent).toMatchObject({
      method: 'POST',
      path: '/api/v1/services/aigc/video-generation/video-synthesis',
      auth: `Bearer ${KEY}`,
      async: 'enable',
    });
    expect(sent.body).toEqual({
      model: T2V,
      input: { prompt: 'a kite over the sea', negative_prompt: 'rain' },
      parameters: { size: '1920*1080', duration: 10, prompt_extend: true, watermark: false, audio: true, seed: 42 },
    });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 499_999, token: 1_500_000 - 499_999 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name, Number(l.channel_id)])).toEqual([
      [2, 499_999, T2V, channel],
    ]);
    expect(logs[0].otherJson).toMatchObject({
      task_id: r.body.id,
      other_ratios: { seconds: 10, 'resolution-1080P': 3.333333 },
    });
    const row = await taskRow(r.body.id);
    expect(row).toMatchObject({ platform: 'wan', action: 'generate' });

    // tasks left running by earlier cases are polled in the same pass, in no set order
    const polledFrom = mock.calls.length;
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(r.body.id)).status).toBe('QUEUED');
    expect(mock.calls.slice(polledFrom)).toContainEqual(
      expect.objectContaining({
        method: 'GET',
        path: `/api/v1/tasks/${row.upstreamId}`,
        auth: `Bearer ${KEY}`,
      }),
    );
    mock.states.set(row.upstreamId, { status: 'RUNNING' });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(r.body.id)).status).toBe('IN_PROGRESS');
    for (const st of [
      { status: 'SUCCEEDED', url: 'https://dashscope.test/v.mp4', http: 429 },
      { status: 'ALMOST', url: 'https://dashscope.test/v.mp4' },
    ]) {
      mock.states.set(row.upstreamId, st);
      await pollTaskUpstreams(s.ctx, nowSec());
      expect([st, (await taskRow(r.body.id)).status]).toEqual([st, 'IN_PROGRESS']);
    }
    mock.states.set(row.upstreamId, { status: 'SUCCEEDED', url: 'https://dashscope.test/v.mp4' });
    await pollTaskUpstreams(s.ctx, nowSec());
    const done = await call(key, 'GET', `/v1/video/generations/${r.body.id}`);
    expect(done.body).toMatchObject({
      code: 'success',
      data: { status: 'SUCCESS', platform: 'wan', result_url: 'https://dashscope.test/v.mp4', progress: '100%' },
    });
    expect(JSON.stringify(done.body)).not.toContain(KEY);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 499_999, token: 1_500_000 - 499_999 });
  });

  it('image to video at 720P by default; FAILED and CANCELED are refunded once', async () => {
    const { user, token, key } = await caller();
    // 0.02 × 500000 × 5 × 2 = 100000; a 480p one: 0.02 × 500000 × 3 = 30000
    const a = await call(key, 'POST', '/v1/video/generations', {
      model: I2V,
      prompt: 'wave',
      image: 'https://img.test/a.png',
    });
    expect(mock.calls.at(-1)!.body).toEqual({
      model: I2V,
      input: { prompt: 'wave', img_url: 'https://img.test/a.png' },
      parameters: { resolution: '720P', duration: 5, prompt_extend: true, watermark: false },
    });
    const b = await call(key, 'POST', '/v1/video/generations', {
      model: I2V,
      input_reference: 'https://img.test/b.png',
      size: '480p',
      duration: 3,
    });
    expect(mock.calls.at(-1)!.body.parameters).toMatchObject({ resolution: '480P', duration: 3 });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 130_000, token: 1_500_000 - 130_000 });

    mock.states.set((await taskRow(a.body.id)).upstreamId, { status: 'FAILED', message: 'inappropriate content' });
    mock.states.set((await taskRow(b.body.id)).upstreamId, { status: 'CANCELED' });
    await Promise.all([pollTaskUpstreams(s.ctx, nowSec()), pollTaskUpstreams(s.ctx, nowSec())]);
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await taskRow(a.body.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'inappropriate content' });
    expect(await taskRow(b.body.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'task canceled' });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota)]).sort()).toEqual([
      [2, 100_000],
      [2, 30_000],
      [6, 100_000],
      [6, 30_000],
    ]);
  });

  it("bad input is refused before charging; another user's task does not exist", async () => {
    const { user, token, key } = await caller();
    const calls = mock.calls.length;
    for (const body of [
      { model: T2V },
      { model: T2V, prompt: 'x', size: '1000x1000' },
      { model: T2V, prompt: 'x', size: '720p' },
      { model: I2V, prompt: 'x', size: '4k' },
      { model: T2V, prompt: 'x', duration: 60 },
      { model: T2V, prompt: 'x', metadata: { parameters: { watermark: 'no' } } },
      { model: T2V, prompt: 'x', metadata: { input: 'x' } },
    ]) {
      const r = await call(key, 'POST', '/v1/video/generations', body);
      expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), 400]);
    }
    expect(mock.calls.length).toBe(calls);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 });

    const mine = await call(key, 'POST', '/v1/video/generations', { model: T2V, prompt: 'mine' });
    const other = await caller();
    const r = await call(other.key, 'GET', `/v1/video/generations/${mine.body.id}`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'task_not_exist' });
  });
});
