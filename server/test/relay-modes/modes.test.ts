// The non-chat OpenAI relay modes on every database, driven by the official `openai` client (rerank by fetch):
// what the upstream received (path, body, multipart bytes unchanged), what the client got, and the charge to the
// user, the token and the consume log, to the unit of the formula.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  logsOf,
  setOptions,
  tokenRow,
  userRow,
} from '../relay/fixtures.js';
import { countTextTokens } from '../../src/services/tokenizer.js';
import {
  AUDIO,
  IMAGE_RESPONSE,
  ModesUpstream,
  RESP_USAGE,
  responseObject,
  responsesStream,
  sendJson,
} from './upstream.js';

const USER_QUOTA = 1_000_000;
const TOKEN_QUOTA = 500_000;

interface Sent {
  body: Buffer;
  contentType: string;
}

/** An openai client whose requests are also recorded byte for byte (to compare with what the upstream got). */
function recordingClient(s: TestServer, key: string): { c: OpenAI; sent: Sent[] } {
  const sent: Sent[] = [];
  const f = async (url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    // the SDK probes fetch once without a request; only real requests are recorded
    if (!init) return fetch(url);
    const req = new Request(url, init);
    const body = Buffer.from(await req.arrayBuffer());
    sent.push({ body, contentType: req.headers.get('content-type') ?? '' });
    return fetch(req.url, {
      method: req.method,
      headers: req.headers,
      body: body.length ? body : undefined,
      signal: init?.signal ?? undefined,
    });
  };
  return {
    c: new OpenAI({ apiKey: `sk-${key}`, baseURL: `${s.url}/v1`, maxRetries: 0, timeout: 20_000, fetch: f as never }),
    sent,
  };
}

/** A tiny valid WAV file: 16-bit mono PCM, 8 kHz, 0.1 s of a 440 Hz tone. */
function wav(): Buffer {
  const samples = 800;
  const buf = Buffer.alloc(44 + samples * 2);
  buf.write('RIFF', 0);
  buf.writeUInt32LE(36 + samples * 2, 4);
  buf.write('WAVEfmt ', 8);
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20);
  buf.writeUInt16LE(1, 22);
  buf.writeUInt32LE(8000, 24);
  buf.writeUInt32LE(16000, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write('data', 36);
  buf.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++)
    buf.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / 8000) * 12000), 44 + i * 2);
  return buf;
}

/** PNG signature + junk: the gateway must not care what the file is, only forward it. */
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from(Array.from({ length: 500 }, (_, i) => (i * 13) % 256)),
]);

await describeEachDb('relay modes', (kind) => {
  let s: TestServer;
  let up: ModesUpstream;

  beforeAll(async () => {
    s = await startTestServer({ kind });
    up = await ModesUpstream.start();
    await setOptions(s, {
      ModelRatio: {
        'text-moderation-stable': 2,
        'dall-e-2': 8,
        'dall-e': 8,
        'tts-1': 7.5,
        'whisper-1': 15,
        'whisper-mapped': 15,
        'mock-transcribe': 1.5,
        'mock-rerank': 0.5,
        'mock-resp': 2,
      },
      CompletionRatio: { 'mock-transcribe': 2, 'mock-resp': 3 },
      CacheRatio: { 'mock-resp': 0.5 },
      ModelPrice: { 'dall-e-3': 0.04, 'az-dalle': 0.02 },
      GroupRatio: { default: 1, vip: 1.5, svip: 1 },
    });
    await addChannel(s, {
      baseUrl: up.url,
      key: 'sk-up-modes',
      groups: ['default', 'vip'],
      models: [
        'text-moderation-stable',
        'dall-e',
        'dall-e-2',
        'dall-e-3',
        'tts-1',
        'whisper-1',
        'mock-transcribe',
        'mock-rerank',
        'mock-resp',
      ],
    });
    await addChannel(s, {
      baseUrl: up.url,
      models: ['whisper-mapped'],
      modelMapping: { 'whisper-mapped': 'whisper-large-v3' },
    });
    await addChannel(s, { type: 3, baseUrl: up.url, key: 'az-key', other: '2024-02-01', models: ['az-dalle'] });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  async function account(group = 'default') {
    const u = await addUser(s, { quota: USER_QUOTA, group });
    const t = await addToken(s, u.id, { unlimited: false, remain: TOKEN_QUOTA, name: 'modes-token' });
    return { u, t };
  }

  /** user, token and the single consume log all show exactly `quota`. */
  async function expectCharged(a: Awaited<ReturnType<typeof account>>, quota: number) {
    const logs = await logsOf(s, a.u.id);
    expect(logs).toHaveLength(1);
    expect(logs[0].quota).toBe(quota);
    expect(logs[0].type).toBe(2);
    expect(logs[0].token_id).toBe(a.t.id);
    expect(await userRow(s, a.u.id)).toEqual({ quota: USER_QUOTA - quota, used_quota: quota, request_count: 1 });
    const tr = await tokenRow(s, a.t.id);
    expect(tr.remain_quota).toBe(TOKEN_QUOTA - quota);
    expect(tr.used_quota).toBe(quota);
    return logs[0];
  }

  async function expectUncharged(a: Awaited<ReturnType<typeof account>>) {
    expect(await logsOf(s, a.u.id)).toHaveLength(0);
    expect(await userRow(s, a.u.id)).toEqual({ quota: USER_QUOTA, used_quota: 0, request_count: 0 });
    expect((await tokenRow(s, a.t.id)).remain_quota).toBe(TOKEN_QUOTA);
  }

  it('moderations: default model, input billed on its tokens', async () => {
    up.reset();
    const a = await account();
    const { c } = recordingClient(s, a.t.key);
    const input = 'I want to check this sentence, please.';
    const r = await c.moderations.create({ input } as never);
    expect(r.results[0].flagged).toBe(false);
    expect(up.requests).toHaveLength(1);
    expect(up.requests[0].path).toBe('/v1/moderations');
    expect(up.requests[0].headers.authorization).toBe('Bearer sk-up-modes');
    expect(up.requests[0].json).toEqual({ input, model: 'text-moderation-stable' });
    const tokens = countTextTokens(input, 'text-moderation-stable');
    const log = await expectCharged(a, tokens * 2);
    expect(log.prompt_tokens).toBe(tokens);
    expect(log.completion_tokens).toBe(0);
    expect(log.model_name).toBe('text-moderation-stable');

    const bad = await fetch(`${s.url}/v1/moderations`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${a.t.key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error).toMatchObject({ code: 'invalid_text_request' });
    expect(up.requests).toHaveLength(1);
  });

  it('images/generations: per-call price × size × hd × n × group, forwarded unchanged', async () => {
    up.reset();
    const a = await account('vip');
    const { c, sent } = recordingClient(s, a.t.key);
    const r = await c.images.generate({ model: 'dall-e-3', prompt: 'a cat', size: '1792x1024', quality: 'hd', n: 1 });
    expect(r).toEqual(IMAGE_RESPONSE);
    expect(up.requests[0].path).toBe('/v1/images/generations');
    expect(up.requests[0].raw.equals(sent[0].body)).toBe(true);
    // 0.04 × size 2 × hd(1792) 1.5 × n 1 × group 1.5 × 500000
    const log = await expectCharged(a, 90_000);
    expect(log.group).toBe('vip');
    expect(log.model_name).toBe('dall-e-3');
    expect(log.content).toBe('大小 1792x1024, 品质 hd, 数量 1');
    expect(log.otherJson).toMatchObject({ model_price: 0.04, group_ratio: 1.5 });
  });

  it('images/generations: ratio mode and the dall-e default model', async () => {
    up.reset();
    const a = await account();
    const res = await fetch(`${s.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${a.t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'a dog', size: '512x512', n: 3 }),
    });
    expect(res.status).toBe(200);
    expect(up.requests[0].json).toMatchObject({ model: 'dall-e', prompt: 'a dog', n: 3 });
    // 0.0025 × ratio 8 × size 0.45 × n 3 × group 1 × 500000
    const log = await expectCharged(a, 13_500);
    expect(log.model_name).toBe('dall-e');
  });

  it('images/generations: size validation (× and dall-e sizes) and upstream failure refund', async () => {
    up.reset();
    const a = await account();
    const { c } = recordingClient(s, a.t.key);
    await expect(
      c.images.generate({ model: 'dall-e-3', prompt: 'x', size: '1024×1024' as never }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(c.images.generate({ model: 'dall-e-3', prompt: 'x', size: '256x256' })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('size must be one of 1024x1024, 1024x1792 or 1792x1024 for dall-e-3'),
    });
    await expect(c.images.generate({ model: 'dall-e-2', prompt: 'x', size: '1792x1024' })).rejects.toMatchObject({
      status: 400,
    });
    await expect(c.images.generate({ model: 'dall-e-2', prompt: '' })).rejects.toMatchObject({ status: 400 });
    expect(up.requests).toHaveLength(0);

    up.reset((_req, res) =>
      sendJson(
        res,
        { error: { message: 'content policy', type: 'invalid_request_error', code: 'content_policy_violation' } },
        400,
      ),
    );
    await expect(c.images.generate({ model: 'dall-e-3', prompt: 'x' })).rejects.toMatchObject({
      status: 400,
      code: 'content_policy_violation',
    });
    expect(up.requests).toHaveLength(1);
    await expectUncharged(a);
  });

  it('images on an Azure channel go to the deployment path with the api-key header', async () => {
    up.reset();
    const a = await account();
    const { c } = recordingClient(s, a.t.key);
    await c.images.generate({ model: 'az-dalle', prompt: 'a cat' });
    expect(up.requests[0].path).toBe('/openai/deployments/az-dalle/images/generations?api-version=2024-02-01');
    expect(up.requests[0].headers['api-key']).toBe('az-key');
    // 0.02 × 500000
    await expectCharged(a, 10_000);
  });

  it('images/edits: multipart forwarded byte for byte, billed per image', async () => {
    up.reset();
    const a = await account();
    const { c, sent } = recordingClient(s, a.t.key);
    const r = await c.images.edit({
      model: 'dall-e-2',
      image: await toFile(PNG, 'cat.png', { type: 'image/png' }),
      prompt: 'add a hat',
      n: 2,
      size: '256x256',
    });
    expect(r.data?.[0].url).toBe(IMAGE_RESPONSE.data[0].url);
    const got = up.requests[0];
    expect(got.path).toBe('/v1/images/edits');
    expect(got.headers['content-type']).toBe(sent[0].contentType);
    expect(sent[0].contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(got.raw.equals(sent[0].body)).toBe(true);
    expect(got.raw.includes(PNG)).toBe(true);
    // 0.0025 × 8 × size 0.4 × n 2 × 500000
    await expectCharged(a, 8_000);
  });

  it('audio/speech: binary audio streamed with its content type, billed per input character', async () => {
    up.reset();
    const a = await account();
    const { c } = recordingClient(s, a.t.key);
    const input = '你好, world';
    const r = await c.audio.speech.create({ model: 'tts-1', voice: 'alloy', input });
    expect(r.headers.get('content-type')).toBe('audio/mpeg');
    // the upstream's other headers pass, its cookies do not (relay/response-headers.ts)
    expect(r.headers.get('x-request-id')).toBe('req_tts_1');
    expect(r.headers.get('set-cookie')).toBeNull();
    expect(Buffer.from(await r.arrayBuffer()).equals(AUDIO)).toBe(true);
    expect(up.requests[0].path).toBe('/v1/audio/speech');
    expect(up.requests[0].json).toEqual({ model: 'tts-1', voice: 'alloy', input });
    // 9 characters × ratio 7.5
    const log = await expectCharged(a, Math.round(9 * 7.5));
    expect(log.prompt_tokens).toBe(9);
    expect(log.completion_tokens).toBe(0);

    const bad = await fetch(`${s.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${a.t.key}`, 'content-type': 'application/json' },
      body: '{"voice":"alloy"}',
    });
    expect(bad.status).toBe(400);
    expect(up.requests).toHaveLength(1);
  });

  it('audio/speech: an upstream error is relayed as an OpenAI error and refunds everything', async () => {
    up.reset((_req, res) =>
      sendJson(
        res,
        { error: { message: 'voice not found', type: 'invalid_request_error', param: 'voice', code: null } },
        400,
      ),
    );
    const a = await account();
    const { c } = recordingClient(s, a.t.key);
    await expect(
      c.audio.speech.create({ model: 'tts-1', voice: 'nobody' as never, input: 'hi' }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('voice not found'),
    });
    await expectUncharged(a);
  });

  it('audio/transcriptions: multipart unchanged, default whisper-1, billed on the text tokens', async () => {
    up.reset();
    const a = await account();
    const { c, sent } = recordingClient(s, a.t.key);
    const audio = wav();
    const r = await c.audio.transcriptions.create({
      file: await toFile(audio, 'speech.wav', { type: 'audio/wav' }),
      model: 'whisper-1',
    });
    expect(r.text).toBe('hello there, general kenobi');
    const got = up.requests[0];
    expect(got.path).toBe('/v1/audio/transcriptions');
    expect(got.headers['content-type']).toBe(sent[0].contentType);
    expect(got.raw.equals(sent[0].body)).toBe(true);
    expect(got.raw.includes(audio)).toBe(true);
    const tokens = countTextTokens('hello there, general kenobi', 'whisper-1');
    const log = await expectCharged(a, tokens * 15);
    expect(log.prompt_tokens).toBe(tokens);
    expect(log.model_name).toBe('whisper-1');
  });

  it('audio/transcriptions: response_format text and a form without model', async () => {
    up.reset((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('just some words\n');
    });
    const a = await account();
    const form = new FormData();
    form.append('file', new Blob([wav()], { type: 'audio/wav' }), 'a.wav');
    form.append('response_format', 'text');
    const req = new Request(`${s.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${a.t.key}` },
      body: form,
    });
    const bytes = Buffer.from(await req.clone().arrayBuffer());
    const res = await fetch(req);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(await res.text()).toBe('just some words\n');
    expect(up.requests[0].raw.equals(bytes)).toBe(true);
    const tokens = countTextTokens('just some words\n', 'whisper-1');
    const log = await expectCharged(a, tokens * 15);
    expect(log.model_name).toBe('whisper-1');
  });

  it('audio/translations: token usage from the response, text formula with completion ratio', async () => {
    up.reset((_req, res) =>
      sendJson(res, { text: 'hello', usage: { type: 'tokens', input_tokens: 20, output_tokens: 5, total_tokens: 25 } }),
    );
    const a = await account();
    const { c } = recordingClient(s, a.t.key);
    const r = await c.audio.translations.create({ file: await toFile(wav(), 'a.wav'), model: 'mock-transcribe' });
    expect(r.text).toBe('hello');
    expect(up.requests[0].path).toBe('/v1/audio/translations');
    // (20 + 5 × 2) × 1.5
    const log = await expectCharged(a, 45);
    expect(log.prompt_tokens).toBe(20);
    expect(log.completion_tokens).toBe(5);
  });

  it('multipart: a mapped model is the only change to the form', async () => {
    up.reset();
    const a = await account();
    const { c, sent } = recordingClient(s, a.t.key);
    await c.audio.transcriptions.create({ file: await toFile(wav(), 'a.wav'), model: 'whisper-mapped' });
    const got = up.requests[0].raw;
    expect(got.toString('latin1')).toBe(
      sent[0].body.toString('latin1').replace(/(name="model"\r\n\r\n)whisper-mapped/, '$1whisper-large-v3'),
    );
    expect(got.equals(sent[0].body)).toBe(false);
    const logs = await logsOf(s, a.u.id);
    expect(logs[0].otherJson).toMatchObject({ is_model_mapped: true, upstream_model_name: 'whisper-large-v3' });
  });

  it('multipart: a non-multipart body is a 400 and costs nothing', async () => {
    up.reset();
    const a = await account();
    const res = await fetch(`${s.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${a.t.key}`, 'content-type': 'application/json' },
      body: '{"model":"whisper-1"}',
    });
    expect(res.status).toBe(400);
    expect(up.requests).toHaveLength(0);
    await expectUncharged(a);
  });

  it('rerank: upstream usage, else query + documents counted locally', async () => {
    up.reset();
    const a = await account();
    const body = {
      model: 'mock-rerank',
      query: 'what is a cat',
      documents: ['a cat is an animal', 'a car is a machine'],
      top_n: 2,
      return_documents: false,
    };
    const post = () =>
      fetch(`${s.url}/v1/rerank`, {
        method: 'POST',
        headers: { authorization: `Bearer sk-${a.t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const r1 = await post();
    expect(r1.status).toBe(200);
    expect(((await r1.json()) as any).results[0]).toEqual({ index: 1, relevance_score: 0.9 });
    expect(up.requests[0].path).toBe('/v1/rerank');
    expect(up.requests[0].raw.toString()).toBe(JSON.stringify(body));
    // usage.total_tokens 42 × ratio 0.5
    await expectCharged(a, 21);

    up.reset((_req, res) => sendJson(res, { results: [{ index: 0, relevance_score: 0.5 }] }));
    const b = await account();
    const r2 = await fetch(`${s.url}/v1/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${b.t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(r2.status).toBe(200);
    const local =
      countTextTokens(body.query, 'mock-rerank') +
      body.documents.reduce((n, d) => n + countTextTokens(d, 'mock-rerank'), 0);
    const log = await expectCharged(b, Math.round(local * 0.5));
    expect(log.prompt_tokens).toBe(local);

    const bad = await fetch(`${s.url}/v1/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${b.t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-rerank', query: 'q', documents: [] }),
    });
    expect(bad.status).toBe(400);
  });

  // (input 100 − cached 40) + 40 × cache 0.5 + output 20 × completion 3 = 140 × ratio 2
  const RESP_QUOTA = 280;

  it('responses: non-stream, billed from usage with cached input tokens', async () => {
    up.reset((req, res) => sendJson(res, responseObject(req.json.model)));
    const a = await account();
    const { c } = recordingClient(s, a.t.key);
    const r = await c.responses.create({ model: 'mock-resp', input: 'Say hello', instructions: 'be brief' });
    expect(r.output_text).toBe('Hello world');
    expect(r.usage).toEqual(RESP_USAGE);
    expect(up.requests[0].path).toBe('/v1/responses');
    expect(up.requests[0].json).toEqual({ model: 'mock-resp', input: 'Say hello', instructions: 'be brief' });
    const log = await expectCharged(a, RESP_QUOTA);
    expect(log.prompt_tokens).toBe(100);
    expect(log.completion_tokens).toBe(20);
    expect(log.otherJson.cache_tokens).toBe(40);
    expect(!!log.is_stream).toBe(false);
  });

  it('responses: stream of typed events passes through intact, billed from response.completed', async () => {
    up.reset(responsesStream('mock-resp'));
    const a = await account();
    const { c } = recordingClient(s, a.t.key);
    const stream = await c.responses.create({ model: 'mock-resp', input: 'Say hello', stream: true });
    const types: string[] = [];
    let text = '';
    let final: any = null;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') final = ev.response;
    }
    expect(types).toEqual([
      'response.created',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.completed',
    ]);
    expect(text).toBe('Hello world');
    expect(final.usage).toEqual(RESP_USAGE);
    expect(up.requests[0].json).toEqual({ model: 'mock-resp', input: 'Say hello', stream: true });
    const log = await expectCharged(a, RESP_QUOTA);
    expect(!!log.is_stream).toBe(true);
    expect(log.otherJson.cache_tokens).toBe(40);
  });

  it('responses: the raw stream gets no [DONE] and no stream_options even when forced', async () => {
    up.reset(responsesStream('mock-resp', null));
    const a = await account();
    const res = await fetch(`${s.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${a.t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'mock-resp',
        input: 'Say hello',
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const raw = await res.text();
    expect(raw).not.toContain('[DONE]');
    expect(raw.startsWith('event: response.created\n')).toBe(true);
    expect(raw).toContain('event: response.completed\n');
    expect(up.requests[0].json.stream_options).toBeUndefined();
    // no usage upstream: prompt counted locally, output text counted locally
    const prompt = countTextTokens('Say hello', 'mock-resp');
    const completion = countTextTokens('Hello world', 'mock-resp');
    const log = await expectCharged(a, Math.round((prompt + completion * 3) * 2));
    expect(log.prompt_tokens).toBe(prompt);
    expect(log.completion_tokens).toBe(completion);
  });

  it('answers 501 in the OpenAI error shape for endpoints it does not serve', async () => {
    const a = await account();
    const h = { authorization: `Bearer sk-${a.t.key}` };
    for (const [method, path] of [
      ['POST', '/v1/images/variations'],
      ['GET', '/v1/fine_tuning/jobs'],
      ['POST', '/v1/fine_tuning/jobs'],
      ['GET', '/v1/files'],
      ['DELETE', '/v1/models/gpt-4'],
    ]) {
      const res = await fetch(`${s.url}${path}`, { method, headers: h });
      expect(res.status, path).toBe(501);
      const j = (await res.json()) as any;
      expect(j.error).toMatchObject({ type: 'new_api_error', code: 'api_not_implemented' });
      expect(j.error.message).toMatch(/^API not implemented \(request id: .+\)$/);
    }
  });
});
