// Core chat relay on every database: non-stream and SSE (with and without include_usage), billing to the unit,
// the consume log, model mapping and request shaping.
import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { chatCompletion, MockUpstream } from '../helpers/mock-upstream.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  client,
  logsOf,
  setOptions,
  tokenRow,
  userRow,
} from './fixtures.js';

const MODEL = 'mock-chat';

await describeEachDb('chat relay', (kind) => {
  let s: TestServer;
  let up: MockUpstream;

  beforeAll(async () => {
    s = await startTestServer({ kind });
    up = await MockUpstream.start();
    // ratio 2, completion ×3, cache ×0.5; group vip ×1.5
    await setOptions(s, {
      ModelRatio: { [MODEL]: 2, 'mock-mapped': 2, 'mock-price': 0, 'gpt-4o-audio-preview': 1.25 },
      CompletionRatio: { [MODEL]: 3, 'mock-mapped': 3, 'gpt-4o-audio-preview': 4 },
      CacheRatio: { [MODEL]: 0.5 },
      ModelPrice: { 'mock-price': 0.002 },
      GroupRatio: { default: 1, vip: 1.5, svip: 1 },
    });
    await addChannel(s, {
      baseUrl: up.url,
      models: [MODEL, 'mock-price', 'gpt-4o-audio-preview'],
      groups: ['default', 'vip'],
      key: 'sk-up-1',
      organization: 'org-1',
    });
    await addChannel(s, {
      baseUrl: up.url,
      models: ['mock-mapped'],
      modelMapping: { 'mock-mapped': 'real-upstream-model' },
    });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  it('answers and charges alike whether the lean front or Node’s server reads the request (a chunked body is Node’s)', async () => {
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id, { unlimited: true });
    const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    const post = (chunked: boolean) =>
      new Promise<{ status: number; json: { choices: Array<{ message: { content: string } }> } }>((resolve, reject) => {
        const headers: Record<string, string> = {
          authorization: `Bearer sk-${t.key}`,
          'content-type': 'application/json',
        };
        if (!chunked) headers['content-length'] = String(Buffer.byteLength(body));
        const req = http.request(`${s.url}/v1/chat/completions`, { method: 'POST', headers }, (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) }));
        });
        req.on('error', reject);
        if (chunked) req.write(body.slice(0, 10));
        req.end(chunked ? body.slice(10) : body);
      });
    for (const chunked of [false, true]) {
      const r = await post(chunked);
      expect(r.status).toBe(200);
      expect(r.json.choices[0].message.content).toBe('Hello world!');
    }
    // 64 each, as in the next test
    expect((await logsOf(s, u.id)).map((l) => l.quota)).toEqual([64, 64]);
    expect(await userRow(s, u.id)).toEqual({ quota: 1_000_000 - 128, used_quota: 128, request_count: 2 });
  });

  it('relays a non-stream chat and charges exactly (user + token + channel + log)', async () => {
    up.reset();
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id, { unlimited: false, remain: 500_000, name: 'my-token' });
    const r = await client(s, t.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(r.choices[0].message.content).toBe('Hello world!');
    expect(up.requests).toHaveLength(1);
    expect(up.requests[0].path).toBe('/v1/chat/completions');
    expect(up.requests[0].headers.authorization).toBe('Bearer sk-up-1');
    expect(up.requests[0].headers['openai-organization']).toBe('org-1');
    // 11 prompt + 7 completion × 3 = 32 × ratio 2 × group 1 = 64
    const logs = await logsOf(s, u.id);
    expect(logs).toHaveLength(1);
    const l = logs[0];
    expect(l.quota).toBe(64);
    expect(l.type).toBe(2);
    expect(l.prompt_tokens).toBe(11);
    expect(l.completion_tokens).toBe(7);
    expect(l.model_name).toBe(MODEL);
    expect(l.token_name).toBe('my-token');
    expect(l.token_id).toBe(t.id);
    expect(l.group).toBe('default');
    expect(!!l.is_stream).toBe(false);
    expect(l.content).toBe('模型倍率 2.00，补全倍率 3.00，分组倍率 1.00');
    expect(l.otherJson).toMatchObject({
      model_ratio: 2,
      group_ratio: 1,
      completion_ratio: 3,
      cache_tokens: 0,
      cache_ratio: 0.5,
      model_price: -1,
    });
    expect(l.otherJson.admin_info).toEqual({ use_channel: [String(l.channel_id)] });
    expect(typeof l.otherJson.frt).toBe('number');
    // new-api's key order (the JSON text is written by hand on the hot path)
    expect(Object.keys(l.otherJson)).toEqual([
      'frt',
      'model_ratio',
      'group_ratio',
      'completion_ratio',
      'cache_tokens',
      'cache_ratio',
      'model_price',
      'admin_info',
    ]);
    expect(await userRow(s, u.id)).toEqual({ quota: 1_000_000 - 64, used_quota: 64, request_count: 1 });
    const tr = await tokenRow(s, t.id);
    expect(tr.remain_quota).toBe(500_000 - 64);
    expect(tr.used_quota).toBe(64);
    expect(tr.accessed_time).toBeGreaterThan(0);
  });

  it('forwards the raw body unchanged when nothing needs rewriting', async () => {
    up.reset();
    const u = await addUser(s);
    const t = await addToken(s, u.id);
    const raw = '{"model":"mock-chat",  "messages":[{"role":"user","content":"x"}], "temperature": 0.5}';
    const res = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${t.key}`, 'content-type': 'application/json' },
      body: raw,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-oneapi-request-id')).toBeTruthy();
    expect(up.requests[0].raw).toBe(raw);
  });

  it('passes the upstream response headers through, but not framing, cookies or the channel account', async () => {
    up.reset();
    up.behave = (req) => ({
      kind: 'json',
      body: chatCompletion(req.body.model, 'Hello world!'),
      headers: {
        'x-request-id': 'req_up_123',
        'x-ratelimit-remaining-requests': '4999',
        'openai-processing-ms': '42',
        'set-cookie': '__cf_bm=abc; path=/',
        'openai-organization': 'org-secret',
        'alt-svc': 'h3=":443"; ma=86400',
        'x-oneapi-request-id': 'spoofed',
        'access-control-allow-origin': 'https://evil.example',
      },
    });
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id);
    const { data, response } = await client(s, t.key)
      .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    expect(data.choices[0].message.content).toBe('Hello world!');
    const h = response.headers;
    expect(h.get('x-request-id')).toBe('req_up_123');
    expect(h.get('x-ratelimit-remaining-requests')).toBe('4999');
    expect(h.get('openai-processing-ms')).toBe('42');
    expect(h.get('set-cookie')).toBeNull();
    expect(h.get('openai-organization')).toBeNull();
    expect(h.get('alt-svc')).toBeNull();
    expect(h.get('x-oneapi-request-id')).not.toBe('spoofed');
    expect(h.get('x-oneapi-request-id')).toBeTruthy();
    expect(h.get('access-control-allow-origin')).toBe('*');
    expect(h.get('content-type')).toBe('application/json');
    // the body's own length, not the upstream's
    expect(Number(h.get('content-length'))).toBe(Buffer.byteLength(JSON.stringify(data)));
    expect((await logsOf(s, u.id))[0].quota).toBe(64);
  });

  it('bills cached tokens and the token group ratio', async () => {
    up.reset();
    up.behave = (req) => ({
      kind: 'json',
      body: {
        id: 'x',
        object: 'chat.completion',
        model: req.body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'a' }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: 1000,
          completion_tokens: 100,
          total_tokens: 1100,
          prompt_tokens_details: { cached_tokens: 600 },
        },
      },
    });
    const u = await addUser(s, { quota: 1_000_000, group: 'default' });
    const t = await addToken(s, u.id, { group: 'vip' });
    await client(s, t.key).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    // ((1000-600) + 600×0.5 + 100×3) × 2 × 1.5 = (400+300+300) × 3 = 3000
    const [l] = await logsOf(s, u.id);
    expect(l.quota).toBe(3000);
    expect(l.group).toBe('vip');
    expect(l.otherJson.cache_tokens).toBe(600);
    expect(l.otherJson.group_ratio).toBe(1.5);
    expect((await userRow(s, u.id)).quota).toBe(1_000_000 - 3000);
  });

  it('bills gpt-4o-audio with the audio formula and logs the audio fields', async () => {
    up.reset();
    const usage = {
      prompt_tokens: 100,
      completion_tokens: 200,
      total_tokens: 300,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 40, text_tokens: 60 },
      completion_tokens_details: { audio_tokens: 150, text_tokens: 50 },
    };
    up.behave = (req) => ({
      kind: 'json',
      body: {
        id: 'x',
        object: 'chat.completion',
        model: req.body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'a' }, finish_reason: 'stop' }],
        usage,
      },
    });
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id);
    await client(s, t.key).chat.completions.create({
      model: 'gpt-4o-audio-preview',
      messages: [{ role: 'user', content: 'hi' }],
    });
    // (text in 60 + text out 50 × 4 + audio in 40 × 40 + audio out 150 × 40 × 2) × 1.25 = 13860 × 1.25 = 17325
    // (the text formula would have charged (100 + 200 × 4) × 1.25 = 1125)
    const [l] = await logsOf(s, u.id);
    expect(l.quota).toBe(17325);
    expect(l.otherJson).toMatchObject({
      audio: true,
      audio_input: 40,
      audio_output: 150,
      text_input: 60,
      text_output: 50,
      audio_ratio: 40,
      audio_completion_ratio: 2,
    });
    expect((await userRow(s, u.id)).quota).toBe(1_000_000 - 17325);
    expect((await tokenRow(s, t.id)).used_quota).toBe(17325);
  });

  it('bills per-call models with the model price', async () => {
    up.reset();
    const u = await addUser(s, { quota: 1_000_000, group: 'vip' });
    const t = await addToken(s, u.id);
    await client(s, t.key).chat.completions.create({
      model: 'mock-price',
      messages: [{ role: 'user', content: 'hi' }],
    });
    // 0.002 × 500000 × 1.5 = 1500
    const [l] = await logsOf(s, u.id);
    expect(l.quota).toBe(1500);
    expect(l.content).toBe('模型价格 0.00，分组倍率 1.50');
    expect(l.otherJson.model_price).toBe(0.002);
    expect((await userRow(s, u.id)).quota).toBe(1_000_000 - 1500);
  });

  it('streams every chunk, hides the forced usage chunk, and bills from it', async () => {
    up.reset();
    const u = await addUser(s);
    const t = await addToken(s, u.id);
    const stream = await client(s, t.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    let text = '';
    let sawUsage = false;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (c.usage) sawUsage = true;
    }
    expect(text).toBe('Hello world!');
    expect(sawUsage).toBe(false);
    // the relay forced include_usage upstream (type 1 supports stream options)
    expect(up.requests[0].body.stream_options).toEqual({ include_usage: true });
    const [l] = await logsOf(s, u.id);
    expect(!!l.is_stream).toBe(true);
    expect(l.quota).toBe(64);
    expect(l.otherJson.frt).toBeGreaterThanOrEqual(0);
  });

  /** Streams a chat with include_usage and returns the usage chunk the client received (null if none). */
  const streamedUsage = async (key: string) => {
    const stream = await client(s, key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: unknown = null;
    for await (const c of stream) if (c.usage) usage = c.usage;
    return usage;
  };

  it('streams with include_usage: the client receives the usage chunk', async () => {
    up.reset();
    const u = await addUser(s);
    const t = await addToken(s, u.id);
    const usage: any = await streamedUsage(t.key);
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    const [l] = await logsOf(s, u.id);
    expect(l.quota).toBe(64);
  });

  it('counts tokens locally when the upstream stream has no usage, and synthesises the usage chunk', async () => {
    up.reset();
    up.behave = () => ({ kind: 'stream', spec: { pieces: ['Hello', ' world'], usage: 'never' } });
    const u = await addUser(s);
    const t = await addToken(s, u.id);
    const usage: any = await streamedUsage(t.key);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    const [l] = await logsOf(s, u.id);
    expect(l.completion_tokens).toBe(usage.completion_tokens);
    expect(l.prompt_tokens).toBe(usage.prompt_tokens);
    expect(l.quota).toBe(Math.round((usage.prompt_tokens + usage.completion_tokens * 3) * 2));
  });

  it("logs the ratios in force: a ratio or group change shows in the next request's log line", async () => {
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id);
    const ask = () =>
      client(s, t.key).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    await ask();
    await setOptions(s, { ModelRatio: { [MODEL]: 4, 'mock-mapped': 2, 'mock-price': 0 } });
    try {
      await ask();
    } finally {
      await setOptions(s, { ModelRatio: { [MODEL]: 2, 'mock-mapped': 2, 'mock-price': 0 } });
    }
    const vip = await addToken(s, u.id, { group: 'vip' });
    await client(s, vip.key).chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    const logs = await logsOf(s, u.id);
    expect(logs.map((l) => l.content)).toEqual([
      '模型倍率 2.00，补全倍率 3.00，分组倍率 1.00',
      '模型倍率 4.00，补全倍率 3.00，分组倍率 1.00',
      '模型倍率 2.00，补全倍率 3.00，分组倍率 1.50',
    ]);
    expect(logs.map((l) => [l.otherJson.model_ratio, l.otherJson.group_ratio])).toEqual([
      [2, 1],
      [4, 1],
      [2, 1.5],
    ]);
    expect(logs.map((l) => l.quota)).toEqual([logs[0].quota, logs[0].quota * 2, logs[0].quota * 1.5]);
  });

  it('maps the model upstream but bills and logs the requested name', async () => {
    up.reset();
    const u = await addUser(s);
    const t = await addToken(s, u.id);
    await client(s, t.key).chat.completions.create({
      model: 'mock-mapped',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(up.requests[0].body.model).toBe('real-upstream-model');
    const [l] = await logsOf(s, u.id);
    expect(l.model_name).toBe('mock-mapped');
    expect(l.otherJson.is_model_mapped).toBe(true);
    expect(l.otherJson.upstream_model_name).toBe('real-upstream-model');
    expect(Object.keys(l.otherJson).slice(-3)).toEqual(['is_model_mapped', 'upstream_model_name', 'admin_info']);
  });

  it('answers 503 when no channel serves the model in the group', async () => {
    const u = await addUser(s);
    const t = await addToken(s, u.id);
    const res = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'nope-model', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.status).toBe(503);
    const j = (await res.json()) as any;
    expect(j.error.message).toMatch(/^当前分组 default 下对于模型 nope-model 无可用渠道 \(request id: .+\)$/);
    expect(j.error.type).toBe('new_api_error');
  });
});
