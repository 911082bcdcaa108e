// Veo on a Gemini channel (type 24) through new-api's generic video routes against a strict Gemini mock: the submit
// is `predictLongRunning` with the key in x-goog-api-key, charged per second × the 4K ratio to the unit (user AND
// token, one consume row); the operation polled (not done: running; a 429: unchanged; done with a video: success with
// its URI; an error, or done with every sample filtered: failure refunded once); images refused before charging;
// another user's task does not exist.
import { expect, it } from 'vitest';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { nowSec } from '../../src/lib/time.js';
import { describeEachDb } from '../helpers/databases.js';
import { type TestServer } from '../helpers/server.js';
import { addChannel, logsOf, setOptions } from '../relay/fixtures.js';
import { startVeoMock, type VeoMock } from './veo-mock.js';
import { videoWorld } from './video-world.js';

const KEY = 'gemini-veo-key';
const MODEL = 'veo-3.1-generate-preview';

await describeEachDb('veo relay', (kind) => {
  let mock: VeoMock;
  let channel: number;
  let s: TestServer;
  const { caller, call, balances, taskRow } = videoWorld(kind, 'veo', async (server) => {
    s = server;
    mock = await startVeoMock(KEY);
    channel = await addChannel(s, { type: 24, key: KEY, baseUrl: mock.url, models: [MODEL, 'veo-3.0-generate-001'] });
    await setOptions(s, { ModelPrice: { [MODEL]: 0.1, 'veo-3.0-generate-001': 0.1 } });
    return async () => {
      await mock?.close();
    };
  });

  it('4K for 6 s: predictLongRunning with the key header, 0.1 × 500000 × 6 × 1.5 = 450000 charged; polled to its video', async () => {
    const { user, token, key } = await caller();
    const r = await call(key, 'POST', '/v1/video/generations', {
      model: MODEL,
      prompt: 'a lighthouse at dusk',
      size: '3840x2160',
      duration: 6,
      metadata: { negativePrompt: 'people', personGeneration: 'dont_allow' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: 'video', model: MODEL, status: 'queued', seconds: '6' });
    const sent = mock.calls.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', path: `/v1beta/models/${MODEL}:predictLongRunning`, key: KEY });
    expect(sent.body).toEqual({
      instances: [{ prompt: 'a lighthouse at dusk' }],
      parameters: {
        aspectRatio: '16:9',
        durationSeconds: 6,
        resolution: '4k',
        negativePrompt: 'people',
        personGeneration: 'dont_allow',
      },
    });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 450_000, token: 1_500_000 - 450_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name, Number(l.channel_id)])).toEqual([
      [2, 450_000, MODEL, channel],
    ]);
    expect(logs[0].otherJson).toMatchObject({ task_id: r.body.id, other_ratios: { seconds: 6, resolution: 1.5 } });
    const row = await taskRow(r.body.id);
    expect(row).toMatchObject({
      platform: 'veo',
      upstreamId: `models/${MODEL}/operations/${row.upstreamId.split('/').at(-1)}`,
    });

    // tasks left running by earlier cases are polled in the same pass, in no set order
    const polledFrom = mock.calls.length;
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(r.body.id)).status).toBe('IN_PROGRESS');
    expect(mock.calls.slice(polledFrom)).toContainEqual(
      expect.objectContaining({ method: 'GET', path: `/v1beta/${row.upstreamId}`, key: KEY }),
    );
    mock.states.set(row.upstreamId, { done: true, uri: 'https://files.test/v.mp4', http: 429 });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(r.body.id)).status).toBe('IN_PROGRESS');
    mock.states.set(row.upstreamId, { done: true, uri: 'https://files.test/v.mp4' });
    await pollTaskUpstreams(s.ctx, nowSec());
    const done = await call(key, 'GET', `/v1/video/generations/${r.body.id}`);
    expect(done.body).toMatchObject({
      code: 'success',
      data: { status: 'SUCCESS', platform: 'veo', result_url: `/v1/videos/${r.body.id}/content`, progress: '100%' },
    });
    expect(JSON.stringify(done.body)).not.toContain(KEY);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 450_000, token: 1_500_000 - 450_000 });
  });

  it('an operation error, or every sample filtered, fails and is refunded once', async () => {
    const { user, token, key } = await caller();
    // 720p by default, 8 s by default: 0.1 × 500000 × 8 = 400000
    const a = await call(key, 'POST', '/v1/video/generations', { model: 'veo-3.0-generate-001', prompt: 'one' });
    const b = await call(key, 'POST', '/v1/video/generations', { model: MODEL, prompt: 'two', seconds: '4' });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 600_000, token: 1_500_000 - 600_000 });
    mock.states.set((await taskRow(a.body.id)).upstreamId, { error: 'quota exceeded upstream' });
    mock.states.set((await taskRow(b.body.id)).upstreamId, { done: true, filtered: 'unsafe content' });
    await Promise.all([pollTaskUpstreams(s.ctx, nowSec()), pollTaskUpstreams(s.ctx, nowSec())]);
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await taskRow(a.body.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'quota exceeded upstream' });
    expect(await taskRow(b.body.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'unsafe content' });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota)]).sort()).toEqual([
      [2, 200_000],
      [2, 400_000],
      [6, 200_000],
      [6, 400_000],
    ]);
  });

  it("images, bad lengths and resolutions are refused before charging; another user's task does not exist", async () => {
    const { user, token, key } = await caller();
    const calls = mock.calls.length;
    for (const body of [
      { model: MODEL, prompt: 'x', image: 'https://img.test/a.png' },
      { model: MODEL, prompt: 'x', duration: 12 },
      { model: MODEL, prompt: 'x', metadata: { resolution: '8k' } },
      { model: MODEL, prompt: 'x', metadata: { aspectRatio: '4:3' } },
      { model: MODEL },
    ]) {
      const r = await call(key, 'POST', '/v1/video/generations', body);
      expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), 400]);
    }
    expect(mock.calls.length).toBe(calls);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 });

    const mine = await call(key, 'POST', '/v1/video/generations', { model: MODEL, prompt: 'mine' });
    const other = await caller();
    const r = await call(other.key, 'GET', `/v1/video/generations/${mine.body.id}`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'task_not_exist' });
  });
});
