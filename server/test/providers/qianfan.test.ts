// Baidu Qianfan v2 (type 46) through the gateway: the key `token|appid` becomes `Authorization: Bearer token` and the
// `appid` header, requests go to /v2/... (OpenAI and @google/genai clients), stream and not, charged Qianfan's usage;
// its error reaches the client with nothing charged. The mock refuses a request without the appid header or with the
// whole key as the Bearer token. A key without both parts is refused on save with a message saying the format.
import { APIError } from 'openai';
import { expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { client, relayPost } from '../relay/fixtures.js';
import { MockCompatibleVendor, recordedCase } from '../helpers/mock-compatible-vendor.js';
import { channelFormProblem } from '../../src/services/channel-input.js';
import {
  expectCharged,
  expectNothingCharged,
  geminiChat,
  snapshot,
  sqliteOnly,
  vendorSuite,
} from './vendor-gateway.js';

const TOKEN = 'bce-v3/ALTAK-rT5xK2mPq8/9c1e0f7a2b3d4c5e6f708192a3b4c5d6e7f8091a';
const APPID = 'app-Jq7Kd2xR';
const MODEL = 'ernie-3.5-8k';
const recorded = recordedCase('qianfan');
const usage = {
  prompt: recorded.stream.usage.prompt_tokens as number,
  completion: recorded.stream.usage.completion_tokens as number,
};
const RERANK = {
  id: 'as-rr81kx2m',
  object: 'rerank_list',
  model: 'bce-reranker-base',
  results: [
    { index: 1, relevance_score: 0.92, document: 'Paris is the capital of France.' },
    { index: 0, relevance_score: 0.13, document: 'Berlin is in Germany.' },
  ],
  usage: { prompt_tokens: 17, total_tokens: 17 },
};

await describeEachDb('Qianfan v2 channels', (kind) => {
  const models = [MODEL, 'bce-reranker-base', 'fail-model'];
  const suite = vendorSuite({
    kind,
    mock: () =>
      MockCompatibleVendor.start({
        provider: 'qianfan',
        routes: {
          '/v2/chat/completions': { kind: 'chat' },
          '/v2/rerank': { kind: 'json', answer: RERANK },
        },
        headers: { authorization: `Bearer ${TOKEN}`, appid: APPID },
      }),
    channel: { type: 46, key: `${TOKEN}|${APPID}`, models },
    models,
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);

  onSqlite('the mock refuses a request without the appid header, or with the whole key as the token', async () => {
    const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    const url = `${suite.mock.url}/v2/chat/completions`;
    const noAppid = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body });
    expect(noAppid.status).toBe(401);
    const wholeKey = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}|${APPID}`, appid: APPID },
      body,
    });
    expect(wholeKey.status).toBe(401);
  });

  it('relays chat to /v2/chat/completions with the token and the appid header, charged Qianfan’s usage', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: '法国的首都是哪里？' }],
    });
    expect(r.choices[0].message.content).toBe('巴黎是法国的首都。');
    const sent = suite.mock.requests.at(-1)!;
    expect([sent.path, sent.headers.authorization, sent.headers.appid]).toEqual([
      '/v2/chat/completions',
      `Bearer ${TOKEN}`,
      APPID,
    ]);
    await expectCharged(suite, before, usage, MODEL);
  });

  onSqlite('streams, charged the usage of the last chunk', async () => {
    const before = await snapshot(suite);
    const stream = await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: '法国的首都是哪里？' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('巴黎是法国的首都。');
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
    expect(plain.text).toBe('巴黎是法国的首都。');
    expect(plain.usage).toMatchObject({ promptTokenCount: usage.prompt, candidatesTokenCount: usage.completion });
    let sent = suite.mock.requests.at(-1)!;
    expect([sent.path, sent.headers.authorization, sent.headers.appid]).toEqual([
      '/v2/chat/completions',
      `Bearer ${TOKEN}`,
      APPID,
    ]);
    expect(sent.body).toMatchObject({ model: MODEL, messages, max_tokens: 100 });
    await expectCharged(suite, before, usage, MODEL);

    before = await snapshot(suite);
    const streamed = await geminiChat(suite, MODEL, { ...question, stream: true });
    expect(streamed.text).toBe('巴黎是法国的首都。');
    expect(streamed.usage).toMatchObject({ promptTokenCount: usage.prompt, candidatesTokenCount: usage.completion });
    sent = suite.mock.requests.at(-1)!;
    expect(sent.body).toMatchObject({ messages, stream: true });
    await expectCharged(suite, before, usage, MODEL);
  });

  onSqlite('relays rerank to /v2/rerank, charged its prompt tokens', async () => {
    const before = await snapshot(suite);
    const r = await relayPost(suite.s, '/v1/rerank', suite.key, {
      model: 'bce-reranker-base',
      query: 'capital of France',
      documents: ['Berlin is in Germany.', 'Paris is the capital of France.'],
    });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { results: { index: number }[] };
    expect(body.results.map((x) => x.index)).toEqual([1, 0]);
    expect(suite.mock.requests.at(-1)!.path).toBe('/v2/rerank');
    await expectCharged(suite, before, { prompt: 17, completion: 0 }, 'bce-reranker-base');
  });

  it('gives the client Qianfan’s error and charges nothing', async () => {
    const before = await snapshot(suite);
    const err = await client(suite.s, suite.key)
      .chat.completions.create({ model: 'fail-model', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(401);
    expect((err as APIError).message).toContain('IAM Certification failed');
    await expectNothingCharged(suite, before);
  });

  onSqlite('refuses a key without both parts on save, saying the format', () => {
    for (const key of ['only-a-token', `${TOKEN}|`, `|${APPID}`])
      expect(channelFormProblem({ type: 46, key })).toEqual({
        field: 'key',
        message: expect.stringContaining('API Key|AppID'),
      });
    expect(channelFormProblem({ type: 46, key: `${TOKEN}|${APPID}` })).toBeNull();
  });
});
