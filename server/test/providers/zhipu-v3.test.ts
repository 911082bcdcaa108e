// Zhipu v3 (type 16) through the gateway, against a mock of Zhipu's v3 protocol (helpers/mock-zhipu-v3.ts) that
// verifies each request's JWT with the key's secret (HS256, `sign_type: SIGN`, millisecond `exp` and `timestamp`): chat
// goes to /invoke or /sse-invoke in Zhipu's body and comes back in the client's format (the official openai,
// @anthropic-ai/sdk and @google/genai clients, stream and not), charged Zhipu's usage (from `meta:` in a stream) to
// the unit; one JWT serves many requests (a new one is signed for a channel moved to another host); Zhipu's refusals
// inside HTTP 200 reach the client as errors, charged nothing.
import Anthropic from '@anthropic-ai/sdk';
import { APIError } from 'openai';
import { decodeProtectedHeader, decodeJwt } from 'jose';
import { expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { client } from '../relay/fixtures.js';
import { channelFormProblem } from '../../src/services/channel-input.js';
import { MockZhipuV3 } from '../helpers/mock-zhipu-v3.js';
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

const KEY = '5c1f2e9a7b3d4e6f8a0b1c2d3e4f5a6b.Kx7mQ2pLr9TzW4vN';
const MODEL = 'chatglm_turbo';
const USAGE = { prompt: 11, completion: 7 };
const QUESTION = [
  { role: 'system' as const, content: '你是一个地理老师。' },
  { role: 'user' as const, content: '法国的首都是哪里？' },
];

await describeEachDb('Zhipu v3 channels', (kind) => {
  const models = [MODEL, 'chatglm_nonexistent'];
  const suite = vendorSuite({
    kind,
    mock: () => MockZhipuV3.start(KEY),
    channel: { type: 16, key: KEY, models },
    models,
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);

  onSqlite(
    'the mock refuses a Bearer key, a JWT signed with another secret and one with times in seconds',
    async () => {
      const { SignJWT } = await import('jose');
      const url = `${suite.mock.url}/api/paas/v3/model-api/${MODEL}/invoke`;
      const body = JSON.stringify({ prompt: [{ role: 'user', content: 'hi' }] });
      const sign = (secret: string, now: number, exp: number) =>
        new SignJWT({ api_key: KEY.split('.')[0], exp, timestamp: now })
          .setProtectedHeader({ alg: 'HS256', sign_type: 'SIGN' })
          .sign(new TextEncoder().encode(secret));
      const post = (authorization: string) => fetch(url, { method: 'POST', headers: { authorization }, body });
      expect((await post(`Bearer ${KEY}`)).status).toBe(401);
      expect((await post(await sign('wrong-secret', Date.now(), Date.now() + 60_000))).status).toBe(401);
      const seconds = Math.floor(Date.now() / 1000);
      expect((await post(await sign(KEY.split('.')[1], seconds, seconds + 60))).status).toBe(401);
      expect((await post(await sign(KEY.split('.')[1], Date.now(), Date.now() + 60_000))).status).toBe(200);
      suite.mock.tokens.length = 0;
    },
  );

  it('relays an OpenAI client’s chat to /invoke with a JWT, in Zhipu’s body, charged Zhipu’s usage', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      messages: QUESTION,
      temperature: 1,
      stop: ['。'],
    });
    expect(r.choices[0]).toMatchObject({ message: { content: '法国的首都是巴黎。' }, finish_reason: 'stop' });
    const sent = suite.mock.server.requests.at(-1)!;
    expect(sent.path).toBe(`/api/paas/v3/model-api/${MODEL}/invoke`);
    expect(sent.body).toEqual({
      prompt: [
        { role: 'user', content: '你是一个地理老师。' },
        { role: 'assistant', content: '好的。' },
        { role: 'user', content: '法国的首都是哪里？' },
      ],
      temperature: 0.99,
    });
    const jwt = String(sent.headers.authorization);
    expect(decodeProtectedHeader(jwt)).toEqual({ alg: 'HS256', sign_type: 'SIGN' });
    const claims = decodeJwt(jwt);
    expect(claims.api_key).toBe(KEY.split('.')[0]);
    expect(Math.abs(Number(claims.timestamp) - Date.now())).toBeLessThan(60_000);
    await expectCharged(suite, before, USAGE, MODEL);
  });

  onSqlite('streams from /sse-invoke, charged the usage of the `meta:` line', async () => {
    const before = await snapshot(suite);
    const { text, usage } = await streamChat(suite, { model: MODEL, messages: QUESTION });
    expect(text).toBe('法国的首都是巴黎。');
    expect(usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7 });
    expect(suite.mock.server.requests.at(-1)!.path).toBe(`/api/paas/v3/model-api/${MODEL}/sse-invoke`);
    await expectCharged(suite, before, USAGE, MODEL);
  });

  onSqlite('answers a Claude client, stream and not, charged the same; one JWT served every request', async () => {
    const claude = new Anthropic({ apiKey: `sk-${suite.key}`, baseURL: suite.s.url, maxRetries: 0 });
    let before = await snapshot(suite);
    const msg = await claude.messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: '法国的首都是哪里？' }],
    });
    expect(msg.content).toEqual([{ type: 'text', text: '法国的首都是巴黎。' }]);
    await expectCharged(suite, before, USAGE, MODEL);
    before = await snapshot(suite);
    const final = await claude.messages
      .stream({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: '法国的首都是哪里？' }] })
      .finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: '法国的首都是巴黎。' }]);
    expect(final.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
    await expectCharged(suite, before, USAGE, MODEL);
    expect(new Set(suite.mock.tokens).size).toBe(1);
  });

  onSqlite('answers a Gemini client, stream and not, charged the same', async () => {
    const question = { contents: '法国的首都是哪里？', config: { systemInstruction: '你是一个地理老师。' } };
    const prompt = [
      { role: 'user', content: '你是一个地理老师。' },
      { role: 'assistant', content: '好的。' },
      { role: 'user', content: '法国的首都是哪里？' },
    ];
    let before = await snapshot(suite);
    const plain = await geminiChat(suite, MODEL, { ...question, stream: false });
    expect(plain.text).toBe('法国的首都是巴黎。');
    expect(plain.usage).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 7 });
    let sent = suite.mock.server.requests.at(-1)!;
    expect([sent.path, sent.body.prompt]).toEqual([`/api/paas/v3/model-api/${MODEL}/invoke`, prompt]);
    await expectCharged(suite, before, USAGE, MODEL);

    before = await snapshot(suite);
    const streamed = await geminiChat(suite, MODEL, { ...question, stream: true });
    expect(streamed.text).toBe('法国的首都是巴黎。');
    expect(streamed.usage).toMatchObject({ promptTokenCount: 11, candidatesTokenCount: 7 });
    sent = suite.mock.server.requests.at(-1)!;
    expect([sent.path, sent.body.prompt]).toEqual([`/api/paas/v3/model-api/${MODEL}/sse-invoke`, prompt]);
    await expectCharged(suite, before, USAGE, MODEL);
  });

  it('gives the client Zhipu’s refusal told inside HTTP 200 and charges nothing, stream and not', async () => {
    for (const stream of [false, true]) {
      const before = await snapshot(suite);
      const err = await client(suite.s, suite.key)
        .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'TOO_LONG' }], stream })
        .then(async (s) => {
          if (stream) for await (const _ of s as AsyncIterable<unknown>);
          return s;
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(400);
      expect((err as APIError).message).toContain('Prompt 超长');
      await expectNothingCharged(suite, before);
    }
  });

  onSqlite('refuses images and tools before anything is sent', async () => {
    const sent = suite.mock.server.requests.length;
    const err = await client(suite.s, suite.key)
      .chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'hi' }],
        tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      })
      .catch((e: unknown) => e);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).message).toContain('不支持工具调用');
    expect(suite.mock.server.requests.length).toBe(sent);
  });

  onSqlite('signs a new JWT for a channel moved to another host, never sending it the old one', async () => {
    const moved = await MockZhipuV3.start(KEY);
    try {
      await changeChannel(suite, { base_url: moved.url });
      const r = await client(suite.s, suite.key).chat.completions.create({ model: MODEL, messages: QUESTION });
      expect(r.choices[0].message.content).toBe('法国的首都是巴黎。');
      expect(moved.tokens).toHaveLength(1);
      expect(suite.mock.tokens).not.toContain(moved.tokens[0]);
    } finally {
      await moved.close();
    }
  });

  onSqlite('refuses a key that is not id.secret on save', () => {
    for (const key of ['no-dot', '.secret', 'id.'])
      expect(channelFormProblem({ type: 16, key })).toEqual({
        field: 'key',
        message: expect.stringContaining('id.secret'),
      });
    expect(channelFormProblem({ type: 16, key: KEY })).toBeNull();
  });
});
