// OpenAI's video API (`/v1/videos`) for the video platforms other than Sora, driven by the official SDK (whose create
// is always a multipart form) and raw HTTP against strict mocks: a create routed by the model the form or the JSON
// names to a Kling channel (the mock verifies its JWT) or a Veo one on the Gemini API, converted into the platform's
// payload (the reference image as a URL or a file's data URI), charged to the unit (user AND token); the video object
// retrieved as the poller wrote it; a platform refusing the request (Veo takes no image) answers OpenAI's error shape
// with nothing charged or sent; a remix of a Kling video refused with nothing charged; another user's id not found.
import OpenAI, { toFile } from 'openai';
import { expect, it } from 'vitest';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { nowSec } from '../../src/lib/time.js';
import { describeEachDb } from '../helpers/databases.js';
import { type TestServer } from '../helpers/server.js';
import { addChannel, logsOf, setOptions } from '../relay/fixtures.js';
import { startKlingMock, type KlingMock } from './kling-mock.js';
import { startVeoMock, type VeoMock } from './veo-mock.js';
import { videoWorld } from './video-world.js';

const PAIR = 'ak-openai-route|sk-secret-of-openai-route';
const VEO_KEY = 'gemini-veo-openai-route';
const VEO = 'veo-3.1-generate-preview';
/** Kling: 0.2 USD a call (100 000 units), kling-v2-master 0.4 (200 000); Veo 0.1 a second (50 000) */
const KLING_CHARGE = 100_000;
const MASTER_CHARGE = 200_000;
const START = { user: 2_000_000, token: 1_500_000 };

await describeEachDb('OpenAI video API on other platforms', (kind) => {
  let s: TestServer;
  let kling: KlingMock;
  let veo: VeoMock;
  let klingChannel: number;
  let veoChannel: number;
  const { caller, call, balances, taskRow } = videoWorld(kind, 'openai-videos', async (server) => {
    s = server;
    kling = await startKlingMock([PAIR]);
    veo = await startVeoMock(VEO_KEY);
    klingChannel = await addChannel(s, {
      type: 50,
      key: PAIR,
      baseUrl: kling.url,
      models: ['kling-v1', 'kling-v2-master'],
    });
    veoChannel = await addChannel(s, { type: 24, key: VEO_KEY, baseUrl: veo.url, models: [VEO] });
    await setOptions(s, { ModelPrice: { 'kling-v1': 0.2, 'kling-v2-master': 0.4, [VEO]: 0.1 } });
    return async () => {
      await kling?.close();
      await veo?.close();
    };
  });

  const sdkOf = (key: string) => new OpenAI({ apiKey: key, baseURL: `${s.url}/v1`, maxRetries: 0, timeout: 20_000 });

  it('SDK create on Kling: the JWT-signed text2video, charged per call to the unit; retrieve after the poller: completed', async () => {
    const { user, token, key } = await caller();
    const sdk = sdkOf(key);
    const calls = kling.calls.length;
    const video = await sdk.videos.create({
      model: 'kling-v1' as 'sora-2',
      prompt: 'a fox in snow',
      seconds: '5' as '4',
      size: '1280x720',
    });
    expect(video).toMatchObject({
      object: 'video',
      model: 'kling-v1',
      status: 'queued',
      progress: 0,
      seconds: '5',
      size: '1280x720',
      error: null,
      completed_at: null,
    });
    expect(video.id).toMatch(/^task_[A-Za-z0-9]{32}$/);
    const sent = kling.calls.slice(calls);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      method: 'POST',
      path: '/v1/videos/text2video',
      claims: { iss: 'ak-openai-route' },
    });
    expect(sent[0].body).toMatchObject({
      model_name: 'kling-v1',
      prompt: 'a fox in snow',
      duration: '5',
      aspect_ratio: '16:9',
    });
    expect(sent[0].body.image).toBeUndefined();
    expect(await balances(user.id, token.id)).toEqual({
      user: START.user - KLING_CHARGE,
      token: START.token - KLING_CHARGE,
    });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name, Number(l.channel_id)])).toEqual([
      [2, KLING_CHARGE, 'kling-v1', klingChannel],
    ]);
    const row = await taskRow(video.id);
    expect(row).toMatchObject({ platform: 'kling', status: 'NOT_START' });

    kling.states.set(row.upstreamId, { status: 'processing' });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await sdk.videos.retrieve(video.id)).toMatchObject({ id: video.id, status: 'in_progress' });
    kling.states.set(row.upstreamId, { status: 'succeed', url: 'https://cdn.kling.test/v.mp4' });
    await pollTaskUpstreams(s.ctx, nowSec());
    const done = await sdk.videos.retrieve(video.id);
    expect(done).toMatchObject({
      id: video.id,
      object: 'video',
      model: 'kling-v1',
      status: 'completed',
      progress: 100,
      seconds: '5',
      size: '1280x720',
      error: null,
    });
    expect(done.completed_at).toBeGreaterThan(0);
    // the client never sees the upstream's id
    expect(JSON.stringify(done)).not.toContain(row.upstreamId);
    expect(await balances(user.id, token.id)).toEqual({
      user: START.user - KLING_CHARGE,
      token: START.token - KLING_CHARGE,
    });

    // another user's token finds nothing, in OpenAI's error shape
    const other = await caller();
    const r = await call(other.key, 'GET', `/v1/videos/${video.id}`);
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: 'video_not_found', type: 'invalid_request_error' });
  });

  it("the form's model routes it (kling-v2-master), its file sent as a data URI to image2video; JSON takes a URL", async () => {
    const { user, token, key } = await caller();
    const sdk = sdkOf(key);
    const png = Buffer.from('\x89PNG\r\n\x1a\nfake-image-bytes\x00\xff', 'latin1');
    const calls = kling.calls.length;
    const video = await sdk.videos.create({
      model: 'kling-v2-master' as 'sora-2',
      prompt: 'the picture comes alive',
      input_reference: await toFile(png, 'ref.png', { type: 'image/png' }),
    });
    expect(video).toMatchObject({ model: 'kling-v2-master', status: 'queued', seconds: '5' });
    const sent = kling.calls.slice(calls);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ method: 'POST', path: '/v1/videos/image2video' });
    expect(sent[0].body).toMatchObject({
      model_name: 'kling-v2-master',
      prompt: 'the picture comes alive',
      image: `data:image/png;base64,${png.toString('base64')}`,
    });

    const json = await call(key, 'POST', '/v1/videos', {
      model: 'kling-v1',
      prompt: 'from a link',
      seconds: 10,
      input_reference: 'https://img.test/cat.png',
    });
    expect(json.status).toBe(200);
    expect(json.body).toMatchObject({ object: 'video', model: 'kling-v1', seconds: '10' });
    expect(kling.calls.at(-1)).toMatchObject({
      path: '/v1/videos/image2video',
      body: { model_name: 'kling-v1', image: 'https://img.test/cat.png', duration: '10' },
    });
    expect((await taskRow(json.body.id)).platform).toBe('kling');
    const charged = MASTER_CHARGE + KLING_CHARGE;
    expect(await balances(user.id, token.id)).toEqual({ user: START.user - charged, token: START.token - charged });
  });

  it('Kling refusals: a bad duration, a reference that is no image, no prompt: 400 in OpenAI shape, nothing charged', async () => {
    const { user, token, key } = await caller();
    const calls = kling.calls.length;
    for (const bad of [
      { model: 'kling-v1', prompt: 'x', seconds: '7' },
      { model: 'kling-v1', prompt: 'x', input_reference: 'file-abc' },
      { model: 'kling-v1' },
      { model: 7, prompt: 'x' },
    ]) {
      const r = await call(key, 'POST', '/v1/videos', bad);
      expect([JSON.stringify(bad), r.status]).toEqual([JSON.stringify(bad), 400]);
      expect(r.body.error).toMatchObject({ code: 'invalid_request' });
      expect(typeof r.body.error.message).toBe('string');
    }
    expect(kling.calls.length).toBe(calls);
    expect(await balances(user.id, token.id)).toEqual(START);
  });

  it('SDK create on Veo (Gemini): 4 s charged 0.1 × 500000 × 4 = 200000; retrieve after the poller: completed', async () => {
    const { user, token, key } = await caller();
    const sdk = sdkOf(key);
    const video = await sdk.videos.create({ model: VEO as 'sora-2', prompt: 'a lighthouse at dusk', seconds: '4' });
    expect(video).toMatchObject({ object: 'video', model: VEO, status: 'queued', seconds: '4' });
    expect(veo.calls.at(-1)).toMatchObject({
      method: 'POST',
      path: `/v1beta/models/${VEO}:predictLongRunning`,
      key: VEO_KEY,
      body: {
        instances: [{ prompt: 'a lighthouse at dusk' }],
        parameters: { aspectRatio: '16:9', durationSeconds: 4, resolution: '720p' },
      },
    });
    expect(await balances(user.id, token.id)).toEqual({ user: START.user - 200_000, token: START.token - 200_000 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name, Number(l.channel_id)])).toEqual([
      [2, 200_000, VEO, veoChannel],
    ]);
    const row = await taskRow(video.id);
    expect(row.platform).toBe('veo');
    veo.states.set(row.upstreamId, { done: true, uri: 'https://files.test/veo.mp4' });
    await pollTaskUpstreams(s.ctx, nowSec());
    const done = await sdk.videos.retrieve(video.id);
    expect(done).toMatchObject({ id: video.id, model: VEO, status: 'completed', progress: 100, seconds: '4' });
    expect(done.completed_at).toBeGreaterThan(0);
    expect(JSON.stringify(done)).not.toContain(VEO_KEY);

    // Veo takes no image: the form's file is refused before anything is charged or sent, in OpenAI's shape
    const calls = veo.calls.length;
    const err = await sdk.videos
      .create({
        model: VEO as 'sora-2',
        prompt: 'with a picture',
        input_reference: await toFile(Buffer.from('img'), 'r.png', { type: 'image/png' }),
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain('Veo');
    expect(veo.calls.length).toBe(calls);
    expect(await balances(user.id, token.id)).toEqual({ user: START.user - 200_000, token: START.token - 200_000 });
  });

  it('a remix of a Kling video is refused (400 video_remix_unsupported): nothing charged, no upstream call', async () => {
    const { user, token, key } = await caller();
    const sdk = sdkOf(key);
    const video = await sdk.videos.create({ model: 'kling-v1' as 'sora-2', prompt: 'a hare' });
    const row = await taskRow(video.id);
    kling.states.set(row.upstreamId, { status: 'succeed', url: 'https://cdn.kling.test/h.mp4' });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await sdk.videos.retrieve(video.id)).status).toBe('completed');
    const after = await balances(user.id, token.id);
    expect(after).toEqual({ user: START.user - KLING_CHARGE, token: START.token - KLING_CHARGE });
    const calls = kling.calls.length;
    const err = await sdk.videos.remix(video.id, { prompt: 'at night' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('video_remix_unsupported');
    expect((err as InstanceType<typeof OpenAI.APIError>).type).toBe('invalid_request_error');
    expect(kling.calls.length).toBe(calls);
    expect(await balances(user.id, token.id)).toEqual(after);
    expect((await logsOf(s, user.id)).length).toBe(1);
  });
});
