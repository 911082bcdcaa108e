// iFlytek Spark (type 18) through the gateway, against a mock of Spark's websocket API (helpers/mock-spark.ts) that
// recomputes the HMAC of the signed URL and refuses a bad signature or a date more than 300 s away: each request opens
// a websocket at the channel's own host, signed with the key's APISecret, sends one frame with the APPID and the
// version's domain, and the answer frames come back in the client's format (the official openai, @anthropic-ai/sdk
// and @google/genai clients, stream and not), charged the usage of the final frame to the unit; an error frame
// reaches the client as an error, charged nothing.
import Anthropic from '@anthropic-ai/sdk';
import { APIError } from 'openai';
import { expect, it } from 'vitest';
import WebSocket from 'ws';
import { describeEachDb } from '../helpers/databases.js';
import { client } from '../relay/fixtures.js';
import { channelFormProblem } from '../../src/services/channel-input.js';
import { sparkSignedQuery } from '../../src/relay/providers/spark/sign.js';
import { MockSpark } from '../helpers/mock-spark.js';
import {
  expectCharged,
  expectNothingCharged,
  geminiChat,
  snapshot,
  sqliteOnly,
  streamChat,
  vendorSuite,
} from './vendor-gateway.js';

const APP_ID = '5a8b3c2d';
const API_SECRET = 'NjQ4ZTk1YjQ3MTk2YjA5ZDc4ZmE2NTdl';
const API_KEY = '4f6a7c2e9b1d3e5f7a9c0b2d4e6f8a1c';
const MODEL = 'SparkDesk-v3.5';
const USAGE = { prompt: 10, completion: 6 };
const QUESTION = [
  { role: 'system' as const, content: '你是一个地理老师。' },
  { role: 'user' as const, content: '法国的首都是哪里？' },
];

/** The status the mock answers a handshake signed with `secret` at `date`. */
function handshakeStatus(mockUrl: string, secret: string, date: Date): Promise<number> {
  const host = new URL(mockUrl).host;
  const query = sparkSignedQuery({ host, path: '/v3.5/chat', date, apiKey: API_KEY, apiSecret: secret });
  const ws = new WebSocket(`${mockUrl.replace(/^http/, 'ws')}/v3.5/chat?${query}`);
  return new Promise((resolve) => {
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('error', () => undefined);
  });
}

await describeEachDb('iFlytek Spark channels', (kind) => {
  const models = [MODEL, 'SparkDesk'];
  const suite = vendorSuite({
    kind,
    mock: () => MockSpark.start(APP_ID, API_KEY, API_SECRET),
    channel: { type: 18, key: `${APP_ID}|${API_SECRET}|${API_KEY}`, models },
    models,
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);

  onSqlite('the mock refuses a signature made with another secret and a date more than 300 s away', async () => {
    expect(await handshakeStatus(suite.mock.url, 'another-secret', new Date())).toBe(403);
    expect(await handshakeStatus(suite.mock.url, API_SECRET, new Date(Date.now() - 301_000))).toBe(401);
    expect(await handshakeStatus(suite.mock.url, API_SECRET, new Date())).toBe(101);
  });

  it('relays an OpenAI client’s chat over a signed websocket, charged the final frame’s usage', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({ model: MODEL, messages: QUESTION });
    expect(r.choices[0]).toMatchObject({ message: { content: '法国的首都是巴黎。' }, finish_reason: 'stop' });
    expect(r.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 6 });
    const sent = suite.mock.connections.at(-1)!;
    expect(sent.path).toBe('/v3.5/chat');
    expect(sent.frame).toEqual({
      header: { app_id: APP_ID },
      parameter: { chat: { domain: 'generalv3.5' } },
      payload: {
        message: {
          text: [
            { role: 'system', content: '你是一个地理老师。' },
            { role: 'user', content: '法国的首都是哪里？' },
          ],
        },
      },
    });
    await expectCharged(suite, before, USAGE, MODEL);
  });

  onSqlite('streams to an OpenAI client, charged the final frame’s usage', async () => {
    const before = await snapshot(suite);
    const { text, usage } = await streamChat(suite, { model: MODEL, messages: QUESTION });
    expect(text).toBe('法国的首都是巴黎。');
    expect(usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 6 });
    await expectCharged(suite, before, USAGE, MODEL);
  });

  onSqlite('answers a Claude client, stream and not, charged the same', async () => {
    const claude = new Anthropic({ apiKey: `sk-${suite.key}`, baseURL: suite.s.url, maxRetries: 0 });
    let before = await snapshot(suite);
    const msg = await claude.messages.create({
      model: MODEL,
      max_tokens: 100,
      messages: [{ role: 'user', content: '法国的首都是哪里？' }],
    });
    expect(msg.content).toEqual([{ type: 'text', text: '法国的首都是巴黎。' }]);
    expect(suite.mock.connections.at(-1)!.frame.parameter.chat).toEqual({ domain: 'generalv3.5', max_tokens: 100 });
    await expectCharged(suite, before, USAGE, MODEL);
    before = await snapshot(suite);
    const final = await claude.messages
      .stream({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: '法国的首都是哪里？' }] })
      .finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: '法国的首都是巴黎。' }]);
    expect(final.usage).toMatchObject({ input_tokens: 10, output_tokens: 6 });
    await expectCharged(suite, before, USAGE, MODEL);
  });

  onSqlite('answers a Gemini client, stream and not, charged the same', async () => {
    const question = {
      contents: '法国的首都是哪里？',
      config: { systemInstruction: '你是一个地理老师。', maxOutputTokens: 100 },
    };
    let before = await snapshot(suite);
    const plain = await geminiChat(suite, MODEL, { ...question, stream: false });
    expect(plain.text).toBe('法国的首都是巴黎。');
    expect(plain.usage).toMatchObject({ promptTokenCount: 10, candidatesTokenCount: 6 });
    const sent = suite.mock.connections.at(-1)!;
    expect(sent.frame.parameter.chat).toEqual({ domain: 'generalv3.5', max_tokens: 100 });
    expect(sent.frame.payload.message.text).toEqual(QUESTION);
    await expectCharged(suite, before, USAGE, MODEL);

    before = await snapshot(suite);
    const streamed = await geminiChat(suite, MODEL, { ...question, stream: true });
    expect(streamed.text).toBe('法国的首都是巴黎。');
    expect(streamed.usage).toMatchObject({ promptTokenCount: 10, candidatesTokenCount: 6 });
    expect(suite.mock.connections.at(-1)!.frame.payload.message.text).toEqual(QUESTION);
    await expectCharged(suite, before, USAGE, MODEL);
  });

  onSqlite('takes the version from the model’s suffix, else v1.1 (domain lite)', async () => {
    await client(suite.s, suite.key).chat.completions.create({ model: 'SparkDesk', messages: QUESTION });
    const sent = suite.mock.connections.at(-1)!;
    expect([sent.path, sent.frame.parameter.chat.domain]).toEqual(['/v1.1/chat', 'lite']);
  });

  it('gives the client Spark’s error frame as an error and charges nothing, stream and not', async () => {
    for (const stream of [false, true]) {
      const before = await snapshot(suite);
      const err = await client(suite.s, suite.key)
        .chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'BLOCKED' }], stream })
        .then(async (s) => {
          if (stream) for await (const _ of s as AsyncIterable<unknown>);
          return s;
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(400);
      expect((err as APIError).message).toContain('输入内容审核不通过');
      await expectNothingCharged(suite, before);
    }
  });

  onSqlite('refuses a key without its three parts, and an unknown version, on save', () => {
    for (const key of [`${APP_ID}|${API_SECRET}`, `|${API_SECRET}|${API_KEY}`])
      expect(channelFormProblem({ type: 18, key })).toEqual({
        field: 'key',
        message: expect.stringContaining('APPID|APISecret|APIKey'),
      });
    const key = `${APP_ID}|${API_SECRET}|${API_KEY}`;
    expect(channelFormProblem({ type: 18, key, other: 'v3.5' })).toBeNull();
    expect(channelFormProblem({ type: 18, key, other: 'v9' })).toMatchObject({ field: 'other' });
  });
});
