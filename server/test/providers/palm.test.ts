// Google PaLM 2 (type 11) through the gateway: every client's chat (OpenAI, Claude and Gemini's @google/genai) goes to
// v1beta2 generateMessage with `x-goog-api-key` (new-api's PaLM-2 name to chat-bison-001); PaLM reports no usage, so
// the prompt and the answer are counted locally, charged so to the unit and marked in the log; PaLM cannot stream, so
// a stream request gets its whole answer as one piece; its error reaches the client with nothing charged.
import Anthropic from '@anthropic-ai/sdk';
import { APIError } from 'openai';
import { expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { client, logsOf } from '../relay/fixtures.js';
import { startPalmMock } from '../helpers/mock-palm.js';
import {
  expectCharged,
  expectNothingCharged,
  geminiChat,
  snapshot,
  sqliteOnly,
  vendorSuite,
} from './vendor-gateway.js';

const KEY = 'AIzaSyD-palm-test-key-0123456789';
const ANSWER = 'The capital of France is Paris.';
const ask = [{ role: 'user' as const, content: 'What is the capital of France?' }];

/** The last request was charged what the relay counted, and its log says it counted. */
async function expectCountedLocally(
  suite: Parameters<typeof snapshot>[0],
  before: Awaited<ReturnType<typeof snapshot>>,
  model: string,
) {
  const log = (await logsOf(suite.s, suite.userId)).at(-1)!;
  expect(log.otherJson.usage_counted_locally).toBe(true);
  expect(log.prompt_tokens).toBeGreaterThan(0);
  expect(log.completion_tokens).toBeGreaterThan(0);
  await expectCharged(suite, before, { prompt: log.prompt_tokens, completion: log.completion_tokens }, model);
  return log;
}

await describeEachDb('PaLM 2 channels', (kind) => {
  const models = ['PaLM-2', 'chat-bison-001'];
  const suite = vendorSuite({
    kind,
    mock: () => startPalmMock(KEY),
    channel: { type: 11, key: KEY, models },
    models,
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);

  onSqlite('the mock refuses a wrong key and an OpenAI body', async () => {
    const url = `${suite.mock.url}/v1beta2/models/chat-bison-001:generateMessage`;
    const wrong = await fetch(url, { method: 'POST', headers: { 'x-goog-api-key': 'nope' }, body: '{}' });
    expect(wrong.status).toBe(400);
    const openai = await fetch(url, {
      method: 'POST',
      headers: { 'x-goog-api-key': KEY },
      body: JSON.stringify({ model: 'chat-bison-001', messages: ask }),
    });
    expect(openai.status).toBe(400);
  });

  it('sends generateMessage for an OpenAI client, counted locally and marked so', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({
      model: 'PaLM-2',
      messages: [{ role: 'system', content: 'Be terse.' }, ...ask],
      temperature: 0.2,
    });
    expect(r.choices[0].message.content).toBe(ANSWER);
    const sent = suite.mock.requests.at(-1)!;
    expect([sent.path, sent.body]).toEqual([
      '/v1beta2/models/chat-bison-001:generateMessage',
      {
        prompt: { context: 'Be terse.', messages: [{ author: '0', content: 'What is the capital of France?' }] },
        candidate_count: 1,
        temperature: 0.2,
      },
    ]);
    await expectCountedLocally(suite, before, 'PaLM-2');
  });

  onSqlite('answers a stream request with the whole answer as one piece', async () => {
    const before = await snapshot(suite);
    const stream = await client(suite.s, suite.key).chat.completions.create({
      model: 'chat-bison-001',
      messages: ask,
      stream: true,
    });
    const pieces: string[] = [];
    for await (const chunk of stream) if (chunk.choices[0]?.delta?.content) pieces.push(chunk.choices[0].delta.content);
    expect(pieces).toEqual([ANSWER]);
    await expectCountedLocally(suite, before, 'chat-bison-001');
  });

  onSqlite('answers a Claude client, stream and not', async () => {
    const claude = new Anthropic({ apiKey: `sk-${suite.key}`, baseURL: suite.s.url, maxRetries: 0 });
    let before = await snapshot(suite);
    const m = await claude.messages.create({ model: 'chat-bison-001', max_tokens: 100, messages: ask });
    expect(m.content).toEqual([expect.objectContaining({ type: 'text', text: ANSWER })]);
    await expectCountedLocally(suite, before, 'chat-bison-001');
    before = await snapshot(suite);
    const stream = claude.messages.stream({ model: 'chat-bison-001', max_tokens: 100, messages: ask });
    let text = '';
    stream.on('text', (t) => (text += t));
    await stream.finalMessage();
    expect(text).toBe(ANSWER);
    await expectCountedLocally(suite, before, 'chat-bison-001');
  });

  onSqlite('answers a Gemini client, stream and not', async () => {
    const question = { contents: 'What is the capital of France?', config: { systemInstruction: 'Be terse.' } };
    const prompt = { context: 'Be terse.', messages: [{ author: '0', content: 'What is the capital of France?' }] };
    let before = await snapshot(suite);
    const plain = await geminiChat(suite, 'chat-bison-001', { ...question, stream: false });
    expect(plain.text).toBe(ANSWER);
    expect(suite.mock.requests.at(-1)!.body).toMatchObject({ prompt });
    // PaLM reports no usage: the answer carries none, the log the relay's count
    expect(plain.usage).toBeUndefined();
    await expectCountedLocally(suite, before, 'chat-bison-001');

    before = await snapshot(suite);
    const streamed = await geminiChat(suite, 'chat-bison-001', { ...question, stream: true });
    expect(streamed.text).toBe(ANSWER);
    expect(suite.mock.requests.at(-1)!.body).toMatchObject({ prompt });
    expect(streamed.usage).toBeUndefined();
    await expectCountedLocally(suite, before, 'chat-bison-001');
  });

  it('gives the client PaLM’s error and charges nothing', async () => {
    const before = await snapshot(suite);
    const err = await client(suite.s, suite.key)
      .chat.completions.create({ model: 'chat-bison-001', messages: [{ role: 'user', content: 'fail' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).message).toContain('invalid argument');
    await expectNothingCharged(suite, before);
  });
});
