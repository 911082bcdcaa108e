// Zhipu GLM v4 (type 26) through the gateway: OpenAI and @google/genai clients' chat at /api/paas/v4/chat/completions
// with the raw key as a Bearer token, stream and not, charged the usage Zhipu reports; a Claude client's messages go
// as they are to Zhipu's /api/anthropic/v1/messages (the official @anthropic-ai/sdk, stream and not); Zhipu's error
// reaches the client with nothing charged. The mock refuses any other path and a request without the Bearer key.
// Every case on each database (the other vendors run their core cases on each, the rest on SQLite: vendor-gateway.ts
// sqliteOnly).
import Anthropic from '@anthropic-ai/sdk';
import { APIError } from 'openai';
import { expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { client } from '../relay/fixtures.js';
import { MockCompatibleVendor, recordedCase } from '../helpers/mock-compatible-vendor.js';
import { expectCharged, expectNothingCharged, geminiChat, snapshot, vendorSuite } from './vendor-gateway.js';

const KEY = '8f3a2c1d9e7b4a6f.Zk3mQ9xYwR2pLs7T';
const MODEL = 'glm-4-flash';
const recorded = recordedCase('zhipu');
const usage = {
  prompt: recorded.stream.usage.prompt_tokens as number,
  completion: recorded.stream.usage.completion_tokens as number,
};

/** Zhipu's Anthropic-compatible answer and stream (its own message ids and model). */
const CLAUDE_ANSWER = {
  id: 'msg_2024120316012345abcd',
  type: 'message',
  role: 'assistant',
  model: 'glm-4.6',
  content: [{ type: 'text', text: '你好！有什么可以帮你？' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 11, output_tokens: 7 },
};
const sse = (events: [string, unknown][]) =>
  events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join('');
const CLAUDE_STREAM = sse([
  [
    'message_start',
    {
      type: 'message_start',
      message: { ...CLAUDE_ANSWER, content: [], stop_reason: null, usage: { input_tokens: 11, output_tokens: 0 } },
    },
  ],
  ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
  ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '你好！' } }],
  [
    'content_block_delta',
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '有什么可以帮你？' } },
  ],
  ['content_block_stop', { type: 'content_block_stop', index: 0 }],
  [
    'message_delta',
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 7 } },
  ],
  ['message_stop', { type: 'message_stop' }],
]);

await describeEachDb('Zhipu GLM v4 channels', (kind) => {
  const suite = vendorSuite({
    kind,
    mock: () =>
      MockCompatibleVendor.start({
        provider: 'zhipu',
        routes: {
          '/zp/api/paas/v4/chat/completions': { kind: 'chat' },
          '/zp/api/paas/v4/embeddings': {
            kind: 'json',
            answer: {
              model: 'embedding-3',
              object: 'list',
              data: [{ index: 0, object: 'embedding', embedding: [0.1, -0.2] }],
              usage: { prompt_tokens: 4, completion_tokens: 0, total_tokens: 4 },
            },
          },
          '/zp/api/anthropic/v1/messages': { kind: 'json', answer: CLAUDE_ANSWER, stream: CLAUDE_STREAM },
        },
        headers: { authorization: `Bearer ${KEY}` },
        // Zhipu's range for top_p is open: (0, 1)
        refuse: (body) => (typeof body.top_p === 'number' && body.top_p >= 1 ? 'top_p 取值范围为 (0, 1)' : null),
      }),
    channel: { type: 26, key: KEY, path: '/zp', models: [MODEL, 'glm-4.6', 'embedding-3', 'fail-model'] },
    models: [MODEL, 'glm-4.6', 'embedding-3', 'fail-model'],
  });

  it('the mock refuses another path and a request without the Bearer key', async () => {
    const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    const wrongPath = await fetch(`${suite.mock.url}/zp/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body,
    });
    expect(wrongPath.status).toBe(404);
    const noKey = await fetch(`${suite.mock.url}/zp/api/paas/v4/chat/completions`, { method: 'POST', body });
    expect(noKey.status).toBe(401);
  });

  it('relays an OpenAI client’s chat to /api/paas/v4 and charges Zhipu’s usage', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: '法国的首都是哪里？' }],
    });
    expect(r.choices[0].message.content).toBe('法国的首都是巴黎。');
    const sent = suite.mock.requests.at(-1)!;
    expect(sent.path).toBe('/zp/api/paas/v4/chat/completions');
    expect(sent.body.model).toBe(MODEL);
    await expectCharged(suite, before, usage, MODEL);
  });

  it('sends top_p 1, which Zhipu refuses, as 0.99 (new-api’s value)', async () => {
    await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      top_p: 1,
    });
    expect(suite.mock.requests.at(-1)!.body.top_p).toBe(0.99);
  });

  it('streams to an OpenAI client, charged the usage of the last chunk', async () => {
    const before = await snapshot(suite);
    const stream = await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: '法国的首都是哪里？' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(recorded.stream.collected.text);
    await expectCharged(suite, before, usage, MODEL);
  });

  it('answers a Gemini client, stream and not', async () => {
    const question = {
      contents: '法国的首都是哪里？',
      config: { systemInstruction: '简短回答。', maxOutputTokens: 100 },
    };
    const messages = [
      { role: 'system', content: '简短回答。' },
      { role: 'user', content: '法国的首都是哪里？' },
    ];
    let before = await snapshot(suite);
    const plain = await geminiChat(suite, MODEL, { ...question, stream: false });
    expect(plain.text).toBe('法国的首都是巴黎。');
    expect(plain.usage).toMatchObject({ promptTokenCount: usage.prompt, candidatesTokenCount: usage.completion });
    let sent = suite.mock.requests.at(-1)!;
    expect(sent.path).toBe('/zp/api/paas/v4/chat/completions');
    expect(sent.body).toMatchObject({ model: MODEL, messages, max_tokens: 100 });
    await expectCharged(suite, before, usage, MODEL);

    before = await snapshot(suite);
    const streamed = await geminiChat(suite, MODEL, { ...question, stream: true });
    expect(streamed.text).toBe(recorded.stream.collected.text);
    expect(streamed.usage).toMatchObject({ promptTokenCount: usage.prompt, candidatesTokenCount: usage.completion });
    sent = suite.mock.requests.at(-1)!;
    expect(sent.body).toMatchObject({ messages, stream: true });
    await expectCharged(suite, before, usage, MODEL);
  });

  it('sends embeddings to /api/paas/v4/embeddings', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).embeddings.create({
      model: 'embedding-3',
      input: 'hi',
      encoding_format: 'float',
    });
    expect(r.data[0].embedding).toEqual([0.1, -0.2]);
    expect(suite.mock.requests.at(-1)!.path).toBe('/zp/api/paas/v4/embeddings');
    await expectCharged(suite, before, { prompt: 4, completion: 0 }, 'embedding-3');
  });

  it('sends a Claude client’s messages as they are to /api/anthropic/v1/messages', async () => {
    const before = await snapshot(suite);
    const claude = new Anthropic({ apiKey: `sk-${suite.key}`, baseURL: suite.s.url, maxRetries: 0 });
    const r = await claude.messages.create({
      model: 'glm-4.6',
      max_tokens: 64,
      messages: [{ role: 'user', content: '你好' }],
    });
    expect(r.content).toEqual([{ type: 'text', text: '你好！有什么可以帮你？' }]);
    const sent = suite.mock.requests.at(-1)!;
    expect(sent.path).toBe('/zp/api/anthropic/v1/messages');
    expect(sent.body).toEqual({ model: 'glm-4.6', max_tokens: 64, messages: [{ role: 'user', content: '你好' }] });
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    await expectCharged(suite, before, { prompt: 11, completion: 7 }, 'glm-4.6');
  });

  it('streams a Claude client’s messages from Zhipu’s Anthropic endpoint', async () => {
    const before = await snapshot(suite);
    const claude = new Anthropic({ apiKey: `sk-${suite.key}`, baseURL: suite.s.url, maxRetries: 0 });
    const stream = claude.messages.stream({
      model: 'glm-4.6',
      max_tokens: 64,
      messages: [{ role: 'user', content: '你好' }],
    });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: '你好！有什么可以帮你？' }]);
    expect(suite.mock.requests.at(-1)!.body.stream).toBe(true);
    await expectCharged(suite, before, { prompt: 11, completion: 7 }, 'glm-4.6');
  });

  it('gives the client Zhipu’s error and charges nothing', async () => {
    const before = await snapshot(suite);
    const err = await client(suite.s, suite.key)
      .chat.completions.create({ model: 'fail-model', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).message).toContain('模型不存在，请检查模型代码。');
    await expectNothingCharged(suite, before);
  });
});
