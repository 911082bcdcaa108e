// MiniMax Hailuo on a MiniMax channel (type 35) through new-api's generic video routes against a strict MiniMax mock:
// the submit is `/v1/video_generation` with the key as a bearer, charged per call to the unit (user AND token, one
// consume row); the task polled (Queueing: queued; Processing: running; a 429 or a base_resp rate limit: unchanged; an
// unknown status never a success; Success: its file id); Fail refunded once under two concurrent polls; bad input
// refused before charging; another user's task does not exist.
import { expect, it } from 'vitest';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { nowSec } from '../../src/lib/time.js';
import { describeEachDb } from '../helpers/databases.js';
import { type TestServer } from '../helpers/server.js';
import { addChannel, logsOf, setOptions } from '../relay/fixtures.js';
import { startHailuoMock, type HailuoMock } from './hailuo-mock.js';
import { videoWorld } from './video-world.js';

const KEY = 'minimax-api-key';
const H02 = 'MiniMax-Hailuo-02';
const I2V = 'I2V-01';

await describeEachDb('hailuo relay', (kind) => {
  let mock: HailuoMock;
  let channel: number;
  let s: TestServer;
  const { caller, call, balances, taskRow } = videoWorld(kind, 'hailuo', async (server) => {
    s = server;
    mock = await startHailuoMock(KEY);
    channel = await addChannel(s, { type: 35, key: KEY, baseUrl: mock.url, models: [H02, I2V] });
    await setOptions(s, { ModelPrice: { [H02]: 0.25, [I2V]: 0.15 } });
    return async () => {
      await mock?.close();
    };
  });

  it('1080P for 10 s on a MiniMax channel: 0.25 × 500000 = 125000 charged once; polled to its file', async () => {
    const { user, token, key } = await caller();
    const r = await call(key, 'POST', '/v1/video/generations', {
      model: H02,
      prompt: 'a fox in the snow',
      size: '1920x1080',
      duration: 10,
      metadata: { model: I2V, prompt_optimizer: false },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: 'video', model: H02, status: 'queued' });
    const sent = mock.calls.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', path: '/v1/video_generation', auth: `Bearer ${KEY}` });
    expect(sent.body).toEqual({
      model: H02,
      prompt: 'a fox in the snow',
      duration: 10,
      resolution: '1080P',
      prompt_optimizer: false,
    });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 125_000, token: 1_500_000 - 125_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name, Number(l.channel_id)])).toEqual([
      [2, 125_000, H02, channel],
    ]);
    const row = await taskRow(r.body.id);
    expect(row).toMatchObject({ platform: 'hailuo', action: 'generate' });

    // tasks left running by earlier cases are polled in the same pass, in no set order
    const polledFrom = mock.calls.length;
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await taskRow(r.body.id)).toMatchObject({ status: 'QUEUED', progress: '30%' });
    expect(mock.calls.slice(polledFrom)).toContainEqual(
      expect.objectContaining({
        method: 'GET',
        path: '/v1/query/video_generation',
        query: `task_id=${row.upstreamId}`,
        auth: `Bearer ${KEY}`,
      }),
    );
    mock.states.set(row.upstreamId, { status: 'Processing' });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await taskRow(r.body.id)).toMatchObject({ status: 'IN_PROGRESS', progress: '50%' });
    for (const st of [
      { status: 'Success', fileId: '2051', http: 429 },
      { status: 'Success', fileId: '2051', code: 1002 },
      { status: 'Done', fileId: '2051' },
    ]) {
      mock.states.set(row.upstreamId, st);
      await pollTaskUpstreams(s.ctx, nowSec());
      expect([st, (await taskRow(r.body.id)).status]).toEqual([st, 'IN_PROGRESS']);
    }
    mock.states.set(row.upstreamId, { status: 'Success', fileId: '2051' });
    await pollTaskUpstreams(s.ctx, nowSec());
    const done = await call(key, 'GET', `/v1/video/generations/${r.body.id}`);
    expect(done.body).toMatchObject({
      code: 'success',
      data: { status: 'SUCCESS', platform: 'hailuo', progress: '100%', data: { file_id: '2051' } },
    });
    expect(JSON.stringify(done.body)).not.toContain(KEY);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 125_000, token: 1_500_000 - 125_000 });
  });

  it('first and last frames; a failed task, or a success without a file, is refunded once', async () => {
    const { user, token, key } = await caller();
    const a = await call(key, 'POST', '/v1/video/generations', {
      model: I2V,
      images: ['https://img.test/a.png', 'https://img.test/b.png'],
    });
    expect(mock.calls.at(-1)!.body).toEqual({
      model: I2V,
      duration: 6,
      resolution: '720P',
      first_frame_image: 'https://img.test/a.png',
      last_frame_image: 'https://img.test/b.png',
    });
    const b = await call(key, 'POST', '/v1/video/generations', { model: H02, prompt: 'two' });
    expect(mock.calls.at(-1)!.body).toMatchObject({ duration: 6, resolution: '768P' });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 200_000, token: 1_500_000 - 200_000 });

    mock.states.set((await taskRow(a.body.id)).upstreamId, { status: 'Fail' });
    mock.states.set((await taskRow(b.body.id)).upstreamId, { status: 'Success' });
    await Promise.all([pollTaskUpstreams(s.ctx, nowSec()), pollTaskUpstreams(s.ctx, nowSec())]);
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await taskRow(a.body.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'task failed' });
    expect(await taskRow(b.body.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'no video generated' });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota)]).sort()).toEqual([
      [2, 125_000],
      [2, 75_000],
      [6, 125_000],
      [6, 75_000],
    ]);
  });

  it("bad input is refused before charging; another user's task does not exist", async () => {
    const { user, token, key } = await caller();
    const calls = mock.calls.length;
    for (const body of [
      { model: H02 },
      { model: H02, prompt: 'x', duration: 8 },
      { model: I2V, prompt: 'x', duration: 10 },
      { model: H02, prompt: 'x', metadata: { resolution: '720P' } },
      { model: H02, prompt: 'x', images: ['a', 'b', 'c'] },
      { model: H02, prompt: 'x', metadata: { prompt_optimizer: 'yes' } },
      { model: H02, prompt: 'x', metadata: { subject_reference: [{ type: 'character', image: 'x' }] } },
    ]) {
      const r = await call(key, 'POST', '/v1/video/generations', body);
      expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), 400]);
    }
    expect(mock.calls.length).toBe(calls);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 });

    const mine = await call(key, 'POST', '/v1/video/generations', { model: H02, prompt: 'mine' });
    const other = await caller();
    const r = await call(other.key, 'GET', `/v1/video/generations/${mine.body.id}`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'task_not_exist' });
  });
});
