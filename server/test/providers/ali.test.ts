// Alibaba DashScope (type 17) through the gateway: chat (OpenAI and @google/genai clients, stream and not; Claude
// clients go to its Anthropic endpoint: claude-paths.test.ts) and embeddings at /compatible-mode/v1 with the key as a
// Bearer token, `X-DashScope-SSE: enable` on streams and `X-DashScope-Plugin` from the channel's `other`; rerank
// converted to and from DashScope's native text-rerank service. Each is charged DashScope's usage to the unit; its
// error reaches the client with nothing charged.
import { APIError } from 'openai';
import { expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { client, relayPost } from '../relay/fixtures.js';
import { MockCompatibleVendor, recordedCase } from '../helpers/mock-compatible-vendor.js';
import {
  expectCharged,
  expectNothingCharged,
  geminiChat,
  snapshot,
  sqliteOnly,
  vendorSuite,
} from './vendor-gateway.js';

const KEY = 'sk-4f8a1c2e9b7d4e6f8a0b1c2d3e4f5a6b';
const MODEL = 'qwen-plus';
const recorded = recordedCase('ali');
const usage = {
  prompt: recorded.stream.usage.prompt_tokens as number,
  completion: recorded.stream.usage.completion_tokens as number,
};
const EMBEDDINGS = {
  object: 'list',
  data: [{ object: 'embedding', index: 0, embedding: [0.0123, -0.0456, 0.0789] }],
  model: 'text-embedding-v3',
  usage: { prompt_tokens: 5, total_tokens: 5 },
  id: '5f0e8a2c-7b1d-9c3e-a4f6-8b2d0e1c3a5f',
};
/** DashScope's native text-rerank answer */
const RERANK = {
  output: {
    results: [
      { document: { text: 'Paris is the capital of France.' }, index: 1, relevance_score: 0.9412 },
      { document: { text: 'Berlin is in Germany.' }, index: 0, relevance_score: 0.0371 },
    ],
  },
  usage: { total_tokens: 23 },
  request_id: 'd3a6c9f2-1b4e-9d7a-8c5f-2e0b4a6d8c1e',
};

await describeEachDb('Alibaba DashScope channels', (kind) => {
  const models = [MODEL, 'text-embedding-v3', 'gte-rerank', 'fail-model'];
  const suite = vendorSuite({
    kind,
    mock: () =>
      MockCompatibleVendor.start({
        provider: 'ali',
        routes: {
          '/compatible-mode/v1/chat/completions': { kind: 'chat' },
          '/compatible-mode/v1/embeddings': { kind: 'json', answer: EMBEDDINGS },
          '/api/v1/services/rerank/text-rerank/text-rerank': { kind: 'json', answer: RERANK },
        },
        headers: { authorization: `Bearer ${KEY}` },
      }),
    channel: { type: 17, key: KEY, models, other: 'WebSearch' },
    models,
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);

  onSqlite('the mock refuses a request without the Bearer key', async () => {
    const r = await fetch(`${suite.mock.url}/compatible-mode/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer wrong` },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(r.status).toBe(401);
  });

  it('relays chat to /compatible-mode/v1 with the plugin header, charged DashScope’s usage', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: '法国的首都是哪里？' }],
    });
    expect(r.choices[0].message.content).toBe('法国的首都是巴黎。');
    const sent = suite.mock.requests.at(-1)!;
    expect(sent.path).toBe('/compatible-mode/v1/chat/completions');
    expect(sent.headers['x-dashscope-plugin']).toBe('WebSearch');
    expect(sent.headers['x-dashscope-sse']).toBeUndefined();
    await expectCharged(suite, before, usage, MODEL);
  });

  onSqlite('streams with X-DashScope-SSE and the usage asked for, charged the last chunk’s usage', async () => {
    const before = await snapshot(suite);
    const stream = await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: '法国的首都是哪里？' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('法国的首都是巴黎。');
    const sent = suite.mock.requests.at(-1)!;
    expect(sent.headers['x-dashscope-sse']).toBe('enable');
    expect(sent.body.stream_options).toEqual({ include_usage: true });
    await expectCharged(suite, before, usage, MODEL);
  });

  onSqlite('answers a Gemini client, stream and not', async () => {
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
    expect(sent.path).toBe('/compatible-mode/v1/chat/completions');
    expect(sent.body).toMatchObject({ model: MODEL, messages, max_tokens: 100 });
    expect([sent.headers['x-dashscope-plugin'], sent.headers['x-dashscope-sse']]).toEqual(['WebSearch', undefined]);
    await expectCharged(suite, before, usage, MODEL);

    before = await snapshot(suite);
    const streamed = await geminiChat(suite, MODEL, { ...question, stream: true });
    expect(streamed.text).toBe('法国的首都是巴黎。');
    expect(streamed.usage).toMatchObject({ promptTokenCount: usage.prompt, candidatesTokenCount: usage.completion });
    sent = suite.mock.requests.at(-1)!;
    expect(sent.body).toMatchObject({ messages, stream: true, stream_options: { include_usage: true } });
    expect(sent.headers['x-dashscope-sse']).toBe('enable');
    await expectCharged(suite, before, usage, MODEL);
  });

  onSqlite('relays embeddings to /compatible-mode/v1/embeddings, charged its prompt tokens', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).embeddings.create({
      model: 'text-embedding-v3',
      input: 'hello',
      encoding_format: 'float',
    });
    expect(r.data[0].embedding).toEqual([0.0123, -0.0456, 0.0789]);
    expect(suite.mock.requests.at(-1)!.path).toBe('/compatible-mode/v1/embeddings');
    await expectCharged(suite, before, { prompt: 5, completion: 0 }, 'text-embedding-v3');
  });

  onSqlite('relays rerank to the native text-rerank service, converted both ways', async () => {
    const before = await snapshot(suite);
    const r = await relayPost(suite.s, '/v1/rerank', suite.key, {
      model: 'gte-rerank',
      query: 'capital of France',
      documents: ['Berlin is in Germany.', 'Paris is the capital of France.'],
      top_n: 2,
      return_documents: true,
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { results: { index: number; relevance_score: number }[]; usage: unknown };
    expect(body.results.map((x) => [x.index, x.relevance_score])).toEqual([
      [1, 0.9412],
      [0, 0.0371],
    ]);
    expect(body.usage).toEqual({ prompt_tokens: 23, total_tokens: 23 });
    const sent = suite.mock.requests.at(-1)!;
    expect(sent.path).toBe('/api/v1/services/rerank/text-rerank/text-rerank');
    expect(sent.body).toEqual({
      model: 'gte-rerank',
      input: { query: 'capital of France', documents: ['Berlin is in Germany.', 'Paris is the capital of France.'] },
      parameters: { top_n: 2, return_documents: true },
    });
    await expectCharged(suite, before, { prompt: 23, completion: 0 }, 'gte-rerank');
  });

  it('gives the client DashScope’s error and charges nothing', async () => {
    const before = await snapshot(suite);
    const err = await client(suite.s, suite.key)
      .chat.completions.create({ model: 'fail-model', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(401);
    expect((err as APIError).message).toContain('Incorrect API key provided');
    await expectNothingCharged(suite, before);
  });
});
