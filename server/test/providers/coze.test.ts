// Coze (type 49) through the gateway: every client's chat (OpenAI, Claude and Gemini's @google/genai) goes to /v3/chat
// for the channel's bot (its `other`), always streamed from Coze (a whole answer is read from the stream, as Coze
// answers a request that does not stream with a chat still in progress), charged the chat.completed event's usage; an
// error Coze reports inside an HTTP 200 reaches the client with nothing charged; a channel without a numeric bot id is
// refused on save.
import Anthropic from '@anthropic-ai/sdk';
import { APIError } from 'openai';
import { expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { client } from '../relay/fixtures.js';
import { startCozeMock } from '../helpers/mock-coze.js';
import { channelFormProblem } from '../../src/services/channel-input.js';
import {
  channelTest,
  expectCharged,
  expectNothingCharged,
  geminiChat,
  snapshot,
  sqliteOnly,
  vendorSuite,
} from './vendor-gateway.js';

const TOKEN = 'pat_9Xk2mQ7pR4sT1vW8yZ3bC6dF0gH5jK';
const BOT = '7379462189365198898';
const usage = { prompt: 624, completion: 9 };
const ask = [{ role: 'user' as const, content: '法国的首都是哪里？' }];

await describeEachDb('Coze channels', (kind) => {
  const suite = vendorSuite({
    kind,
    mock: () => startCozeMock(TOKEN, [BOT]),
    channel: { type: 49, key: TOKEN, other: BOT, models: ['coze'] },
    models: ['coze'],
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);

  onSqlite(
    'the mock refuses a wrong token inside a 200, and a request that does not stream gets no messages',
    async () => {
      const post = (key: string, body: unknown) =>
        fetch(`${suite.mock.url}/v3/chat`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}` },
          body: JSON.stringify(body),
        });
      const body = {
        bot_id: BOT,
        user_id: 'u',
        additional_messages: [{ role: 'user', content: 'hi', content_type: 'text' }],
      };
      const wrong = await post('pat_nope', body);
      expect([wrong.status, ((await wrong.json()) as any).code]).toEqual([200, 4100]);
      const plain = (await (await post(TOKEN, body)).json()) as any;
      expect(plain.data.status).toBe('in_progress');
    },
  );

  it('streams from Coze for a whole answer to an OpenAI client, charged chat.completed’s usage', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({
      model: 'coze',
      messages: [
        { role: 'system', content: '简短回答。' },
        { role: 'user', content: '法国的首都是哪里？(whole)' },
      ],
      user: 'alice',
    });
    expect(r.choices[0].message.content).toBe('法国的首都是巴黎。');
    expect(suite.mock.requests.at(-1)!.body).toEqual({
      bot_id: BOT,
      user_id: 'alice',
      stream: true,
      auto_save_history: true,
      additional_messages: [
        { role: 'user', content: '简短回答。', content_type: 'text', meta_data: { source_role: 'system' } },
        { role: 'user', content: '法国的首都是哪里？(whole)', content_type: 'text' },
      ],
    });
    await expectCharged(suite, before, usage, 'coze');
  });

  onSqlite('streams to an OpenAI client, only the answer’s deltas', async () => {
    const before = await snapshot(suite);
    const stream = await client(suite.s, suite.key).chat.completions.create({
      model: 'coze',
      messages: ask,
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('法国的首都是巴黎。');
    await expectCharged(suite, before, usage, 'coze');
  });

  onSqlite('answers a Claude client, stream and not', async () => {
    const claude = new Anthropic({ apiKey: `sk-${suite.key}`, baseURL: suite.s.url, maxRetries: 0 });
    let before = await snapshot(suite);
    const m = await claude.messages.create({ model: 'coze', max_tokens: 100, messages: ask });
    expect(m.content).toEqual([expect.objectContaining({ type: 'text', text: '法国的首都是巴黎。' })]);
    await expectCharged(suite, before, usage, 'coze');
    before = await snapshot(suite);
    const stream = claude.messages.stream({ model: 'coze', max_tokens: 100, messages: ask });
    let text = '';
    stream.on('text', (t) => (text += t));
    await stream.finalMessage();
    expect(text).toBe('法国的首都是巴黎。');
    await expectCharged(suite, before, usage, 'coze');
  });

  onSqlite('answers a Gemini client, stream and not', async () => {
    const question = { contents: '法国的首都是哪里？', config: { systemInstruction: '简短回答。' } };
    const sentMessages = [
      { role: 'user', content: '简短回答。', content_type: 'text', meta_data: { source_role: 'system' } },
      { role: 'user', content: '法国的首都是哪里？', content_type: 'text' },
    ];
    let before = await snapshot(suite);
    const plain = await geminiChat(suite, 'coze', { ...question, stream: false });
    expect(plain.text).toBe('法国的首都是巴黎。');
    expect(plain.usage).toMatchObject({ promptTokenCount: 624, candidatesTokenCount: 9 });
    expect(suite.mock.requests.at(-1)!.body).toMatchObject({
      bot_id: BOT,
      stream: true,
      additional_messages: sentMessages,
    });
    await expectCharged(suite, before, usage, 'coze');

    before = await snapshot(suite);
    const streamed = await geminiChat(suite, 'coze', { ...question, stream: true });
    expect(streamed.text).toBe('法国的首都是巴黎。');
    expect(streamed.usage).toMatchObject({ promptTokenCount: 624, candidatesTokenCount: 9 });
    expect(suite.mock.requests.at(-1)!.body.additional_messages).toEqual(sentMessages);
    await expectCharged(suite, before, usage, 'coze');
  });

  it('turns Coze’s error inside a 200 into the client’s error, charging nothing, stream and not', async () => {
    const before = await snapshot(suite);
    const failing = [{ role: 'user' as const, content: 'fail' }];
    for (const stream of [false, true]) {
      const err = await client(suite.s, suite.key)
        .chat.completions.create({ model: 'coze', messages: failing, stream })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(APIError);
      expect((err as APIError).status).toBe(400);
      expect((err as APIError).message).toContain('insufficient balance');
    }
    await expectNothingCharged(suite, before);
  });

  onSqlite('tests the channel from the console, reading Coze’s stream whole', async () => {
    expect(await channelTest(suite, suite.channelId, 'coze')).toMatchObject({ success: true });
  });

  onSqlite('refuses a channel without a numeric bot id on save', () => {
    expect(channelFormProblem({ type: 49, key: TOKEN, other: '' })).toEqual({
      field: 'other',
      message: '请填写 Coze 智能体的 Bot ID',
    });
    expect(channelFormProblem({ type: 49, key: TOKEN, other: 'my-bot' })?.field).toBe('other');
    expect(channelFormProblem({ type: 49, key: TOKEN, other: BOT })).toBeNull();
  });
});
