// Doubao video (type 54, and VolcEngine's type 45) through new-api's generic video routes against a strict Ark mock:
// the submit is a content generation task with the key as a bearer, charged per call × new-api's resolution and
// video-input ratio to the unit (user AND token, one consume row); the task polled (queued, running, a 429 unchanged,
// an unknown status never a success, succeeded with its video); failed or cancelled refunded once under two
// concurrent polls; bad input refused before charging; another user's task does not exist.
import { expect, it } from 'vitest';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { nowSec } from '../../src/lib/time.js';
import { describeEachDb } from '../helpers/databases.js';
import { type TestServer } from '../helpers/server.js';
import { addChannel, logsOf, setOptions } from '../relay/fixtures.js';
import { startArkMock, type ArkMock } from './doubao-video-mock.js';
import { videoWorld } from './video-world.js';

const KEY = 'ark-api-key';
const PRO = 'doubao-seedance-2-0-260128';
const FAST = 'doubao-seedance-2-0-fast-260128';
const V1 = 'doubao-seedance-1-0-pro-250528';

await describeEachDb('doubao video relay', (kind) => {
  let mock: ArkMock;
  let video: number;
  let volc: number;
  let s: TestServer;
  const { caller, call, balances, taskRow } = videoWorld(kind, 'ark', async (server) => {
    s = server;
    mock = await startArkMock(KEY);
    video = await addChannel(s, { type: 54, key: KEY, baseUrl: mock.url, models: [PRO, V1] });
    volc = await addChannel(s, { type: 45, key: KEY, baseUrl: mock.url, models: [FAST] });
    await setOptions(s, { ModelPrice: { [PRO]: 1, [FAST]: 0.8, [V1]: 0.3 } });
    return async () => {
      await mock?.close();
    };
  });

  it('1080p with a video input: 1 × 500000 × 31/46 = 336956 charged; polled to its video', async () => {
    const { user, token, key } = await caller();
    const r = await call(key, 'POST', '/v1/video/generations', {
      model: PRO,
      prompt: 'the cat from the clip, now dancing',
      image: 'https://img.test/cat.png',
      duration: 5,
      metadata: {
        model: V1,
        resolution: '1080P',
        ratio: '16:9',
        watermark: false,
        content: [
          { type: 'text', text: 'dropped' },
          { type: 'video_url', video_url: { url: 'https://img.test/clip.mp4' }, role: 'reference_video' },
        ],
      },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: 'video', model: PRO, status: 'queued' });
    const sent = mock.calls.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', path: '/api/v3/contents/generations/tasks', auth: `Bearer ${KEY}` });
    expect(sent.body).toEqual({
      model: PRO,
      content: [
        { type: 'image_url', image_url: { url: 'https://img.test/cat.png' } },
        { type: 'video_url', video_url: { url: 'https://img.test/clip.mp4' }, role: 'reference_video' },
        { type: 'text', text: 'the cat from the clip, now dancing' },
      ],
      ratio: '16:9',
      watermark: false,
      resolution: '1080p',
      duration: 5,
    });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 336_956, token: 1_500_000 - 336_956 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name, Number(l.channel_id)])).toEqual([
      [2, 336_956, PRO, video],
    ]);
    expect(logs[0].otherJson).toMatchObject({ task_id: r.body.id, other_ratios: { video_input: 0.673913 } });
    const row = await taskRow(r.body.id);
    expect(row).toMatchObject({ platform: 'doubao-video', action: 'generate' });

    // tasks left running by earlier cases are polled in the same pass, in no set order
    const polledFrom = mock.calls.length;
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await taskRow(r.body.id)).toMatchObject({ status: 'QUEUED', progress: '10%' });
    expect(mock.calls.slice(polledFrom)).toContainEqual(
      expect.objectContaining({
        method: 'GET',
        path: `/api/v3/contents/generations/tasks/${row.upstreamId}`,
        auth: `Bearer ${KEY}`,
      }),
    );
    mock.states.set(row.upstreamId, { status: 'running' });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await taskRow(r.body.id)).toMatchObject({ status: 'IN_PROGRESS', progress: '50%' });
    mock.states.set(row.upstreamId, { status: 'succeeded', url: 'https://ark.test/v.mp4', http: 429 });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(r.body.id)).status).toBe('IN_PROGRESS');
    mock.states.set(row.upstreamId, { status: 'done', url: 'https://ark.test/v.mp4' });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(r.body.id)).status).toBe('IN_PROGRESS');
    mock.states.set(row.upstreamId, { status: 'succeeded', url: 'https://ark.test/v.mp4' });
    await pollTaskUpstreams(s.ctx, nowSec());
    const done = await call(key, 'GET', `/v1/video/generations/${r.body.id}`);
    expect(done.body).toMatchObject({
      code: 'success',
      data: { status: 'SUCCESS', platform: 'doubao-video', result_url: 'https://ark.test/v.mp4', progress: '100%' },
    });
    expect(JSON.stringify(done.body)).not.toContain(KEY);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 336_956, token: 1_500_000 - 336_956 });
  });

  it('on a VolcEngine channel (type 45) too; failed and cancelled tasks are refunded once', async () => {
    const { user, token, key } = await caller();
    // fast with a video input: 0.8 × 500000 × 22/37 = 237837; a 1.x model: 0.3 × 500000 = 150000
    const a = await call(key, 'POST', '/v1/video/generations', {
      model: FAST,
      prompt: 'one',
      metadata: { content: [{ type: 'video_url', video_url: { url: 'https://img.test/c.mp4' } }] },
    });
    expect(mock.calls.at(-1)!.body.model).toBe(FAST);
    const b = await call(key, 'POST', '/v1/video/generations', { model: V1, prompt: 'two', seconds: '10' });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await taskRow(a.body.id)).toMatchObject({ channel_id: volc, platform: 'doubao-video' });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 387_837, token: 1_500_000 - 387_837 });

    mock.states.set((await taskRow(a.body.id)).upstreamId, { status: 'failed', error: 'sensitive content' });
    mock.states.set((await taskRow(b.body.id)).upstreamId, { status: 'cancelled' });
    await Promise.all([pollTaskUpstreams(s.ctx, nowSec()), pollTaskUpstreams(s.ctx, nowSec())]);
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await taskRow(a.body.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'sensitive content' });
    expect(await taskRow(b.body.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'task cancelled' });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota)]).sort()).toEqual([
      [2, 150_000],
      [2, 237_837],
      [6, 150_000],
      [6, 237_837],
    ]);
  });

  it("bad input is refused before charging; another user's task does not exist", async () => {
    const { user, token, key } = await caller();
    const calls = mock.calls.length;
    for (const body of [
      { model: PRO },
      { model: PRO, prompt: 'x', duration: 90 },
      { model: PRO, prompt: 'x', metadata: { resolution: '8k' } },
      { model: PRO, prompt: 'x', images: [3] },
      { model: PRO, prompt: 'x', metadata: { content: [{ type: 'file_url', file_url: { url: 'x' } }] } },
      { model: PRO, prompt: 'x', metadata: { content: 'clip' } },
    ]) {
      const r = await call(key, 'POST', '/v1/video/generations', body);
      expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), 400]);
    }
    expect(mock.calls.length).toBe(calls);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 });

    const mine = await call(key, 'POST', '/v1/video/generations', { model: V1, prompt: 'mine' });
    const other = await caller();
    const r = await call(other.key, 'GET', `/v1/video/generations/${mine.body.id}`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'task_not_exist' });
  });
});
