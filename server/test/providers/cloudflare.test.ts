// Cloudflare Workers AI (type 39) through the gateway: the account id from the channel's `other` in the path,
// /client/v4/accounts/{id}/ai/v1/chat/completions (OpenAI and @google/genai clients) and /responses with the API token
// as a Bearer token, stream and not, charged Cloudflare's usage; a Responses client's request goes as it is;
// Cloudflare's own error shape ({success: false, errors: [...]}) reaches the client with nothing charged. The mock
// serves only this account's paths. An empty or path-breaking account id is refused on save.
import { APIError } from 'openai';
import { expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { client } from '../relay/fixtures.js';
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

const KEY = 'Xk9pR2mQ7vL4sT8wZ1nB5cD3fG6hJ0aE_yU';
const ACCOUNT = '023e105f4ecef8ad9ca31a8372d0c353';
const ROOT = `/client/v4/accounts/${ACCOUNT}/ai/v1`;
const MODEL = '@cf/meta/llama-3.1-8b-instruct';
const recorded = recordedCase('cloudflare');
const usage = {
  prompt: recorded.stream.usage.prompt_tokens as number,
  completion: recorded.stream.usage.completion_tokens as number,
};
const RESPONSE = {
  id: 'resp_cf_01',
  object: 'response',
  created_at: 1733214101,
  status: 'completed',
  model: MODEL,
  output: [
    {
      type: 'message',
      id: 'msg_cf_01',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Paris.', annotations: [] }],
    },
  ],
  usage: { input_tokens: 13, output_tokens: 2, total_tokens: 15 },
};

await describeEachDb('Cloudflare Workers AI channels', (kind) => {
  const models = [MODEL, 'fail-model'];
  const suite = vendorSuite({
    kind,
    mock: () =>
      MockCompatibleVendor.start({
        provider: 'cloudflare',
        routes: {
          [`${ROOT}/chat/completions`]: { kind: 'chat' },
          [`${ROOT}/responses`]: { kind: 'json', answer: RESPONSE },
        },
        headers: { authorization: `Bearer ${KEY}` },
      }),
    channel: { type: 39, key: KEY, other: ACCOUNT, models },
    models,
  });
  // the core cases below run on every database; the rest of the vendor's matrix on SQLite only (sqliteOnly)
  const onSqlite = sqliteOnly(kind);

  onSqlite('the mock serves only the account’s paths', async () => {
    const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    const other = await fetch(`${suite.mock.url}/client/v4/accounts/another/ai/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}` },
      body,
    });
    expect(other.status).toBe(404);
  });

  it('relays chat to the account’s /ai/v1/chat/completions, charged Cloudflare’s usage', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
    });
    expect(r.choices[0].message.content).toBe('The capital of France is Paris.');
    expect(suite.mock.requests.at(-1)!.path).toBe(`${ROOT}/chat/completions`);
    await expectCharged(suite, before, usage, MODEL);
  });

  onSqlite('streams, charged the usage of the last chunk', async () => {
    const before = await snapshot(suite);
    const stream = await client(suite.s, suite.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('The capital of France is Paris.');
    await expectCharged(suite, before, usage, MODEL);
  });

  onSqlite('answers a Gemini client, stream and not', async () => {
    const question = {
      contents: 'What is the capital of France?',
      config: { systemInstruction: 'Be terse.', maxOutputTokens: 100 },
    };
    const messages = [
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'What is the capital of France?' },
    ];
    let before = await snapshot(suite);
    const plain = await geminiChat(suite, MODEL, { ...question, stream: false });
    expect(plain.text).toBe('The capital of France is Paris.');
    expect(plain.usage).toMatchObject({ promptTokenCount: usage.prompt, candidatesTokenCount: usage.completion });
    let sent = suite.mock.requests.at(-1)!;
    expect(sent.path).toBe(`${ROOT}/chat/completions`);
    expect(sent.body).toMatchObject({ model: MODEL, messages, max_tokens: 100 });
    await expectCharged(suite, before, usage, MODEL);

    before = await snapshot(suite);
    const streamed = await geminiChat(suite, MODEL, { ...question, stream: true });
    expect(streamed.text).toBe('The capital of France is Paris.');
    expect(streamed.usage).toMatchObject({ promptTokenCount: usage.prompt, candidatesTokenCount: usage.completion });
    sent = suite.mock.requests.at(-1)!;
    expect(sent.path).toBe(`${ROOT}/chat/completions`);
    expect(sent.body).toMatchObject({ messages, stream: true });
    await expectCharged(suite, before, usage, MODEL);
  });

  onSqlite('sends a Responses client’s request as it is to the account’s /ai/v1/responses', async () => {
    const before = await snapshot(suite);
    const r = await client(suite.s, suite.key).responses.create({ model: MODEL, input: 'Capital of France?' });
    expect(r.output_text).toBe('Paris.');
    const sent = suite.mock.requests.at(-1)!;
    expect(sent.path).toBe(`${ROOT}/responses`);
    expect(sent.body.input).toBe('Capital of France?');
    await expectCharged(suite, before, { prompt: 13, completion: 2 }, MODEL);
  });

  it('gives the client Cloudflare’s error message and charges nothing', async () => {
    const before = await snapshot(suite);
    const err = await client(suite.s, suite.key)
      .chat.completions.create({ model: 'fail-model', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).message).toContain('perhaps your object identifier is invalid?');
    await expectNothingCharged(suite, before);
  });

  onSqlite('refuses an empty or path-breaking account id on save', () => {
    expect(channelFormProblem({ type: 39, key: KEY, other: '' })).toEqual({
      field: 'other',
      message: expect.stringContaining('账户 ID'),
    });
    expect(channelFormProblem({ type: 39, key: KEY, other: '../../zones' })).toEqual({
      field: 'other',
      message: expect.stringContaining('只能包含'),
    });
    expect(channelFormProblem({ type: 39, key: KEY, other: ACCOUNT })).toBeNull();
  });
});
