// GET /v1/videos/{id}/content for every video platform (issue 45), from wherever the platform keeps the video: Kling's
// URL read as a user-chosen address (SSRF rules: loopback or a name resolving to a private address refused, a local
// mock reachable only when a test marks its port public) and never with a key; Veo's URI with the key on the
// channel's own host only; Hailuo's file id in two steps (retrieve with the key, download without); Vertex Veo's
// inline bytes asked of the operation again and served decoded, Range honoured on the buffer; a data: URI decoded;
// the size limit; another user's or an unfinished task. SQLite: no money moves here but Vertex's submit.
import { describe, expect, it } from 'vitest';
import { userUrlFetch } from '../../src/lib/safe-fetch.js';
import { nowSec } from '../../src/lib/time.js';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { VIDEO_CONTENT_MAX_BYTES } from '../../src/relay/tasks/video-content.js';
import { MockVertex } from '../helpers/mock-vertex.js';
import type { TestServer } from '../helpers/server.js';
import { addChannel, setOptions } from '../relay/fixtures.js';
import { startContentMock, type ContentMock } from './video-content-mock.js';
import { serveVertexVeo, type VertexVeoMock } from './vertex-veo-mock.js';
import { videoWorld } from './video-world.js';

const VEO_KEY = 'veo-channel-key';
const HAILUO_KEY = 'hailuo-channel-key';
const PROJECT = 'content-project';
const REGION = 'us-central1';
const VERTEX_MODEL = 'veo-3.0-generate-001';
const T = 1_760_000_000;
const video = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * seed) % 251));

describe('video content of every platform', () => {
  let s: TestServer;
  let mock: ContentMock;
  let vertex: MockVertex;
  let veo: VertexVeoMock;
  const channels: Record<string, number> = {};
  const { caller, call, taskRow } = videoWorld(
    'sqlite',
    'content',
    async (server) => {
      s = server;
      mock = await startContentMock({ veo: VEO_KEY, hailuo: HAILUO_KEY }, VIDEO_CONTENT_MAX_BYTES);
      channels.kling = await addChannel(s, { type: 50, key: 'ak|sk', baseUrl: mock.url, models: ['kling-v2'] });
      channels.veo = await addChannel(s, { type: 24, key: VEO_KEY, baseUrl: mock.url, models: ['veo-3.0'] });
      channels.hailuo = await addChannel(s, { type: 35, key: HAILUO_KEY, baseUrl: mock.url, models: ['hailuo-02'] });
      veo = serveVertexVeo(vertex, PROJECT, REGION);
      channels.vertex = await addChannel(s, {
        type: 41,
        key: vertex.newServiceAccount({ project: PROJECT }),
        baseUrl: vertex.url,
        other: REGION,
        models: [VERTEX_MODEL],
      });
      await setOptions(s, { ModelPrice: { [VERTEX_MODEL]: 0.1 } });
      return async () => {
        await mock?.close();
        await vertex?.close();
      };
    },
    async () => {
      vertex = await MockVertex.start();
      return { VERTEX_TOKEN_URL: vertex.tokenUrl };
    },
  );

  let n = 0;
  /** a finished task of the caller's on the platform's channel, with the data its poll kept */
  async function finished(userId: number, platform: string, data: unknown, status = 'SUCCESS'): Promise<string> {
    const id = `task_content_${++n}`;
    await s.ctx.db
      .insertInto('tasks')
      .values({
        user_id: userId,
        task_id: id,
        platform,
        action: 'generate',
        status,
        progress: status === 'SUCCESS' ? '100%' : '30%',
        submit_time: T,
        finish_time: T + 60,
        created_at: T,
        updated_at: T + 60,
        channel_id: channels[platform],
        quota: 0,
        group: 'default',
        properties: JSON.stringify({ model: 'm' }),
        data: JSON.stringify(data),
        private_data: JSON.stringify({ upstream_task_id: `up-${id}` }),
      })
      .execute();
    return id;
  }
  const kling = (url: string) => ({ task_result: { videos: [{ url, duration: '5' }] } });
  const content = (key: string, id: string, range?: string) =>
    fetch(`${s.url}/v1/videos/${id}/content`, {
      headers: { authorization: `Bearer ${key}`, ...(range ? { range } : {}) },
    });
  const bytesOf = async (res: Response) => Buffer.from(await res.arrayBuffer());
  /** the mock's port stands for a public host (this host's interfaces are not counted) */
  function publicMock(resolve?: (name: string) => Promise<string[]>) {
    userUrlFetch(s.ctx).policy = {
      treatAsPublic: (addr, port) => addr === '127.0.0.1' && port === mock.port,
      interfaces: () => ({}),
      ...(resolve ? { resolve } : {}),
    };
  }
  const resetPolicy = () => (userUrlFetch(s.ctx).policy = {});

  it("Kling's stored URL: refused while it is loopback; streamed without a key once public, Range passed on", async () => {
    const { user, key } = await caller();
    const bytes = video(5000, 7);
    mock.files.set('k1.mp4', bytes);
    const id = await finished(user.id, 'kling', kling(`${mock.url}/cdn/k1.mp4`));
    const from = mock.calls.length;
    const refused = await content(key, id);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as any).error).toMatchObject({ code: 'forbidden_video_address' });
    expect(mock.calls.length).toBe(from);
    publicMock();
    try {
      const whole = await content(key, id);
      expect(whole.status).toBe(200);
      expect(whole.headers.get('content-type')).toBe('video/mp4');
      expect(whole.headers.get('set-cookie')).toBeNull();
      expect((await bytesOf(whole)).equals(bytes)).toBe(true);
      const part = await content(key, id, 'bytes=100-199');
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes 100-199/${bytes.length}`);
      expect((await bytesOf(part)).equals(bytes.subarray(100, 200))).toBe(true);
      expect(mock.calls.slice(from)).toEqual([
        { path: '/cdn/k1.mp4', auth: undefined, googKey: undefined, range: undefined },
        { path: '/cdn/k1.mp4', auth: undefined, googKey: undefined, range: 'bytes=100-199' },
      ]);
      // an upstream page is never served as one
      const page = await content(key, await finished(user.id, 'kling', kling(`${mock.url}/cdn/page.html`)));
      expect(page.headers.get('content-type')).toBe('application/octet-stream');
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      await page.arrayBuffer();
    } finally {
      resetPolicy();
    }
  });

  it('a stored name resolving to a private address, or loopback on another port, is refused unasked', async () => {
    const { user, key } = await caller();
    publicMock(async (name) => (name === 'videos.internal.example' ? ['10.1.2.3'] : ['127.0.0.1']));
    try {
      const from = mock.calls.length;
      for (const url of [
        `http://videos.internal.example:${mock.port}/cdn/k1.mp4`,
        `http://127.0.0.1:${mock.port + 1}/cdn/k1.mp4`,
        'http://169.254.169.254/latest/meta-data/',
      ]) {
        const res = await content(key, await finished(user.id, 'kling', kling(url)));
        expect(res.status, url).toBe(403);
        expect(((await res.json()) as any).error.code).toBe('forbidden_video_address');
      }
      expect(mock.calls.length).toBe(from);
    } finally {
      resetPolicy();
    }
  });

  it('a data: URI is served decoded; an announced size beyond the limit is refused', async () => {
    const { user, key } = await caller();
    const bytes = video(300, 3);
    const inline = await finished(user.id, 'kling', kling(`data:video/mp4;base64,${bytes.toString('base64')}`));
    const res = await content(key, inline, 'bytes=-10');
    expect(res.status).toBe(206);
    expect((await bytesOf(res)).equals(bytes.subarray(290))).toBe(true);
    publicMock();
    try {
      const huge = await content(key, await finished(user.id, 'kling', kling(`${mock.url}/cdn/huge.mp4`)));
      expect(huge.status).toBe(502);
      expect(((await huge.json()) as any).error.code).toBe('video_content_failed');
    } finally {
      resetPolicy();
    }
  });

  it("Veo: the key goes with the URI on the channel's host only", async () => {
    const { user, key } = await caller();
    const bytes = video(2048, 11);
    mock.files.set('abc', bytes);
    const veoData = (uri: string) => ({
      done: true,
      response: { generateVideoResponse: { generatedSamples: [{ video: { uri } }] } },
    });
    const own = await finished(user.id, 'veo', veoData(`${mock.url}/v1beta/files/abc:download?alt=media`));
    const from = mock.calls.length;
    const res = await content(key, own, 'bytes=0-99');
    expect(res.status).toBe(206);
    expect((await bytesOf(res)).equals(bytes.subarray(0, 100))).toBe(true);
    expect(mock.calls.slice(from)).toEqual([
      { path: '/v1beta/files/abc:download', auth: undefined, googKey: VEO_KEY, range: 'bytes=0-99' },
    ]);
    // the same host under another name is another origin: asked as any upstream address, without the key
    publicMock(async () => ['127.0.0.1']);
    try {
      // a download sent on to a signed address: followed once, without the key
      const signed = video(700, 19);
      mock.files.set('signed-sig.mp4', signed);
      const redirected = await finished(user.id, 'veo', veoData(`${mock.url}/v1beta/files/sig:download?alt=media`));
      const at = mock.calls.length;
      const followed = await content(key, redirected);
      expect(followed.status).toBe(200);
      expect((await bytesOf(followed)).equals(signed)).toBe(true);
      expect(mock.calls.slice(at).map((c) => [c.path, c.googKey])).toEqual([
        ['/v1beta/files/sig:download', VEO_KEY],
        ['/cdn/signed-sig.mp4', undefined],
      ]);
      const other = await finished(
        user.id,
        'veo',
        veoData(`http://veo-files.example:${mock.port}/v1beta/files/abc:download`),
      );
      const refused = await content(key, other);
      expect(refused.status).toBe(502);
      await refused.arrayBuffer();
      expect(mock.calls.at(-1)).toMatchObject({ path: '/v1beta/files/abc:download', googKey: undefined });
    } finally {
      resetPolicy();
    }
  });

  it('Hailuo: the file retrieved with the key, then downloaded from its address without it; result_url is ours', async () => {
    const { user, key } = await caller();
    const bytes = video(3000, 13);
    mock.files.set('file-7788.mp4', bytes);
    const id = await finished(user.id, 'hailuo', { task_id: 'up', status: 'Success', file_id: '7788' });
    publicMock();
    try {
      const from = mock.calls.length;
      const res = await content(key, id);
      expect(res.status).toBe(200);
      expect((await bytesOf(res)).equals(bytes)).toBe(true);
      expect(mock.calls.slice(from)).toEqual([
        { path: '/v1/files/retrieve', auth: `Bearer ${HAILUO_KEY}`, googKey: undefined, range: undefined },
        { path: '/cdn/file-7788.mp4', auth: undefined, googKey: undefined, range: undefined },
      ]);
    } finally {
      resetPolicy();
    }
    const task = await call(key, 'GET', `/v1/video/generations/${id}`);
    expect(task.body.data.result_url).toBe(`/v1/videos/${id}/content`);
    // a file the upstream no longer has
    const gone = await finished(user.id, 'hailuo', { status: 'Success', file_id: '404' });
    expect((await content(key, gone)).status).toBe(502);
  });

  it("Vertex Veo: inline bytes asked of the operation again and served decoded, Range on the buffer; a bucket's refused", async () => {
    const { key } = await caller();
    const r = await call(key, 'POST', '/v1/video/generations', { model: VERTEX_MODEL, prompt: 'inline', seconds: '4' });
    expect(r.status).toBe(200);
    const { upstreamId } = await taskRow(r.body.id);
    const bytes = video(120_000, 17);
    veo.states.set(upstreamId, { done: true, bytes });
    await pollTaskUpstreams(s.ctx, nowSec());
    expect((await taskRow(r.body.id)).status).toBe('SUCCESS');
    const whole = await content(key, r.body.id);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    expect((await bytesOf(whole)).equals(bytes)).toBe(true);
    const asked = veo.calls.at(-1)!;
    expect(asked).toMatchObject({ action: 'fetchPredictOperation', body: { operationName: upstreamId } });
    expect(asked.headers.authorization).toMatch(/^Bearer ya29\./);
    const part = await content(key, r.body.id, 'bytes=1000-1999');
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 1000-1999/${bytes.length}`);
    expect((await bytesOf(part)).equals(bytes.subarray(1000, 2000))).toBe(true);
    const beyond = await content(key, r.body.id, `bytes=${bytes.length}-`);
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${bytes.length}`);
    const task = await call(key, 'GET', `/v1/video/generations/${r.body.id}`);
    expect(task.body.data.result_url).toBe(`/v1/videos/${r.body.id}/content`);

    const g = await call(key, 'POST', '/v1/video/generations', { model: VERTEX_MODEL, prompt: 'bucket', seconds: '4' });
    veo.states.set((await taskRow(g.body.id)).upstreamId, { done: true, gcsUri: 'gs://bucket/out.mp4' });
    await pollTaskUpstreams(s.ctx, nowSec());
    const bucket = await content(key, g.body.id);
    expect(bucket.status).toBe(400);
    expect(((await bucket.json()) as any).error.code).toBe('video_in_bucket');
  });

  it("another user's task is not found; an unfinished one is not ready", async () => {
    const alice = await caller();
    const bob = await caller();
    mock.files.set('mine.mp4', video(100, 5));
    const id = await finished(alice.user.id, 'kling', kling(`${mock.url}/cdn/mine.mp4`));
    const from = mock.calls.length;
    const other = await content(bob.key, id);
    expect(other.status).toBe(404);
    expect(((await other.json()) as any).error.code).toBe('video_not_found');
    const running = await content(alice.key, await finished(alice.user.id, 'kling', {}, 'IN_PROGRESS'));
    expect(running.status).toBe(400);
    expect(((await running.json()) as any).error.code).toBe('video_not_ready');
    expect(mock.calls.length).toBe(from);
  });
});
