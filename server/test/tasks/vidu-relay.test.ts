// Vidu (type 52) through new-api's generic video routes against a strict Vidu mock: the submit goes with
// `Authorization: Token <key>` to the path its number of images picks, charged per call to the unit (user AND token,
// one consume row); the task polled (queueing: submitted; processing: running; a 429: unchanged; an unknown state:
// never a success; success: its creation's URL; failed: refunded once under two concurrent polls); bad input refused
// before charging; another user's task does not exist.
import { expect, it } from 'vitest';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { nowSec } from '../../src/lib/time.js';
import { describeEachDb } from '../helpers/databases.js';
import { type TestServer } from '../helpers/server.js';
import { addChannel, logsOf, setOptions } from '../relay/fixtures.js';
import { startViduMock, type ViduMock } from './vidu-mock.js';
import { videoWorld } from './video-world.js';

const KEY = 'vidu-api-key';
const Q1 = 'viduq1';
const Q2 = 'viduq2-pro';

await describeEachDb('vidu relay', (kind) => {
  let mock: ViduMock;
  let channel: number;
  let s: TestServer;
  const { caller, call, balances, taskRow } = videoWorld(kind, 'vidu', async (server) => {
    s = server;
    mock = await startViduMock(KEY);
    channel = await addChannel(s, { type: 52, key: KEY, baseUrl: mock.url, models: [Q1, Q2] });
    await setOptions(s, { ModelPrice: { [Q1]: 0.2, [Q2]: 0.35 } });
    return async () => {
      await mock?.close();
    };
  });

  it('text to video with the Token header: 0.2 × 500000 = 100000 charged once; polled to its creation', async () => {
    const { user, token, key } = await caller();
    const r = await call(key, 'POST', '/v1/video/generations', {
      model: Q1,
      prompt: 'a paper boat on a river',
      size: '1280x720',
      duration: 4,
      metadata: { seed: 7, bgm: true, model: 'viduq2-pro' },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ object: 'video', model: Q1, status: 'queued' });
    expect(r.body.task_id).toBe(r.body.id);
    const sent = mock.calls.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', path: '/ent/v2/text2video', auth: `Token ${KEY}` });
    expect(sent.body).toEqual({
      model: Q1,
      images: [],
      prompt: 'a paper boat on a river',
      duration: 4,
      resolution: '720p',
      movement_amplitude: 'auto',
      bgm: true,
      seed: 7,
    });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 100_000, token: 1_500_000 - 100_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name, Number(l.channel_id)])).toEqual([
      [2, 100_000, Q1, channel],
    ]);
    const row = await taskRow(r.body.id);
    expect(row).toMatchObject({ platform: 'vidu', action: 'textGenerate' });

    // tasks left running by earlier cases are polled in the same pass, in no set order
    const polledFrom = mock.calls.length;
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(r.body.id)).status).toBe('SUBMITTED');
    expect(mock.calls.slice(polledFrom)).toContainEqual(
      expect.objectContaining({
        method: 'GET',
        path: `/ent/v2/tasks/${row.upstreamId}/creations`,
        auth: `Token ${KEY}`,
      }),
    );
    mock.states.set(row.upstreamId, { state: 'processing' });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(r.body.id)).status).toBe('IN_PROGRESS');
    mock.states.set(row.upstreamId, { state: 'success', url: 'https://cdn.vidu.test/v.mp4', http: 429 });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(r.body.id)).status).toBe('IN_PROGRESS');
    mock.states.set(row.upstreamId, { state: 'finished-ish', url: 'https://cdn.vidu.test/v.mp4' });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(r.body.id)).status).toBe('IN_PROGRESS');
    mock.states.set(row.upstreamId, { state: 'success', url: 'https://cdn.vidu.test/v.mp4' });
    await pollTaskUpstreams(s.ctx, nowSec());
    const done = await call(key, 'GET', `/v1/video/generations/${r.body.id}`);
    expect(done.body).toMatchObject({
      code: 'success',
      data: { status: 'SUCCESS', platform: 'vidu', result_url: 'https://cdn.vidu.test/v.mp4', progress: '100%' },
    });
    expect(JSON.stringify(done.body)).not.toContain(KEY);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 100_000, token: 1_500_000 - 100_000 });
  });

  it('the number of images picks the path; a failed task is refunded once under two concurrent polls', async () => {
    const { user, token, key } = await caller();
    const one = await call(key, 'POST', '/v1/video/generations', { model: Q1, image: 'https://img.test/a.png' });
    expect(mock.calls.at(-1)).toMatchObject({ path: '/ent/v2/img2video' });
    expect(mock.calls.at(-1)!.body).toMatchObject({
      images: ['https://img.test/a.png'],
      duration: 5,
      resolution: '1080p',
    });
    const two = await call(key, 'POST', '/v1/video/generations', {
      model: Q1,
      prompt: 'from dawn to dusk',
      images: ['https://img.test/a.png', 'https://img.test/b.png'],
    });
    expect(mock.calls.at(-1)).toMatchObject({ path: '/ent/v2/start-end2video' });
    const three = await call(key, 'POST', '/v1/video/generations', {
      model: Q2,
      prompt: 'the three of them',
      images: ['https://img.test/a.png', 'https://img.test/b.png', 'https://img.test/c.png'],
    });
    // reference images take the plain viduq2 upstream; the price is the one asked for
    expect(mock.calls.at(-1)).toMatchObject({ path: '/ent/v2/reference2video', body: { model: 'viduq2' } });
    expect([one.status, two.status, three.status]).toEqual([200, 200, 200]);
    expect((await taskRow(two.body.id)).action).toBe('firstTailGenerate');
    expect((await taskRow(three.body.id)).action).toBe('referenceGenerate');
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 375_000, token: 1_500_000 - 375_000 });

    mock.states.set((await taskRow(one.body.id)).upstreamId, { state: 'failed', errCode: 'AuditSubmitIllegal' });
    mock.states.set((await taskRow(three.body.id)).upstreamId, { state: 'success' });
    await Promise.all([pollTaskUpstreams(s.ctx, nowSec()), pollTaskUpstreams(s.ctx, nowSec())]);
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await taskRow(one.body.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'AuditSubmitIllegal' });
    // a success without a creation is no success
    expect(await taskRow(three.body.id)).toMatchObject({ status: 'FAILURE', fail_reason: 'no video generated' });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 100_000, token: 1_500_000 - 100_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota)]).sort()).toEqual([
      [2, 100_000],
      [2, 100_000],
      [2, 175_000],
      [6, 100_000],
      [6, 175_000],
    ]);
  });

  it("bad input is refused before charging; another user's task does not exist", async () => {
    const { user, token, key } = await caller();
    const calls = mock.calls.length;
    for (const body of [
      { model: Q1 },
      { model: Q1, prompt: 'x', duration: 30 },
      { model: Q1, prompt: 'x', size: '4096x4096' },
      { model: Q1, prompt: 'x', images: [1] },
      { model: Q1, prompt: 'x', metadata: { movement_amplitude: 'huge' } },
      { model: Q1, prompt: 'x', metadata: 'no' },
    ]) {
      const r = await call(key, 'POST', '/v1/video/generations', body);
      expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), 400]);
    }
    expect(mock.calls.length).toBe(calls);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 });

    const mine = await call(key, 'POST', '/v1/video/generations', { model: Q1, prompt: 'mine' });
    const other = await caller();
    const r = await call(other.key, 'GET', `/v1/video/generations/${mine.body.id}`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'task_not_exist' });
  });
});
