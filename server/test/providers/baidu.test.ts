// Baidu ERNIE v1 (type 15) through the gateway, against a mock of Baidu's own protocol (helpers/mock-baidu.ts): the key
// `API Key|Secret Key` is exchanged at the channel's own host, through its proxy when it has one, for an access token
// (once for 50 concurrent first calls, again when the channel moves to another host), sent as `?access_token=`; chat
// goes to the model's endpoint in Baidu's body and comes back in the client's format (the official openai,
// @anthropic-ai/sdk and @google/genai clients, stream and not), charged Baidu's usage to the unit; an expired token (error 111 inside
// HTTP 200) is exchanged again and the request resent once; Baidu's errors inside HTTP 200 reach the client as errors,
// charged nothing.
import Anthropic from '@anthropic-ai/sdk';
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { client, relayPost } from '../relay/fixtures.js';
import { MockProxy } from '../helpers/mock-proxy.js';
import { channelFormProblem } from '../../src/services/channel-input.js';
import { MockBaidu } from '../helpers/mock-baidu.js';
import {
  changeChannel,
  expectCharged,
  expectNothingCharged,
  geminiChat,
  snapshot,
  sqliteOnly,
  streamChat,
  vendorSuite,
} from './vendor-gateway.js';

const API_KEY = 'Wq3xKc9LmT2vBn7RpZ4yHd6F';
const SECRET_KEY = 'h8JkP2sXq5VtN9cR3mLw7YbZ1dGf4AeU';
const MODEL = 'ERNIE-3.5-8K';
const USAGE = { prompt: 8, completion: 6 };
const WEATHER = [
  {
    type: 'function' as const,
    function: {
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];
const ARGS = '{"city":"巴黎","unit":"celsius"}';
/** the recorded function call's usage (tools/answer.json, tools/stream.sse) */
const TOOL_USAGE = { prompt: 96, completion: 38 };
const QUESTION = [
  { role: 'system' as const, content: '你是一个地理老师。' },
  { role: 'user' as const, content: '法国的首都是哪里？' },
];

await describeEachDb('Baidu ERNIE v1 channels', (kind) => {
  const models = [MODEL, 'ERNIE-Speed-128K', 'Embedding-V1'];
  const suite = vendorSuite({
    kind,
    mock: () => MockBaidu.start(API_KEY, SECRET_KEY),
    channel: { type: 15, key: `${API_KEY}|${SECRET_KEY}`, models },
    models,
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);

  onSqlite('the mock refuses a wrong secret, an unknown token and a system role among the messages', async () => {
    const token = await fetch(
      `${suite.mock.url}/oauth/2.0/token?grant_type=client_credentials&client_id=${API_KEY}&client_secret=nope`,
      { method: 'POST' },
    );
    expect(token.status).toBe(401);
    const chat = (accessToken: string, messages: unknown[]) =>
      fetch(`${suite.mock.url}/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions?access_token=${accessToken}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messages }),
      }).then((r) => r.json());
    expect(await chat('24.forged', [{ role: 'user', content: 'hi' }])).toMatchObject({ error_code: 110 });
    suite.mock.exchanges = 0;
  });

  onSqlite('exchanges the key once for 50 concurrent first calls, at the channel’s host', async () => {
    const before = await snapshot(suite);
    const callsBefore = suite.mock.calls.length;
    const openai = client(suite.s, suite.key);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => openai.chat.completions.create({ model: MODEL, messages: QUESTION })),
    );
    expect(answers.every((a) => a.choices[0].message.content === '法国的首都是巴黎。')).toBe(true);
    expect(suite.mock.exchanges).toBe(1);
    const tokens = new Set(
      suite.mock.calls.slice(callsBefore).map((c) => new URL(c.path, 'http://x').searchParams.get('access_token')),
    );
    expect(tokens.size).toBe(1);
    const now = await snapshot(suite);
    expect(before.user - now.user).toBe(50 * (USAGE.prompt + USAGE.completion));
  });

  it('relays an OpenAI client’s chat to the model’s endpoint in Baidu’s body, charged Baidu’s usage', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({ model: MODEL, messages: QUESTION });
    expect(r.choices[0]).toMatchObject({ message: { content: '法国的首都是巴黎。' }, finish_reason: 'stop' });
    expect(r.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 6 });
    const sent = suite.mock.calls.at(-1)!;
    expect(sent.path.split('?')[0]).toBe('/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions');
    expect(sent.body).toEqual({
      system: '你是一个地理老师。',
      messages: [{ role: 'user', content: '法国的首都是哪里？' }],
    });
    await expectCharged(suite, before, USAGE, MODEL);
    expect(suite.mock.exchanges).toBe(1);
  });

  onSqlite('streams to an OpenAI client, charged the usage of Baidu’s last event', async () => {
    const before = await snapshot(suite);
    const { text, usage } = await streamChat(suite, { model: MODEL, messages: QUESTION });
    expect(text).toBe('法国的首都是巴黎。');
    expect(usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 6 });
    await expectCharged(suite, before, USAGE, MODEL);
    // a model without an entry in Baidu's table goes to its lower-cased name
    await client(suite.s, suite.key).chat.completions.create({ model: 'ERNIE-Speed-128K', messages: QUESTION });
    expect(suite.mock.calls.at(-1)!.path.split('?')[0]).toMatch(/\/chat\/ernie-speed-128k$/);
  });

  onSqlite('answers a Claude client, stream and not, charged the same', async () => {
    const claude = new Anthropic({ apiKey: `sk-${suite.key}`, baseURL: suite.s.url, maxRetries: 0 });
    let before = await snapshot(suite);
    const msg = await claude.messages.create({
      model: MODEL,
      max_tokens: 100,
      system: '你是一个地理老师。',
      messages: [{ role: 'user', content: '法国的首都是哪里？' }],
    });
    expect(msg.content).toEqual([{ type: 'text', text: '法国的首都是巴黎。' }]);
    expect(msg.usage).toMatchObject({ input_tokens: 8, output_tokens: 6 });
    expect(suite.mock.calls.at(-1)!.body).toMatchObject({ system: '你是一个地理老师。', max_output_tokens: 100 });
    await expectCharged(suite, before, USAGE, MODEL);

    before = await snapshot(suite);
    const stream = claude.messages.stream({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: '法国的首都是哪里？' }],
    });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: '法国的首都是巴黎。' }]);
    await expectCharged(suite, before, USAGE, MODEL);
  });

  onSqlite('answers a Gemini client, stream and not, charged the same', async () => {
    let before = await snapshot(suite);
    const config = { systemInstruction: '你是一个地理老师。', maxOutputTokens: 100 };
    const plain = await geminiChat(suite, MODEL, { contents: '法国的首都是哪里？', config, stream: false });
    expect(plain.text).toBe('法国的首都是巴黎。');
    expect(plain.usage).toMatchObject({ promptTokenCount: 8, candidatesTokenCount: 6 });
    expect(suite.mock.calls.at(-1)!.body).toEqual({
      system: '你是一个地理老师。',
      messages: [{ role: 'user', content: '法国的首都是哪里？' }],
      max_output_tokens: 100,
    });
    await expectCharged(suite, before, USAGE, MODEL);

    before = await snapshot(suite);
    const streamed = await geminiChat(suite, MODEL, { contents: '法国的首都是哪里？', config, stream: true });
    expect(streamed.text).toBe('法国的首都是巴黎。');
    expect(streamed.usage).toMatchObject({ promptTokenCount: 8, candidatesTokenCount: 6 });
    expect(suite.mock.calls.at(-1)!.body).toMatchObject({ system: '你是一个地理老师。', stream: true });
    await expectCharged(suite, before, USAGE, MODEL);
  });

  onSqlite('exchanges again once when Baidu says the token expired, resending the request once', async () => {
    const exchanges = suite.mock.exchanges;
    const calls = suite.mock.calls.length;
    suite.mock.expireTokens();
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({ model: MODEL, messages: QUESTION });
    expect(r.choices[0].message.content).toBe('法国的首都是巴黎。');
    expect(suite.mock.exchanges).toBe(exchanges + 1);
    expect(suite.mock.calls.length).toBe(calls + 2);
    await expectCharged(suite, before, USAGE, MODEL);
  });

  it('gives the client Baidu’s error told inside HTTP 200 and charges nothing, stream and not', async () => {
    // two turns opening with the assistant: Baidu refuses an even number of messages
    const messages = [
      { role: 'assistant' as const, content: '你好' },
      { role: 'user' as const, content: '法国的首都是哪里？' },
    ];
    for (const stream of [false, true]) {
      const before = await snapshot(suite);
      const err = await client(suite.s, suite.key)
        .chat.completions.create({ model: MODEL, messages, stream })
        .then(async (s) => {
          if (stream) for await (const _ of s as AsyncIterable<unknown>);
          return s;
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(400);
      expect((err as APIError).message).toContain('the length of messages must be an odd number');
      await expectNothingCharged(suite, before);
    }
  });

  onSqlite('relays embeddings to the model’s endpoint, charged its prompt tokens', async () => {
    const before = await snapshot(suite);
    const r = await relayPost(suite.s, '/v1/embeddings', suite.key, { model: 'Embedding-V1', input: '巴黎' });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { object: string; data: { embedding: number[] }[] };
    expect(body.object).toBe('list');
    expect(body.data[0].embedding).toHaveLength(3);
    expect(suite.mock.calls.at(-1)!.path.split('?')[0]).toMatch(/\/embeddings\/embedding-v1$/);
    expect(suite.mock.calls.at(-1)!.body).toEqual({ input: ['巴黎'] });
    await expectCharged(suite, before, { prompt: 2, completion: 0 }, 'Embedding-V1');
  });

  onSqlite(
    'sends tools as ERNIE’s functions and gives an OpenAI client its function call, stream and not',
    async () => {
      const openai = client(suite.s, suite.key);
      const ask = [{ role: 'user' as const, content: '巴黎现在天气如何？' }];
      let before = await snapshot(suite);
      const r = await openai.chat.completions.create({ model: MODEL, messages: ask, tools: WEATHER });
      expect(r.choices[0].finish_reason).toBe('tool_calls');
      expect(r.choices[0].message.tool_calls).toEqual([
        { id: 'call_as-fc9t4n2k7v', type: 'function', function: { name: 'get_weather', arguments: ARGS } },
      ]);
      expect(suite.mock.calls.at(-1)!.body.functions).toEqual([
        { name: 'get_weather', description: 'Current weather for a city', parameters: WEATHER[0].function.parameters },
      ]);
      await expectCharged(suite, before, TOOL_USAGE, MODEL);

      before = await snapshot(suite);
      const stream = await openai.chat.completions.create({
        model: MODEL,
        messages: ask,
        tools: WEATHER,
        stream: true,
      });
      const calls: { name: string; arguments: string }[] = [];
      let finish: string | null = null;
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        if (!choice) continue;
        for (const t of choice.delta.tool_calls ?? []) {
          calls[t.index] ??= { name: '', arguments: '' };
          calls[t.index].name += t.function?.name ?? '';
          calls[t.index].arguments += t.function?.arguments ?? '';
        }
        finish = choice.finish_reason ?? finish;
      }
      expect(calls).toEqual([{ name: 'get_weather', arguments: ARGS }]);
      expect(finish).toBe('tool_calls');
      await expectCharged(suite, before, TOOL_USAGE, MODEL);
    },
  );

  onSqlite(
    'sends a tool’s result as a function message named after the call, and refuses two calls in one turn',
    async () => {
      const openai = client(suite.s, suite.key);
      const call = (id: string) => ({
        id,
        type: 'function' as const,
        function: { name: 'get_weather', arguments: ARGS },
      });
      const before = await snapshot(suite);
      const r = await openai.chat.completions.create({
        model: MODEL,
        tools: WEATHER,
        messages: [
          { role: 'user', content: '巴黎现在天气如何？' },
          { role: 'assistant', content: null, tool_calls: [call('call_a')] },
          { role: 'tool', tool_call_id: 'call_a', content: '{"temperature":18}' },
        ],
      });
      expect(r.choices[0].message.content).toBe('法国的首都是巴黎。');
      expect(suite.mock.calls.at(-1)!.body.messages.slice(1)).toEqual([
        { role: 'assistant', content: '', function_call: { name: 'get_weather', arguments: ARGS } },
        { role: 'function', name: 'get_weather', content: '{"temperature":18}' },
      ]);
      await expectCharged(suite, before, USAGE, MODEL);

      const sent = suite.mock.calls.length;
      const two = await openai.chat.completions
        .create({
          model: MODEL,
          tools: WEATHER,
          messages: [
            { role: 'user', content: '巴黎和伦敦的天气？' },
            { role: 'assistant', content: null, tool_calls: [call('call_a'), call('call_b')] },
            { role: 'tool', tool_call_id: 'call_a', content: '{}' },
            { role: 'tool', tool_call_id: 'call_b', content: '{}' },
          ],
        })
        .catch((e: unknown) => e);
      expect((two as APIError).status).toBe(400);
      expect((two as APIError).message).toContain('每轮只能调用一个函数');
      expect(suite.mock.calls.length).toBe(sent);
    },
  );

  onSqlite('exchanges again for a channel moved to another host: a token is the host’s that issued it', async () => {
    const moved = await MockBaidu.start(API_KEY, SECRET_KEY);
    try {
      await changeChannel(suite, { base_url: moved.url });
      const before = await snapshot(suite);
      const r = await client(suite.s, suite.key).chat.completions.create({ model: MODEL, messages: QUESTION });
      expect(r.choices[0].message.content).toBe('法国的首都是巴黎。');
      // the new host knows none of the old host's tokens: it issued the one its call carried
      expect([moved.exchanges, moved.calls.length]).toEqual([1, 1]);
      await expectCharged(suite, before, USAGE, MODEL);
    } finally {
      await moved.close();
    }
  });

  onSqlite('refuses a key without both parts on save, saying the format', () => {
    for (const key of ['only-one-part', `${API_KEY}|`, `|${SECRET_KEY}`, `${API_KEY}|${SECRET_KEY}|x`])
      expect(channelFormProblem({ type: 15, key })).toEqual({
        field: 'key',
        message: expect.stringContaining('API Key|Secret Key'),
      });
    expect(channelFormProblem({ type: 15, key: `${API_KEY}|${SECRET_KEY}` })).toBeNull();
  });
});

// Behind a proxy, on SQLite (the proxy is the channel's setting, not the database's). The channel's host is a name
// only the proxy resolves, so a token exchange or a call that bypassed the proxy could not reach Baidu at all.
describe('a Baidu ERNIE v1 channel with a proxy', () => {
  const HOST = 'aip.baidu-behind-proxy.test';
  let proxy: MockProxy;
  const suite = vendorSuite({
    kind: 'sqlite',
    mock: () => MockBaidu.start(API_KEY, SECRET_KEY),
    channel: { type: 15, key: `${API_KEY}|${SECRET_KEY}`, models: [MODEL] },
    models: [MODEL],
  });
  beforeAll(async () => {
    proxy = await MockProxy.start({ [HOST]: new URL(suite.mock.url).host });
    await changeChannel(suite, { base_url: `http://${HOST}`, setting: JSON.stringify({ proxy: proxy.url }) });
  });
  afterAll(() => proxy?.close());

  it('exchanges the key through the channel’s proxy at the channel’s host, then chats through it', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({ model: MODEL, messages: QUESTION });
    expect(r.choices[0].message.content).toBe('法国的首都是巴黎。');
    expect(proxy.reached(`${HOST}:80`)).toBe(true);
    expect(suite.mock.exchanges).toBe(1);
    expect(suite.mock.server.requests.map((q) => [q.path.split('?')[0], q.headers.host])).toEqual([
      ['/oauth/2.0/token', HOST],
      ['/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions', HOST],
    ]);
    await expectCharged(suite, before, USAGE, MODEL);
  });
});
