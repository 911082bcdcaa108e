// Image generation on Alibaba DashScope channels (type 17) with the official `openai` client: the asynchronous
// image-synthesis task submitted with `X-DashScope-Async: enable` and polled within the request, the synchronous
// multimodal generation for the models that use it; OpenAI's images answer (url, or b64_json fetched through the
// SSRF-guarded image fetch); charged the images price per image only once DashScope succeeded, to the unit in the user,
// the token and the log row; a FAILED task, a task that outlasts the wait, a refused submit or a client that leaves
// charge nothing, and a throttled channel is retried on the next. On SQLite, PostgreSQL and MariaDB.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { DASHSCOPE_KEY, imageFixture, MockDashScopeImages } from '../helpers/mock-dashscope-images.js';
import { addChannel, addToken, addUser, channelsChanged, client, logsOf, setOptions } from '../relay/fixtures.js';
import { expectNothingCharged, snapshot, type ChargedSuite } from './vendor-gateway.js';
import { userUrlFetch } from '../../src/lib/safe-fetch.js';
import { ALI_IMAGE_WAIT } from '../../src/relay/providers/ali/images.js';

// a 1×1 PNG, the image host's only picture
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
/** USD per image: 0.02 × 500,000 quota per USD */
const PRICE = 0.02;
const PER_IMAGE = 10_000;
const ASYNC_MODEL = 'wanx-v1';
const SYNC_MODEL = 'qwen-image';
const RETRIED_MODEL = 'wanx2.1-t2i-turbo';
const recorded = imageFixture('succeeded').output.results[0];

async function imageHost() {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url?.endsWith('.png')) return res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, hits, close: () => new Promise((r) => server.close(r)) };
}

describe('the strict DashScope mock', () => {
  let mock: MockDashScopeImages;
  beforeAll(async () => (mock = await MockDashScopeImages.start()));
  afterAll(() => mock.close());
  const submit = (headers: Record<string, string>) =>
    fetch(`${mock.url}/api/v1/services/aigc/text2image/image-synthesis`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: ASYNC_MODEL, input: { prompt: 'a cat' }, parameters: { n: 1 } }),
    });

  it('refuses a submit without X-DashScope-Async: enable, as DashScope does', async () => {
    const r = await submit({ authorization: `Bearer ${DASHSCOPE_KEY}` });
    expect(r.status).toBe(403);
    expect(await r.json()).toMatchObject({ code: 'AccessDenied' });
  });

  it('refuses a wrong key', async () => {
    const r = await submit({ authorization: 'Bearer sk-wrong', 'x-dashscope-async': 'enable' });
    expect(r.status).toBe(401);
    expect(await r.json()).toMatchObject({ code: 'InvalidApiKey' });
  });

  it('answers a good submit with a task id', async () => {
    const r = await submit({ authorization: `Bearer ${DASHSCOPE_KEY}`, 'x-dashscope-async': 'enable' });
    expect(r.status).toBe(200);
    expect(((await r.json()) as any).output).toMatchObject({ task_status: 'PENDING', task_id: expect.any(String) });
  });
});

await describeEachDb('DashScope images through the gateway', (kind) => {
  let s: TestServer;
  let mock: MockDashScopeImages;
  let throttled: MockDashScopeImages;
  let images: Awaited<ReturnType<typeof imageHost>>;
  let aliChannel: number;
  const suite = {} as ChargedSuite & { key: string };
  const saved = { ...ALI_IMAGE_WAIT };

  beforeAll(async () => {
    // polls every 5 ms here, so a test waits for no real clock
    ALI_IMAGE_WAIT.intervalMs = 5;
    images = await imageHost();
    [mock, throttled] = await Promise.all([
      MockDashScopeImages.start({ imageUrl: (i) => `http://images.example:${images.port}/${i}.png` }),
      MockDashScopeImages.start({ throttled: true }),
    ]);
    s = await startTestServer({ kind });
    userUrlFetch(s.ctx).policy = {
      resolve: async (host) => (host === 'images.example' ? ['127.0.0.1'] : []),
      treatAsPublic: (address, port) => address === '127.0.0.1' && port === images.port,
    };
    const prices = { [ASYNC_MODEL]: PRICE, [SYNC_MODEL]: PRICE, [RETRIED_MODEL]: PRICE };
    await setOptions(s, { ModelPrice: prices, RetryTimes: '2', AutomaticDisableChannelEnabled: 'false' });
    aliChannel = await addChannel(s, {
      type: 17,
      key: DASHSCOPE_KEY,
      baseUrl: mock.url,
      models: [ASYNC_MODEL, SYNC_MODEL, RETRIED_MODEL],
    });
    // tried first for its model, and always throttled
    await addChannel(s, {
      type: 17,
      key: DASHSCOPE_KEY,
      baseUrl: throttled.url,
      models: [RETRIED_MODEL],
      priority: 10,
    });
    await channelsChanged(s);
    const u = await addUser(s, { quota: 10_000_000 });
    const t = await addToken(s, u.id, { unlimited: false, remain: 5_000_000 });
    Object.assign(suite, { s, userId: u.id, tokenId: t.id, key: t.key });
  });
  afterAll(async () => {
    Object.assign(ALI_IMAGE_WAIT, saved);
    await s?.close();
    await Promise.all([mock?.close(), throttled?.close(), images?.close()]);
  });

  /** one new consume row of `model` charged `quota`, taken from the user and the token alike */
  async function expectImagesCharged(before: Awaited<ReturnType<typeof snapshot>>, model: string, quota: number) {
    const fresh = (await logsOf(s, suite.userId)).slice(before.logs);
    expect(fresh.map((l) => [l.type, l.model_name, l.quota, l.channel_id])).toEqual([[2, model, quota, aliChannel]]);
    const now = await snapshot(suite);
    expect([before.user - now.user, before.token - now.token]).toEqual([quota, quota]);
  }

  it('submits the task asynchronously, polls it to SUCCEEDED and answers OpenAI’s images, charged per image', async () => {
    const before = await snapshot(suite);
    const r = await client(s, suite.key).images.generate({
      model: ASYNC_MODEL,
      prompt: '一间有着精致窗户的花店',
      n: 2,
      size: '1024x1024',
    });
    expect(r.data).toEqual(
      [0, 1].map((i) => ({
        url: `http://images.example:${images.port}/${i}.png`,
        revised_prompt: recorded.actual_prompt,
      })),
    );
    const submit = mock.submits().at(-1)!;
    expect(submit.path).toBe('/api/v1/services/aigc/text2image/image-synthesis');
    expect(submit.headers['x-dashscope-async']).toBe('enable');
    expect(submit.body).toEqual({
      model: ASYNC_MODEL,
      input: { prompt: '一间有着精致窗户的花店' },
      parameters: { size: '1024*1024', n: 2 },
    });
    const taskId = [...mock.tasks.keys()].at(-1)!;
    // RUNNING once, then SUCCEEDED
    expect(mock.readsOf(taskId)).toBe(2);
    await expectImagesCharged(before, ASYNC_MODEL, 2 * PER_IMAGE);
  });

  it('asks again after a task read DashScope failed, without drawing the task anew', async () => {
    const before = await snapshot(suite);
    const submits = mock.submits().length;
    const r = await client(s, suite.key).images.generate({ model: ASYNC_MODEL, prompt: 'a flaky lighthouse' });
    expect(r.data).toHaveLength(1);
    const taskId = [...mock.tasks].find(([, t]) => t.prompt === 'a flaky lighthouse')![0];
    // a 500 (in place of RUNNING), then SUCCEEDED
    expect(mock.readsOf(taskId)).toBe(2);
    expect(mock.submits().length).toBe(submits + 1);
    await expectImagesCharged(before, ASYNC_MODEL, PER_IMAGE);
  });

  it('charges only the images DashScope drew when part of a task failed', async () => {
    const before = await snapshot(suite);
    const r = await client(s, suite.key).images.generate({ model: ASYNC_MODEL, prompt: 'a partial harbour', n: 3 });
    expect(r.data!.map((d) => d.url)).toEqual([`http://images.example:${images.port}/0.png`]);
    expect(mock.submits().at(-1)!.body.parameters.n).toBe(3);
    await expectImagesCharged(before, ASYNC_MODEL, PER_IMAGE);
  });

  it('answers b64_json with the images fetched through the SSRF-guarded fetch', async () => {
    const before = await snapshot(suite);
    const hits = images.hits.length;
    const r = await client(s, suite.key).images.generate({
      model: ASYNC_MODEL,
      prompt: 'a red fox',
      response_format: 'b64_json',
    });
    expect(r.data).toEqual([{ b64_json: PNG.toString('base64'), revised_prompt: recorded.actual_prompt }]);
    expect(images.hits.slice(hits)).toEqual(['/0.png']);
    await expectImagesCharged(before, ASYNC_MODEL, PER_IMAGE);
  });

  it('refuses to fetch a b64_json image on a private address, charging nothing', async () => {
    // DashScope naming an image on this host's loopback: the fetch refuses it before connecting
    const hidden = await imageHost();
    const imageUrl = mock.opts.imageUrl;
    mock.opts.imageUrl = (i) => `http://127.0.0.1:${hidden.port}/${i}.png`;
    try {
      const before = await snapshot(suite);
      const err = await client(s, suite.key)
        .images.generate({ model: ASYNC_MODEL, prompt: 'a red fox', response_format: 'b64_json' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(502);
      expect((err as APIError).message).toContain('could not be fetched');
      expect(hidden.hits).toEqual([]);
      await expectNothingCharged(suite, before);
    } finally {
      mock.opts.imageUrl = imageUrl;
      await hidden.close();
    }
  });

  it('gives a FAILED task’s error to the client and charges nothing, without trying it elsewhere', async () => {
    const before = await snapshot(suite);
    const submits = mock.submits().length;
    const err = await client(s, suite.key)
      .images.generate({ model: ASYNC_MODEL, prompt: 'please fail this' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).message).toContain('Output data may contain inappropriate content.');
    expect((err as APIError).code).toBe('DataInspectionFailed');
    expect(mock.submits().length).toBe(submits + 1);
    await expectNothingCharged(suite, before);
  });

  it('gives a refused submit’s error to the client and charges nothing', async () => {
    const before = await snapshot(suite);
    const err = await client(s, suite.key)
      .images.generate({ model: ASYNC_MODEL, prompt: 'a cat', size: '512x512' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).message).toContain('The size is not match');
    await expectNothingCharged(suite, before);
  });

  it('retries a throttled (429) submit on the next channel and charges once', async () => {
    const before = await snapshot(suite);
    const throttledBefore = throttled.submits().length;
    const r = await client(s, suite.key).images.generate({ model: RETRIED_MODEL, prompt: 'a lighthouse' });
    expect(r.data).toHaveLength(1);
    expect(throttled.submits().length).toBe(throttledBefore + 1);
    await expectImagesCharged(before, RETRIED_MODEL, PER_IMAGE);
  });

  it('gives up a task that outlasts the wait with a 504, charging nothing', async () => {
    ALI_IMAGE_WAIT.timeoutMs = 40;
    try {
      const before = await snapshot(suite);
      const err = await client(s, suite.key)
        .images.generate({ model: ASYNC_MODEL, prompt: 'never done' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(504);
      expect((err as APIError).message).toContain('did not finish within');
      await expectNothingCharged(suite, before);
    } finally {
      ALI_IMAGE_WAIT.timeoutMs = saved.timeoutMs;
    }
  });

  it('stops polling when the client leaves, charging nothing', async () => {
    const before = await snapshot(suite);
    const ac = new AbortController();
    const asked = client(s, suite.key)
      .images.generate({ model: ASYNC_MODEL, prompt: 'never finishes' }, { signal: ac.signal })
      .catch((e: unknown) => e);
    await vi.waitFor(() => {
      const id = [...mock.tasks].find(([, t]) => t.prompt === 'never finishes')?.[0];
      expect(id && mock.readsOf(id)).toBeGreaterThan(1);
    });
    const taskId = [...mock.tasks].find(([, t]) => t.prompt === 'never finishes')![0];
    ac.abort();
    await asked;
    // the reservation comes back once the attempt has ended, which is when the polling stopped
    await vi.waitFor(async () =>
      expect(await snapshot(suite)).toMatchObject({ user: before.user, token: before.token }),
    );
    const reads = mock.readsOf(taskId);
    // a whole other image request polls its own task meanwhile: the left task is read no more
    await client(s, suite.key).images.generate({ model: ASYNC_MODEL, prompt: 'a boat' });
    expect(mock.readsOf(taskId)).toBe(reads);
    const fresh = (await logsOf(s, suite.userId)).slice(before.logs);
    expect(fresh.map((l) => l.model_name)).toEqual([ASYNC_MODEL]);
  });

  it('answers the synchronous models at once from multimodal-generation, charged per image', async () => {
    const before = await snapshot(suite);
    const r = await client(s, suite.key).images.generate({ model: SYNC_MODEL, prompt: '一只橘猫', size: '1024x1024' });
    expect(r.data).toEqual([{ url: `http://images.example:${images.port}/0.png` }]);
    const sent = mock.submits().at(-1)!;
    expect(sent.path).toBe('/api/v1/services/aigc/multimodal-generation/generation');
    expect(sent.headers['x-dashscope-async']).toBeUndefined();
    expect(sent.body).toEqual({
      model: SYNC_MODEL,
      input: { messages: [{ role: 'user', content: [{ text: '一只橘猫' }] }] },
      parameters: { size: '1024*1024', n: 1 },
    });
    await expectImagesCharged(before, SYNC_MODEL, PER_IMAGE);
  });

  it('refuses image edits, which the channel does not serve, before anything is sent or charged', async () => {
    const before = await snapshot(suite);
    const calls = mock.calls.length + mock.refused.length;
    const form = new FormData();
    form.append('model', ASYNC_MODEL);
    form.append('prompt', 'make it blue');
    form.append('image', new Blob([PNG], { type: 'image/png' }), 'cat.png');
    const r = await fetch(`${s.url}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${suite.key}` },
      body: form,
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as any).error.message).toContain('不支持 image_edits');
    expect(mock.calls.length + mock.refused.length).toBe(calls);
    await expectNothingCharged(suite, before);
  });
});
