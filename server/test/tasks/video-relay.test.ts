// OpenAI's video API through the gateway, driven by the official SDK and raw HTTP against a strict mock: a create
// (the SDK's multipart form, or JSON) charged per second × size ratio to the unit (user AND token, one consume row)
// and answered with the gateway's id; the form passed on with its boundary and file untouched; the state as the
// poller wrote it; the content streamed with Range; a remix on the origin's channel; another user's id not found.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { nowSec } from '../../src/lib/time.js';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged, flushLogs, logsOf, setOptions } from '../relay/fixtures.js';
import { startVideoMock, type VideoMock } from './video-mock.js';

const KEY_A = 'sora-channel-a';
const KEY_B = 'openai-channel-b';
/** 0.1 USD a second: 50 000 units a second at QuotaPerUnit 500 000 */
const PRICE = 0.1;

await describeEachDb('video relay', (kind) => {
  let tdb: TestDatabase;
  let s: TestServer;
  let mock: VideoMock;
  let soraChannel: number;
  beforeAll(async () => {
    tdb = await createTestDatabase(kind);
    s = await startTestServer({ database: tdb });
    mock = await startVideoMock([KEY_A, KEY_B]);
    soraChannel = await addChannel(s, { type: 55, key: KEY_A, baseUrl: mock.url, models: ['sora-2', 'sora-2-pro'] });
    await setOptions(s, { ModelPrice: { 'sora-2': PRICE, 'sora-2-pro': 0.3, 'house-video': 0.2 } });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await mock?.close();
    await tdb?.drop();
  });

  async function caller() {
    const user = await addUser(s, { quota: 5_000_000 });
    const token = await addToken(s, user.id, { remain: 2_000_000, unlimited: false, name: 'films' });
    const sdk = new OpenAI({ apiKey: `sk-${token.key}`, baseURL: `${s.url}/v1`, maxRetries: 0, timeout: 20_000 });
    return { user, token, sdk };
  }

  async function balances(userId: number, tokenId: number) {
    await flushLogs(s);
    const u = await s.ctx.db.selectFrom('users').select(['quota']).where('id', '=', userId).executeTakeFirstOrThrow();
    const t = await s.ctx.db
      .selectFrom('tokens')
      .select(['remain_quota'])
      .where('id', '=', tokenId)
      .executeTakeFirstOrThrow();
    return { user: Number(u.quota), token: Number(t.remain_quota) };
  }

  async function upstreamIdOf(publicId: string) {
    const row = await s.ctx.db
      .selectFrom('tasks')
      .select('private_data')
      .where('task_id', '=', publicId)
      .executeTakeFirstOrThrow();
    return (JSON.parse(row.private_data) as { upstream_task_id: string }).upstream_task_id;
  }

  it('SDK create: 8 s at 1792x1024 charged 0.1 × 500000 × 8 × 1.666667 = 666666, the form passed on intact', async () => {
    const { user, token, sdk } = await caller();
    const calls = mock.calls.length;
    const reference = Buffer.from('\x89PNG\r\n\x1a\n--not-a-boundary\r\nbinary\x00\xff', 'latin1');
    const video = await sdk.videos.create({
      model: 'sora-2',
      prompt: 'a paper boat on a river',
      seconds: '8',
      size: '1792x1024',
      input_reference: await toFile(reference, 'ref.png', { type: 'image/png' }),
    });
    expect(video).toMatchObject({
      object: 'video',
      model: 'sora-2',
      status: 'queued',
      progress: 0,
      seconds: '8',
      size: '1792x1024',
      error: null,
      completed_at: null,
    });
    expect(video.id).toMatch(/^task_[A-Za-z0-9]{32}$/);
    // one upstream call, with the channel's key and the client's own form: same boundary, same file bytes
    const sent = mock.calls.slice(calls);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ method: 'POST', path: '/v1/videos', auth: `Bearer ${KEY_A}` });
    expect(sent[0].contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(sent[0].body).toMatchObject({ model: 'sora-2', prompt: 'a paper boat on a river', seconds: '8' });
    expect(Buffer.from(sent[0].body.input_reference, 'latin1').equals(reference)).toBe(true);

    expect(await balances(user.id, token.id)).toEqual({ user: 5_000_000 - 666_666, token: 2_000_000 - 666_666 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name, Number(l.channel_id)])).toEqual([
      [2, 666_666, 'sora-2', soraChannel],
    ]);
    expect(logs[0].otherJson).toMatchObject({
      is_task: true,
      task_id: video.id,
      other_ratios: { seconds: 8, size: 1.666667 },
    });
    const row = await s.ctx.db
      .selectFrom('tasks')
      .selectAll()
      .where('task_id', '=', video.id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ platform: 'sora', status: 'NOT_START' });
    expect(Number(row.quota)).toBe(666_666);
    // the client never sees the upstream's id
    expect(JSON.stringify(video)).not.toContain('video_up_');
  });

  it('raw multipart with a chosen boundary reaches the upstream byte for byte; JSON is checked and defaulted', async () => {
    const { user, token } = await caller();
    const boundary = '----gateway-test-boundary-7f3a';
    const form = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\na red kite\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="seconds"\r\n\r\n4\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="input_reference"; filename="k.jpg"\r\n` +
        `Content-Type: image/jpeg\r\n\r\n\xff\xd8\xff--${boundary.slice(0, 8)}\r\n--${boundary}--\r\n`,
      'latin1',
    );
    const calls = mock.calls.length;
    const res = await fetch(`${s.url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${token.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: form,
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { id: string; model: string; seconds: string; size: string };
    // no model named: new-api's default sora-2, 4 s, 720x1280 (size ratio 1): 0.1 × 500000 × 4 = 200000
    expect(body).toMatchObject({ model: 'sora-2', seconds: '4', size: '720x1280' });
    const sent = mock.calls[calls];
    expect(sent.contentType).toBe(`multipart/form-data; boundary=${boundary}`);
    expect(sent.raw.equals(form)).toBe(true);
    expect(await balances(user.id, token.id)).toEqual({ user: 4_800_000, token: 1_800_000 });

    // JSON: seconds sent on as OpenAI's string; 0.3 × 500000 × 4 × 1.666667 = 1000000.2 → 1000000
    const json = await fetch(`${s.url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sora-2-pro', prompt: 'dawn', seconds: 4, size: '1024x1792' }),
    });
    expect(json.status).toBe(200);
    expect(mock.calls.at(-1)!.body).toEqual({ model: 'sora-2-pro', prompt: 'dawn', seconds: '4', size: '1024x1792' });
    expect(await balances(user.id, token.id)).toEqual({ user: 3_800_000, token: 800_000 });

    // refused before any charge or call: a bad size, seconds out of range, no prompt, a model without a price
    const before = mock.calls.length;
    for (const [bad, status, code] of [
      [{ prompt: 'x', size: 'big' }, 400, 'invalid_request'],
      [{ prompt: 'x', seconds: '0' }, 400, 'invalid_request'],
      [{ prompt: 'x', seconds: 'eight' }, 400, 'invalid_request'],
      [{ model: 'sora-2' }, 400, 'invalid_request'],
    ] as const) {
      const r = await fetch(`${s.url}/v1/videos`, {
        method: 'POST',
        headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(bad),
      });
      expect(r.status, JSON.stringify(bad)).toBe(status);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe(code);
    }
    expect(mock.calls.length).toBe(before);
    expect(await balances(user.id, token.id)).toEqual({ user: 3_800_000, token: 800_000 });
  });

  it('a model without a price is refused (500 model_price_error), nothing charged or sent', async () => {
    const { user, token, sdk } = await caller();
    await addChannel(s, { type: 55, key: KEY_A, baseUrl: mock.url, models: ['sora-unpriced'] });
    await channelsChanged(s);
    const before = mock.calls.length;
    const err = await sdk.videos.create({ model: 'sora-unpriced' as 'sora-2', prompt: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('model_price_error');
    expect(mock.calls.length).toBe(before);
    expect(await balances(user.id, token.id)).toEqual({ user: 5_000_000, token: 2_000_000 });
  });

  it('retrieve shows what the poller wrote; content streams with Range; another user gets 404', async () => {
    const { sdk, token } = await caller();
    const video = await sdk.videos.create({ model: 'sora-2', prompt: 'a lighthouse', seconds: '4' });
    const up = await upstreamIdOf(video.id);

    mock.states.set(up, { status: 'in_progress', progress: 40 });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await sdk.videos.retrieve(video.id)).toMatchObject({ id: video.id, status: 'in_progress', progress: 40 });
    // a 429 while polling keeps the task as it was
    mock.states.set(up, { status: 'in_progress', http: 429 });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await sdk.videos.retrieve(video.id)).toMatchObject({ status: 'in_progress', progress: 40 });
    // a status OpenAI does not define is not a success
    mock.states.set(up, { status: 'succeeded-maybe' });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await sdk.videos.retrieve(video.id)).toMatchObject({ status: 'in_progress', progress: 40 });
    // content before completion is refused
    const early = await fetch(`${s.url}/v1/videos/${video.id}/content`, {
      headers: { authorization: `Bearer sk-${token.key}` },
    });
    expect(early.status).toBe(400);

    mock.states.set(up, { status: 'completed', progress: 100 });
    await pollTaskUpstreams(s.ctx, nowSec());
    const done = await sdk.videos.retrieve(video.id);
    expect(done).toMatchObject({ id: video.id, status: 'completed', progress: 100, model: 'sora-2', seconds: '4' });
    expect(done.completed_at).toBeGreaterThan(0);

    const contentCalls = mock.calls.length;
    const whole = await sdk.videos.downloadContent(video.id);
    expect(Buffer.from(await whole.arrayBuffer()).equals(mock.content)).toBe(true);
    expect(mock.calls[contentCalls]).toMatchObject({ path: `/v1/videos/${up}/content`, auth: `Bearer ${KEY_A}` });

    const part = await fetch(`${s.url}/v1/videos/${video.id}/content`, {
      headers: { authorization: `Bearer sk-${token.key}`, range: 'bytes=100-199' },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${mock.content.length}`);
    expect(part.headers.get('content-type')).toBe('video/mp4');
    expect(part.headers.get('set-cookie')).toBeNull();
    expect(Buffer.from(await part.arrayBuffer()).equals(mock.content.subarray(100, 200))).toBe(true);

    // another user's token finds nothing, in OpenAI's error shape, and the upstream is not asked
    const other = await caller();
    const asked = mock.calls.length;
    for (const path of [`/v1/videos/${video.id}`, `/v1/videos/${video.id}/content`]) {
      const r = await fetch(`${s.url}${path}`, { headers: { authorization: `Bearer sk-${other.token.key}` } });
      expect(r.status, path).toBe(404);
      expect(((await r.json()) as { error: { code: string; type: string } }).error).toMatchObject({
        code: 'video_not_found',
        type: 'invalid_request_error',
      });
    }
    const remix = await other.sdk.videos.remix(video.id, { prompt: 'mine now' }).catch((e: unknown) => e);
    expect((remix as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
    expect(mock.calls.length).toBe(asked);
  });

  it("remix: on the origin's channel and model, charged as the origin; new creates go where routing says", async () => {
    const { user, token, sdk } = await caller();
    const origin = await sdk.videos.create({ model: 'sora-2', prompt: 'a fox', seconds: '8', size: '720x1280' });
    const up = await upstreamIdOf(origin.id);
    // a remix of an unfinished video is refused
    const early = await sdk.videos.remix(origin.id, { prompt: 'at night' }).catch((e: unknown) => e);
    expect((early as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    mock.states.set(up, { status: 'completed', progress: 100 });
    await pollTaskUpstreams(s.ctx, nowSec());
    // an OpenAI channel (type 1) of higher priority takes new sora-2 creates from now on
    await addChannel(s, { type: 1, key: KEY_B, baseUrl: mock.url, models: ['sora-2'], priority: 10 });
    await channelsChanged(s);

    const calls = mock.calls.length;
    const remix = await sdk.videos.remix(origin.id, { prompt: 'at night' });
    expect(remix).toMatchObject({
      status: 'queued',
      model: 'sora-2',
      seconds: '8',
      size: '720x1280',
      remixed_from_video_id: origin.id,
    });
    expect(remix.id).not.toBe(origin.id);
    expect(mock.calls.slice(calls)).toMatchObject([
      { method: 'POST', path: `/v1/videos/${up}/remix`, auth: `Bearer ${KEY_A}`, body: { prompt: 'at night' } },
    ]);
    expect(JSON.stringify(await sdk.videos.retrieve(remix.id))).not.toContain('video_up_');
    // each 8 s at 720x1280: 400000
    expect(await balances(user.id, token.id)).toEqual({ user: 4_200_000, token: 1_200_000 });

    const fresh = await sdk.videos.create({ model: 'sora-2', prompt: 'a hare' });
    expect(fresh.status).toBe('queued');
    expect(mock.calls.at(-1)).toMatchObject({ path: '/v1/videos', auth: `Bearer ${KEY_B}` });
  });

  it("the channel's model_mapping names the upstream's model, in JSON and in the form; the price is the client's", async () => {
    const { user, token, sdk } = await caller();
    await addChannel(s, {
      type: 55,
      key: KEY_A,
      baseUrl: mock.url,
      models: ['house-video'],
      modelMapping: { 'house-video': 'sora-2-pro' },
    });
    await channelsChanged(s);
    const video = await sdk.videos.create({ model: 'house-video' as 'sora-2', prompt: 'mapped', seconds: '4' });
    expect(video.model).toBe('house-video');
    const form = mock.calls.at(-1)!;
    expect(form.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(form.body).toMatchObject({ model: 'sora-2-pro', prompt: 'mapped', seconds: '4' });
    const json = await fetch(`${s.url}/v1/videos`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'house-video', prompt: 'mapped too' }),
    });
    expect(json.status).toBe(200);
    expect(mock.calls.at(-1)!.body).toEqual({
      model: 'sora-2-pro',
      prompt: 'mapped too',
      seconds: '4',
      size: '720x1280',
    });
    // 0.2 × 500000 × 4 each
    expect(await balances(user.id, token.id)).toEqual({ user: 4_200_000, token: 1_200_000 });
  });
});
