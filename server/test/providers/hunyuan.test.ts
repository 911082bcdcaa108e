// Tencent Hunyuan (type 23) through the gateway, against a mock of Tencent Cloud API 3.0 (helpers/mock-hunyuan.ts)
// that recomputes the TC3-HMAC-SHA256 signature over the exact body bytes and refuses what Tencent refuses: every
// request is signed at the channel's own host with `X-TC-Action: ChatCompletions`, `X-TC-Version`, `X-TC-Timestamp`
// and `X-TC-Region`; chat comes back in the client's format (the official openai, @anthropic-ai/sdk and @google/genai
// clients, stream and not), charged Hunyuan's usage to the unit; tools go as Hunyuan's `Tools` and its tool calls come
// back as OpenAI's; Tencent's `Response.Error` inside HTTP 200 reaches the client as an error, charged nothing.
import Anthropic from '@anthropic-ai/sdk';
import { APIError } from 'openai';
import { expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { client } from '../relay/fixtures.js';
import { channelFormProblem } from '../../src/services/channel-input.js';
import { tc3Authorization } from '../../src/relay/providers/hunyuan/sign.js';
import { MockHunyuan } from '../helpers/mock-hunyuan.js';
import {
  expectCharged,
  expectNothingCharged,
  geminiChat,
  snapshot,
  sqliteOnly,
  streamChat,
  vendorSuite,
} from './vendor-gateway.js';

const SECRET_ID = 'AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE';
const SECRET_KEY = 'Gu5t9xGARNpq86cd98joQYCN3EXAMPLE';
const MODEL = 'hunyuan-lite';
const USAGE = { prompt: 9, completion: 5 };
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
const CALL_ID = 'call_cr8q3f4h0f0k3m2n1p0q';
const ARGS = '{"city":"巴黎","unit":"celsius"}';
/** the recorded tool call's usage (tools/answer.json and the last event of tools/stream.sse) */
const TOOL_USAGE = { prompt: 118, completion: 21 };
const QUESTION = [
  { role: 'system' as const, content: '你是一个地理老师。' },
  { role: 'user' as const, content: '法国的首都是哪里？' },
];

await describeEachDb('Tencent Hunyuan channels', (kind) => {
  const models = [MODEL, 'hunyuan-unknown'];
  const suite = vendorSuite({
    kind,
    mock: () => MockHunyuan.start(SECRET_ID, SECRET_KEY),
    channel: { type: 23, key: `1300000001|${SECRET_ID}|${SECRET_KEY}`, models },
    models,
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);

  onSqlite('the mock refuses a lower-case action, a stale timestamp and a signature over other bytes', async () => {
    const body = Buffer.from(JSON.stringify({ Model: MODEL, Messages: [{ Role: 'user', Content: 'hi' }] }));
    const host = new URL(suite.mock.url).host;
    const post = (headers: Record<string, string>, sent = body) =>
      fetch(`${suite.mock.url}/`, { method: 'POST', headers, body: sent })
        .then((r) => r.json())
        .then((j: any) => j.Response.Error?.Code ?? 'ok');
    const signed = (timestamp: number, action: string, signedBody = body) => ({
      'content-type': 'application/json',
      'x-tc-action': action,
      'x-tc-version': '2023-09-01',
      'x-tc-region': 'ap-guangzhou',
      'x-tc-timestamp': String(timestamp),
      authorization: tc3Authorization({
        path: '/',
        host,
        contentType: 'application/json',
        action: 'ChatCompletions',
        body: signedBody,
        timestamp,
        service: 'hunyuan',
        secretId: SECRET_ID,
        secretKey: SECRET_KEY,
      }),
    });
    const now = Math.floor(Date.now() / 1000);
    expect(await post(signed(now, 'chatcompletions'))).toBe('InvalidAction');
    expect(await post(signed(now - 301, 'ChatCompletions'))).toBe('AuthFailure.SignatureExpire');
    expect(await post(signed(now, 'ChatCompletions', Buffer.from(`${body} `)))).toBe('AuthFailure.SignatureFailure');
    expect(await post(signed(now, 'ChatCompletions'))).toBe('ok');
  });

  it('relays an OpenAI client’s chat signed at the channel’s host, in Hunyuan’s body, charged its usage', async () => {
    const before = await snapshot(suite);
    const accepted = suite.mock.accepted;
    const r = await client(suite.s, suite.key).chat.completions.create({ model: MODEL, messages: QUESTION });
    expect(r.choices[0]).toMatchObject({ message: { content: '法国的首都是巴黎。' }, finish_reason: 'stop' });
    expect(suite.mock.accepted).toBe(accepted + 1);
    const sent = suite.mock.server.requests.at(-1)!;
    expect(sent.headers).toMatchObject({
      'x-tc-action': 'ChatCompletions',
      'x-tc-version': '2023-09-01',
      'x-tc-region': 'ap-guangzhou',
    });
    expect(sent.body).toEqual({
      Model: MODEL,
      Messages: [
        { Role: 'system', Content: '你是一个地理老师。' },
        { Role: 'user', Content: '法国的首都是哪里？' },
      ],
      Stream: false,
    });
    await expectCharged(suite, before, USAGE, MODEL);
  });

  onSqlite('streams to an OpenAI client, charged the usage of the last event', async () => {
    const before = await snapshot(suite);
    const { text, usage } = await streamChat(suite, { model: MODEL, messages: QUESTION });
    expect(text).toBe('法国的首都是巴黎。');
    expect(usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 5 });
    await expectCharged(suite, before, USAGE, MODEL);
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
    await expectCharged(suite, before, USAGE, MODEL);
    before = await snapshot(suite);
    const final = await claude.messages
      .stream({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: '法国的首都是哪里？' }] })
      .finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: '法国的首都是巴黎。' }]);
    expect(final.usage).toMatchObject({ input_tokens: 9, output_tokens: 5 });
    await expectCharged(suite, before, USAGE, MODEL);
  });

  onSqlite('answers a Gemini client, stream and not, charged the same', async () => {
    const question = { contents: '法国的首都是哪里？', config: { systemInstruction: '你是一个地理老师。' } };
    const messages = [
      { Role: 'system', Content: '你是一个地理老师。' },
      { Role: 'user', Content: '法国的首都是哪里？' },
    ];
    let before = await snapshot(suite);
    const plain = await geminiChat(suite, MODEL, { ...question, stream: false });
    expect(plain.text).toBe('法国的首都是巴黎。');
    expect(plain.usage).toMatchObject({ promptTokenCount: 9, candidatesTokenCount: 5 });
    expect(suite.mock.server.requests.at(-1)!.body).toMatchObject({ Model: MODEL, Messages: messages, Stream: false });
    await expectCharged(suite, before, USAGE, MODEL);

    before = await snapshot(suite);
    const streamed = await geminiChat(suite, MODEL, { ...question, stream: true });
    expect(streamed.text).toBe('法国的首都是巴黎。');
    expect(streamed.usage).toMatchObject({ promptTokenCount: 9, candidatesTokenCount: 5 });
    expect(suite.mock.server.requests.at(-1)!.body).toMatchObject({ Messages: messages, Stream: true });
    await expectCharged(suite, before, USAGE, MODEL);
  });

  it('gives the client Tencent’s Response.Error told inside HTTP 200 and charges nothing, stream and not', async () => {
    for (const stream of [false, true]) {
      const before = await snapshot(suite);
      const err = await client(suite.s, suite.key)
        .chat.completions.create({ model: 'hunyuan-unknown', messages: QUESTION, stream })
        .then(async (s) => {
          if (stream) for await (const _ of s as AsyncIterable<unknown>);
          return s;
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(400);
      expect((err as APIError).message).toContain('模型 hunyuan-unknown 不存在');
      await expectNothingCharged(suite, before);
    }
  });

  onSqlite('sends tools as Hunyuan’s Tools and gives an OpenAI client its tool calls, stream and not', async () => {
    const openai = client(suite.s, suite.key);
    const ask = [{ role: 'user' as const, content: '巴黎现在天气如何？' }];
    let before = await snapshot(suite);
    const r = await openai.chat.completions.create({ model: MODEL, messages: ask, tools: WEATHER });
    expect(r.choices[0].finish_reason).toBe('tool_calls');
    expect(r.choices[0].message.tool_calls).toEqual([
      { id: CALL_ID, type: 'function', function: { name: 'get_weather', arguments: ARGS } },
    ]);
    const sent = suite.mock.server.requests.at(-1)!.body;
    expect(sent.Tools).toEqual([
      {
        Type: 'function',
        Function: {
          Name: 'get_weather',
          Description: 'Current weather for a city',
          Parameters: JSON.stringify(WEATHER[0].function.parameters),
        },
      },
    ]);
    await expectCharged(suite, before, TOOL_USAGE, MODEL);

    before = await snapshot(suite);
    const stream = await openai.chat.completions.create({ model: MODEL, messages: ask, tools: WEATHER, stream: true });
    const calls: { id?: string; name: string; arguments: string }[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (!choice) continue;
      for (const t of choice.delta.tool_calls ?? []) {
        calls[t.index] ??= { id: t.id, name: '', arguments: '' };
        calls[t.index].name += t.function?.name ?? '';
        calls[t.index].arguments += t.function?.arguments ?? '';
      }
      finish = choice.finish_reason ?? finish;
    }
    expect(calls).toEqual([{ id: CALL_ID, name: 'get_weather', arguments: ARGS }]);
    expect(finish).toBe('tool_calls');
    await expectCharged(suite, before, TOOL_USAGE, MODEL);
  });

  onSqlite('sends a tool’s result as a tool message with its ToolCallId after the assistant’s ToolCalls', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      tools: WEATHER,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      messages: [
        { role: 'user', content: '巴黎现在天气如何？' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: CALL_ID, type: 'function', function: { name: 'get_weather', arguments: ARGS } }],
        },
        { role: 'tool', tool_call_id: CALL_ID, content: '{"temperature":18}' },
      ],
    });
    expect(r.choices[0].message.content).toBe('法国的首都是巴黎。');
    const sent = suite.mock.server.requests.at(-1)!.body;
    expect(sent.Messages.slice(1)).toEqual([
      {
        Role: 'assistant',
        Content: '',
        ToolCalls: [{ Id: CALL_ID, Type: 'function', Function: { Name: 'get_weather', Arguments: ARGS } }],
      },
      { Role: 'tool', Content: '{"temperature":18}', ToolCallId: CALL_ID },
    ]);
    expect([sent.ToolChoice, sent.CustomTool.Function.Name]).toEqual(['custom', 'get_weather']);
    await expectCharged(suite, before, USAGE, MODEL);
  });

  onSqlite('refuses a key without its three parts, and a region that is not one, on save', () => {
    for (const key of [`${SECRET_ID}|${SECRET_KEY}`, `|${SECRET_ID}|${SECRET_KEY}`, `1|2|3|4`])
      expect(channelFormProblem({ type: 23, key })).toEqual({
        field: 'key',
        message: expect.stringContaining('AppId|SecretId|SecretKey'),
      });
    const key = `1300000001|${SECRET_ID}|${SECRET_KEY}`;
    expect(channelFormProblem({ type: 23, key })).toBeNull();
    expect(channelFormProblem({ type: 23, key, other: 'ap-beijing' })).toBeNull();
    expect(channelFormProblem({ type: 23, key, other: 'Guangzhou!' })).toEqual({
      field: 'other',
      message: expect.stringContaining('ap-guangzhou'),
    });
  });
});
