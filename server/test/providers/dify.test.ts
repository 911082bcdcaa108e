// Dify (type 37) through the gateway, one channel per kind of app (its `other`): a chat app at /v1/chat-messages
// (OpenAI, Claude and Gemini's @google/genai clients, stream and not, the conversation as one query), an agent app
// (streamed from Dify even for a whole answer), a completion app at /v1/completion-messages and a workflow at
// /v1/workflows/run (its text in `inputs.query`; it reports no usage, so it is counted locally and marked so in the
// log). Each is charged to the unit; Dify's error reaches the client with nothing charged; an unknown app type is
// refused on save.
import Anthropic from '@anthropic-ai/sdk';
import { APIError } from 'openai';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { addChannel, channelsChanged, client, logsOf } from '../relay/fixtures.js';
import { startDifyMock } from '../helpers/mock-dify.js';
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

const CHAT_KEY = 'app-8fK3mQ2xR7pL9sT4vW1yZ6bC';
const APPS = {
  agent: 'app-agent-Q1w2E3r4T5y6',
  completion: 'app-completion-A1s2D3f4G5',
  workflow: 'app-workflow-Z1x2C3v4B5',
} as const;
const usage = { prompt: 1033, completion: 9 };
const ask = [{ role: 'user' as const, content: '法国的首都是哪里？' }];

await describeEachDb('Dify channels', (kind) => {
  const models = ['dify', 'dify-agent', 'dify-completion', 'dify-workflow'];
  const suite = vendorSuite({
    kind,
    mock: () => startDifyMock([CHAT_KEY, ...Object.values(APPS)]),
    channel: { type: 37, key: CHAT_KEY, models: ['dify'] },
    models,
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);
  beforeAll(async () => {
    for (const [app, key] of Object.entries(APPS))
      await addChannel(suite.s, {
        type: 37,
        key,
        other: app,
        models: [`dify-${app}`],
        baseUrl: suite.mock.url,
      });
    await channelsChanged(suite.s);
  });

  onSqlite('the mock refuses a wrong key, an OpenAI body and a blocking agent request', async () => {
    const post = (key: string, body: unknown) =>
      fetch(`${suite.mock.url}/v1/chat-messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: JSON.stringify(body),
      });
    expect((await post('app-nope', { query: 'hi', inputs: {}, user: 'u', response_mode: 'blocking' })).status).toBe(
      401,
    );
    expect((await post(CHAT_KEY, { model: 'dify', messages: ask })).status).toBe(400);
    const blocking = { query: 'hi', inputs: {}, user: 'u', response_mode: 'blocking' };
    expect((await post(APPS.agent, blocking)).status).toBe(400);
  });

  it('asks a chat app with one query and answers an OpenAI client, charged Dify’s usage', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({
      model: 'dify',
      messages: [{ role: 'system', content: '简短回答。' }, ...ask],
      user: 'alice',
    });
    expect(r.choices[0].message.content).toBe('法国的首都是巴黎。');
    const sent = suite.mock.requests.at(-1)!;
    expect([sent.path, sent.body]).toEqual([
      '/v1/chat-messages',
      {
        inputs: {},
        query: 'SYSTEM: \n简短回答。\nUSER: \n法国的首都是哪里？\n',
        response_mode: 'blocking',
        user: 'alice',
      },
    ]);
    await expectCharged(suite, before, usage, 'dify');
  });

  onSqlite('streams a chat app’s message events, charged message_end’s usage', async () => {
    const before = await snapshot(suite);
    const stream = await client(suite.s, suite.key).chat.completions.create({
      model: 'dify',
      messages: ask,
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('法国的首都是巴黎。');
    expect(suite.mock.requests.at(-1)!.body).toMatchObject({ query: '法国的首都是哪里？', response_mode: 'streaming' });
    await expectCharged(suite, before, usage, 'dify');
  });

  onSqlite('answers a Claude client, stream and not', async () => {
    const claude = new Anthropic({ apiKey: `sk-${suite.key}`, baseURL: suite.s.url, maxRetries: 0 });
    let before = await snapshot(suite);
    const m = await claude.messages.create({ model: 'dify', max_tokens: 100, messages: ask });
    expect(m.content).toEqual([expect.objectContaining({ type: 'text', text: '法国的首都是巴黎。' })]);
    await expectCharged(suite, before, usage, 'dify');
    before = await snapshot(suite);
    const stream = claude.messages.stream({ model: 'dify', max_tokens: 100, messages: ask });
    let text = '';
    stream.on('text', (t) => (text += t));
    await stream.finalMessage();
    expect(text).toBe('法国的首都是巴黎。');
    await expectCharged(suite, before, usage, 'dify');
  });

  onSqlite('answers a Gemini client, stream and not', async () => {
    const question = { contents: '法国的首都是哪里？', config: { systemInstruction: '简短回答。' } };
    const query = 'SYSTEM: \n简短回答。\nUSER: \n法国的首都是哪里？\n';
    let before = await snapshot(suite);
    const plain = await geminiChat(suite, 'dify', { ...question, stream: false });
    expect(plain.text).toBe('法国的首都是巴黎。');
    expect(plain.usage).toMatchObject({ promptTokenCount: 1033, candidatesTokenCount: 9 });
    const sent = suite.mock.requests.at(-1)!;
    expect([sent.path, sent.body]).toEqual([
      '/v1/chat-messages',
      expect.objectContaining({ query, response_mode: 'blocking' }),
    ]);
    await expectCharged(suite, before, usage, 'dify');

    before = await snapshot(suite);
    const streamed = await geminiChat(suite, 'dify', { ...question, stream: true });
    expect(streamed.text).toBe('法国的首都是巴黎。');
    expect(streamed.usage).toMatchObject({ promptTokenCount: 1033, candidatesTokenCount: 9 });
    expect(suite.mock.requests.at(-1)!.body).toMatchObject({ query, response_mode: 'streaming' });
    await expectCharged(suite, before, usage, 'dify');
  });

  onSqlite('streams from an agent app even for a whole answer, reading its agent_message events', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({ model: 'dify-agent', messages: ask });
    expect(r.choices[0].message.content).toBe('巴黎。');
    expect(suite.mock.requests.at(-1)!.body.response_mode).toBe('streaming');
    await expectCharged(suite, before, usage, 'dify-agent');
  });

  onSqlite('sends a completion app’s text in inputs.query to /v1/completion-messages', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({ model: 'dify-completion', messages: ask });
    expect(r.choices[0].message.content).toBe('巴黎。');
    const sent = suite.mock.requests.at(-1)!;
    expect([sent.path, sent.body.inputs]).toEqual(['/v1/completion-messages', { query: '法国的首都是哪里？' }]);
    await expectCharged(suite, before, usage, 'dify-completion');
  });

  onSqlite('runs a workflow, stream and not, counted locally and marked so in the log', async () => {
    for (const stream of [false, true]) {
      const before = await snapshot(suite);
      let text = '';
      if (stream) {
        const s = await client(suite.s, suite.key).chat.completions.create({
          model: 'dify-workflow',
          messages: ask,
          stream: true,
        });
        for await (const chunk of s) text += chunk.choices[0]?.delta?.content ?? '';
      } else {
        const r = await client(suite.s, suite.key).chat.completions.create({ model: 'dify-workflow', messages: ask });
        text = r.choices[0].message.content ?? '';
      }
      expect(text).toBe('巴黎。');
      expect(suite.mock.requests.at(-1)!.path).toBe('/v1/workflows/run');
      const log = (await logsOf(suite.s, suite.userId)).at(-1)!;
      expect(log.otherJson.usage_counted_locally).toBe(true);
      expect(log.prompt_tokens).toBeGreaterThan(0);
      expect(log.completion_tokens).toBeGreaterThan(0);
      await expectCharged(
        suite,
        before,
        { prompt: log.prompt_tokens, completion: log.completion_tokens },
        'dify-workflow',
      );
    }
  });

  onSqlite(
    'tests a chat app’s and an agent app’s channel from the console (the agent’s stream read whole)',
    async () => {
      expect(await channelTest(suite, suite.channelId, 'dify')).toMatchObject({ success: true });
      const agent = await suite.s.ctx.db
        .selectFrom('channels')
        .select('id')
        .where('other', '=', 'agent')
        .executeTakeFirstOrThrow();
      expect(await channelTest(suite, agent.id, 'dify-agent')).toMatchObject({ success: true });
    },
  );

  it('gives the client Dify’s error and charges nothing', async () => {
    const before = await snapshot(suite);
    const err = await client(suite.s, suite.key)
      .chat.completions.create({ model: 'dify', messages: [{ role: 'user', content: 'fail please' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).message).toContain('App unavailable');
    await expectNothingCharged(suite, before);
  });

  onSqlite('refuses an unknown app type on save, saying the choices', () => {
    expect(channelFormProblem({ type: 37, key: CHAT_KEY, other: 'chatbot' })).toEqual({
      field: 'other',
      message: expect.stringContaining('chat、agent、completion、workflow'),
    });
    for (const other of ['', 'agent', 'Workflow'])
      expect(channelFormProblem({ type: 37, key: CHAT_KEY, other })).toBeNull();
  });
});
